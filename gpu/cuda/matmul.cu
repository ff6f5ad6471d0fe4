// CUDA C++ twins of the kernels in gpu/src/matmul/: the same algorithms,
// launch geometry and memory layout, written as CUDA C++ programmers write
// them (int indices, fused multiply-adds by contraction). The host compiles
// them with NVRTC and times each beside its Rust kernel.
//
// Each kernel's __launch_bounds__ are its Rust kernel's #[launch_bounds].
// A, B and C are distinct buffers (the Rust kernels' contracts), hence
// __restrict__.

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048

// The launch-sized shared memory, declared once at file scope: declared
// inside a template too, it would name a second array of the same name,
// which NVRTC warns of. The kernels with 16-byte shared loads view it as
// float4, for its alignment.
extern __shared__ float tiles[];
extern __shared__ float4 aligned_tiles[];

// Threads per block along x and y of matmul_naive.
constexpr int NAIVE_BLOCK = 16;

extern "C" __global__ void __launch_bounds__(NAIVE_BLOCK * NAIVE_BLOCK,
                                             FULL_SM_THREADS / (NAIVE_BLOCK * NAIVE_BLOCK))
matmul_naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
             int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < k; ++i) {
            sum += a[row * k + i] * b[i * n + col];
        }
        c[row * n + col] = sum;
    }
}

// TILE×TILE threads per block, 2·TILE² floats of launch-sized shared memory.
template <int TILE>
__device__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, int m, int n, int k) {
    float* a_tile = tiles;
    float* b_tile = tiles + TILE * TILE;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int phase = 0; phase < (k + TILE - 1) / TILE; ++phase) {
        int a_col = phase * TILE + tx;
        int b_row = phase * TILE + ty;
        a_tile[ty * TILE + tx] = row < m && a_col < k ? a[row * k + a_col] : 0.0f;
        b_tile[ty * TILE + tx] = b_row < k && col < n ? b[b_row * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) {
            sum += a_tile[ty * TILE + i] * b_tile[i * TILE + tx];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * n + col] = sum;
    }
}

extern "C" __global__ void __launch_bounds__(16 * 16, FULL_SM_THREADS / (16 * 16))
matmul_tiled_16(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                int m, int n, int k) {
    matmul_tiled<16>(a, b, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(32 * 32, FULL_SM_THREADS / (32 * 32))
matmul_tiled_32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                int m, int n, int k) {
    matmul_tiled<32>(a, b, c, m, n, k);
}

// Stages element (row, col) of a rows×cols matrix, or zero outside it.
__device__ __forceinline__ float element_or_zero(const float* matrix, int row, int col,
                                                 int rows, int cols) {
    return row < rows && col < cols ? matrix[row * cols + col] : 0.0f;
}

// 64×64 tile of C per block of 512 threads, 8×1 per thread, slices of 8.
constexpr int COARSE_THREADS = 64 / 8 * 64;  // (rows / rows a thread) × columns

extern "C" __global__ void __launch_bounds__(COARSE_THREADS, 4)
matmul_coarse_1d(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
    constexpr int ROWS = 64, COLS = 64, SLICE = 8, THREAD_ROWS = 8;
    float* a_tile = tiles;
    float* b_tile = tiles + ROWS * SLICE;
    int t = threadIdx.x;
    int first_row = blockIdx.y * ROWS, first_col = blockIdx.x * COLS;
    int col = t % COLS, row = t / COLS * THREAD_ROWS;
    float sums[THREAD_ROWS] = {};
    for (int k0 = 0; k0 < k; k0 += SLICE) {
        a_tile[t] = element_or_zero(a, first_row + t / SLICE, k0 + t % SLICE, m, k);
        b_tile[t] = element_or_zero(b, k0 + t / COLS, first_col + t % COLS, k, n);
        __syncthreads();
        // Left to the compiler (which unrolls it by two), though the Rust
        // loop unrolls whole: unrolled whole, this twin ran 12% slower on an
        // H100 (4096³: 9.0 ms against 8.0).
        for (int i = 0; i < SLICE; ++i) {
            float b_value = b_tile[i * COLS + col];
#pragma unroll
            for (int r = 0; r < THREAD_ROWS; ++r) {
                sums[r] += a_tile[(row + r) * SLICE + i] * b_value;
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < THREAD_ROWS; ++r) {
        int out_row = first_row + row + r, out_col = first_col + col;
        if (out_row < m && out_col < n) {
            c[out_row * n + out_col] = sums[r];
        }
    }
}

// The kernels below: a 128×128 tile of C per block of 256 threads, 8×8 per
// thread; slices of 8 of k in matmul_blocked_2d, of 16 after it, each
// thread staging a sixteenth of each tile; a warp's loads of A take 8
// elements (a sector) of each of four rows.
constexpr int BLOCK = 128, BLOCKED_SLICE = 8, SLICE = 16, THREADS = 256;
constexpr int LOADS = BLOCK * SLICE / THREADS, A_SECTOR = 8, A_GROUP = A_SECTOR * BLOCK;

// Stores sums[r][j] at (row_of(r), col_of(j)) where it lies inside m×n.
template <int COLS, typename RowOf, typename ColOf>
__device__ __forceinline__ void store_block(float* c, const float (&sums)[8][COLS], RowOf row_of,
                                            ColOf col_of, int m, int n) {
#pragma unroll
    for (int r = 0; r < 8; ++r) {
#pragma unroll
        for (int j = 0; j < COLS; ++j) {
            int row = row_of(r), col = col_of(j);
            if (row < m && col < n) {
                c[row * n + col] = sums[r][j];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
matmul_blocked_2d(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                  int m, int n, int k) {
    float* a_tile = tiles;
    float* b_tile = tiles + BLOCK * BLOCKED_SLICE;
    int t = threadIdx.x;
    int first_row = blockIdx.y * BLOCK, first_col = blockIdx.x * BLOCK;
    int row = t / 16 * 8, col = t % 16 * 8;
    float sums[8][8] = {};
    for (int k0 = 0; k0 < k; k0 += BLOCKED_SLICE) {
#pragma unroll
        for (int load = 0; load < BLOCK * BLOCKED_SLICE / THREADS; ++load) {
            int e = t + load * THREADS;
            a_tile[e] = element_or_zero(a, first_row + e / BLOCKED_SLICE, k0 + e % BLOCKED_SLICE, m, k);
            b_tile[e] = element_or_zero(b, k0 + e / BLOCK, first_col + e % BLOCK, k, n);
        }
        __syncthreads();
        // Unrolled, as the Rust kernel's: A's one-word loads from eight
        // steps merge into 16-byte loads.
#pragma unroll
        for (int i = 0; i < BLOCKED_SLICE; ++i) {
            float a_column[8], b_row[8];
#pragma unroll
            for (int r = 0; r < 8; ++r) a_column[r] = a_tile[(row + r) * BLOCKED_SLICE + i];
#pragma unroll
            for (int j = 0; j < 8; ++j) b_row[j] = b_tile[i * BLOCK + col + j];
#pragma unroll
            for (int r = 0; r < 8; ++r)
#pragma unroll
                for (int j = 0; j < 8; ++j) sums[r][j] += a_column[r] * b_row[j];
        }
        __syncthreads();
    }
    store_block(c, sums, [&](int r) { return first_row + row + r; },
                [&](int j) { return first_col + col + j; }, m, n);
}

// A's tile transposed (element (row, i) at i * a_rows + row), B's as it is.
__device__ __forceinline__ void stage_slice(const float* a, const float* b, float* a_tile,
                                            float* b_tile, int a_rows, int first_row,
                                            int first_col, int k0, int m, int n, int k) {
    int t = threadIdx.x;
#pragma unroll
    for (int load = 0; load < LOADS; ++load) {
        int e = t + load * THREADS;
        int row = e % A_GROUP / A_SECTOR, i = e / A_GROUP * A_SECTOR + e % A_SECTOR;
        a_tile[i * a_rows + row] = element_or_zero(a, first_row + row, k0 + i, m, k);
        b_tile[e] = element_or_zero(b, k0 + e / BLOCK, first_col + e % BLOCK, k, n);
    }
}

// N elements in 16-byte loads of four, `apart` elements apart.
template <int N>
__device__ __forceinline__ void fragment(float (&elements)[N], const float* tile, int start,
                                         int apart) {
#pragma unroll
    for (int quad = 0; quad < N / 4; ++quad) {
        float4 loaded = *reinterpret_cast<const float4*>(tile + start + quad * apart);
        elements[4 * quad] = loaded.x, elements[4 * quad + 1] = loaded.y;
        elements[4 * quad + 2] = loaded.z, elements[4 * quad + 3] = loaded.w;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
matmul_vectorised(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                  int m, int n, int k) {
    float* a_tile = reinterpret_cast<float*>(aligned_tiles);
    float* b_tile = a_tile + BLOCK * SLICE;
    int t = threadIdx.x;
    int first_row = blockIdx.y * BLOCK, first_col = blockIdx.x * BLOCK;
    int row = t / 16 * 8, col = t % 16 * 8;
    float sums[8][8] = {};
    for (int k0 = 0; k0 < k; k0 += SLICE) {
        stage_slice(a, b, a_tile, b_tile, BLOCK, first_row, first_col, k0, m, n, k);
        __syncthreads();
        // Left a loop, here and in the two kernels after this one, as the
        // Rust kernels' step along a slice is (VECTOR_BLOCKING in
        // gpu/src/matmul/geometry.rs says why).
        for (int i = 0; i < SLICE; ++i) {
            float a_column[8], b_row[8];
            fragment(a_column, a_tile, i * BLOCK + row, 4);
            fragment(b_row, b_tile, i * BLOCK + col, 4);
#pragma unroll
            for (int r = 0; r < 8; ++r)
#pragma unroll
                for (int j = 0; j < 8; ++j) sums[r][j] += a_column[r] * b_row[j];
        }
        __syncthreads();
    }
    store_block(c, sums, [&](int r) { return first_row + row + r; },
                [&](int j) { return first_col + col + j; }, m, n);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
matmul_warptiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
    constexpr int A_ROWS = BLOCK + 4;
    float* a_tile = reinterpret_cast<float*>(aligned_tiles);
    float* b_tile = a_tile + A_ROWS * SLICE;
    int t = threadIdx.x;
    int first_row = blockIdx.y * BLOCK, first_col = blockIdx.x * BLOCK;
    int warp = t / 32, lane = t % 32;
    int row = warp / 4 * 64 + lane / 4 * 4;
    int col = warp % 4 * 32 + lane % 4 * 4;
    float sums[8][8] = {};
    for (int k0 = 0; k0 < k; k0 += SLICE) {
        stage_slice(a, b, a_tile, b_tile, A_ROWS, first_row, first_col, k0, m, n, k);
        __syncthreads();
        for (int i = 0; i < SLICE; ++i) {
            float a_column[8], b_row[8];
            fragment(a_column, a_tile, i * A_ROWS + row, 32);
            fragment(b_row, b_tile, i * BLOCK + col, 16);
#pragma unroll
            for (int r = 0; r < 8; ++r)
#pragma unroll
                for (int j = 0; j < 8; ++j) sums[r][j] += a_column[r] * b_row[j];
        }
        __syncthreads();
    }
    store_block(c, sums, [&](int r) { return first_row + row + r / 4 * 32 + r % 4; },
                [&](int j) { return first_col + col + j / 4 * 16 + j % 4; }, m, n);
}

// Starts copying *from (or zero, when !in_bounds) to *to: cp.async from
// compute capability 8.0 on, a load and a store below.
__device__ __forceinline__ void copy_async(float* to, const float* from, bool in_bounds) {
#if __CUDA_ARCH__ >= 800
    unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(shared), "l"(from),
                 "r"(in_bounds ? 4 : 0));
#else
    *to = in_bounds ? *from : 0.0f;
#endif
}

__device__ __forceinline__ void commit_copies() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}

// Waits until at most this thread's PENDING newest groups are in flight.
template <int PENDING>
__device__ __forceinline__ void wait_for_copies() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#endif
}

// Starts copying the count (0 to 4) floats from `from` on into the four
// from `to` on, zero-filling the rest: one 16-byte cp.async from compute
// capability 8.0 on.
__device__ __forceinline__ void copy_span_async(float* to, const float* from, int count) {
#if __CUDA_ARCH__ >= 800
    unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(from),
                 "r"(4 * count));
#else
#pragma unroll
    for (int i = 0; i < 4; ++i) to[i] = i < count ? from[i] : 0.0f;
#endif
}

// One slice of a ROWS×COLS tile, SLICE_K of k, as stage_slice stages it,
// with copies instead of loads and stores; where n is a multiple of 4,
// B's part in 16-byte spans.
template <int ROWS, int COLS, int SLICE_K, int THREADS>
__device__ __forceinline__ void copy_slice(const float* a, const float* b, float* a_tile,
                                           float* b_tile, int a_rows, int first_row,
                                           int first_col, int k0, int m, int n, int k) {
    constexpr int GROUP = A_SECTOR * ROWS;
    int t = threadIdx.x;
#pragma unroll
    for (int load = 0; load < ROWS * SLICE_K / THREADS; ++load) {
        int e = t + load * THREADS;
        int row = e % GROUP / A_SECTOR, i = e / GROUP * A_SECTOR + e % A_SECTOR;
        int a_row = first_row + row, a_col = k0 + i;
        bool a_in = a_row < m && a_col < k;
        copy_async(a_tile + i * a_rows + row, a_in ? a + a_row * k + a_col : a, a_in);
    }
    if (n % 4 == 0) {
        constexpr int SPANS_PER_ROW = COLS / 4;
#pragma unroll
        for (int load = 0; load < SLICE_K * SPANS_PER_ROW / THREADS; ++load) {
            int span = t + load * THREADS;
            int b_row = k0 + span / SPANS_PER_ROW, b_col = first_col + span % SPANS_PER_ROW * 4;
            int count = b_row < k && b_col < n ? min(n - b_col, 4) : 0;
            copy_span_async(b_tile + span * 4, count > 0 ? b + b_row * n + b_col : b, count);
        }
    } else {
#pragma unroll
        for (int load = 0; load < SLICE_K * COLS / THREADS; ++load) {
            int e = t + load * THREADS;
            int b_row = k0 + e / COLS, b_col = first_col + e % COLS;
            bool b_in = b_row < k && b_col < n;
            copy_async(b_tile + e, b_in ? b + b_row * n + b_col : b, b_in);
        }
    }
}

// sums += a_column · b_row, the outer product.
template <int THREAD_COLS>
__device__ __forceinline__ void add_outer_product(float (&sums)[8][THREAD_COLS],
                                                  const float (&a_column)[8],
                                                  const float (&b_row)[THREAD_COLS]) {
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int j = 0; j < THREAD_COLS; ++j) sums[r][j] += a_column[r] * b_row[j];
}

// The tile taken index-th of a C of across×down tiles, as (row, column)
// of tiles: tiles walk bands of BAND_ROWS rows, down each column of a band
// before the next (row by row where BAND_ROWS is 1;
// gpu/src/matmul/staging.rs).
template <unsigned BAND_ROWS>
__device__ __forceinline__ uint2 tile_at(unsigned index, unsigned across, unsigned down) {
    unsigned band = BAND_ROWS * across;
    unsigned first_row = index / band * BAND_ROWS;
    unsigned band_rows = min(BAND_ROWS, down - first_row);
    unsigned in_band = index % band;
    return make_uint2(first_row + in_band % band_rows, in_band / band_rows);
}
// This block's tile of C in a grid of one block a tile: block (x, y)
// takes tile (y, x) where BAND_ROWS is 1; otherwise the blocks, in the
// order they start, take them in bands.
template <unsigned BAND_ROWS>
__device__ __forceinline__ uint2 tile_of_block() {
    if (BAND_ROWS == 1) return make_uint2(blockIdx.y, blockIdx.x);
    return tile_at<BAND_ROWS>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y);
}

// The pipelined kernels' main loop (gpu/src/matmul/pipelined.rs,
// accumulate): two stages of a ROWS×COLS tile and SLICE_K of k, each warp
// 64 rows × 4·THREAD_COLS columns, each thread 8 × THREAD_COLS, tiles
// taken in bands of BAND_ROWS rows; the slices [first, last) of k, a
// range not empty, summed into `sums`, the block's tile at
// (first_row, first_col) of C and the thread's first row and column of
// it at (row, col).
template <int ROWS, int COLS, int SLICE_K, int THREAD_COLS, unsigned BAND_ROWS>
__device__ __forceinline__ void accumulate(const float* __restrict__ a,
                                           const float* __restrict__ b, int m, int n, int k,
                                           int first, int last, float (&sums)[8][THREAD_COLS],
                                           int& first_row, int& first_col, int& row, int& col) {
    constexpr int A_ROWS = ROWS + 4, STAGE = A_ROWS * SLICE_K + SLICE_K * COLS;
    constexpr int WARP_COLS = 4 * THREAD_COLS, WARPS_ACROSS = COLS / WARP_COLS;
    float* tiles = reinterpret_cast<float*>(aligned_tiles);
    int t = threadIdx.x;
    uint2 tile = tile_of_block<BAND_ROWS>();
    first_row = tile.x * ROWS;
    first_col = tile.y * COLS;
    int warp = t / 32, lane = t % 32;
    row = warp / WARPS_ACROSS * 64 + lane / 4 * 4;
    col = warp % WARPS_ACROSS * WARP_COLS + lane % 4 * 4;
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int j = 0; j < THREAD_COLS; ++j) sums[r][j] = 0.0f;
    // Copies `slice`, where there is one, and commits a group either way.
    auto copy = [&](int slice) {
        if (slice < last) {
            float* a_tile = tiles + slice % 2 * STAGE;
            copy_slice<ROWS, COLS, SLICE_K, ROWS / 8 * COLS / THREAD_COLS>(
                a, b, a_tile, a_tile + A_ROWS * SLICE_K, A_ROWS, first_row, first_col,
                slice * SLICE_K, m, n, k);
        }
        commit_copies();
    };
    // A thread's fragments of step `i` of `slice`.
    auto load = [&](float (&a_column)[8], float (&b_row)[THREAD_COLS], int slice, int i) {
        const float* a_tile = tiles + slice % 2 * STAGE;
        fragment(a_column, a_tile, i * A_ROWS + row, 32);
        fragment(b_row, a_tile + A_ROWS * SLICE_K, i * COLS + col, 16);
    };
    copy(first);
    wait_for_copies<0>();
    __syncthreads();
    // Steps in pairs, each on fragments loaded the step before; the last
    // step covers the wait and the barrier.
    float even_a[8], even_b[THREAD_COLS], odd_a[8], odd_b[THREAD_COLS];
    load(even_a, even_b, first, 0);
    for (int slice = first; slice < last; ++slice) {
        copy(slice + 1);
        for (int i = 0; i < SLICE_K - 2; i += 2) {
            load(odd_a, odd_b, slice, i + 1);
            add_outer_product(sums, even_a, even_b);
            load(even_a, even_b, slice, i + 2);
            add_outer_product(sums, odd_a, odd_b);
        }
        load(odd_a, odd_b, slice, SLICE_K - 1);
        add_outer_product(sums, even_a, even_b);
        wait_for_copies<0>();
        __syncthreads();
        load(even_a, even_b, min(slice + 1, last - 1), 0);
        add_outer_product(sums, odd_a, odd_b);
    }
}

// The pipelined kernels' one body (gpu/src/matmul/pipelined.rs): every
// slice of k, then the thread's block stored, 4×4 blocks 32 rows and 16
// columns apart.
template <int ROWS, int COLS, int SLICE_K, int THREAD_COLS, unsigned BAND_ROWS>
__device__ __forceinline__ void pipelined(const float* __restrict__ a,
                                          const float* __restrict__ b, float* __restrict__ c,
                                          int m, int n, int k) {
    float sums[8][THREAD_COLS];
    int first_row, first_col, row, col;
    accumulate<ROWS, COLS, SLICE_K, THREAD_COLS, BAND_ROWS>(
        a, b, m, n, k, 0, (k + SLICE_K - 1) / SLICE_K, sums, first_row, first_col, row, col);
    store_block(c, sums, [&](int r) { return first_row + row + r / 4 * 32 + r % 4; },
                [&](int j) { return first_col + col + j / 4 * 16 + j % 4; }, m, n);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
matmul_pipelined(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
    pipelined<BLOCK, BLOCK, SLICE, 8, 1>(a, b, c, m, n, k);
}

// A 128×256 tile of C per block, 8×16 per thread, slices of 8 of k.
constexpr int WIDE_COLS = 256, WIDE_SLICE = 8, WIDE_THREAD_COLS = 16;

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_wide(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
            int m, int n, int k) {
    pipelined<BLOCK, WIDE_COLS, WIDE_SLICE, WIDE_THREAD_COLS, 1>(a, b, c, m, n, k);
}

// Bands of 16 rows of tiles (gpu/src/matmul/geometry.rs, BAND_ROWS).
constexpr unsigned BAND_ROWS = 16;

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_rasterised(const float* __restrict__ a, const float* __restrict__ b,
                  float* __restrict__ c, int m, int n, int k) {
    pipelined<BLOCK, WIDE_COLS, WIDE_SLICE, WIDE_THREAD_COLS, BAND_ROWS>(a, b, c, m, n, k);
}

// A 128×192 tile of C per block, 8×12 per thread, slices of 16 of k
// (gpu/src/matmul/geometry.rs, MID_TILES), in bands.
constexpr int MID_COLS = 192, MID_THREAD_COLS = 12;

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_mid_tiles(const float* __restrict__ a, const float* __restrict__ b,
                 float* __restrict__ c, int m, int n, int k) {
    pipelined<BLOCK, MID_COLS, SLICE, MID_THREAD_COLS, BAND_ROWS>(a, b, c, m, n, k);
}

// A 64×64 tile of C per block of four warps, 8×4 per thread, slices of 16
// of k (gpu/src/matmul/geometry.rs, SMALL_TILES).
constexpr int SMALL_TILE = 64, SMALL_THREAD_COLS = 4;

extern "C" __global__ void __launch_bounds__(SMALL_TILE / 8 * SMALL_TILE / SMALL_THREAD_COLS, 4)
matmul_small_tiles(const float* __restrict__ a, const float* __restrict__ b,
                   float* __restrict__ c, int m, int n, int k) {
    pipelined<SMALL_TILE, SMALL_TILE, SLICE, SMALL_THREAD_COLS, 1>(a, b, c, m, n, k);
}

// Split k (gpu/src/matmul/split.rs): the small tiles with k divided among
// the SPLIT_K blocks of a cluster along z, each summing its range of
// slices, writing its partial tile into its own shared memory and, after a
// cluster barrier, summing its SPLIT_K-th of the tile's rows across the
// cluster's shared memory, in rank order.
constexpr int SPLIT_K = 4;

extern "C" __global__ void __launch_bounds__(SMALL_TILE / 8 * SMALL_TILE / SMALL_THREAD_COLS, 4)
matmul_split_k(const float* __restrict__ a, const float* __restrict__ b,
               float* __restrict__ c, int m, int n, int k) {
#if __CUDA_ARCH__ >= 900
    int rank = __clusterRelativeBlockRank();
    int slices = (k + SLICE - 1) / SLICE, each = (slices + SPLIT_K - 1) / SPLIT_K;
    int first = min(rank * each, slices), last = min((rank + 1) * each, slices);
    float sums[8][SMALL_THREAD_COLS] = {};
    int first_row = blockIdx.y * SMALL_TILE, first_col = blockIdx.x * SMALL_TILE, row, col;
    constexpr int WARPS_ACROSS = SMALL_TILE / (4 * SMALL_THREAD_COLS);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    row = warp / WARPS_ACROSS * 64 + lane / 4 * 4;
    col = warp % WARPS_ACROSS * 4 * SMALL_THREAD_COLS + lane % 4 * 4;
    // A block whose range is empty (k of fewer slices than blocks) adds
    // zeros.
    if (first < last)
        accumulate<SMALL_TILE, SMALL_TILE, SLICE, SMALL_THREAD_COLS, 1>(
            a, b, m, n, k, first, last, sums, first_row, first_col, row, col);
    // Every warp is done with the stages before they hold the tile.
    __syncthreads();
    // Rows padded by 4 words: a quarter-warp's 16-byte stores, two rows
    // of four threads, then fall in different banks.
    constexpr int STRIDE = SMALL_TILE + 4;
    float* tile = reinterpret_cast<float*>(aligned_tiles);
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int j = 0; j < SMALL_THREAD_COLS; j += 4)
            *reinterpret_cast<float4*>(
                &tile[(row + r / 4 * 32 + r % 4) * STRIDE + col + j / 4 * 16]) =
                make_float4(sums[r][j], sums[r][j + 1], sums[r][j + 2], sums[r][j + 3]);
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
    constexpr int ROWS_EACH = SMALL_TILE / SPLIT_K;
    for (int element = threadIdx.x; element < ROWS_EACH * SMALL_TILE; element += blockDim.x) {
        int tile_row = rank * ROWS_EACH + element / SMALL_TILE, tile_col = element % SMALL_TILE;
        float sum = 0.0f;
#pragma unroll
        for (int peer = 0; peer < SPLIT_K; ++peer)
            sum += static_cast<const float*>(
                __cluster_map_shared_rank(tile, peer))[tile_row * STRIDE + tile_col];
        int c_row = first_row + tile_row, c_col = first_col + tile_col;
        if (c_row < m && c_col < n) c[c_row * n + c_col] = sum;
    }
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
#else
    __trap();
#endif
}


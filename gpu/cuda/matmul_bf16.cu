// CUDA C++ twins of the kernels in gpu/src/matmul_bf16/: C (f32) = A·B,
// A (m×k) and B (k×n) bf16, all row-major, k and n multiples of 8. The
// bf16 elements travel as their 16 bits: no arithmetic touches them
// outside the tensor cores. mma.sync and ldmatrix are inline PTX, as
// CUTLASS's arch layer writes them; the fragments follow the PTX ISA's
// layouts for m16n8k16. Their __launch_bounds__ are the Rust kernels'.

typedef unsigned short mma_bf16;

#define MMA_GLOBAL_WARPS 4
// The staged rungs' tiles (gpu/src/matmul_bf16/mod.rs): 128 rows of C,
// 128 columns (STAGED) or 256 (PIPELINED), slices of 32 of k (64 and four
// stages pipelined), 8 warps as 2×4; B's slice in panels of 64 columns
// (gpu/src/matmul_bf16/layout.rs).
#define MMA_BLOCK_ROWS 128
#define MMA_SLICE 32
#define MMA_THREADS 256
#define MMA_PANEL 64
#define MMA_PIPELINED_SLICE 64
#define MMA_STAGES 4

// D = A·B + C on the tensor cores, C and D in d.
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
}

__device__ __forceinline__ unsigned mma_pair(mma_bf16 low, mma_bf16 high) {
    return unsigned(low) | unsigned(high) << 16;
}

extern "C" __global__ void __launch_bounds__(32 * MMA_GLOBAL_WARPS)
    mma_global(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
               float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*, const void*) {
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned g = lane / 4, q = lane % 4;
    unsigned row = (2 * blockIdx.y + warp / 2) * 16 + g;
    unsigned col = (2 * blockIdx.x + warp % 2) * 8 + g;
    auto a_at = [&](unsigned r, unsigned i) -> mma_bf16 {
        return r < m && i < k ? a[r * k + i] : mma_bf16(0);
    };
    auto b_at = [&](unsigned i, unsigned j) -> mma_bf16 {
        return i < k && j < n ? b[i * n + j] : mma_bf16(0);
    };
    float sum[4] = {0.f, 0.f, 0.f, 0.f};
    for (unsigned k0 = 0; k0 < k; k0 += 16) {
        unsigned i = k0 + 2 * q;
        unsigned fa[4] = {mma_pair(a_at(row, i), a_at(row, i + 1)),
                          mma_pair(a_at(row + 8, i), a_at(row + 8, i + 1)),
                          mma_pair(a_at(row, i + 8), a_at(row, i + 9)),
                          mma_pair(a_at(row + 8, i + 8), a_at(row + 8, i + 9))};
        unsigned fb[2] = {mma_pair(b_at(i, col), b_at(i + 1, col)),
                          mma_pair(b_at(i + 8, col), b_at(i + 9, col))};
        mma_m16n8k16(sum, fa, fb);
    }
    unsigned first_col = col - g + 2 * q;
#pragma unroll
    for (unsigned d = 0; d < 4; ++d) {
        unsigned r = row + 8 * (d / 2), j = first_col + d % 2;
        if (r < m && j < n) {
            c[r * n + j] = sum[d];
        }
    }
}

// Where element (row, col) of a stage lies, in elements: A's slice of
// ROWS×SLICE first, then B's of SLICE×COLS as panels of 64 columns, each
// row PAD elements longer than its data, 16-byte chunks XORed with their
// 128-byte line's index mod 8 if SWIZZLE.
__device__ __forceinline__ unsigned mma_swizzle(unsigned index) {
    return index ^ (((index >> 6) & 7) << 3);
}

template <unsigned COLS, unsigned SLICE, unsigned PAD, bool SWIZZLE>
struct MmaLayout {
    static constexpr unsigned A_ELEMENTS = MMA_BLOCK_ROWS * (SLICE + PAD);
    static constexpr unsigned STAGE_ELEMENTS =
        A_ELEMENTS + SLICE * (COLS / MMA_PANEL) * (MMA_PANEL + PAD);
    __device__ static unsigned a(unsigned row, unsigned col) {
        unsigned index = row * (SLICE + PAD) + col;
        return SWIZZLE ? mma_swizzle(index) : index;
    }
    __device__ static unsigned b(unsigned row, unsigned col) {
        unsigned stride = MMA_PANEL + PAD;
        unsigned index = (col / MMA_PANEL) * SLICE * stride + row * stride + col % MMA_PANEL;
        return A_ELEMENTS + (SWIZZLE ? mma_swizzle(index) : index);
    }
};

// Calls copy(is_b, row, col, from, inside) for each 16-byte chunk of a
// ROWS×COLS slice from (first_row, first_col) of a height×width matrix
// that this thread copies, the block's threads taking consecutive chunks
// (a step's chunks whole rows).
template <unsigned ROWS, unsigned COLS, typename Copy>
__device__ __forceinline__ void mma_each_operand_chunk(bool is_b, unsigned height,
                                                       unsigned width, unsigned first_row,
                                                       unsigned first_col, Copy& copy) {
    constexpr unsigned CHUNKS = COLS / 8, ROWS_PER_STEP = MMA_THREADS / CHUNKS;
    unsigned first = threadIdx.x / CHUNKS, col = threadIdx.x % CHUNKS * 8;
#pragma unroll
    for (unsigned step = 0; step < ROWS / ROWS_PER_STEP; ++step) {
        unsigned row = first + step * ROWS_PER_STEP;
        unsigned r = first_row + row, j = first_col + col;
        copy(is_b, row, col, r * width + j, r < height && j < width);
    }
}

// The same for the slice from k0 of A (ROWS×SLICE) and of B (SLICE×COLS)
// (gpu/src/matmul_bf16/staged.rs).
template <unsigned ROWS, unsigned COLS, unsigned SLICE, typename Copy>
__device__ __forceinline__ void mma_each_chunk(unsigned m, unsigned n, unsigned k, unsigned row0,
                                               unsigned col0, unsigned k0, Copy copy) {
    mma_each_operand_chunk<ROWS, SLICE>(false, m, k, row0, k0, copy);
    mma_each_operand_chunk<SLICE, COLS>(true, k, n, k0, col0, copy);
}

// Copies the slice from k0 of A and of B into stage, laid out by L, 16
// bytes loaded and stored a chunk, zeros past the matrices' edges
// (gpu/src/matmul_bf16/staged.rs).
template <unsigned COLS, unsigned SLICE, typename L>
__device__ __forceinline__ void mma_stage_slice(mma_bf16* stage, const mma_bf16* __restrict__ a,
                                                const mma_bf16* __restrict__ b, unsigned m,
                                                unsigned n, unsigned k, unsigned row0,
                                                unsigned col0, unsigned k0) {
    mma_each_chunk<MMA_BLOCK_ROWS, COLS, SLICE>(
        m, n, k, row0, col0, k0,
        [&](bool is_b, unsigned row, unsigned col, unsigned from, bool inside) {
            const mma_bf16* matrix = is_b ? b : a;
            uint4 line = inside ? __ldg(reinterpret_cast<const uint4*>(matrix + from))
                                : make_uint4(0, 0, 0, 0);
            *reinterpret_cast<uint4*>(stage + (is_b ? L::b(row, col) : L::a(row, col))) = line;
        });
}

// ldmatrix .x4, transposed if TRANS, from the 16 bytes at address.
template <bool TRANS>
__device__ __forceinline__ void mma_load_matrices(unsigned (&r)[4], const mma_bf16* address) {
#if __CUDA_ARCH__ >= 800
    unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(address));
    if (TRANS) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(shared));
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(shared));
    }
#else
    __trap();
#endif
}

// The warp's fragments of 16 of k from i on: A's M_TILES, B's N_TILES,
// two by each ldmatrix.
template <unsigned COLS, unsigned M_TILES, unsigned N_TILES, typename L>
__device__ __forceinline__ void mma_fragments(const mma_bf16* stage, unsigned i,
                                              unsigned (&fa)[M_TILES][4],
                                              unsigned (&fb)[N_TILES][2]) {
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned warp_row = warp / 4 * (MMA_BLOCK_ROWS / 2), warp_col = warp % 4 * (COLS / 4);
#pragma unroll
    for (unsigned t = 0; t < M_TILES; ++t) {
        unsigned row = warp_row + 16 * t + lane % 16;
        mma_load_matrices<false>(fa[t], stage + L::a(row, i + lane / 16 * 8));
    }
#pragma unroll
    for (unsigned pair = 0; pair < N_TILES / 2; ++pair) {
        unsigned col = warp_col + 16 * pair + lane / 16 * 8;
        unsigned r[4];
        mma_load_matrices<true>(r, stage + L::b(i + lane % 16, col));
        fb[2 * pair][0] = r[0];
        fb[2 * pair][1] = r[1];
        fb[2 * pair + 1][0] = r[2];
        fb[2 * pair + 1][1] = r[3];
    }
}

// The warp's products of the slice in stage (gpu/src/matmul_bf16/
// warp_tile.rs): its M_TILES×N_TILES mma tiles, 16 of k at a time, the
// next 16's fragments loaded before these are multiplied.
template <unsigned COLS, unsigned SLICE, unsigned M_TILES, unsigned N_TILES, typename L>
__device__ __forceinline__ void mma_multiply_slice(const mma_bf16* stage,
                                                   float (&sums)[M_TILES][N_TILES][4]) {
    unsigned fa[2][M_TILES][4], fb[2][N_TILES][2];
    mma_fragments<COLS, M_TILES, N_TILES, L>(stage, 0, fa[0], fb[0]);
#pragma unroll
    for (unsigned step = 0; step < SLICE / 16; ++step) {
        if (step + 1 < SLICE / 16) {
            mma_fragments<COLS, M_TILES, N_TILES, L>(stage, (step + 1) * 16, fa[(step + 1) % 2],
                                                     fb[(step + 1) % 2]);
        }
#pragma unroll
        for (unsigned t = 0; t < M_TILES; ++t) {
#pragma unroll
            for (unsigned u = 0; u < N_TILES; ++u) {
                mma_m16n8k16(sums[t][u], fa[step % 2][t], fb[step % 2][u]);
            }
        }
    }
}

// Stores the warp's sums to C, two neighbouring columns a store.
template <unsigned COLS, unsigned M_TILES, unsigned N_TILES>
__device__ __forceinline__ void mma_store(const float (&sums)[M_TILES][N_TILES][4],
                                          float* __restrict__ c, unsigned row0, unsigned col0,
                                          unsigned m, unsigned n) {
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned row = row0 + warp / 4 * (MMA_BLOCK_ROWS / 2) + lane / 4;
    unsigned col = col0 + warp % 4 * (COLS / 4) + 2 * (lane % 4);
#pragma unroll
    for (unsigned t = 0; t < M_TILES; ++t) {
#pragma unroll
        for (unsigned half = 0; half < 2; ++half) {
            unsigned r = row + 16 * t + 8 * half;
#pragma unroll
            for (unsigned u = 0; u < N_TILES; ++u) {
                unsigned j = col + 8 * u;
                if (r < m && j < n) {
                    *reinterpret_cast<float2*>(c + r * n + j) =
                        make_float2(sums[t][u][2 * half], sums[t][u][2 * half + 1]);
                }
            }
        }
    }
}

// The staged rungs (gpu/src/matmul_bf16/staged.rs): a 128×128 tile of C,
// each slice loaded 16 bytes at a time into registers and stored.
template <typename L>
__device__ __forceinline__ void mma_staged(const mma_bf16* __restrict__ a,
                                           const mma_bf16* __restrict__ b,
                                           float* __restrict__ c, unsigned m, unsigned n,
                                           unsigned k) {
    extern __shared__ __align__(1024) mma_bf16 mma_tile[];
    constexpr unsigned COLS = 128, M_TILES = 4, N_TILES = 4;
    unsigned row0 = blockIdx.y * MMA_BLOCK_ROWS, col0 = blockIdx.x * COLS;
    float sums[M_TILES][N_TILES][4] = {};
    for (unsigned k0 = 0; k0 < k; k0 += MMA_SLICE) {
        mma_stage_slice<COLS, MMA_SLICE, L>(mma_tile, a, b, m, n, k, row0, col0, k0);
        __syncthreads();
        mma_multiply_slice<COLS, MMA_SLICE, M_TILES, N_TILES, L>(mma_tile, sums);
        __syncthreads();
    }
    mma_store<COLS>(sums, c, row0, col0, m, n);
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_ldmatrix(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                 float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*, const void*) {
    mma_staged<MmaLayout<128, MMA_SLICE, 0, false>>(a, b, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_padded(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
               float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*, const void*) {
    mma_staged<MmaLayout<128, MMA_SLICE, 8, false>>(a, b, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_swizzled(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                 float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*, const void*) {
    mma_staged<MmaLayout<128, MMA_SLICE, 0, true>>(a, b, c, m, n, k);
}

// One 16-byte cp.async, zero-filling when !inside.
__device__ __forceinline__ void mma_copy_async(mma_bf16* to, const mma_bf16* from, bool inside) {
#if __CUDA_ARCH__ >= 800
    unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(from),
                 "r"(inside ? 16u : 0u));
#else
    __trap();
#endif
}

// The last rung (gpu/src/matmul_bf16/pipelined.rs): a 128×256 tile,
// STAGES slices of SLICE in flight by cp.async, tiles taken in bands of
// BAND_ROWS rows; at a slice's last step the block meets at the barrier,
// starts the copy into the stage it leaves and loads the next slice's
// first fragments before this step's mma.
extern "C" __global__ void __launch_bounds__(MMA_THREADS, 1)
    mma_pipelined(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                  float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*, const void*) {
    constexpr unsigned SLICE = MMA_PIPELINED_SLICE, STAGES = MMA_STAGES;
    extern __shared__ __align__(1024) mma_bf16 mma_stages[];
    constexpr unsigned COLS = 256, M_TILES = 4, N_TILES = 8;
    using L = MmaLayout<COLS, SLICE, 0, true>;
    uint2 tile = tile_of_block<BAND_ROWS>();
    unsigned row0 = tile.x * MMA_BLOCK_ROWS, col0 = tile.y * COLS;
    unsigned slices = (k + SLICE - 1) / SLICE;
    auto start_slice = [&](unsigned slice) {
        if (slice < slices) {
            mma_bf16* stage = mma_stages + slice % STAGES * L::STAGE_ELEMENTS;
            mma_each_chunk<MMA_BLOCK_ROWS, COLS, SLICE>(
                m, n, k, row0, col0, slice * SLICE,
                [&](bool is_b, unsigned row, unsigned col, unsigned from, bool inside) {
                    const mma_bf16* matrix = is_b ? b : a;
                    mma_copy_async(stage + (is_b ? L::b(row, col) : L::a(row, col)),
                                   matrix + (inside ? from : 0), inside);
                });
        }
        asm volatile("cp.async.commit_group;");
    };
    float sums[M_TILES][N_TILES][4] = {};
#pragma unroll
    for (unsigned slice = 0; slice < STAGES - 1; ++slice) start_slice(slice);
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
    __syncthreads();
    start_slice(STAGES - 1);
    // The fragments of step s in buffer s % 2; a slice's steps are even,
    // so that every slice starts in buffer 0.
    constexpr unsigned STEPS = SLICE / 16;
    static_assert(STEPS % 2 == 0, "a slice's first step in buffer 0");
    unsigned fa[2][M_TILES][4], fb[2][N_TILES][2];
    mma_fragments<COLS, M_TILES, N_TILES, L>(mma_stages, 0, fa[0], fb[0]);
    for (unsigned slice = 0; slice < slices; ++slice) {
        const mma_bf16* stage = mma_stages + slice % STAGES * L::STAGE_ELEMENTS;
#pragma unroll
        for (unsigned step = 0; step < STEPS; ++step) {
            if (step + 1 < STEPS) {
                mma_fragments<COLS, M_TILES, N_TILES, L>(stage, (step + 1) * 16, fa[(step + 1) % 2],
                                                         fb[(step + 1) % 2]);
            } else {
                asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
                __syncthreads();
                start_slice(slice + STAGES);
                if (slice + 1 < slices) {
                    mma_fragments<COLS, M_TILES, N_TILES, L>(
                        mma_stages + (slice + 1) % STAGES * L::STAGE_ELEMENTS, 0, fa[0], fb[0]);
                }
            }
#pragma unroll
            for (unsigned t = 0; t < M_TILES; ++t) {
#pragma unroll
                for (unsigned u = 0; u < N_TILES; ++u) {
                    mma_m16n8k16(sums[t][u], fa[step % 2][t], fb[step % 2][u]);
                }
            }
        }
    }
    mma_store<COLS>(sums, c, row0, col0, m, n);
}

// The first Hopper rung (gpu/src/matmul_bf16/warpgroup.rs): the staged
// swizzled slices of 64, multiplied by two warpgroups' wgmma, which read
// A (K-major) and B (N-major, its panels LBO bytes apart) through matrix
// descriptors with the 128-byte swizzle; wgmma and its fences are inline
// PTX for sm_90a, as CUTLASS's arch layer writes them.
__device__ __forceinline__ unsigned long long mma_descriptor(const mma_bf16* first,
                                                             unsigned leading, unsigned stride) {
    unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(first));
    return (unsigned long long)((address >> 4) & 0x3fff) |
           (unsigned long long)((leading >> 4) & 0x3fff) << 16 |
           (unsigned long long)((stride >> 4) & 0x3fff) << 32 | 1ull << 62;
}

// D = A·B + D for a 64×128×16 step, B transposed (N-major).
__device__ __forceinline__ void mma_wgmma_m64n128k16(float (&d)[64], unsigned long long a,
                                                     unsigned long long b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
          "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
          "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(1));
#else
    __trap();
#endif
}

// D = A·B + D for a 64×128×16 step, A from the four registers of each
// lane (its warp's 16 rows, in mma.sync's A layout), B transposed.
__device__ __forceinline__ void mma_wgmma_m64n128k16_rs(float (&d)[64], const unsigned (&a)[4],
                                                        unsigned long long b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
          "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
          "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
#else
    __trap();
#endif
}

// D = A·B + D for a 64×256×16 step, B transposed (N-major).
__device__ __forceinline__ void mma_wgmma_m64n256k16(float (&d)[128], unsigned long long a,
                                                     unsigned long long b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
          "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
          "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
          "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
          "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
          "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
          "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
          "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]),
          "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
          "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
          "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),
          "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
          "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
          "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]),
          "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]),
          "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
          "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
          "+f"(d[127])
        : "l"(a), "l"(b), "r"(1));
#else
    __trap();
#endif
}

// Adds to the warpgroup's accumulators its 64 rows of the stage's A times
// the stage's 2F columns of B: four wgmma of 16 k (warpgroup.rs's
// multiply_slice).
template <unsigned F>
__device__ __forceinline__ void mma_wgmma_slice(float (&d)[F], const mma_bf16* stage,
                                                unsigned group) {
    constexpr unsigned SLICE = 64;
    using L = MmaLayout<2 * F, SLICE, 0, true>;
#pragma unroll
    for (unsigned step = 0; step < SLICE / 16; ++step) {
        unsigned long long da = mma_descriptor(stage + group * 64 * SLICE + 16 * step, 16, 1024);
        unsigned long long db =
            mma_descriptor(stage + L::A_ELEMENTS + 16 * 64 * step, 2 * SLICE * 64, 1024);
        if constexpr (F == 64) {
            mma_wgmma_m64n128k16(d, da, db);
        } else {
            mma_wgmma_m64n256k16(d, da, db);
        }
    }
}

// Stores the warpgroup's 64×2F tile of C from (row0, col0).
template <unsigned F>
__device__ __forceinline__ void mma_wgmma_store(const float (&d)[F], float* __restrict__ c,
                                                unsigned row0, unsigned col0, unsigned m,
                                                unsigned n) {
    unsigned warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    unsigned row = row0 + 16 * warp + lane / 4, col = col0 + 2 * (lane % 4);
#pragma unroll
    for (unsigned i = 0; i < F / 4; ++i) {
#pragma unroll
        for (unsigned half = 0; half < 2; ++half) {
            unsigned r = row + 8 * half, j = col + 8 * i;
            if (r < m && j < n) {
                *reinterpret_cast<float2*>(c + r * n + j) =
                    make_float2(d[4 * i + 2 * half], d[4 * i + 2 * half + 1]);
            }
        }
    }
}

// mma_warpgroups (below) with A from registers (warpgroup.rs's
// multiply_slice_registers): each warp loads its 16 rows of the slice's
// four steps by ldmatrix, then, behind one wgmma.fence for those
// registers, the four wgmma read B through their descriptors.
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_a_registers(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                    float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*,
                    const void*) {
    constexpr unsigned SLICE = 64, COLS = 128, STEPS = SLICE / 16;
    using L = MmaLayout<COLS, SLICE, 0, true>;
    extern __shared__ __align__(1024) mma_bf16 mma_a_registers_tile[];
    unsigned row0 = blockIdx.y * MMA_BLOCK_ROWS, col0 = blockIdx.x * COLS;
    unsigned group = threadIdx.x / 128, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    unsigned row = 64 * group + 16 * warp + lane % 16;
    float d[64] = {};
    for (unsigned k0 = 0; k0 < k; k0 += SLICE) {
        mma_stage_slice<COLS, SLICE, L>(mma_a_registers_tile, a, b, m, n, k, row0, col0, k0);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
        __syncthreads();
        unsigned fragments[STEPS][4];
#pragma unroll
        for (unsigned step = 0; step < STEPS; ++step) {
            mma_load_matrices<false>(fragments[step],
                                     mma_a_registers_tile + L::a(row, 16 * step + lane / 16 * 8));
        }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
#pragma unroll
        for (unsigned step = 0; step < STEPS; ++step) {
            unsigned long long db = mma_descriptor(mma_a_registers_tile + L::A_ELEMENTS + 16 * 64 * step,
                                                   2 * SLICE * 64, 1024);
            mma_wgmma_m64n128k16_rs(d, fragments[step], db);
        }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;" ::
                         : "memory");
#endif
        __syncthreads();
    }
    mma_wgmma_store(d, c, row0 + 64 * group, col0, m, n);
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_warpgroups(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                   float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void*,
                   const void*) {
    constexpr unsigned SLICE = 64, COLS = 128;
    using L = MmaLayout<COLS, SLICE, 0, true>;
    extern __shared__ __align__(1024) mma_bf16 mma_warpgroup_tile[];
    unsigned row0 = blockIdx.y * MMA_BLOCK_ROWS, col0 = blockIdx.x * COLS;
    unsigned group = threadIdx.x / 128;
    float d[64] = {};
    for (unsigned k0 = 0; k0 < k; k0 += SLICE) {
        mma_stage_slice<COLS, SLICE, L>(mma_warpgroup_tile, a, b, m, n, k, row0, col0, k0);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
        __syncthreads();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
        mma_wgmma_slice(d, mma_warpgroup_tile, group);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;" ::
                         : "memory");
#endif
        __syncthreads();
    }
    mma_wgmma_store(d, c, row0 + 64 * group, col0, m, n);
}

// The TMA rungs' ring (ring.rs's Ring): STAGES stages of STAGE elements
// from `ring` on, then each stage's full barrier and its empty one.
template <unsigned STAGES, unsigned STAGE>
struct MmaRing {
    unsigned ring;
    __device__ unsigned full(unsigned stage) const { return ring + 2 * STAGES * STAGE + 8 * stage; }
    __device__ unsigned empty(unsigned stage) const {
        return ring + 2 * STAGES * STAGE + 8 * (STAGES + stage);
    }
    // Thread 0 acquires the maps and initialises the barriers, the empty
    // ones for `readers` arrivals; the block passes a barrier.
    __device__ void init(const void* a_map, const void* b_map, unsigned readers) const {
        if (threadIdx.x == 0) {
            asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(a_map)
                         : "memory");
            asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(b_map)
                         : "memory");
#pragma unroll
            for (unsigned stage = 0; stage < STAGES; ++stage) {
                init_barrier(full(stage), 1);
                init_barrier(empty(stage), readers);
            }
        }
        __syncthreads();
    }
    // Copies slice `slice` of the ROWS×COLS tile at (row0, col0) into the
    // stage of ring position `position`: A's box, then B's panels of 64
    // columns.
    template <unsigned ROWS, unsigned COLS, unsigned SLICE>
    __device__ void load(const void* a_map, const void* b_map, unsigned position, unsigned slice,
                         unsigned row0, unsigned col0) const {
        unsigned stage = position % STAGES, first = ring + 2 * stage * STAGE, k0 = slice * SLICE;
        auto copy = [&](unsigned to, const void* map, unsigned x, unsigned y) {
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                "[%0], [%1, {%2, %3}], [%4];" ::"r"(to),
                "l"(map), "r"(x), "r"(y), "r"(full(stage))
                : "memory");
        };
        arrive_expect_tx(full(stage), 2 * STAGE);
        copy(first, a_map, k0, row0);
#pragma unroll
        for (unsigned panel = 0; panel < COLS / 64; ++panel) {
            copy(first + 2 * (ROWS * SLICE + panel * SLICE * 64), b_map, col0 + 64 * panel, k0);
        }
    }
};

// The second Hopper rung (gpu/src/matmul_bf16/ring.rs): thread 0 copies
// each slice by the TMA, one box of A and two of B's panels, into a ring of
// MMA_RING_STAGES stages; a stage's full barrier completes on its bytes,
// its empty barrier on every thread's arrival once the wgmmas that read it
// are done (wgmma.wait_group 1 leaves one slice's in flight).
#define MMA_RING_STAGES 4
extern "C" __global__ void __launch_bounds__(MMA_THREADS, 1)
    mma_tma(const mma_bf16* __restrict__, const mma_bf16* __restrict__, float* __restrict__ c,
            unsigned m, unsigned n, unsigned k, const void* a_map, const void* b_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr unsigned SLICE = 64, COLS = 128, STAGES = MMA_RING_STAGES;
    constexpr unsigned STAGE = MmaLayout<COLS, SLICE, 0, true>::STAGE_ELEMENTS;
    extern __shared__ __align__(1024) mma_bf16 mma_ring[];
    const MmaRing<STAGES, STAGE> ring{static_cast<unsigned>(__cvta_generic_to_shared(mma_ring))};
    unsigned row0 = blockIdx.y * MMA_BLOCK_ROWS, col0 = blockIdx.x * COLS;
    bool producer = threadIdx.x == 0;
    unsigned slices = (k + SLICE - 1) / SLICE;
    auto load = [&](unsigned slice) {
        ring.template load<MMA_BLOCK_ROWS, COLS, SLICE>(a_map, b_map, slice, slice, row0, col0);
    };
    ring.init(a_map, b_map, MMA_THREADS);
    if (producer) {
        for (unsigned slice = 0; slice < min(slices, STAGES); ++slice) load(slice);
    }
    unsigned group = threadIdx.x / 128;
    float d[64] = {};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (unsigned slice = 0; slice < slices; ++slice) {
        unsigned stage = slice % STAGES;
        wait_for_phase(ring.full(stage), slice / STAGES % 2);
        // A fence each slice: without it ptxas puts one in the producer's
        // branch and serialises the wgmmas (its warning C7519).
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        mma_wgmma_slice(d, mma_ring + stage * STAGE, group);
        asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 1;" ::
                         : "memory");
        if (slice > 0) {
            unsigned done = slice - 1, freed = done % STAGES;
            asm volatile("{ .reg .b64 state; mbarrier.arrive.shared::cta.b64 state, [%0]; }" ::"r"(
                             ring.empty(freed))
                         : "memory");
            if (producer && done + STAGES < slices) {
                wait_for_phase(ring.empty(freed), done / STAGES % 2);
                load(done + STAGES);
            }
        }
    }
    asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;" ::: "memory");
    mma_wgmma_store(d, c, row0 + 64 * group, col0, m, n);
#else
    __trap();
#endif
}

// elect.sync over the whole warp: true in one lane (cute's elect_one_sync).
__device__ __forceinline__ bool mma_elect_one() {
    unsigned elected = 0;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(elected));
#else
    __trap();
#endif
    return elected != 0;
}

// The third and fourth Hopper rungs' one body
// (gpu/src/matmul_bf16/specialized.rs): 128×256 tiles, the block's first
// warpgroup the producer (setmaxnreg.dec to 40, one elected lane of its
// first warp refilling each stage once the consumers have left it), the
// other two the consumers (setmaxnreg.inc to 232), each a 64×256 half of a
// tile. A block takes the tile its index names, then every grid's worth
// after it, in bands of BAND_ROWS rows; the ring runs on from one tile into
// the next.
#define MMA_SPECIALIZED_THREADS 384
template <unsigned BAND_ROWS>
__device__ __forceinline__ void mma_specialized_tiles(float* __restrict__ c, unsigned m,
                                                      unsigned n, unsigned k, const void* a_map,
                                                      const void* b_map) {
    constexpr unsigned SLICE = 64, COLS = 256, STAGES = MMA_RING_STAGES, CONSUMERS = 256;
    constexpr unsigned STAGE = MmaLayout<COLS, SLICE, 0, true>::STAGE_ELEMENTS;
    extern __shared__ __align__(1024) mma_bf16 mma_specialized_ring[];
    const MmaRing<STAGES, STAGE> ring{
        static_cast<unsigned>(__cvta_generic_to_shared(mma_specialized_ring))};
    unsigned slices = (k + SLICE - 1) / SLICE;
    unsigned across = (n + COLS - 1) / COLS, down = (m + MMA_BLOCK_ROWS - 1) / MMA_BLOCK_ROWS;
    unsigned first_tile = blockIdx.y * gridDim.x + blockIdx.x, step = gridDim.x * gridDim.y;
    unsigned group = threadIdx.x / 128;
    ring.init(a_map, b_map, CONSUMERS);
    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x >= 32 || !mma_elect_one()) return;
        unsigned position = 0;
        for (unsigned t = first_tile; t < across * down; t += step) {
            uint2 tile = tile_at<BAND_ROWS>(t, across, down);
            for (unsigned slice = 0; slice < slices; ++slice, ++position) {
                if (position >= STAGES) {
                    wait_for_phase(ring.empty(position % STAGES), (position / STAGES - 1) % 2);
                }
                ring.template load<MMA_BLOCK_ROWS, COLS, SLICE>(
                    a_map, b_map, position, slice, tile.x * MMA_BLOCK_ROWS, tile.y * COLS);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    unsigned consumer = group - 1, first = 0;
    auto release = [&](unsigned position) {
        asm volatile("{ .reg .b64 state; mbarrier.arrive.shared::cta.b64 state, [%0]; }" ::"r"(
                         ring.empty(position % STAGES))
                     : "memory");
    };
    for (unsigned t = first_tile; t < across * down; t += step) {
        uint2 tile = tile_at<BAND_ROWS>(t, across, down);
        float d[128] = {};
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        for (unsigned position = first; position < first + slices; ++position) {
            wait_for_phase(ring.full(position % STAGES), position / STAGES % 2);
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
            mma_wgmma_slice(d, mma_specialized_ring + position % STAGES * STAGE, consumer);
            asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 1;" ::
                             : "memory");
            if (position > first) release(position - 1);
        }
        first += slices;
        asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;" ::
                         : "memory");
        if (first > 0) release(first - 1);
        mma_wgmma_store(d, c, tile.x * MMA_BLOCK_ROWS + 64 * consumer, tile.y * COLS, m, n);
    }
}

// The third rung: one block a tile, row by row.
extern "C" __global__ void __launch_bounds__(MMA_SPECIALIZED_THREADS, 1)
    mma_specialized(const mma_bf16* __restrict__, const mma_bf16* __restrict__,
                    float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void* a_map,
                    const void* b_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    mma_specialized_tiles<1>(c, m, n, k, a_map, b_map);
#else
    __trap();
#endif
}

// The fourth rung, persistent: one block an SM (132), each walking every
// 132nd tile in bands of BAND_ROWS rows.
extern "C" __global__ void __launch_bounds__(MMA_SPECIALIZED_THREADS, 1)
    mma_persistent(const mma_bf16* __restrict__, const mma_bf16* __restrict__,
                   float* __restrict__ c, unsigned m, unsigned n, unsigned k, const void* a_map,
                   const void* b_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    mma_specialized_tiles<BAND_ROWS>(c, m, n, k, a_map, b_map);
#else
    __trap();
#endif
}

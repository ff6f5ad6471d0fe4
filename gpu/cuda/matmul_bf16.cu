// CUDA C++ twins of the kernels in gpu/src/matmul_bf16/: C (f32) = A·B,
// A (m×k) and B (k×n) bf16, all row-major, k and n multiples of 8. The
// bf16 elements travel as their 16 bits: no arithmetic touches them
// outside the tensor cores. mma.sync and ldmatrix are inline PTX, as
// CUTLASS's arch layer writes them; the fragments follow the PTX ISA's
// layouts for m16n8k16. Their __launch_bounds__ are the Rust kernels'.

typedef unsigned short mma_bf16;

#define MMA_GLOBAL_WARPS 4
#define MMA_BLOCK_ROWS 128
#define MMA_BLOCK_COLS 128
#define MMA_SLICE 32
#define MMA_THREADS 256
#define MMA_PANEL 64
#define MMA_PAD 8

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
               float* __restrict__ c, unsigned m, unsigned n, unsigned k) {
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

// Where element (row, col) of the staged slices lies, in elements: A's
// slice first, then B's as two 64-column panels.
struct MmaUnpadded {
    static constexpr unsigned A_ELEMENTS = MMA_BLOCK_ROWS * MMA_SLICE;
    static constexpr unsigned B_ELEMENTS = MMA_SLICE * MMA_BLOCK_COLS;
    __device__ static unsigned a(unsigned row, unsigned col) { return row * MMA_SLICE + col; }
    __device__ static unsigned b(unsigned row, unsigned col) {
        return A_ELEMENTS + (col / MMA_PANEL) * MMA_SLICE * MMA_PANEL + row * MMA_PANEL +
               col % MMA_PANEL;
    }
};

struct MmaPadded {
    static constexpr unsigned A_ELEMENTS = MMA_BLOCK_ROWS * (MMA_SLICE + MMA_PAD);
    static constexpr unsigned B_ELEMENTS =
        MMA_SLICE * (MMA_BLOCK_COLS / MMA_PANEL) * (MMA_PANEL + MMA_PAD);
    __device__ static unsigned a(unsigned row, unsigned col) {
        return row * (MMA_SLICE + MMA_PAD) + col;
    }
    __device__ static unsigned b(unsigned row, unsigned col) {
        return A_ELEMENTS + (col / MMA_PANEL) * MMA_SLICE * (MMA_PANEL + MMA_PAD) +
               row * (MMA_PANEL + MMA_PAD) + col % MMA_PANEL;
    }
};

__device__ __forceinline__ unsigned mma_swizzle(unsigned index) {
    return index ^ (((index >> 6) & 7) << 3);
}

struct MmaSwizzled {
    static constexpr unsigned A_ELEMENTS = MmaUnpadded::A_ELEMENTS;
    static constexpr unsigned B_ELEMENTS = MmaUnpadded::B_ELEMENTS;
    __device__ static unsigned a(unsigned row, unsigned col) {
        return mma_swizzle(MmaUnpadded::a(row, col));
    }
    __device__ static unsigned b(unsigned row, unsigned col) {
        return A_ELEMENTS + mma_swizzle(MmaUnpadded::b(row, col) - A_ELEMENTS);
    }
};

// Copies a ROWS×COLS slice of matrix (height×width) from (row0, col0)
// into tile at at(row, col), 16 bytes a thread a step, zeros past it.
template <unsigned ROWS, unsigned COLS, typename At>
__device__ __forceinline__ void mma_stage(const mma_bf16* __restrict__ matrix, unsigned height,
                                          unsigned width, unsigned row0, unsigned col0,
                                          mma_bf16* tile, At at) {
    constexpr unsigned CHUNKS = COLS / 8;
#pragma unroll
    for (unsigned step = 0; step < ROWS * CHUNKS / MMA_THREADS; ++step) {
        unsigned chunk = step * MMA_THREADS + threadIdx.x;
        unsigned row = chunk / CHUNKS, col = chunk % CHUNKS * 8;
        unsigned r = row0 + row, j = col0 + col;
        uint4 line = make_uint4(0, 0, 0, 0);
        if (r < height && j < width) {
            line = __ldg(reinterpret_cast<const uint4*>(matrix + r * width + j));
        }
        *reinterpret_cast<uint4*>(tile + at(row, col)) = line;
    }
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

template <typename L>
__device__ __forceinline__ void mma_staged(const mma_bf16* __restrict__ a,
                                           const mma_bf16* __restrict__ b,
                                           float* __restrict__ c, unsigned m, unsigned n,
                                           unsigned k) {
    extern __shared__ __align__(1024) mma_bf16 mma_tile[];
    constexpr unsigned WARP_ROWS = 64, WARP_COLS = 32, M_TILES = 4, N_TILES = 4;
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned row0 = blockIdx.y * MMA_BLOCK_ROWS, col0 = blockIdx.x * MMA_BLOCK_COLS;
    unsigned warp_row = warp / 4 * WARP_ROWS, warp_col = warp % 4 * WARP_COLS;
    float sums[M_TILES][N_TILES][4] = {};
    for (unsigned k0 = 0; k0 < k; k0 += MMA_SLICE) {
        mma_stage<MMA_BLOCK_ROWS, MMA_SLICE>(a, m, k, row0, k0, mma_tile,
                                             [](unsigned r, unsigned j) { return L::a(r, j); });
        mma_stage<MMA_SLICE, MMA_BLOCK_COLS>(b, k, n, k0, col0, mma_tile,
                                             [](unsigned r, unsigned j) { return L::b(r, j); });
        __syncthreads();
#pragma unroll
        for (unsigned step = 0; step < MMA_SLICE / 16; ++step) {
            unsigned i = step * 16;
            unsigned fa[M_TILES][4];
#pragma unroll
            for (unsigned t = 0; t < M_TILES; ++t) {
                unsigned row = warp_row + 16 * t + lane % 16;
                mma_load_matrices<false>(fa[t], mma_tile + L::a(row, i + lane / 16 * 8));
            }
            unsigned fb[N_TILES / 2][4];
#pragma unroll
            for (unsigned pair = 0; pair < N_TILES / 2; ++pair) {
                unsigned col = warp_col + 16 * pair + lane / 16 * 8;
                mma_load_matrices<true>(fb[pair], mma_tile + L::b(i + lane % 16, col));
            }
#pragma unroll
            for (unsigned t = 0; t < M_TILES; ++t) {
#pragma unroll
                for (unsigned u = 0; u < N_TILES; ++u) {
                    const unsigned b_fragment[2] = {fb[u / 2][2 * (u % 2)],
                                                    fb[u / 2][2 * (u % 2) + 1]};
                    mma_m16n8k16(sums[t][u], fa[t], b_fragment);
                }
            }
        }
        __syncthreads();
    }
    unsigned g = lane / 4, q = lane % 4;
#pragma unroll
    for (unsigned t = 0; t < M_TILES; ++t) {
#pragma unroll
        for (unsigned u = 0; u < N_TILES; ++u) {
#pragma unroll
            for (unsigned d = 0; d < 4; ++d) {
                unsigned r = row0 + warp_row + 16 * t + g + 8 * (d / 2);
                unsigned j = col0 + warp_col + 8 * u + 2 * q + d % 2;
                if (r < m && j < n) {
                    c[r * n + j] = sums[t][u][d];
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_ldmatrix(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                 float* __restrict__ c, unsigned m, unsigned n, unsigned k) {
    mma_staged<MmaUnpadded>(a, b, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_padded(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
               float* __restrict__ c, unsigned m, unsigned n, unsigned k) {
    mma_staged<MmaPadded>(a, b, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    mma_swizzled(const mma_bf16* __restrict__ a, const mma_bf16* __restrict__ b,
                 float* __restrict__ c, unsigned m, unsigned n, unsigned k) {
    mma_staged<MmaSwizzled>(a, b, c, m, n, k);
}

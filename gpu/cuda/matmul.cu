// CUDA C++ twins of the kernels in gpu/src/matmul.rs: the same algorithms,
// launch geometry and memory layout, written as CUDA C++ programmers write
// them (int indices, fused multiply-adds by contraction). The host compiles
// them with NVRTC and times each beside its Rust kernel.

extern "C" __global__ void matmul_naive(const float* a, const float* b, float* c,
                                        int m, int n, int k) {
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
__device__ void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
    extern __shared__ float tiles[];
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
        for (int i = 0; i < TILE; ++i) {
            sum += a_tile[ty * TILE + i] * b_tile[i * TILE + tx];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * n + col] = sum;
    }
}

extern "C" __global__ void matmul_tiled_16(const float* a, const float* b, float* c,
                                           int m, int n, int k) {
    matmul_tiled<16>(a, b, c, m, n, k);
}

extern "C" __global__ void matmul_tiled_32(const float* a, const float* b, float* c,
                                           int m, int n, int k) {
    matmul_tiled<32>(a, b, c, m, n, k);
}

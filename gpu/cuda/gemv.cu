// CUDA C++ twins of the kernels in gpu/src/gemv.rs: y = αAx + βy, A m×n,
// one thread per row in blocks of 128, y not read when β = 0.

template <typename T>
__device__ void update(T* y, int row, T alpha, T dot, T beta) {
    y[row] = beta == T(0) ? alpha * dot : alpha * dot + beta * y[row];
}

template <typename T>
__device__ void gemv_row_major(T alpha, const T* a, const T* x, T beta, T* y, int m, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        T dot = 0;
        for (int j = 0; j < n; ++j) {
            dot += a[row * n + j] * x[j];
        }
        update(y, row, alpha, dot, beta);
    }
}

template <typename T>
__device__ void gemv_col_major(T alpha, const T* a, const T* x, T beta, T* y, int m, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        T dot = 0;
        for (int j = 0; j < n; ++j) {
            dot += a[j * m + row] * x[j];
        }
        update(y, row, alpha, dot, beta);
    }
}

// Blocks of exactly 128 threads, 128 elements of T of launch-sized shared memory.
template <typename T>
__device__ void gemv_col_major_shared_x(T alpha, const T* a, const T* x, T beta, T* y, int m,
                                        int n) {
    const int block = 128;
    extern __shared__ __align__(8) unsigned char shared[];
    T* x_window = reinterpret_cast<T*>(shared);
    int tid = threadIdx.x;
    int row = blockIdx.x * block + tid;
    T dot = 0;
    for (int start = 0; start < n; start += block) {
        int width = min(block, n - start);
        if (tid < width) {
            x_window[tid] = x[start + tid];
        }
        __syncthreads();
        if (row < m) {
            for (int j = 0; j < width; ++j) {
                dot += a[(start + j) * m + row] * x_window[j];
            }
        }
        __syncthreads();
    }
    if (row < m) {
        update(y, row, alpha, dot, beta);
    }
}

#define GEMV_ENTRY_POINTS(kernel)                                                              \
    extern "C" __global__ void kernel##_f32(float alpha, const float* a, const float* x,      \
                                            float beta, float* y, int m, int n) {             \
        kernel<float>(alpha, a, x, beta, y, m, n);                                             \
    }                                                                                          \
    extern "C" __global__ void kernel##_f64(double alpha, const double* a, const double* x,   \
                                            double beta, double* y, int m, int n) {           \
        kernel<double>(alpha, a, x, beta, y, m, n);                                            \
    }

GEMV_ENTRY_POINTS(gemv_row_major)
GEMV_ENTRY_POINTS(gemv_col_major)
GEMV_ENTRY_POINTS(gemv_col_major_shared_x)

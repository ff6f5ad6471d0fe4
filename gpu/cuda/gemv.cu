// CUDA C++ twins of the kernels in gpu/src/gemv/: y = αAx + βy, A m×n,
// y not read when β = 0. The seeds' kernels take one thread per row in
// blocks of 128; the ladder's geometry is stated above each. A and x are
// read only and y overlaps neither (the Rust kernels' contracts), hence
// __restrict__.

template <typename T>
__device__ void update(T* y, int row, T alpha, T dot, T beta) {
    y[row] = beta == T(0) ? alpha * dot : alpha * dot + beta * y[row];
}

// Thread `row` computes y[row] from the n elements of A that index(row, j)
// picks: the two seeds differ only in A's storage order.
template <typename T, typename Index>
__device__ void one_thread_per_row(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                                   T beta, T* __restrict__ y, int m, int n, Index index) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        T dot = 0;
        for (int j = 0; j < n; ++j) {
            dot += a[index(row, j)] * x[j];
        }
        update(y, row, alpha, dot, beta);
    }
}

template <typename T>
__device__ void gemv_row_major(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                               T beta, T* __restrict__ y, int m, int n) {
    one_thread_per_row(alpha, a, x, beta, y, m, n, [=](int row, int j) { return row * n + j; });
}

template <typename T>
__device__ void gemv_col_major(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                               T beta, T* __restrict__ y, int m, int n) {
    one_thread_per_row(alpha, a, x, beta, y, m, n, [=](int row, int j) { return j * m + row; });
}

// dot plus the products of the window's first `count` elements (a
// multiple of the vector) and A's column entries from `a` on, m apart, x
// read 16 bytes at a time: a loop of constant count, inlined, unrolls whole.
template <typename T>
__device__ __forceinline__ T window_vectors(T dot, const T* __restrict__ a, const T* x_window,
                                            int m, int count) {
    constexpr int len = 16 / sizeof(T);
#pragma unroll
    for (int first = 0; first < count; first += len) {
        T xs[len];
        *reinterpret_cast<uint4*>(xs) = *reinterpret_cast<const uint4*>(x_window + first);
#pragma unroll
        for (int k = 0; k < len; ++k) {
            dot += a[(first + k) * m] * xs[k];
        }
    }
    return dot;
}

// Blocks of exactly 128 threads, 128 elements of T of launch-sized shared memory.
template <typename T>
__device__ void gemv_col_major_shared_x(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                                        T beta, T* __restrict__ y, int m, int n) {
    const int block = 128;
    extern __shared__ __align__(16) unsigned char shared[];
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
            // The window's whole vectors in one 16-byte shared load each,
            // as the Rust kernel reads them, a whole window's by a loop of
            // constant count, unrolled whole; then what is left one by one.
            constexpr int len = 16 / sizeof(T);
            int vectors = width / len * len;
            dot = width == block ? window_vectors(dot, a + start * m + row, x_window, m, block)
                                 : window_vectors(dot, a + start * m + row, x_window, m, vectors);
            for (int j = vectors; j < width; ++j) {
                dot += a[(start + j) * m + row] * x_window[j];
            }
        }
        __syncthreads();
    }
    if (row < m) {
        update(y, row, alpha, dot, beta);
    }
}

// The sum of value over the lanes that differ from this one in bits lowest and up.
template <typename T>
__device__ T butterfly_sum(T value, int lowest) {
    // lowest is a constant at each call: the loop unrolls, as the Rust one.
#pragma unroll
    for (int lane_mask = 16; lane_mask >= lowest; lane_mask /= 2) {
        value += __shfl_xor_sync(0xffffffffu, value, lane_mask);
    }
    return value;
}

// The CUDA vector type of 16 bytes of T.
template <typename T>
struct Vector16;
template <>
struct Vector16<float> {
    using type = float4;
};
template <>
struct Vector16<double> {
    using type = double2;
};

// 16 bytes of T: what one read-only vector load (__ldg) moves.
template <typename T>
struct Vector {
    static constexpr int len = 16 / sizeof(T);
    T v[len];
    __device__ static Vector load(const T* p) {
        auto q = __ldg(reinterpret_cast<const typename Vector16<T>::type*>(p));
        Vector values;
        memcpy(values.v, &q, sizeof(q));
        return values;
    }
};

template <typename T>
__device__ Vector<T> read_each(const T* p, int count) {
    Vector<T> values;
#pragma unroll
    for (int k = 0; k < Vector<T>::len; ++k) {
        values.v[k] = k < count ? p[k] : T(0);
    }
    return values;
}

// A warp per row, blocks of 128 threads (4 rows).
template <typename T>
__device__ void gemv_row_major_warp(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                                    T beta, T* __restrict__ y, int m, int n) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * 4 + threadIdx.x / 32;
    if (row < m) {
        T partial = 0;
        for (int j = lane; j < n; j += 32) {
            partial += a[row * n + j] * x[j];
        }
        T dot = butterfly_sum(partial, 1);
        if (lane == 0) {
            update(y, row, alpha, dot, beta);
        }
    }
}

// A warp per row with 16-byte loads; blocks of 128 threads (4 rows).
template <typename T>
__device__ void gemv_row_major_vector(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                                      T beta, T* __restrict__ y, int m, int n) {
    const int width = Vector<T>::len;
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * 4 + threadIdx.x / 32;
    if (row < m) {
        unsigned start = unsigned(row) * unsigned(n);
        int head = min(int((width - start % width) % width), n);
        int vectors = (n - head) / width;
        int tail = head + vectors * width;
        bool x_aligned = head == 0;
        const T* a_row = a + start;
        T partial = 0;
        if (lane < head) {
            partial += a_row[lane] * x[lane];
        }
        for (int vector = lane; vector < vectors; vector += 32) {
            int j = head + vector * width;
            Vector<T> x_values = x_aligned ? Vector<T>::load(x + j) : read_each(x + j, width);
            Vector<T> a_values = Vector<T>::load(a_row + j);
#pragma unroll
            for (int k = 0; k < width; ++k) {
                partial += a_values.v[k] * x_values.v[k];
            }
        }
        int j = tail + lane;
        if (j < n) {
            partial += a_row[j] * x[j];
        }
        T dot = butterfly_sum(partial, 1);
        if (lane == 0) {
            update(y, row, alpha, dot, beta);
        }
    }
}

// Warps per block of the split kernels, which share the columns.
const int split_warps = 32;

// Adds the warps' partial sums of each of rows rows (warp-major in partials).
template <typename T>
__device__ void sum_partials(const T* partials, int rows, int first_row, T* y, int m, T alpha,
                             T beta) {
    __syncthreads();
    int tid = threadIdx.x;
    int row = first_row + tid;
    if (tid < rows && row < m) {
        T dot = 0;
#pragma unroll
        for (int warp = 0; warp < split_warps; ++warp) {
            dot += partials[warp * rows + tid];
        }
        update(y, row, alpha, dot, beta);
    }
}

// The columns split among the warps; blocks of 1024 threads (32 rows), 32×32 elements
// of launch-sized shared memory.
template <typename T>
__device__ void gemv_col_major_split(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                                     T beta, T* __restrict__ y, int m, int n) {
    extern __shared__ __align__(8) unsigned char shared[];
    T* partials = reinterpret_cast<T*>(shared);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int first_row = blockIdx.x * 32;
    int row = first_row + lane;
    T partial = 0;
    if (row < m) {
        for (int j = warp; j < n; j += split_warps) {
            partial += a[j * m + row] * x[j];
        }
    }
    partials[warp * 32 + lane] = partial;
    sum_partials(partials, 32, first_row, y, m, alpha, beta);
}

// Split columns and 16-byte loads: 8 lanes per 128-byte line of a column, 4 columns per
// warp; blocks of 1024 threads (one line of rows), 32 × rows elements of shared memory.
template <typename T>
__device__ void gemv_col_major_vector(T alpha, const T* __restrict__ a, const T* __restrict__ x,
                                      T beta, T* __restrict__ y, int m, int n) {
    extern __shared__ __align__(8) unsigned char shared[];
    T* partials = reinterpret_cast<T*>(shared);
    const int width = Vector<T>::len, rows = 8 * width;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int first_row = blockIdx.x * rows;
    int row = first_row + lane % 8 * width;
    T sums[width] = {};
    if (row < m) {
        bool whole = m % width == 0;
        for (int j = warp * 4 + lane / 8; j < n; j += 4 * split_warps) {
            const T* column = a + j * m + row;
            Vector<T> a_values = whole ? Vector<T>::load(column) : read_each(column, m - row);
            T x_value = x[j];
#pragma unroll
            for (int k = 0; k < width; ++k) {
                sums[k] += a_values.v[k] * x_value;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < width; ++k) {
        sums[k] = butterfly_sum(sums[k], 8);
    }
    if (lane < 8) {
#pragma unroll
        for (int k = 0; k < width; ++k) {
            partials[warp * rows + lane * width + k] = sums[k];
        }
    }
    sum_partials(partials, rows, first_row, y, m, alpha, beta);
}

// The f32 and f64 entry points of a kernel, with the launch bounds
// GEMV_BOUNDS stands for where it is invoked: each pair's Rust kernels'
// #[launch_bounds].
#define GEMV_ENTRY_POINTS(kernel)                                                              \
    extern "C" __global__ void GEMV_BOUNDS kernel##_f32(                                       \
        float alpha, const float* __restrict__ a, const float* __restrict__ x, float beta,     \
        float* __restrict__ y, int m, int n) {                                                 \
        kernel<float>(alpha, a, x, beta, y, m, n);                                             \
    }                                                                                          \
    extern "C" __global__ void GEMV_BOUNDS kernel##_f64(                                       \
        double alpha, const double* __restrict__ a, const double* __restrict__ x, double beta, \
        double* __restrict__ y, int m, int n) {                                                \
        kernel<double>(alpha, a, x, beta, y, m, n);                                            \
    }

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS; threads
// per block of the kernels with one thread or one warp per row, and of the
// split kernels.
#define FULL_SM_THREADS 2048
const int gemv_block = 128;
const int split_block = split_warps * 32;

#define GEMV_BOUNDS __launch_bounds__(gemv_block, 3)
GEMV_ENTRY_POINTS(gemv_row_major)
#undef GEMV_BOUNDS
#define GEMV_BOUNDS __launch_bounds__(gemv_block, 4)
GEMV_ENTRY_POINTS(gemv_col_major)
GEMV_ENTRY_POINTS(gemv_col_major_shared_x)
#undef GEMV_BOUNDS
#define GEMV_BOUNDS __launch_bounds__(gemv_block, FULL_SM_THREADS / gemv_block)
GEMV_ENTRY_POINTS(gemv_row_major_warp)
#undef GEMV_BOUNDS
#define GEMV_BOUNDS __launch_bounds__(gemv_block, 4)
GEMV_ENTRY_POINTS(gemv_row_major_vector)
#undef GEMV_BOUNDS
#define GEMV_BOUNDS __launch_bounds__(split_block, FULL_SM_THREADS / split_block)
GEMV_ENTRY_POINTS(gemv_col_major_split)
GEMV_ENTRY_POINTS(gemv_col_major_vector)
#undef GEMV_BOUNDS

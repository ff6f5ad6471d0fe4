// CUDA C++ twins of the kernels in gpu/src/readonly.rs: one thread per
// output element in blocks of 256, each summing its window of 2r + 1 input
// elements clipped to the input, in order. The loads say which path they
// take, as the Rust kernels do: __ldca is a plain load cached in L1
// (ld.global.ca, what ld.global means), __ldg the read-only path
// (ld.global.nc). Without them, nvcc would turn the plain kernel's loads
// through a const __restrict__ pointer into __ldg's. Their
// __launch_bounds__ are the Rust kernels' #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define READONLY_BLOCK 256
#define READONLY_MAX_RADIUS 32

// Thread i's window summed in order, each element loaded by __ldg where
// ReadOnly and by __ldca otherwise, into output[i].
template <bool ReadOnly>
__device__ __forceinline__ void sum_windows(const float* __restrict__ input,
                                            float* __restrict__ output, unsigned n,
                                            unsigned radius) {
    unsigned i = blockIdx.x * READONLY_BLOCK + threadIdx.x;
    if (i < n) {
        const float* window = input + (i > radius ? i - radius : 0);
        const float* end = input + min(i + radius, n - 1) + 1;
        float sum = 0.0f;
        for (const float* p = window; p != end; ++p) {
            sum += ReadOnly ? __ldg(p) : __ldca(p);
        }
        output[i] = sum;
    }
}

extern "C" __global__ void __launch_bounds__(READONLY_BLOCK, FULL_SM_THREADS / READONLY_BLOCK)
stencil_global(const float* __restrict__ input, float* __restrict__ output, unsigned n,
               unsigned radius) {
    sum_windows<false>(input, output, n, radius);
}

extern "C" __global__ void __launch_bounds__(READONLY_BLOCK, FULL_SM_THREADS / READONLY_BLOCK)
stencil_read_only(const float* __restrict__ input, float* __restrict__ output, unsigned n,
                  unsigned radius) {
    sum_windows<true>(input, output, n, radius);
}

extern "C" __global__ void __launch_bounds__(READONLY_BLOCK, FULL_SM_THREADS / READONLY_BLOCK)
stencil_shared(const float* __restrict__ input, float* __restrict__ output, unsigned n,
               unsigned radius) {
    __shared__ float tile[READONLY_BLOCK + 2 * READONLY_MAX_RADIUS];
    unsigned first = blockIdx.x * READONLY_BLOCK;
    for (unsigned k = threadIdx.x; k < READONLY_BLOCK + 2 * radius; k += READONLY_BLOCK) {
        unsigned j = first + k - radius;
        if (j < n) {
            tile[k] = __ldg(input + j);
        }
    }
    __syncthreads();
    unsigned i = first + threadIdx.x;
    if (i < n) {
        // The window in the tile: input[j] is tile[j + radius - first].
        const float* window = tile + (i > radius ? i - radius : 0) + radius - first;
        const float* end = tile + min(i + radius, n - 1) + 1 + radius - first;
        float sum = 0.0f;
        for (const float* p = window; p != end; ++p) {
            sum += *p;
        }
        output[i] = sum;
    }
}

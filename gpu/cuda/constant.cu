// CUDA C++ twins of the kernels in gpu/src/constant.rs: one thread per
// element, blocks of 256, 256 coefficients; the output overlaps nothing
// (hence __restrict__). Each kernel's __launch_bounds__ are its Rust
// kernel's #[launch_bounds]. The loops over the coefficients are left to
// the compiler, as in the Rust kernels, which do not unroll them whole.

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define CONSTANT_BLOCK 256

__constant__ float COEFFICIENT_TABLE[256];

__device__ unsigned coefficient(unsigned k, unsigned spread) {
    return (k + spread * (threadIdx.x % 32)) & 255;
}

// Both kernels: each thread's element times the 256 coefficients of
// `table`, summed; only where the table lies differs.
__device__ void weigh(const float* __restrict__ input, const float* __restrict__ table,
                      float* __restrict__ output, unsigned n, unsigned spread) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = input[i];
        float sum = 0.0f;
        for (unsigned k = 0; k < 256; ++k) {
            sum += table[coefficient(k, spread)] * x;
        }
        output[i] = sum;
    }
}

extern "C" __global__ void __launch_bounds__(CONSTANT_BLOCK, FULL_SM_THREADS / CONSTANT_BLOCK)
coefficients_from_constant(const float* __restrict__ input, const float* __restrict__ coefficients,
                           float* __restrict__ output, unsigned n, unsigned spread) {
    weigh(input, COEFFICIENT_TABLE, output, n, spread);
}

extern "C" __global__ void __launch_bounds__(CONSTANT_BLOCK, FULL_SM_THREADS / CONSTANT_BLOCK)
coefficients_from_global(const float* __restrict__ input, const float* __restrict__ coefficients,
                         float* __restrict__ output, unsigned n, unsigned spread) {
    weigh(input, coefficients, output, n, spread);
}

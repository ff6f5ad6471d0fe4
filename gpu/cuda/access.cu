// CUDA C++ twin of the kernel in gpu/src/access.rs: one thread per element,
// blocks of 256, the output overlapping nothing (hence __restrict__). Its
// __launch_bounds__ are the Rust kernel's #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define ACCESS_BLOCK 256

extern "C" __global__ void __launch_bounds__(ACCESS_BLOCK, FULL_SM_THREADS / ACCESS_BLOCK)
copy_strided(const float* __restrict__ input, float* __restrict__ output, unsigned n,
             unsigned stride, unsigned offset) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        output[i] = input[offset + i * stride];
    }
}

// CUDA C++ twin of the kernel in gpu/src/access.rs: one thread per element,
// blocks of 256.

extern "C" __global__ void copy_strided(const float* input, float* output, unsigned n,
                                        unsigned stride, unsigned offset) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        output[i] = input[offset + i * stride];
    }
}

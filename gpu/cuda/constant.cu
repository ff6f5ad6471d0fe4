// CUDA C++ twins of the kernels in gpu/src/constant.rs: one thread per
// element, blocks of 256, 256 coefficients.

__constant__ float COEFFICIENT_TABLE[256];

__device__ unsigned coefficient(unsigned k, unsigned spread) {
    return (k + spread * (threadIdx.x % 32)) & 255;
}

extern "C" __global__ void coefficients_from_constant(const float* input,
                                                      const float* coefficients, float* output,
                                                      unsigned n, unsigned spread) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = input[i];
        float sum = 0.0f;
        for (unsigned k = 0; k < 256; ++k) {
            sum += COEFFICIENT_TABLE[coefficient(k, spread)] * x;
        }
        output[i] = sum;
    }
}

extern "C" __global__ void coefficients_from_global(const float* input, const float* coefficients,
                                                    float* output, unsigned n, unsigned spread) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = input[i];
        float sum = 0.0f;
        for (unsigned k = 0; k < 256; ++k) {
            sum += coefficients[coefficient(k, spread)] * x;
        }
        output[i] = sum;
    }
}

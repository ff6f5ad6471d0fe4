// CUDA C++ twins of the kernels in gpu/src/registers.rs: one thread per
// element, blocks of 256; element k of thread i's array at input[k·n + i].

template <unsigned L>
__device__ float load(const float* input, unsigned n, unsigned i, float (&array)[L]) {
    float sum = 0.0f;
#pragma unroll
    for (unsigned k = 0; k < L; ++k) {
        array[k] = input[k * n + i];
        sum += array[k];
    }
    return sum;
}

template <unsigned L>
__device__ float rotated_in_registers(const float (&array)[L], float sum, unsigned rotation) {
    float result = 0.0f;
#pragma unroll
    for (unsigned k = 0; k < L; ++k) {
        float weight = float((k + L - rotation % L) % L + 1);
        result += array[k] * (weight + sum);
    }
    return result;
}

extern "C" __global__ void array_in_registers(const float* input, float* output, unsigned n,
                                              unsigned rotation) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float array[64];
        float sum = load(input, n, i, array);
        output[i] = rotated_in_registers(array, sum, rotation);
    }
}

extern "C" __global__ void array_in_local_memory(const float* input, float* output, unsigned n,
                                                 unsigned rotation) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float array[64];
        float sum = load(input, n, i, array);
        float result = 0.0f;
        for (unsigned j = 0; j < 64; ++j) {
            result += array[(j + rotation % 64) % 64] * (float(j + 1) + sum);
        }
        output[i] = result;
    }
}

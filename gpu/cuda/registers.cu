// CUDA C++ twins of the kernels in gpu/src/registers.rs: one thread per
// element, blocks of 256; element k of thread i's array at input[k·n + i];
// the output overlaps nothing (hence __restrict__). Each kernel's
// __launch_bounds__ are its Rust kernel's #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define REGISTERS_BLOCK 256

template <unsigned L>
__device__ float load(const float* __restrict__ input, unsigned n, unsigned i, float (&array)[L]) {
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

// Both kernels: thread i loads its array and writes what `rotated` makes
// of it and its sum.
template <typename Rotated>
__device__ void per_thread(const float* __restrict__ input, float* __restrict__ output, unsigned n,
                           Rotated rotated) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float array[64];
        float sum = load(input, n, i, array);
        output[i] = rotated(array, sum);
    }
}

// Two blocks an SM, as the Rust kernel declares: room for 128 registers a
// thread, for the 64 elements of its array.
extern "C" __global__ void __launch_bounds__(REGISTERS_BLOCK, 2)
array_in_registers(const float* __restrict__ input, float* __restrict__ output, unsigned n,
                   unsigned rotation) {
    per_thread(input, output, n, [&](const float (&array)[64], float sum) {
        return rotated_in_registers(array, sum, rotation);
    });
}

extern "C" __global__ void __launch_bounds__(REGISTERS_BLOCK, FULL_SM_THREADS / REGISTERS_BLOCK)
array_in_local_memory(const float* __restrict__ input, float* __restrict__ output, unsigned n,
                      unsigned rotation) {
    per_thread(input, output, n, [&](const float (&array)[64], float sum) {
        float result = 0.0f;
        // Unrolled, as the Rust loop is; the index is still one known only
        // at run time, so the array stays in local memory.
#pragma unroll
        for (unsigned j = 0; j < 64; ++j) {
            result += array[(j + rotation % 64) % 64] * (float(j + 1) + sum);
        }
        return result;
    });
}

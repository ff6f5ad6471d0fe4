// CUDA C++ twins of the kernels in gpu/src/width.rs: one thread per
// element of the width, blocks of 256, the bytes past the last whole
// element one a thread; the output overlaps nothing (hence __restrict__).
// Each kernel's __launch_bounds__ are its Rust kernel's #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define WIDTH_BLOCK 256

struct Pair {
    float x;
    float y;
};

struct __align__(8) AlignedPair {
    float x;
    float y;
};

template <typename T>
__device__ void copy_as(const unsigned char* __restrict__ input,
                        unsigned char* __restrict__ output, unsigned bytes) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned width = sizeof(T);
    unsigned whole = bytes / width;
    if (i < whole) {
        reinterpret_cast<T*>(output)[i] = reinterpret_cast<const T*>(input)[i];
    } else {
        unsigned byte = whole * width + (i - whole);
        if (byte < bytes) {
            output[byte] = input[byte];
        }
    }
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_bytes_1(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
             unsigned bytes) {
    copy_as<unsigned char>(input, output, bytes);
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_bytes_2(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
             unsigned bytes) {
    copy_as<unsigned short>(input, output, bytes);
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_bytes_4(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
             unsigned bytes) {
    copy_as<unsigned>(input, output, bytes);
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_bytes_8(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
             unsigned bytes) {
    copy_as<unsigned long long>(input, output, bytes);
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_bytes_16(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
              unsigned bytes) {
    copy_as<uint4>(input, output, bytes);
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_pairs_align_4(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
                   unsigned bytes) {
    copy_as<Pair>(input, output, bytes);
}

extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)
copy_pairs_align_8(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
                   unsigned bytes) {
    copy_as<AlignedPair>(input, output, bytes);
}

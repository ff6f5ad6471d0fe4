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

// Each kernel copies as one type T.
#define COPY_AS(name, T)                                                                      \
    extern "C" __global__ void __launch_bounds__(WIDTH_BLOCK, FULL_SM_THREADS / WIDTH_BLOCK)  \
    name(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,         \
         unsigned bytes) {                                                                     \
        copy_as<T>(input, output, bytes);                                                      \
    }

COPY_AS(copy_bytes_1, unsigned char)
COPY_AS(copy_bytes_2, unsigned short)
COPY_AS(copy_bytes_4, unsigned)
COPY_AS(copy_bytes_8, unsigned long long)
COPY_AS(copy_bytes_16, uint4)
COPY_AS(copy_pairs_align_4, Pair)
COPY_AS(copy_pairs_align_8, AlignedPair)

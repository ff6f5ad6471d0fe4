// CUDA C++ twins of the kernels in gpu/src/histogram.rs: blocks of 256
// threads (one per bin), each reading 16 words of 4 bytes a thread, a
// warp's words adjacent, the last bytes % 4 one by one in the first block;
// the bins are zero before the launch and overlap nothing (hence
// __restrict__). The privatised kernels keep their copies of the bins in
// launch-sized shared memory, as the Rust kernels do. Their
// __launch_bounds__ are the Rust kernels' #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define HISTOGRAM_BINS 256
#define HISTOGRAM_BLOCK HISTOGRAM_BINS
#define HISTOGRAM_WORDS_PER_THREAD 16
#define HISTOGRAM_WARPS (HISTOGRAM_BLOCK / 32)

// Calls word(four, whole) with each of this thread's words, whole false
// past the whole words: every thread calls it as often.
template <typename Word>
__device__ __forceinline__ void histogram_each_word(const unsigned char* __restrict__ input,
                                                    unsigned bytes, Word word) {
    const unsigned* __restrict__ words = reinterpret_cast<const unsigned*>(input);
    unsigned first = blockIdx.x * (HISTOGRAM_WORDS_PER_THREAD * HISTOGRAM_BLOCK) + threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < HISTOGRAM_WORDS_PER_THREAD; ++k) {
        unsigned index = first + k * HISTOGRAM_BLOCK;
        bool whole = index < bytes / 4;
        word(whole ? words[index] : 0u, whole);
    }
}

// Calls count(byte) with the last bytes % 4 bytes, one a thread of the
// first block.
template <typename Count>
__device__ __forceinline__ void histogram_each_tail_byte(const unsigned char* __restrict__ input,
                                                         unsigned bytes, Count count) {
    if (blockIdx.x == 0 && threadIdx.x < bytes % 4) {
        count(input[bytes / 4 * 4 + threadIdx.x]);
    }
}

// Calls count(byte) for every byte this thread counts.
template <typename Count>
__device__ __forceinline__ void histogram_each_byte(const unsigned char* __restrict__ input,
                                                    unsigned bytes, Count count) {
    histogram_each_word(input, bytes, [&](unsigned four, bool whole) {
        if (whole) {
#pragma unroll
            for (unsigned byte = 0; byte < 4; ++byte) {
                count((four >> (8 * byte)) & 0xff);
            }
        }
    });
    histogram_each_tail_byte(input, bytes, count);
}

// Clears the block's copies of the bins and waits for every thread.
__device__ __forceinline__ void histogram_clear(unsigned* local, unsigned copies) {
    for (unsigned copy = 0; copy < copies; ++copy) {
        local[copy * HISTOGRAM_BINS + threadIdx.x] = 0;
    }
    __syncthreads();
}

// Adds the block's copies of bin threadIdx.x to the global one.
__device__ __forceinline__ void histogram_merge(const unsigned* local, unsigned copies,
                                                unsigned* __restrict__ bins) {
    __syncthreads();
    unsigned count = 0;
    for (unsigned copy = 0; copy < copies; ++copy) {
        count += local[copy * HISTOGRAM_BINS + threadIdx.x];
    }
    if (count != 0) {
        atomicAdd(&bins[threadIdx.x], count);
    }
}

extern "C" __global__ void __launch_bounds__(HISTOGRAM_BLOCK, FULL_SM_THREADS / HISTOGRAM_BLOCK)
histogram_global(const unsigned char* __restrict__ input, unsigned* __restrict__ bins,
                 unsigned bytes) {
    histogram_each_byte(input, bytes, [&](unsigned byte) { atomicAdd(&bins[byte], 1u); });
}

extern "C" __global__ void __launch_bounds__(HISTOGRAM_BLOCK, FULL_SM_THREADS / HISTOGRAM_BLOCK)
histogram_aggregated(const unsigned char* __restrict__ input, unsigned* __restrict__ bins,
                     unsigned bytes) {
    unsigned lane = threadIdx.x % 32;
    histogram_each_word(input, bytes, [&](unsigned four, bool whole) {
#pragma unroll
        for (unsigned place = 0; place < 4; ++place) {
            unsigned byte = (four >> (8 * place)) & 0xff;
            unsigned peers = __match_any_sync(0xffffffffu, whole ? byte : HISTOGRAM_BINS);
            if (whole && __ffs(peers) - 1 == lane) {
                atomicAdd(&bins[byte], __popc(peers));
            }
        }
    });
    histogram_each_tail_byte(input, bytes, [&](unsigned byte) { atomicAdd(&bins[byte], 1u); });
}

extern "C" __global__ void __launch_bounds__(HISTOGRAM_BLOCK, FULL_SM_THREADS / HISTOGRAM_BLOCK)
histogram_shared(const unsigned char* __restrict__ input, unsigned* __restrict__ bins,
                 unsigned bytes) {
    extern __shared__ __align__(16) unsigned histogram_local[];
    histogram_clear(histogram_local, 1);
    histogram_each_byte(input, bytes,
                        [&](unsigned byte) { atomicAdd(&histogram_local[byte], 1u); });
    histogram_merge(histogram_local, 1, bins);
}

extern "C" __global__ void __launch_bounds__(HISTOGRAM_BLOCK, FULL_SM_THREADS / HISTOGRAM_BLOCK)
histogram_warps(const unsigned char* __restrict__ input, unsigned* __restrict__ bins,
                unsigned bytes) {
    extern __shared__ __align__(16) unsigned histogram_local[];
    unsigned* copy = histogram_local + threadIdx.x / 32 * HISTOGRAM_BINS;
    histogram_clear(histogram_local, HISTOGRAM_WARPS);
    histogram_each_byte(input, bytes, [&](unsigned byte) { atomicAdd(&copy[byte], 1u); });
    histogram_merge(histogram_local, HISTOGRAM_WARPS, bins);
}

// CUDA C++ twin of the kernel in gpu/src/banks.rs: blocks of 256 threads,
// a static shared tile of 1024 words, the sums overlapping nothing (hence
// __restrict__). Its __launch_bounds__ are the Rust kernel's
// #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define BANKS_BLOCK 256

extern "C" __global__ void __launch_bounds__(BANKS_BLOCK, FULL_SM_THREADS / BANKS_BLOCK)
bank_conflicts(const float* __restrict__ input, float* __restrict__ sums, unsigned stride,
               unsigned rounds) {
    const unsigned tile_words = 1024;
    __shared__ __align__(16) float bank_tile[tile_words];
    unsigned t = threadIdx.x;
    for (unsigned i = t; i < tile_words; i += BANKS_BLOCK) {
        bank_tile[i] = input[i];
    }
    __syncthreads();
    unsigned first = (t % 32) * stride;
    float sum = 0.0f;
    for (unsigned round = 0; round < rounds; ++round) {
        sum += bank_tile[(first + round) & (tile_words - 1)];
    }
    sums[blockIdx.x * BANKS_BLOCK + t] = sum;
}

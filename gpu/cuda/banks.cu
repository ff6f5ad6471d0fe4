// CUDA C++ twin of the kernel in gpu/src/banks.rs: blocks of 256 threads,
// a static shared tile of 1024 words.

extern "C" __global__ void bank_conflicts(const float* input, float* sums, unsigned stride,
                                          unsigned rounds) {
    const unsigned tile_words = 1024;
    __shared__ __align__(16) float bank_tile[tile_words];
    unsigned t = threadIdx.x;
    for (unsigned i = t; i < tile_words; i += 256) {
        bank_tile[i] = input[i];
    }
    __syncthreads();
    unsigned first = (t % 32) * stride;
    float sum = 0.0f;
    for (unsigned round = 0; round < rounds; ++round) {
        sum += bank_tile[(first + round) & (tile_words - 1)];
    }
    sums[blockIdx.x * 256 + t] = sum;
}

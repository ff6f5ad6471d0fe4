// CUDA C++ twin of the kernel in gpu/src/caches.rs: blocks of 256 threads,
// each block reading 4 KiB chunks of the working set from its own start.

extern "C" __global__ void read_working_set(const float* __restrict__ input, float* output,
                                            unsigned set, unsigned chunks) {
    const unsigned chunk_elements = 256 * 4;
    unsigned chunks_in_set = set / chunk_elements;
    unsigned start = (unsigned)((unsigned long long)blockIdx.x * chunks_in_set / gridDim.x);
    float4 sums = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (unsigned chunk = 0; chunk < chunks; ++chunk) {
        unsigned index = ((start + chunk) * chunk_elements + 4 * threadIdx.x) & (set - 1);
        float4 values = __ldg(reinterpret_cast<const float4*>(input + index));
        sums.x += values.x;
        sums.y += values.y;
        sums.z += values.z;
        sums.w += values.w;
    }
    output[blockIdx.x * 256 + threadIdx.x] = (sums.x + sums.y) + (sums.z + sums.w);
}

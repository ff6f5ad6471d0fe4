// CUDA C++ twin of the kernel in gpu/src/caches.rs: blocks of 256 threads,
// each block reading 4 KiB chunks of the working set from its own start;
// the output overlaps nothing (hence __restrict__). Its __launch_bounds__
// are the Rust kernel's #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define CACHES_BLOCK 256

extern "C" __global__ void __launch_bounds__(CACHES_BLOCK, FULL_SM_THREADS / CACHES_BLOCK)
read_working_set(const float* __restrict__ input, float* __restrict__ output, unsigned set,
                 unsigned chunks) {
    const unsigned chunk_elements = CACHES_BLOCK * 4;
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
    output[blockIdx.x * CACHES_BLOCK + threadIdx.x] = (sums.x + sums.y) + (sums.z + sums.w);
}

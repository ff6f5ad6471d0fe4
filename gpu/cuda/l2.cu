// CUDA C++ twins of the kernels in gpu/src/l2.rs: one thread per output
// element in blocks of 256, output[i] = stream[i] + reused[i % m]. The
// accesses say which cache policy they take, as the Rust kernels' do:
// __ldg for the read-only inputs, and in reuse_streaming __ldcs and __stcs
// (ld.global.cs, st.global.cs) for the stream and the output, evict-first.
// Their __launch_bounds__ are the Rust kernels' #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define L2_BLOCK 256

extern "C" __global__ void __launch_bounds__(L2_BLOCK, FULL_SM_THREADS / L2_BLOCK)
reuse_plain(const float* __restrict__ stream, const float* __restrict__ reused,
            float* __restrict__ output, unsigned n, unsigned m) {
    unsigned i = blockIdx.x * L2_BLOCK + threadIdx.x;
    if (i < n) {
        output[i] = __ldg(stream + i) + __ldg(reused + i % m);
    }
}

extern "C" __global__ void __launch_bounds__(L2_BLOCK, FULL_SM_THREADS / L2_BLOCK)
reuse_streaming(const float* __restrict__ stream, const float* __restrict__ reused,
                float* __restrict__ output, unsigned n, unsigned m) {
    unsigned i = blockIdx.x * L2_BLOCK + threadIdx.x;
    if (i < n) {
        __stcs(output + i, __ldcs(stream + i) + __ldg(reused + i % m));
    }
}

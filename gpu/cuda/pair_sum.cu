// CUDA C++ twin of the kernel in gpu/src/pair_sum.rs: four elements a
// thread, one 16-byte read-only load of each vector (__ldg of a float4) and
// one 16-byte store, the one to three elements past the last whole four
// added one by one; blocks of 256. Its __launch_bounds__ are the Rust
// kernel's #[launch_bounds].

#define FULL_SM_THREADS 2048
#define PAIR_SUM_BLOCK 256
#define PAIR_SUM_VECTOR 4

extern "C" __global__ void __launch_bounds__(PAIR_SUM_BLOCK, FULL_SM_THREADS / PAIR_SUM_BLOCK)
sum_pair(const float* __restrict__ mine, const float* __restrict__ theirs,
         float* __restrict__ sum, unsigned n) {
    const unsigned first = (blockIdx.x * PAIR_SUM_BLOCK + threadIdx.x) * PAIR_SUM_VECTOR;
    if (first >= n) return;
    if (n - first >= PAIR_SUM_VECTOR) {
        const float4 a = __ldg(reinterpret_cast<const float4*>(mine + first));
        const float4 b = __ldg(reinterpret_cast<const float4*>(theirs + first));
        *reinterpret_cast<float4*>(sum + first) =
            make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    } else {
        for (unsigned i = first; i < n; ++i) sum[i] = mine[i] + theirs[i];
    }
}

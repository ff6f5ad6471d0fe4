// CUDA C++ twins of the kernels in gpu/src/bulk.rs: one block of 256
// threads a tile of 4096 floats, staged in dynamic shared memory after 16
// bytes kept for the barrier, then written out reversed. The staging is
// each kernel's lesson: loads and stores, 16-byte cp.async copies
// (copy_span_async, copy_async, commit_copies and wait_for_copies of
// matmul.cu, which NVRTC compiles in the same unit), or one bulk copy
// completed on an mbarrier (init_barrier, arrive_expect_tx and
// wait_for_phase, which tensor.cu's twins use too), in PTX as CUTLASS
// writes it. Their __launch_bounds__ are the Rust kernels'
// #[launch_bounds].

#define FULL_SM_THREADS 2048
#define BULK_BLOCK 256
#define BULK_TILE 4096
#define BULK_BARRIER_ELEMENTS 4

extern __shared__ __align__(16) float bulk_shared[];

// Writes the staged tile of len elements out reversed, each thread the
// elements threadIdx.x + BULK_BLOCK * k.
__device__ __forceinline__ void write_reversed(const float* tile, float* __restrict__ output,
                                               unsigned first, unsigned len) {
#pragma unroll
    for (unsigned k = 0; k < BULK_TILE / BULK_BLOCK; ++k) {
        unsigned j = threadIdx.x + BULK_BLOCK * k;
        if (j < len) output[first + j] = tile[len - 1 - j];
    }
}

#if __CUDA_ARCH__ >= 900
// mbarrier.init for `count` arrivals a phase, then the proxy fence that
// lets a bulk or tensor copy complete on it.
__device__ __forceinline__ void init_barrier(unsigned barrier, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier), "r"(count));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// This thread's arrival, expecting `bytes` more of copies in the phase.
__device__ __forceinline__ void arrive_expect_tx(unsigned barrier, unsigned bytes) {
    asm volatile(
        "{ .reg .b64 state; mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }"
        ::"r"(barrier), "r"(bytes) : "memory");
}

// Waits until the phase of `parity` has completed.
__device__ __forceinline__ void wait_for_phase(unsigned barrier, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
            "selp.u32 %0, 1, 0, p; }"
            : "=r"(done) : "r"(barrier), "r"(parity) : "memory");
    }
}
#endif

extern "C" __global__ void __launch_bounds__(BULK_BLOCK, FULL_SM_THREADS / BULK_BLOCK)
reverse_loads(const float* __restrict__ input, float* __restrict__ output, unsigned n) {
    float* tile = bulk_shared + BULK_BARRIER_ELEMENTS;
    unsigned first = blockIdx.x * BULK_TILE;
    unsigned len = min(n - first, BULK_TILE);
#pragma unroll
    for (unsigned k = 0; k < BULK_TILE / BULK_BLOCK; ++k) {
        unsigned j = threadIdx.x + BULK_BLOCK * k;
        if (j < len) tile[j] = input[first + j];
    }
    __syncthreads();
    write_reversed(tile, output, first, len);
}

extern "C" __global__ void __launch_bounds__(BULK_BLOCK, FULL_SM_THREADS / BULK_BLOCK)
reverse_async(const float* __restrict__ input, float* __restrict__ output, unsigned n) {
    float* tile = bulk_shared + BULK_BARRIER_ELEMENTS;
    unsigned first = blockIdx.x * BULK_TILE;
    unsigned len = min(n - first, BULK_TILE);
    unsigned chunks = len / 4 * 4;
#pragma unroll
    for (unsigned k = 0; k < BULK_TILE / BULK_BLOCK / 4; ++k) {
        unsigned j = 4 * (threadIdx.x + BULK_BLOCK * k);
        if (j < chunks) copy_span_async(tile + j, input + first + j, 4);
    }
    unsigned j = chunks + threadIdx.x;
    if (j < len) copy_async(tile + j, input + first + j, true);
    commit_copies();
    wait_for_copies<0>();
    __syncthreads();
    write_reversed(tile, output, first, len);
}

extern "C" __global__ void __launch_bounds__(BULK_BLOCK, FULL_SM_THREADS / BULK_BLOCK)
reverse_bulk(const float* __restrict__ input, float* __restrict__ output, unsigned n) {
#if __CUDA_ARCH__ >= 900
    float* tile = bulk_shared + BULK_BARRIER_ELEMENTS;
    unsigned barrier = static_cast<unsigned>(__cvta_generic_to_shared(bulk_shared));
    unsigned first = blockIdx.x * BULK_TILE;
    unsigned len = min(n - first, BULK_TILE);
    unsigned chunks = len / 4 * 4;
    if (threadIdx.x == 0) init_barrier(barrier, 1);
    unsigned j = chunks + threadIdx.x;
    if (j < len) tile[j] = input[first + j];
    __syncthreads();
    if (threadIdx.x == 0) {
        arrive_expect_tx(barrier, 4 * chunks);
        if (chunks > 0) {
            unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(tile));
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                "[%0], [%1], %2, [%3];"
                ::"r"(to), "l"(input + first), "r"(4 * chunks), "r"(barrier) : "memory");
        }
    }
    wait_for_phase(barrier, 0);
    write_reversed(tile, output, first, len);
#else
    __trap();
#endif
}

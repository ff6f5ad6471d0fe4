// CUDA C++ twins of the kernels in gpu/src/distributed.rs: one block of
// 256 threads a tile of 4096 words, each thread summing rounds passes of 16
// words from word threadIdx.x on, each next index computed (sum_*) or
// found in the word before (chase_*): in the block's own shared memory, in the next
// block's of its cluster (the cluster builtins cooperative_groups'
// cluster_group wraps; each block stages the tile of the block before it),
// or in global memory through the L2 (__ldcg).
// Their __launch_bounds__ are the Rust kernels' #[launch_bounds].

#define FULL_SM_THREADS 2048
#define DSMEM_BLOCK 256
#define DSMEM_TILE 4096

extern __shared__ __align__(16) unsigned dsmem_tile[];

// The tile of block `block`, staged from the input, every thread 16 words.
__device__ __forceinline__ void stage(const unsigned* __restrict__ input, unsigned block) {
    const unsigned* tile = input + block * DSMEM_TILE;
#pragma unroll
    for (unsigned k = 0; k < DSMEM_TILE / DSMEM_BLOCK; ++k) {
        unsigned j = threadIdx.x + DSMEM_BLOCK * k;
        dsmem_tile[j] = tile[j];
    }
}

#if __CUDA_ARCH__ >= 900
// The block before this one in its cluster, around it.
__device__ __forceinline__ unsigned block_before() {
    unsigned rank = __clusterRelativeBlockRank(), blocks = __clusterSizeInBlocks();
    return blockIdx.x - rank + (rank + blocks - 1) % blocks;
}
#else
__device__ __forceinline__ unsigned block_before() {
    __trap();
    return 0;
}
#endif

// The shared memory of the next block of the cluster, around it, which
// holds this block's tile.
__device__ __forceinline__ const unsigned* neighbours_tile() {
#if __CUDA_ARCH__ >= 900
    unsigned next = (__clusterRelativeBlockRank() + 1) % __clusterSizeInBlocks();
    return static_cast<const unsigned*>(__cluster_map_shared_rank(dsmem_tile, next));
#else
    __trap();
    return nullptr;
#endif
}

__device__ __forceinline__ void cluster_sync() {
#if __CUDA_ARCH__ >= 900
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
#else
    __trap();
#endif
}

// The word after `index`: a block's width on, and from the tile's last
// block-wide row, the first row's word a warp's width on, around it.
__device__ __forceinline__ unsigned next_index(unsigned index) {
    unsigned ahead = index + DSMEM_BLOCK;
    return ahead < DSMEM_TILE ? ahead : (index + 32) % DSMEM_BLOCK;
}

// This thread's sum of rounds passes of 16 words from word threadIdx.x on.
template <bool L2>
__device__ __forceinline__ unsigned sum(const unsigned* tile, unsigned rounds) {
    unsigned total = 0, index = threadIdx.x;
    for (unsigned round = 0; round < rounds; ++round) {
#pragma unroll
        for (unsigned k = 0; k < DSMEM_TILE / DSMEM_BLOCK; ++k) {
            total += L2 ? __ldcg(tile + index) : tile[index];
            index = next_index(index);
        }
    }
    return total;
}

// The same sum, each index found in the low bits of the word before.
template <bool L2>
__device__ __forceinline__ unsigned chase(const unsigned* tile, unsigned rounds) {
    unsigned total = 0, index = threadIdx.x;
    for (unsigned round = 0; round < rounds; ++round) {
#pragma unroll
        for (unsigned k = 0; k < DSMEM_TILE / DSMEM_BLOCK; ++k) {
            unsigned word = L2 ? __ldcg(tile + index) : tile[index];
            total += word;
            index = word % DSMEM_TILE;
        }
    }
    return total;
}

__device__ __forceinline__ void write_result(unsigned* __restrict__ output, unsigned value) {
    output[blockIdx.x * DSMEM_BLOCK + threadIdx.x] = value;
}

// Every kernel of the lesson: blocks of DSMEM_BLOCK, each thread summing or
// chasing `rounds` passes over a tile and writing one word.
#define DSMEM_KERNEL(name)                                                       \
    extern "C" __global__ void __launch_bounds__(DSMEM_BLOCK,                    \
                                                 FULL_SM_THREADS / DSMEM_BLOCK)  \
    name(const unsigned* __restrict__ input, unsigned* __restrict__ output, unsigned rounds)

DSMEM_KERNEL(sum_own) {
    stage(input, blockIdx.x);
    __syncthreads();
    write_result(output, sum<false>(dsmem_tile, rounds));
}

DSMEM_KERNEL(sum_neighbour) {
    stage(input, block_before());
    cluster_sync();
    unsigned total = sum<false>(neighbours_tile(), rounds);
    cluster_sync();
    write_result(output, total);
}

DSMEM_KERNEL(sum_l2) {
    write_result(output, sum<true>(input + blockIdx.x * DSMEM_TILE, rounds));
}

DSMEM_KERNEL(chase_own) {
    stage(input, blockIdx.x);
    __syncthreads();
    write_result(output, chase<false>(dsmem_tile, rounds));
}

DSMEM_KERNEL(chase_neighbour) {
    stage(input, block_before());
    cluster_sync();
    unsigned end = chase<false>(neighbours_tile(), rounds);
    cluster_sync();
    write_result(output, end);
}

DSMEM_KERNEL(chase_l2) {
    write_result(output, chase<true>(input + blockIdx.x * DSMEM_TILE, rounds));
}

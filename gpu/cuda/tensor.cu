// CUDA C++ twins of the kernels in gpu/src/tensor.rs: one block of 256
// threads a tile of 128 rows × 32 columns of a row-major rows × cols array,
// staged in dynamic shared memory with its 128-byte rows swizzled (each
// row's 16-byte chunks XORed with the row's place among eight), the
// barrier's 16 bytes after it, then written out transposed. The staging is
// each kernel's lesson: 16-byte loads and stores, 16-byte cp.async copies
// (copy_span_async, commit_copies and wait_for_copies of matmul.cu), or one
// tensor copy completed on a barrier (init_barrier, arrive_expect_tx and
// wait_for_phase of bulk.cu; NVRTC compiles all three files in one unit)
// through a tensor map in global memory, as the Rust kernel takes it (C++
// could pass it as a __grid_constant__ parameter and skip the fence; Rust
// cannot), in PTX as CUTLASS writes it. Their __launch_bounds__ are the
// Rust kernels' #[launch_bounds].

#define FULL_SM_THREADS 2048
#define TENSOR_BLOCK 256
#define TENSOR_COLS 32
#define TENSOR_ROWS 128
#define TENSOR_ROWS_A_PASS (TENSOR_BLOCK / 8)

extern __shared__ __align__(1024) float tensor_tile[];

// Where element i of a tile swizzled in 128-byte rows lies.
__device__ __forceinline__ unsigned swizzle_128b(unsigned i) { return i ^ (((i >> 5) & 7) << 2); }

// Calls stage(at, from) for each of this thread's four 16-byte chunks of
// the tile that lie inside the input: at, where the chunk lies in the
// swizzled tile; from, where it starts in the input.
template <typename Stage>
__device__ __forceinline__ void for_each_chunk(unsigned rows, unsigned cols, Stage stage) {
    unsigned column = 4 * (threadIdx.x % 8);
    unsigned tile_row = blockIdx.y * TENSOR_ROWS, tile_column = blockIdx.x * TENSOR_COLS;
#pragma unroll
    for (unsigned pass = 0; pass < TENSOR_ROWS / TENSOR_ROWS_A_PASS; ++pass) {
        unsigned row = threadIdx.x / 8 + TENSOR_ROWS_A_PASS * pass;
        if (tile_row + row < rows && tile_column + column < cols)
            stage(&tensor_tile[swizzle_128b(row * TENSOR_COLS + column)],
                  (size_t)(tile_row + row) * cols + tile_column + column);
    }
}

// Writes the staged tile out transposed: warp w takes tile columns 4w to
// 4w + 3, a lane one column and rows lane % 8 + 8k, 16 of them. The
// swizzle repeats every eight rows, so each read is a constant offset from
// the lane's first, and each write one from its first output.
__device__ __forceinline__ void write_transposed(float* __restrict__ output, unsigned rows,
                                                 unsigned cols) {
    const unsigned repeat = 8;
    unsigned lane = threadIdx.x % 32;
    unsigned column = 4 * (threadIdx.x / 32) + lane / 8;
    unsigned output_row = blockIdx.x * TENSOR_COLS + column;
    if (output_row >= cols) return;
    unsigned tile_row = blockIdx.y * TENSOR_ROWS;
    float* first_output = output + (size_t)output_row * rows + tile_row + lane % repeat;
    const float* first = &tensor_tile[swizzle_128b(lane % repeat * TENSOR_COLS + column)];
#pragma unroll
    for (unsigned k = 0; k < TENSOR_ROWS / repeat; ++k)
        if (tile_row + lane % repeat + repeat * k < rows)
            first_output[repeat * k] = first[repeat * TENSOR_COLS * k];
}

extern "C" __global__ void __launch_bounds__(TENSOR_BLOCK, FULL_SM_THREADS / TENSOR_BLOCK)
transpose_loads(const float* __restrict__ input, const void* map, float* __restrict__ output,
                unsigned rows, unsigned cols) {
    for_each_chunk(rows, cols, [&](float* at, size_t from) {
        *reinterpret_cast<float4*>(at) = *reinterpret_cast<const float4*>(input + from);
    });
    __syncthreads();
    write_transposed(output, rows, cols);
}

extern "C" __global__ void __launch_bounds__(TENSOR_BLOCK, FULL_SM_THREADS / TENSOR_BLOCK)
transpose_async(const float* __restrict__ input, const void* map, float* __restrict__ output,
                unsigned rows, unsigned cols) {
    for_each_chunk(rows, cols,
                   [&](float* at, size_t from) { copy_span_async(at, input + from, 4); });
    commit_copies();
    wait_for_copies<0>();
    __syncthreads();
    write_transposed(output, rows, cols);
}

extern "C" __global__ void __launch_bounds__(TENSOR_BLOCK, FULL_SM_THREADS / TENSOR_BLOCK)
transpose_tensor(const float* __restrict__ input, const void* map, float* __restrict__ output,
                 unsigned rows, unsigned cols) {
#if __CUDA_ARCH__ >= 900
    unsigned tile = static_cast<unsigned>(__cvta_generic_to_shared(tensor_tile));
    unsigned barrier = tile + 4 * TENSOR_ROWS * TENSOR_COLS;
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(map) : "memory");
        init_barrier(barrier, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        arrive_expect_tx(barrier, 4 * TENSOR_ROWS * TENSOR_COLS);
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            "[%0], [%1, {%2, %3}], [%4];"
            ::"r"(tile), "l"(map), "r"(blockIdx.x * TENSOR_COLS), "r"(blockIdx.y * TENSOR_ROWS),
            "r"(barrier) : "memory");
    }
    wait_for_phase(barrier, 0);
    write_transposed(output, rows, cols);
#else
    __trap();
#endif
}

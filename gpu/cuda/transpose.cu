// CUDA C++ twins of the kernels in examples/transpose/: a row-major rows×cols
// f32 matrix into its cols×rows transpose, one 32×32 tile a block of 32×8
// threads, each thread moving the 4 elements at rows y, y+8, y+16 and y+24
// of the tile. Indices are unsigned, as the Rust kernels' u32. Input and
// output are distinct buffers (the Rust kernels' contracts), hence
// __restrict__. Each kernel's __launch_bounds__ are its Rust kernel's
// #[launch_bounds]: the block, and no fewest blocks an SM. The grid's x
// walks down the input's tiles and its y across them, as in the Rust
// launch contract.

// The side of a tile, and the rows of threads that move it.
#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8

// A warp reads 32 neighbours of one input row and writes them 4·rows bytes
// apart in the output: a 32-byte sector for every 4 bytes stored.
extern "C" __global__ void __launch_bounds__(TRANSPOSE_TILE * TRANSPOSE_ROWS)
transpose_naive(const float* __restrict__ input, float* __restrict__ output, unsigned rows,
                unsigned cols) {
    const unsigned col = blockIdx.y * TRANSPOSE_TILE + threadIdx.x;
#pragma unroll
    for (unsigned i = 0; i < TRANSPOSE_TILE; i += TRANSPOSE_ROWS) {
        const unsigned row = blockIdx.x * TRANSPOSE_TILE + threadIdx.y + i;
        if (row < rows && col < cols) {
            output[col * rows + row] = input[row * cols + col];
        }
    }
}

// Through the block's tile, PITCH words a row: a warp reads one input row
// into one tile row, then, after the barrier, one tile column into one
// output row. Both global accesses are whole rows; only the tile's column
// differs between the two kernels.
template <unsigned PITCH>
__device__ __forceinline__ void transpose_through(const float* __restrict__ input,
                                                  float* __restrict__ output, unsigned rows,
                                                  unsigned cols, float (*tile)[PITCH]) {
    const unsigned x = threadIdx.x;
    const unsigned in_col = blockIdx.y * TRANSPOSE_TILE + x;
#pragma unroll
    for (unsigned i = 0; i < TRANSPOSE_TILE; i += TRANSPOSE_ROWS) {
        const unsigned y = threadIdx.y + i;
        const unsigned in_row = blockIdx.x * TRANSPOSE_TILE + y;
        if (in_row < rows && in_col < cols) {
            tile[y][x] = input[in_row * cols + in_col];
        }
    }
    __syncthreads();
    // The output's tile is the input's with its row and column swapped.
    const unsigned out_col = blockIdx.x * TRANSPOSE_TILE + x;
#pragma unroll
    for (unsigned i = 0; i < TRANSPOSE_TILE; i += TRANSPOSE_ROWS) {
        const unsigned y = threadIdx.y + i;
        const unsigned out_row = blockIdx.y * TRANSPOSE_TILE + y;
        if (out_row < cols && out_col < rows) {
            output[out_row * rows + out_col] = tile[x][y];
        }
    }
}

// 32 words a tile row: a tile column's 32 words are 128 bytes apart, all in
// one bank, so each read of a column is a 32-way bank conflict.
extern "C" __global__ void __launch_bounds__(TRANSPOSE_TILE * TRANSPOSE_ROWS)
transpose_tiled(const float* __restrict__ input, float* __restrict__ output, unsigned rows,
                unsigned cols) {
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE];
    transpose_through<TRANSPOSE_TILE>(input, output, rows, cols, tile);
}

// 33 words a tile row: the word of padding shifts each row one bank, so a
// column's 32 words fall in 32 banks.
extern "C" __global__ void __launch_bounds__(TRANSPOSE_TILE * TRANSPOSE_ROWS)
transpose_padded(const float* __restrict__ input, float* __restrict__ output, unsigned rows,
                 unsigned cols) {
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
    transpose_through<TRANSPOSE_TILE + 1>(input, output, rows, cols, tile);
}

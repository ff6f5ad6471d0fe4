// CUDA C++ twins of the kernels in gpu/src/blur.rs: the rounded mean of the
// (2r+1)² window clipped to the image, 8-bit samples, `channels`
// interleaved, one grid layer per channel, blocks of 16×16.

#define BLUR_BLOCK 16

extern "C" __global__ void blur_naive(const unsigned char* input, unsigned char* output,
                                      int width, int height, int channels, int radius) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int channel = blockIdx.z;
    if (col < width && row < height) {
        int first_row = max(row - radius, 0), last_row = min(row + radius, height - 1);
        int first_col = max(col - radius, 0), last_col = min(col + radius, width - 1);
        unsigned sum = 0;
        for (int y = first_row; y <= last_row; ++y) {
            for (int x = first_col; x <= last_col; ++x) {
                sum += input[(y * width + x) * channels + channel];
            }
        }
        unsigned count = (last_row - first_row + 1) * (last_col - first_col + 1);
        output[(row * width + col) * channels + channel] = (sum + count / 2) / count;
    }
}

// (BLOCK + 2r)² bytes of launch-sized shared memory: the tile and its halo.
extern "C" __global__ void blur_tiled(const unsigned char* input, unsigned char* output,
                                      int width, int height, int channels, int radius) {
    extern __shared__ unsigned char tile[];
    int tx = threadIdx.x, ty = threadIdx.y;
    int channel = blockIdx.z;
    int span = BLUR_BLOCK + 2 * radius;
    int origin_x = blockIdx.x * BLUR_BLOCK - radius;
    int origin_y = blockIdx.y * BLUR_BLOCK - radius;
    for (int index = ty * BLUR_BLOCK + tx; index < span * span; index += BLUR_BLOCK * BLUR_BLOCK) {
        int x = origin_x + index % span;
        int y = origin_y + index / span;
        if (x >= 0 && x < width && y >= 0 && y < height) {
            tile[index] = input[(y * width + x) * channels + channel];
        }
    }
    __syncthreads();
    int col = blockIdx.x * BLUR_BLOCK + tx;
    int row = blockIdx.y * BLUR_BLOCK + ty;
    if (col < width && row < height) {
        int first_row = max(row - radius, 0), last_row = min(row + radius, height - 1);
        int first_col = max(col - radius, 0), last_col = min(col + radius, width - 1);
        unsigned sum = 0;
        for (int y = first_row; y <= last_row; ++y) {
            for (int x = first_col; x <= last_col; ++x) {
                sum += tile[(y - origin_y) * span + (x - origin_x)];
            }
        }
        unsigned count = (last_row - first_row + 1) * (last_col - first_col + 1);
        output[(row * width + col) * channels + channel] = (sum + count / 2) / count;
    }
}

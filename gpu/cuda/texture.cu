// CUDA C++ twins of the kernels in gpu/src/texture.rs: one thread per
// output pixel in blocks of 32 x 8, each sampling the picture at its centre
// turned about the picture's centre, by hand from the row-major buffer (with
// the texture unit's weights) or with one tex2D from the texture object made of it. Both take the picture
// both ways, as the Rust kernels do. Their __launch_bounds__ are the Rust
// kernels' #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define TEXTURE_BLOCK_X 32
#define TEXTURE_BLOCK_Y 8

// Where output pixel (x, y)'s centre comes from, in texel coordinates, by
// the operations of the Rust kernels' `source`.
__device__ __forceinline__ float2 rotated_source(unsigned x, unsigned y, unsigned width,
                                                 unsigned height, float cos, float sin) {
    const float centre_x = (float)width * 0.5f, centre_y = (float)height * 0.5f;
    const float dx = (float)x + 0.5f - centre_x, dy = (float)y + 0.5f - centre_y;
    return make_float2(fmaf(cos, dx, -(sin * dy)) + centre_x, fmaf(sin, dx, cos * dy) + centre_y);
}

// A fraction between texel centres in 256ths, nearest, halves up: the
// texture unit's, as gpu-core's fraction_256.
__device__ __forceinline__ unsigned fraction_256(float fraction) {
    const float scaled = fraction * 256.0f;
    const unsigned whole = (unsigned)scaled;
    return whole + (scaled - (float)whole >= 0.5f);
}

extern "C" __global__ void __launch_bounds__(TEXTURE_BLOCK_X * TEXTURE_BLOCK_Y,
                                             FULL_SM_THREADS / (TEXTURE_BLOCK_X * TEXTURE_BLOCK_Y))
rotate_global(const float* __restrict__ input, cudaTextureObject_t, float* __restrict__ output,
              unsigned width, unsigned height, float cos, float sin) {
    const unsigned x = blockIdx.x * TEXTURE_BLOCK_X + threadIdx.x;
    const unsigned y = blockIdx.y * TEXTURE_BLOCK_Y + threadIdx.y;
    if (x >= width || y >= height) return;
    const float2 p = rotated_source(x, y, width, height, cos, sin);
    const float u = p.x - 0.5f, v = p.y - 0.5f;
    const float left = floorf(u), top = floorf(v);
    const unsigned alpha = fraction_256(u - left), beta = fraction_256(v - top);
    const unsigned corner = (alpha * beta + 128) >> 8;
    const float weights[4] = {(float)(256 + corner - alpha - beta), (float)(alpha - corner),
                              (float)(beta - corner), (float)corner};
    const int i = (int)left, j = (int)top;
    auto texel = [&](int i, int j) {
        return (unsigned)i < width && (unsigned)j < height ? input[(unsigned)j * width + i] : 0.0f;
    };
    const float sum = weights[0] * texel(i, j) + weights[1] * texel(i + 1, j) +
                      weights[2] * texel(i, j + 1) + weights[3] * texel(i + 1, j + 1);
    output[y * width + x] = sum * (1.0f / 256.0f);
}

extern "C" __global__ void __launch_bounds__(TEXTURE_BLOCK_X * TEXTURE_BLOCK_Y,
                                             FULL_SM_THREADS / (TEXTURE_BLOCK_X * TEXTURE_BLOCK_Y))
rotate_texture(const float* __restrict__, cudaTextureObject_t texture, float* __restrict__ output,
               unsigned width, unsigned height, float cos, float sin) {
    const unsigned x = blockIdx.x * TEXTURE_BLOCK_X + threadIdx.x;
    const unsigned y = blockIdx.y * TEXTURE_BLOCK_Y + threadIdx.y;
    if (x >= width || y >= height) return;
    const float2 p = rotated_source(x, y, width, height, cos, sin);
    output[y * width + x] = tex2D<float>(texture, p.x, p.y);
}

// CUDA C++ twin of the kernel in gpu/src/intensity.rs: four elements (one
// float4) a thread, blocks of 256, the FMAs unrolled 8 at a time; the
// output overlaps nothing (hence __restrict__). Its __launch_bounds__ are
// the Rust kernel's #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define INTENSITY_BLOCK 256

__device__ void fma_chains(float x[4], unsigned fmas, float a, float b) {
    for (unsigned step = 0; step < fmas / 8; ++step) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                x[k] = fmaf(x[k], a, b);
            }
        }
    }
    for (unsigned u = 0; u < fmas % 8; ++u) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            x[k] = fmaf(x[k], a, b);
        }
    }
}

extern "C" __global__ void __launch_bounds__(INTENSITY_BLOCK, FULL_SM_THREADS / INTENSITY_BLOCK)
fma_chain(const float* __restrict__ input, float* __restrict__ output, unsigned n, unsigned fmas,
          float a, float b) {
    unsigned first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (first >= n) {
        return;
    }
    bool whole = n - first >= 4;
    float x[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (whole) {
        float4 v = __ldg(reinterpret_cast<const float4*>(input + first));
        x[0] = v.x;
        x[1] = v.y;
        x[2] = v.z;
        x[3] = v.w;
    } else {
        for (unsigned k = first; k < n; ++k) {
            x[k - first] = input[k];
        }
    }
    fma_chains(x, fmas, a, b);
    if (whole) {
        *reinterpret_cast<float4*>(output + first) = make_float4(x[0], x[1], x[2], x[3]);
    } else {
        for (unsigned k = first; k < n; ++k) {
            output[k] = x[k - first];
        }
    }
}

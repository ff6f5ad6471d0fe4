// CUDA C++ twins of the kernels in gpu/src/blur/: the rounded mean of the
// (2r+1)² window clipped to the image, 8-bit samples, `channels`
// interleaved, one grid layer per channel, blocks of 16×16. Input and
// output are distinct buffers (the Rust kernels' contracts), hence
// __restrict__. Each kernel's __launch_bounds__ are its Rust kernel's
// #[launch_bounds].

// The most threads an SM holds at once, as gpu-core's FULL_SM_THREADS.
#define FULL_SM_THREADS 2048
#define BLUR_BLOCK 16

// Both square kernels: the rounded mean of the samples of this thread's
// channel in the window of `radius` around (row, col), clipped to the
// image, which `sample(y, x)` reads, from global memory or the tile.
template <typename Sample>
__device__ void window_mean(unsigned char* __restrict__ output, int width, int height,
                            int channels, int radius, int row, int col, Sample sample) {
    if (col < width && row < height) {
        int first_row = max(row - radius, 0), last_row = min(row + radius, height - 1);
        int first_col = max(col - radius, 0), last_col = min(col + radius, width - 1);
        unsigned sum = 0;
        for (int y = first_row; y <= last_row; ++y) {
            for (int x = first_col; x <= last_col; ++x) {
                sum += sample(y, x);
            }
        }
        unsigned count = (last_row - first_row + 1) * (last_col - first_col + 1);
        int channel = blockIdx.z;
        output[(row * width + col) * channels + channel] = (sum + count / 2) / count;
    }
}

extern "C" __global__ void __launch_bounds__(BLUR_BLOCK * BLUR_BLOCK,
                                             FULL_SM_THREADS / (BLUR_BLOCK * BLUR_BLOCK))
blur_naive(const unsigned char* __restrict__ input, unsigned char* __restrict__ output, int width,
           int height, int channels, int radius) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int channel = blockIdx.z;
    window_mean(output, width, height, channels, radius, row, col, [&](int y, int x) {
        return input[(y * width + x) * channels + channel];
    });
}

// (BLOCK + 2r)² bytes of launch-sized shared memory: the tile and its halo.
extern "C" __global__ void __launch_bounds__(BLUR_BLOCK * BLUR_BLOCK,
                                             FULL_SM_THREADS / (BLUR_BLOCK * BLUR_BLOCK))
blur_tiled(const unsigned char* __restrict__ input, unsigned char* __restrict__ output, int width,
           int height, int channels, int radius) {
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
    window_mean(output, width, height, channels, radius, row, col, [&](int y, int x) {
        return tile[(y - origin_y) * span + (x - origin_x)];
    });
}

// The separable kernels: blocks of 256 threads, each owning one word (four
// samples) of the block's stretch of a row, walking down a band of 64 rows.
#define STRETCH_THREADS 256
#define BLUR_BAND_ROWS 64

struct Stretch {
    int pixels, halo, output;
};

__device__ Stretch stretch_of(int channels, int radius) {
    Stretch s;
    s.pixels = STRETCH_THREADS / channels * 4;
    s.halo = (radius + 3) / 4 * 4;
    s.output = s.pixels - 2 * s.halo;
    return s;
}

__device__ int clipped_count(int center, int radius, int len) {
    return min(center + radius, len - 1) - max(center - radius, 0) + 1;
}

// What a thread knows of its place in the stretch, worked out once.
struct Place {
    int input_start;  // row-relative, negative left of the image
    bool input_inside[4], input_whole;
    int plane_index[4];  // -1 past the stretch
    int output_start;
    bool output_inside[4], output_whole;
    int window_first[4], window_columns[4];
};

__device__ Place place_of(Stretch s, int width, int channels, int radius) {
    Place p;
    int stride = width * channels;
    bool rows_on_words = stride % 4 == 0;
    int column = 4 * threadIdx.x;
    int first_pixel = blockIdx.x * s.output;
    p.input_start = (first_pixel - s.halo) * channels + column;
    p.output_start = first_pixel * channels + column;
    int samples = s.pixels * channels, output_samples = s.output * channels;
    p.input_whole = p.output_whole = rows_on_words;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        int sample = column + i;
        p.input_inside[i] = p.input_start + i >= 0 && p.input_start + i < stride;
        p.input_whole &= p.input_inside[i];
        p.plane_index[i] = sample < samples ? sample % channels * s.pixels + sample / channels : -1;
        p.output_inside[i] = sample < output_samples && p.output_start + i < stride;
        p.output_whole &= p.output_inside[i];
        int stretch_sample = s.halo * channels + sample;
        p.window_first[i] = stretch_sample % channels * s.pixels + stretch_sample / channels - radius;
        p.window_columns[i] = clipped_count(first_pixel + sample / channels, radius, width);
    }
    return p;
}

// n / full by a multiply and a shift where count is the full window's:
// multiplier ⌈2^shift / full⌉, shift 31 + ⌊log2 full⌋.
__device__ unsigned char rounded_mean(unsigned sum, unsigned count, unsigned full,
                                      unsigned multiplier, unsigned shift) {
    unsigned rounded = sum + count / 2;
    unsigned mean = count == full ? (unsigned)((unsigned long long)rounded * multiplier >> shift)
                                  : rounded / count;
    return mean;
}

__device__ void direct_window_sums(const unsigned* columns, const Place& p, int radius,
                                   unsigned windows[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        windows[i] = 0;
        if (p.output_inside[i]) {
            for (int column = 0; column < 2 * radius + 1; ++column) {
                windows[i] += columns[p.window_first[i] + column];
            }
        }
    }
    __syncthreads();
}

__device__ void prefix_window_sums(unsigned* columns, int samples, const Place& p, int radius,
                                   unsigned windows[4]) {
    unsigned* prefix = columns + samples;
    unsigned* partials = prefix + samples + 1;
    int first = 4 * threadIdx.x;
    unsigned run[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        run[i] = first + i < samples ? columns[first + i] : 0;
    }
#pragma unroll
    for (int i = 1; i < 4; ++i) {
        run[i] += run[i - 1];
    }
    int lane = threadIdx.x % 32;
    unsigned inclusive = run[3];
#pragma unroll
    for (int delta = 1; delta < 32; delta *= 2) {
        unsigned earlier = __shfl_up_sync(0xffffffff, inclusive, delta);
        if (lane >= delta) inclusive += earlier;
    }
    int warp = threadIdx.x / 32;
    if (lane == 31) partials[warp] = inclusive;
    __syncthreads();
    unsigned before = inclusive - run[3];
    // A loop, as the Rust kernel's: unrolled, ptxas merges its loads into
    // one 16-byte load that racecheck sees overlap the prefix words other
    // threads write before the next barrier (under these launch bounds).
#pragma unroll 1
    for (int earlier_warp = 0; earlier_warp < warp; ++earlier_warp) {
        before += partials[earlier_warp];
    }
    if (first == 0) prefix[0] = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (first + i < samples) prefix[first + i + 1] = before + run[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        windows[i] = p.output_inside[i]
                         ? prefix[p.window_first[i] + 2 * radius + 1] - prefix[p.window_first[i]]
                         : 0;
    }
}

template <bool running>
__device__ void walk_band(const unsigned char* __restrict__ input,
                          unsigned char* __restrict__ output, int width, int height,
                          int channels, int radius) {
    extern __shared__ unsigned columns[];
    Stretch s = stretch_of(channels, radius);
    Place p = place_of(s, width, channels, radius);
    int stride = width * channels;
    auto read_row = [&](int row, unsigned samples[4]) {
        int start = row * stride + p.input_start;
        if (p.input_whole) {
            unsigned word = *reinterpret_cast<const unsigned*>(input + start);
#pragma unroll
            for (int i = 0; i < 4; ++i) samples[i] = word >> 8 * i & 0xff;
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) samples[i] = p.input_inside[i] ? input[start + i] : 0;
        }
    };
    int first_row = blockIdx.y * BLUR_BAND_ROWS;
    int end_row = min(first_row + BLUR_BAND_ROWS, height);
    unsigned sums[4] = {0, 0, 0, 0}, row_samples[4];
    for (int row = max(first_row - radius, 0); row < min(first_row + radius + 1, height); ++row) {
        read_row(row, row_samples);
#pragma unroll
        for (int i = 0; i < 4; ++i) sums[i] += row_samples[i];
    }
    unsigned full = (2 * radius + 1) * (2 * radius + 1);
    unsigned shift = 31 + (31 - __clz(full));
    unsigned multiplier = ((1ull << shift) + full - 1) / full;
    for (int row = first_row; row < end_row; ++row) {
        unsigned leaving[4] = {0, 0, 0, 0}, entering[4] = {0, 0, 0, 0};
        if (row >= radius) read_row(row - radius, leaving);
        if (row + radius + 1 < height) read_row(row + radius + 1, entering);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (p.plane_index[i] >= 0) columns[p.plane_index[i]] = sums[i];
        }
        __syncthreads();
        unsigned windows[4];
        if (running) {
            prefix_window_sums(columns, s.pixels * channels, p, radius, windows);
        } else {
            direct_window_sums(columns, p, radius, windows);
        }
        int rows = clipped_count(row, radius, height);
        unsigned means = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (p.output_inside[i]) {
                unsigned mean = rounded_mean(windows[i], rows * p.window_columns[i], full, multiplier, shift);
                means |= mean << 8 * i;
            }
        }
        int start = row * stride + p.output_start;
        if (p.output_whole) {
            *reinterpret_cast<unsigned*>(output + start) = means;
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if (p.output_inside[i]) output[start + i] = means >> 8 * i;
            }
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) sums[i] += entering[i] - leaving[i];
    }
}

// 4 × pixels × channels bytes of launch-sized shared memory.
extern "C" __global__ void __launch_bounds__(STRETCH_THREADS, 4)
blur_separable(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
               int width, int height, int channels, int radius) {
    walk_band<false>(input, output, width, height, channels, radius);
}

// 4 × (2 × pixels × channels + 1 + 8) bytes of launch-sized shared memory.
extern "C" __global__ void __launch_bounds__(STRETCH_THREADS, 4)
blur_running(const unsigned char* __restrict__ input, unsigned char* __restrict__ output, int width,
             int height, int channels, int radius) {
    walk_band<true>(input, output, width, height, channels, radius);
}

// The specialised kernel: compiled once per channel count, blocks of 256
// threads, each owning four whole pixels of the block's stretch.
#define SPECIALISED_THREADS 256
#define THREAD_PIXELS 4

template <int C>
__device__ void walk_band_specialised(const unsigned char* __restrict__ input,
                                      unsigned char* __restrict__ output, int width, int height,
                                      int radius) {
    extern __shared__ unsigned prefixes[];
    constexpr int samples = THREAD_PIXELS * C, words = samples / 4;
    int pixels = SPECIALISED_THREADS * THREAD_PIXELS;
    int halo = (radius + THREAD_PIXELS) / THREAD_PIXELS * THREAD_PIXELS;
    if (halo >= pixels / 2) return;
    int stretch_output = pixels - 2 * halo;
    int stride = width * C;
    int thread = threadIdx.x;
    int pixel = blockIdx.x * stretch_output - halo + thread * THREAD_PIXELS;
    int start = pixel * C;
    int inside_from = min(max(-start, 0), samples);
    int inside_to = min(max(stride - start, 0), samples);
    bool rows_on_words = stride % 4 == 0;
    bool whole = rows_on_words && inside_from == 0 && inside_to == samples;
    auto read_row = [&](int row, unsigned row_words[words]) {
        int first = row * stride + start;
#pragma unroll
        for (int w = 0; w < words; ++w) {
            if (whole) {
                row_words[w] = *reinterpret_cast<const unsigned*>(input + first + 4 * w);
            } else {
                unsigned word = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    int i = 4 * w + b;
                    if (i >= inside_from && i < inside_to) word |= input[first + i] << 8 * b;
                }
                row_words[w] = word;
            }
        }
    };
    auto sample_of = [](const unsigned row_words[words], int i) {
        return row_words[i / 4] >> 8 * (i % 4) & 0xff;
    };
    unsigned* warp_totals = prefixes + pixels * C;
    int lane = thread % 32, warp = thread / 32;
    int first_sample = thread * samples;
    bool writes_output = thread * THREAD_PIXELS >= halo &&
                         thread * THREAD_PIXELS < halo + stretch_output && pixel < width;
    bool whole_output = rows_on_words && inside_to == samples;
    bool interior = pixel >= radius && pixel + THREAD_PIXELS + radius <= width;
    unsigned full = (2 * radius + 1) * (2 * radius + 1);
    unsigned shift = 31 + (31 - __clz(full));
    unsigned multiplier = ((1ull << shift) + full - 1) / full;

    int first_row = blockIdx.y * BLUR_BAND_ROWS;
    int end_row = min(first_row + BLUR_BAND_ROWS, height);
    unsigned sums[samples] = {}, row_words[words];
    for (int row = max(first_row - radius, 0); row < min(first_row + radius + 1, height); ++row) {
        read_row(row, row_words);
#pragma unroll
        for (int i = 0; i < samples; ++i) sums[i] += sample_of(row_words, i);
    }
    for (int row = first_row; row < end_row; ++row) {
        unsigned leaving[words] = {}, entering[words] = {};
        if (row >= radius) read_row(row - radius, leaving);
        if (row + radius + 1 < height) read_row(row + radius + 1, entering);
        unsigned prefix[samples];
#pragma unroll
        for (int i = 0; i < samples; ++i) prefix[i] = sums[i] + (i >= C ? prefix[i - C] : 0);
        unsigned totals[C], inclusive[C];
#pragma unroll
        for (int k = 0; k < C; ++k) totals[k] = inclusive[k] = prefix[samples - C + k];
#pragma unroll
        for (int delta = 1; delta < 32; delta *= 2) {
#pragma unroll
            for (int k = 0; k < C; ++k) {
                unsigned earlier = __shfl_up_sync(0xffffffff, inclusive[k], delta);
                if (lane >= delta) inclusive[k] += earlier;
            }
        }
        if (lane == 31) {
#pragma unroll
            for (int k = 0; k < C; ++k) warp_totals[warp * C + k] = inclusive[k];
        }
        __syncthreads();
        unsigned before[C];
#pragma unroll
        for (int k = 0; k < C; ++k) before[k] = inclusive[k] - totals[k];
        for (int earlier_warp = 0; earlier_warp < warp; ++earlier_warp) {
#pragma unroll
            for (int k = 0; k < C; ++k) before[k] += warp_totals[earlier_warp * C + k];
        }
#pragma unroll
        for (int i = 0; i < samples; ++i) prefixes[first_sample + i] = prefix[i] + before[i % C];
        __syncthreads();
        if (writes_output) {
            auto window = [&](int i) {
                int at = first_sample + i;
                return prefixes[at + radius * C] - prefixes[at - (radius + 1) * C];
            };
            int rows = clipped_count(row, radius, height);
            int first = row * stride + start;
            if (interior && rows == 2 * radius + 1 && whole_output) {
#pragma unroll
                for (int w = 0; w < words; ++w) {
                    unsigned means = 0;
#pragma unroll
                    for (int b = 0; b < 4; ++b) {
                        unsigned rounded = window(4 * w + b) + full / 2;
                        unsigned mean = (unsigned long long)rounded * multiplier >> shift;
                        means |= (mean & 0xff) << 8 * b;
                    }
                    *reinterpret_cast<unsigned*>(output + first + 4 * w) = means;
                }
            } else {
#pragma unroll
                for (int i = 0; i < samples; ++i) {
                    if (i < inside_to) {
                        unsigned count = rows * clipped_count(pixel + i / C, radius, width);
                        output[first + i] = rounded_mean(window(i), count, full, multiplier, shift);
                    }
                }
            }
        }
#pragma unroll
        for (int i = 0; i < samples; ++i) {
            sums[i] += sample_of(entering, i) - sample_of(leaving, i);
        }
    }
}

// 4 × (1024 + 8) × channels bytes of launch-sized shared memory; 1 to 4
// channels.
extern "C" __global__ void __launch_bounds__(SPECIALISED_THREADS, 3)
blur_specialised(const unsigned char* __restrict__ input, unsigned char* __restrict__ output,
                 int width, int height, int channels, int radius) {
    switch (channels) {
        case 1: walk_band_specialised<1>(input, output, width, height, radius); break;
        case 2: walk_band_specialised<2>(input, output, width, height, radius); break;
        case 3: walk_band_specialised<3>(input, output, width, height, radius); break;
        default: walk_band_specialised<4>(input, output, width, height, radius); break;
    }
}

// The shuffled kernel: blocks of 128 threads, a warp per stretch of a band
// of 16 rows (four stretches of one band to a block), each lane one
// 16-byte line of a row; compiled per channel count and radius (r ≤ 7 and
// r·C ≤ 16). No shared memory.
#define SHUFFLED_THREADS 128
#define SHUFFLED_BAND_ROWS 16
#define LINE 16

__host__ __device__ constexpr int floor_div(int a, int b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Samples 2p and 2p + 1 of a line's words, each in a 16-bit half.
__device__ __forceinline__ unsigned spread(const unsigned words[4], int p) {
    return __byte_perm(words[p / 2], 0, p % 2 == 0 ? 0x4140 : 0x4342);
}

// The staged kernel: the shuffled walk with each whole line's rows copied
// STAGED_DEPTH rows ahead into a ring of 16-byte slots of the lane's own
// in shared memory (r ≤ 3).
#define STAGED_DEPTH 3

__host__ __device__ constexpr int ring_slots(int radius) {
    int slots = 1;
    while (slots < 2 * radius + 3 + STAGED_DEPTH) slots *= 2;
    return slots;
}

// Starts copying the 16 bytes from `from` on into those from `to` on: one
// cp.async from compute capability 8.0 on, a load and a store below.
__device__ __forceinline__ void copy_line_async(unsigned char* to, const unsigned char* from) {
#if __CUDA_ARCH__ >= 800
    unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(from));
#else
    *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
#endif
}

template <int C, int R, bool STAGED>
__device__ void walk_band_shuffled(const unsigned char* __restrict__ input,
                                   unsigned char* __restrict__ output, int width, int height) {
    constexpr int reach = R * C, pairs = LINE / 2;
    constexpr int halo_lanes = (reach + LINE - 1) / LINE;
    constexpr int warp_output = (32 - 2 * halo_lanes) * LINE;
    int stride = width * C;
    int lane = threadIdx.x % 32;
    int stretch = blockIdx.x * (SHUFFLED_THREADS / 32) + threadIdx.x / 32;
    long long start = (long long)stretch * warp_output + (lane - halo_lanes) * LINE;
    int inside_from = (int)min(max(-start, 0ll), (long long)LINE);
    int inside_to = (int)min(max((long long)stride - start, 0ll), (long long)LINE);
    bool whole = stride % LINE == 0 && inside_from == 0 && inside_to == LINE;
    bool writes = lane >= halo_lanes && lane < 32 - halo_lanes && inside_to > 0;
    long long first_pixel = start / C, last_pixel = (start + LINE - 1) / C;
    bool interior = first_pixel >= R && last_pixel + R < width;
    auto read_row = [&](int row, unsigned words[4]) {
        long long first = (long long)row * stride + start;
        if (whole) {
            uint4 line = *reinterpret_cast<const uint4*>(input + first);
            words[0] = line.x, words[1] = line.y, words[2] = line.z, words[3] = line.w;
        } else {
#pragma unroll
            for (int w = 0; w < 4; ++w) words[w] = 0;
#pragma unroll
            for (int i = 0; i < LINE; ++i) {
                if (i >= inside_from && i < inside_to) {
                    words[i / 4] |= (unsigned)input[first + i] << 8 * (i % 4);
                }
            }
        }
    };
    auto write_row = [&](int row, const unsigned bytes[4]) {
        long long first = (long long)row * stride + start;
        if (whole) {
            *reinterpret_cast<uint4*>(output + first) =
                make_uint4(bytes[0], bytes[1], bytes[2], bytes[3]);
        } else {
#pragma unroll
            for (int i = 0; i < LINE; ++i) {
                if (i < inside_to) output[first + i] = bytes[i / 4] >> 8 * (i % 4);
            }
        }
    };

    int first_row = blockIdx.y * SHUFFLED_BAND_ROWS;
    int end_row = min(first_row + SHUFFLED_BAND_ROWS, height);
    if constexpr (R == 0) {
        // A window of one sample is the sample: the band is copied.
        for (int row = first_row; row < end_row; ++row) {
            if (writes) {
                unsigned words[4];
                read_row(row, words);
                write_row(row, words);
            }
        }
        return;
    }
    // With STAGED, a whole line's rows through the lane's ring: every row
    // of the band's windows copied once, STAGED_DEPTH rows before it
    // enters, one commit group a row (empty past the band's rows; the
    // groups are matmul.cu's commit_copies and wait_for_copies); a row
    // that leaves read again from its slot.
    extern __shared__ __align__(16) unsigned char ring[];
    const bool staged = STAGED && whole;
    const int lowest = max(first_row - R, 0), beyond = min(end_row + R + 1, height);
    constexpr int slots = ring_slots(R);
    auto slot = [&](int row) { return ring + ((row % slots) * SHUFFLED_THREADS + threadIdx.x) * LINE; };
    auto stage = [&](int row) {
        if (row < beyond) copy_line_async(slot(row), input + (long long)row * stride + start);
        commit_copies();
    };
    auto read_slot = [&](int row, unsigned words[4]) {
        uint4 line = *reinterpret_cast<const uint4*>(slot(row));
        words[0] = line.x, words[1] = line.y, words[2] = line.z, words[3] = line.w;
    };
    if (staged) {
        for (int row = lowest; row < lowest + STAGED_DEPTH; ++row) stage(row);
    }
    auto enter = [&](int row, unsigned words[4]) {
        if (staged) {
            stage(row + STAGED_DEPTH);
            wait_for_copies<STAGED_DEPTH>();
            read_slot(row, words);
        } else {
            read_row(row, words);
        }
    };
    auto leave = [&](int row, unsigned words[4]) {
        if (staged) {
            read_slot(row, words);
        } else {
            read_row(row, words);
        }
    };

    constexpr unsigned full_count = (2 * R + 1) * (2 * R + 1);
    const unsigned full_multiplier = (unsigned)(((1ull << 32) + full_count - 1) / full_count);
    unsigned sums[pairs] = {};
    for (int row = max(first_row - R, 0); row < min(first_row + R + 1, height); ++row) {
        unsigned entering[4];
        enter(row, entering);
#pragma unroll
        for (int p = 0; p < pairs; ++p) sums[p] += spread(entering, p);
    }
    // The row entering the window below `row`, loaded a row ahead.
    auto entering_below = [&](int row, unsigned words[4]) {
        if (height - row > R + 1) {
            enter(row + R + 1, words);
        } else {
#pragma unroll
            for (int w = 0; w < 4; ++w) words[w] = 0;
        }
    };
    unsigned entering[4];
    entering_below(first_row, entering);
    for (int row = first_row; row < end_row; ++row) {
        unsigned leaving[4] = {}, entering_next[4] = {};
        if (row >= R) leave(row - R, leaving);
        if (row + 1 < end_row) entering_below(row + 1, entering_next);
        // Word k of the column sums, from this line's first, at k + 16.
        unsigned words[16 + pairs + 16];
        auto fetch = [&](int k) -> unsigned {
            int lanes = floor_div(k, pairs);
            unsigned own = sums[k - lanes * pairs];
            return lanes == 0  ? own
                   : lanes < 0 ? __shfl_up_sync(0xffffffff, own, -lanes)
                               : __shfl_down_sync(0xffffffff, own, lanes);
        };
        // Pair p's windows reach up to word words_for(p) - 1: pair 0 needs
        // every word from the first its windows reach, each later pair one
        // more.
        auto words_for = [](int p) { return floor_div(2 * p + reach + 1, 2) + 1; };
        auto fetch_for = [&](int p) {
            if (p == 0) {
                constexpr int first = floor_div(-reach, 2), last = floor_div(reach + 1, 2) + 1;
#pragma unroll
                for (int k = first; k < last; ++k) words[k + 16] = fetch(k);
            } else {
                words[words_for(p) - 1 + 16] = fetch(words_for(p) - 1);
            }
        };
        auto column_pair = [&](int j) -> unsigned {
            int k = floor_div(j, 2) + 16;
            return j % 2 == 0 ? words[k] : __byte_perm(words[k], words[k + 1], 0x5432);
        };
        unsigned windows[pairs];
        constexpr int direct = R <= 2 ? pairs : C;
#pragma unroll
        for (int p = 0; p < direct; ++p) {
            fetch_for(p);
            int at = 2 * p;
            unsigned sum = column_pair(at - reach);
#pragma unroll
            for (int t = 1; t < 2 * R + 1; ++t) sum += column_pair(at - reach + t * C);
            windows[p] = sum;
        }
#pragma unroll
        for (int p = direct; p < pairs; ++p) {
            fetch_for(p);
            int at = 2 * p;
            unsigned kept = windows[p - C] - column_pair(at - reach - 2 * C) -
                            column_pair(at - reach - C);
            windows[p] = kept + column_pair(at + reach - C) + column_pair(at + reach);
        }
#pragma unroll
        for (int p = 0; p < pairs; ++p) sums[p] = sums[p] - spread(leaving, p) + spread(entering, p);
        if (writes) {
            int rows = clipped_count(row, R, height);
            unsigned count = rows * (2 * R + 1);
            unsigned multiplier = rows == 2 * R + 1
                                      ? full_multiplier
                                      : (unsigned)(((1ull << 32) + count - 1) / count);
            unsigned bytes[4];
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                unsigned q[4];
                if (interior) {
#pragma unroll
                    for (int b = 0; b < 4; ++b) {
                        int i = 4 * w + b;
                        unsigned rounded = windows[i / 2] + (count / 2) * 0x10001u;
                        unsigned sum = i % 2 ? rounded >> 16 : rounded & 0xffff;
                        q[b] = __umulhi(sum, multiplier);
                    }
                } else {
#pragma unroll
                    for (int b = 0; b < 4; ++b) {
                        int i = 4 * w + b;
                        long long sample = min(max(start + i, 0ll), (long long)stride - 1);
                        unsigned c = rows * clipped_count((int)(sample / C), R, width);
                        unsigned sum = (i % 2 ? windows[i / 2] >> 16 : windows[i / 2] & 0xffff) + c / 2;
                        q[b] = sum / c;
                    }
                }
                bytes[w] = __byte_perm(__byte_perm(q[0], q[1], 0x0040),
                                       __byte_perm(q[2], q[3], 0x0040), 0x5410);
            }
            write_row(row, bytes);
        }
#pragma unroll
        for (int w = 0; w < 4; ++w) entering[w] = entering_next[w];
    }
}

// One entry point for each channel count and radius, as the Rust kernel's
// instances: 1 to 4 channels, r ≤ 7 and r·C ≤ 16.
#define SHUFFLED_INSTANCE(C, R)                                                       \
    extern "C" __global__ void __launch_bounds__(SHUFFLED_THREADS, 6)                 \
        blur_shuffled_##C##_##R(const unsigned char* __restrict__ input,              \
                                unsigned char* __restrict__ output, int width,        \
                                int height, int /* channels */, int /* radius */) {   \
        walk_band_shuffled<C, R, false>(input, output, width, height);                \
    }
SHUFFLED_INSTANCE(1, 0)
SHUFFLED_INSTANCE(1, 1)
SHUFFLED_INSTANCE(1, 2)
SHUFFLED_INSTANCE(1, 3)
SHUFFLED_INSTANCE(1, 4)
SHUFFLED_INSTANCE(1, 5)
SHUFFLED_INSTANCE(1, 6)
SHUFFLED_INSTANCE(1, 7)
SHUFFLED_INSTANCE(2, 0)
SHUFFLED_INSTANCE(2, 1)
SHUFFLED_INSTANCE(2, 2)
SHUFFLED_INSTANCE(2, 3)
SHUFFLED_INSTANCE(2, 4)
SHUFFLED_INSTANCE(2, 5)
SHUFFLED_INSTANCE(2, 6)
SHUFFLED_INSTANCE(2, 7)
SHUFFLED_INSTANCE(3, 0)
SHUFFLED_INSTANCE(3, 1)
SHUFFLED_INSTANCE(3, 2)
SHUFFLED_INSTANCE(3, 3)
SHUFFLED_INSTANCE(3, 4)
SHUFFLED_INSTANCE(3, 5)
SHUFFLED_INSTANCE(4, 0)
SHUFFLED_INSTANCE(4, 1)
SHUFFLED_INSTANCE(4, 2)
SHUFFLED_INSTANCE(4, 3)
SHUFFLED_INSTANCE(4, 4)

// The staged kernel's instances: 1 to 4 channels, r ≤ 3.
#define STAGED_INSTANCE(C, R)                                                         \
    extern "C" __global__ void __launch_bounds__(SHUFFLED_THREADS, 6)                 \
        blur_staged_##C##_##R(const unsigned char* __restrict__ input,                \
                              unsigned char* __restrict__ output, int width,          \
                              int height, int /* channels */, int /* radius */) {     \
        walk_band_shuffled<C, R, true>(input, output, width, height);                 \
    }
STAGED_INSTANCE(1, 0)
STAGED_INSTANCE(1, 1)
STAGED_INSTANCE(1, 2)
STAGED_INSTANCE(1, 3)
STAGED_INSTANCE(2, 0)
STAGED_INSTANCE(2, 1)
STAGED_INSTANCE(2, 2)
STAGED_INSTANCE(2, 3)
STAGED_INSTANCE(3, 0)
STAGED_INSTANCE(3, 1)
STAGED_INSTANCE(3, 2)
STAGED_INSTANCE(3, 3)
STAGED_INSTANCE(4, 0)
STAGED_INSTANCE(4, 1)
STAGED_INSTANCE(4, 2)
STAGED_INSTANCE(4, 3)

// The in-flight kernel (gpu/src/blur/in_flight.rs): each lane one word of
// each row of a band of IN_FLIGHT_BAND_ROWS rows, every row the band's
// windows take in loaded before any is summed; compiled per channel count
// and radius (r ≤ 2 and r·C ≤ 4). No shared memory.
#define IN_FLIGHT_THREADS 128
#define IN_FLIGHT_BAND_ROWS 8
#define IN_FLIGHT_WARP_OUTPUT ((32 - 2) * 4)

// The in-flight walk down a band (gpu/src/blur/in_flight.rs): the column
// sums of `rows`, the band's and the 2r around it, each row's two window
// sums handed to `finish` with the row. Pair k of the column sums, from
// this lane's first, at k + 2: the left lane's two, its own, the right
// lane's two.
template <int C, int R, typename Finish>
__device__ __forceinline__ void walk_in_flight(const unsigned (&rows)[IN_FLIGHT_BAND_ROWS + 2 * R],
                                               int first_row, Finish finish) {
    constexpr int reach = R * C;
    constexpr int first_pair = floor_div(-reach, 2), last_pair = floor_div(3 + reach, 2);
    auto pair_of = [](unsigned word, int half) {
        return __byte_perm(word, 0, half == 0 ? 0x4140 : 0x4342);
    };
    unsigned sums[2] = {};
#pragma unroll
    for (int i = 0; i < 2 * R; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) sums[h] += pair_of(rows[i], h);
    }
#pragma unroll
    for (int i = 0; i < IN_FLIGHT_BAND_ROWS; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) sums[h] += pair_of(rows[i + 2 * R], h);
        unsigned pairs[6] = {};
#pragma unroll
        for (int k = first_pair; k <= last_pair; ++k) {
            unsigned own = sums[k & 1];
            pairs[k + 2] = k < 0   ? __shfl_up_sync(0xffffffff, own, 1)
                           : k < 2 ? own
                                   : __shfl_down_sync(0xffffffff, own, 1);
        }
        auto column_pair = [&](int j) -> unsigned {
            int k = floor_div(j, 2) + 2;
            return j % 2 == 0 ? pairs[k] : __byte_perm(pairs[k], pairs[k + 1], 0x5432);
        };
        unsigned windows[2];
#pragma unroll
        for (int p = 0; p < 2; ++p) {
            unsigned sum = 0;
#pragma unroll
            for (int t = 0; t < 2 * R + 1; ++t) sum += column_pair(2 * p - reach + t * C);
            windows[p] = sum;
        }
        finish(first_row + i, windows);
#pragma unroll
        for (int h = 0; h < 2; ++h) sums[h] -= pair_of(rows[i], h);
    }
}

template <int C, int R>
__device__ void walk_band_in_flight(const unsigned char* __restrict__ input,
                                    unsigned char* __restrict__ output, int width, int height) {
    int stride = width * C;
    int lane = threadIdx.x % 32;
    int stretch = blockIdx.x * (IN_FLIGHT_THREADS / 32) + threadIdx.x / 32;
    long long start = (long long)stretch * IN_FLIGHT_WARP_OUTPUT + (lane - 1) * 4;
    bool whole = stride % 4 == 0 && start >= 0 && start + 4 <= stride;
    bool writes = lane >= 1 && lane < 31 && start < stride;
    long long first_pixel = start / C, last_pixel = (start + 3) / C;
    bool interior = first_pixel >= R && last_pixel + R < width;
    auto inside = [&](int i) { return start + i >= 0 && start + i < stride; };
    // A whole word from the nearest row inside the image, dropped where
    // `row` lies outside, so that no branch separates a band's loads;
    // elsewhere a sample at a time.
    auto read_whole = [&](int row) -> unsigned {
        long long first = (long long)min(max(row, 0), height - 1) * stride + start;
        unsigned word = *reinterpret_cast<const unsigned*>(input + first);
        return row >= 0 && row < height ? word : 0;
    };
    auto read_part = [&](int row) -> unsigned {
        long long first = (long long)row * stride + start;
        unsigned word = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (row >= 0 && row < height && inside(i)) word |= (unsigned)input[first + i] << 8 * i;
        }
        return word;
    };
    auto read_row = [&](int row) { return whole ? read_whole(row) : read_part(row); };
    auto write_row = [&](int row, unsigned word) {
        long long first = (long long)row * stride + start;
        if (whole) {
            *reinterpret_cast<unsigned*>(output + first) = word;
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if (inside(i)) output[first + i] = word >> 8 * i;
            }
        }
    };

    int first_row = blockIdx.y * IN_FLIGHT_BAND_ROWS;
    if constexpr (R == 0) {
        // A window of one sample is the sample: the band is copied.
#pragma unroll
        for (int i = 0; i < IN_FLIGHT_BAND_ROWS; ++i) {
            int row = first_row + i;
            if (writes && row < height) write_row(row, read_row(row));
        }
        return;
    }
    // Every row the band's windows take in, loaded before any is summed.
    unsigned rows[IN_FLIGHT_BAND_ROWS + 2 * R];
    if (whole) {
#pragma unroll
        for (int i = 0; i < IN_FLIGHT_BAND_ROWS + 2 * R; ++i) rows[i] = read_whole(first_row - R + i);
    } else {
#pragma unroll
        for (int i = 0; i < IN_FLIGHT_BAND_ROWS + 2 * R; ++i) rows[i] = read_part(first_row - R + i);
    }

    constexpr unsigned full_count = (2 * R + 1) * (2 * R + 1);
    constexpr unsigned full_multiplier = (unsigned)(((1ull << 32) + full_count - 1) / full_count);
    auto pack = [](const unsigned (&q)[4]) {
        return __byte_perm(__byte_perm(q[0], q[1], 0x0040), __byte_perm(q[2], q[3], 0x0040),
                           0x5410);
    };
    // The common case, decided once for the band: a whole word whose
    // windows' columns and rows all lie inside the image, one multiply-high
    // a mean and one store a row; the walk compiled again for it.
    bool inside_rows = first_row >= R && height - first_row >= IN_FLIGHT_BAND_ROWS + R;
    if (whole && interior && inside_rows) {
        walk_in_flight<C, R>(rows, first_row, [&](int row, const unsigned (&windows)[2]) {
            if (writes) {
                unsigned q[4];
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    unsigned rounded = windows[b / 2] + (full_count / 2) * 0x10001u;
                    q[b] = __umulhi(b % 2 ? rounded >> 16 : rounded & 0xffff, full_multiplier);
                }
                write_row(row, pack(q));
            }
        });
    } else {
        walk_in_flight<C, R>(rows, first_row, [&](int row, const unsigned (&windows)[2]) {
            if (writes && row < height) {
                int rows_in = clipped_count(row, R, height);
                unsigned q[4];
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    long long sample = min(max(start + b, 0ll), (long long)stride - 1);
                    unsigned c = rows_in * clipped_count((int)(sample / C), R, width);
                    unsigned sum = (b % 2 ? windows[b / 2] >> 16 : windows[b / 2] & 0xffff) + c / 2;
                    q[b] = sum / c;
                }
                write_row(row, pack(q));
            }
        });
    }
}

// The in-flight kernel's instances: 1 to 4 channels, r ≤ 2 and r·C ≤ 4.
#define IN_FLIGHT_INSTANCE(C, R)                                                      \
    extern "C" __global__ void __launch_bounds__(IN_FLIGHT_THREADS, 8)                \
        blur_in_flight_##C##_##R(const unsigned char* __restrict__ input,             \
                                 unsigned char* __restrict__ output, int width,       \
                                 int height, int /* channels */, int /* radius */) {  \
        walk_band_in_flight<C, R>(input, output, width, height);                      \
    }
IN_FLIGHT_INSTANCE(1, 0)
IN_FLIGHT_INSTANCE(1, 1)
IN_FLIGHT_INSTANCE(1, 2)
IN_FLIGHT_INSTANCE(2, 0)
IN_FLIGHT_INSTANCE(2, 1)
IN_FLIGHT_INSTANCE(2, 2)
IN_FLIGHT_INSTANCE(3, 0)
IN_FLIGHT_INSTANCE(3, 1)
IN_FLIGHT_INSTANCE(4, 0)
IN_FLIGHT_INSTANCE(4, 1)

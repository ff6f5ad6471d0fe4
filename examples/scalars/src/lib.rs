//! One kernel for each scalar type, `i8` to `f64` with `f16` and `bf16`,
//! that moves values of it through everything that takes any scalar: a
//! buffer in and one out, a scalar argument, a `shared_array!` and a
//! `constant_array!`; and reads `clock64()` and `%globaltimer`. Built for
//! the GPU, it is the one place their loads, stores and parameters of
//! every width reach ptxas and the driver; its test runs it on the GPU
//! where there is one, and on the emulator always.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel, asm_experimental_arch))]

use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{clock64, globaltimer, sync_threads, thread_idx_x};
use gpu_std::{Launch, bf16, constant_array, f16, kernels, shared_array};

/// Threads of the one block, elements of each array.
pub const THREADS: u32 = 64;

/// One block of [`THREADS`].
fn one_block(_: &()) -> Launch {
    Launch::covering((THREADS, 1, 1), (THREADS, 1, 1), 0)
}

/// The kernels of one type: `output[3t]` is `input[63 − t]` through a
/// static shared array, `output[3t + 1]` element t of the constant array,
/// `output[3t + 2]` the scalar argument; `times[2t]` how far `clock64`
/// went across the barrier, `times[2t + 1]` the `%globaltimer` after it.
macro_rules! roundtrips {
    ($($module:ident $type:ty, $shared:ident, $constant:ident;)*) => {$(
        /// The kernel of one type.
        pub mod $module {
            use super::*;

            /// The constant array's name, which the host sets.
            pub const CONSTANT: &str = stringify!($constant);

            kernels! {
                /// The one kernel.
                pub const KERNELS: [Kernel<(Global<$type>, GlobalMut<$type>, $type, GlobalMut<u64>), ()>];

                /// Moves values of one type through every memory that takes them.
                ///
                /// # Safety
                /// `input` has [`THREADS`] elements, `output` three times as
                /// many, `times` twice; the constant array is set.
                #[launch(one_block)]
                #[launch_bounds(THREADS)]
                pub unsafe fn $module(input: Global<$type>, output: GlobalMut<$type>, scalar: $type, times: GlobalMut<u64>) {
                    let t = thread_idx_x();
                    let start = clock64();
                    // SAFETY: t < THREADS, the length of every array, and a
                    // barrier between the shared writes and reads.
                    unsafe {
                        let shared = shared_array!($shared: [$type; THREADS]);
                        let constant = constant_array!($constant: [$type; THREADS]);
                        shared.write(t, input.read(t as usize));
                        sync_threads();
                        let i = 3 * t as usize;
                        output.write(i, shared.read(THREADS - 1 - t));
                        output.write(i + 1, constant.read(t));
                        output.write(i + 2, scalar);
                        times.write(2 * t as usize, clock64() - start);
                        times.write(2 * t as usize + 1, globaltimer());
                    }
                }
            }
        }
    )*};
}

roundtrips! {
    roundtrip_i8 i8, SHARED_I8, CONSTANT_I8;
    roundtrip_u8 u8, SHARED_U8, CONSTANT_U8;
    roundtrip_i16 i16, SHARED_I16, CONSTANT_I16;
    roundtrip_u16 u16, SHARED_U16, CONSTANT_U16;
    roundtrip_f16 f16, SHARED_F16, CONSTANT_F16;
    roundtrip_bf16 bf16, SHARED_BF16, CONSTANT_BF16;
    roundtrip_i32 i32, SHARED_I32, CONSTANT_I32;
    roundtrip_u32 u32, SHARED_U32, CONSTANT_U32;
    roundtrip_f32 f32, SHARED_F32, CONSTANT_F32;
    roundtrip_i64 i64, SHARED_I64, CONSTANT_I64;
    roundtrip_u64 u64, SHARED_U64, CONSTANT_U64;
    roundtrip_f64 f64, SHARED_F64, CONSTANT_F64;
}

//! Matrix-vector multiplication, y = αAx + βy, A m×n, in f32 and f64.
//!
//! The lesson of this family is coalescing. Each element of A is used once,
//! so nothing can be reused and the kernels can at best stream A at the
//! memory bandwidth; whether they do depends on whether the 32 threads of a
//! warp read 32 neighbouring addresses (one transaction) or 32 addresses a
//! row apart (32 transactions). With one thread per row, that is decided by
//! the storage order of A alone.
//!
//! The seeds' three kernels stop there. The ladder past them reads A at the
//! memory bandwidth in either layout: a warp per row makes row-major A
//! coalesced (its lanes sum with shuffles), 16-byte loads move four times
//! the bytes per instruction, and column-major A gets more loads in flight
//! by splitting the columns among a block's warps.
//!
//! As in BLAS, y is not read when β = 0, so it may hold anything.

mod geometry;
mod parts;
mod seeds;
mod split_columns;
mod warp_rows;

pub use geometry::*;
use gpu_std::FULL_SM_THREADS;
use gpu_std::global::{Global, GlobalMut};
use parts::Gemv;
use seeds::{gemv_col_major, gemv_col_major_shared_x, gemv_row_major};
use split_columns::{gemv_col_major_split, gemv_col_major_vector};
use warp_rows::{gemv_row_major_vector, gemv_row_major_warp};

/// The parameters every gemv kernel takes: α, A, x, β, y, m, n.
pub type Args<T> = (T, Global<T>, Global<T>, T, GlobalMut<T>, u32, u32);

/// Declares the f32 and f64 entry points of each generic kernel, and the
/// two lists, in teaching order.
macro_rules! gemv_entry_points {
    ($(
        #[doc = $lesson:literal]
        #[launch($launch:ident)]
        #[launch_bounds($($bounds:expr),+)]
        $generic:ident: $f32_name:ident, $f64_name:ident;
    )*) => {
        gemv_entry_points! {
            @precision f32, KERNELS_F32, "The f32 gemv kernels, in teaching order.",
            $([$lesson, $launch, ($($bounds),+), $generic, $f32_name])*
        }
        gemv_entry_points! {
            @precision f64, KERNELS_F64, "The f64 gemv kernels, in teaching order.",
            $([$lesson, $launch, ($($bounds),+), $generic, $f64_name])*
        }
    };
    (
        @precision $t:ident, $list:ident, $list_doc:literal,
        $([$lesson:literal, $launch:ident, ($($bounds:expr),+), $generic:ident, $name:ident])*
    ) => {
        kernels! {
            #[doc = $list_doc]
            pub const $list: [Kernel<Args<$t>, Problem>];
            $(
                #[doc = $lesson]
                ///
                /// The instance, in the precision its name ends with, of the
                /// generic kernel named in its body.
                ///
                /// Launch bounds: as for that kernel.
                ///
                /// # Safety
                /// As for that kernel.
                #[launch($launch::<$t>)]
                #[launch_bounds($($bounds),+)]
                pub unsafe fn $name(alpha: $t, a: Global<$t>, x: Global<$t>, beta: $t, y: GlobalMut<$t>, m: u32, n: u32) {
                    // SAFETY: forwarded contract.
                    unsafe { $generic(Gemv { alpha, a, x, beta, y, m, n }) }
                }
            )*
        }
    };
}

gemv_entry_points! {
    /// Row-major A, one thread per row: a warp's loads lie a row apart, uncoalesced.
    #[launch(one_thread_per_row)]
    #[launch_bounds(BLOCK, 3)]
    gemv_row_major: gemv_row_major_f32, gemv_row_major_f64;

    /// Column-major A, one thread per row: a warp reads 32 neighbours, coalesced.
    #[launch(one_thread_per_row)]
    #[launch_bounds(BLOCK, 4)]
    gemv_col_major: gemv_col_major_f32, gemv_col_major_f64;

    /// Column-major A with x staged in shared memory: a broadcast the cache already serves.
    #[launch(shared_x_launch)]
    #[launch_bounds(BLOCK, 4)]
    gemv_col_major_shared_x: gemv_col_major_shared_x_f32, gemv_col_major_shared_x_f64;

    /// Row-major A, a warp per row: coalesced along the row, summed with shuffles.
    #[launch(warp_per_row)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    gemv_row_major_warp: gemv_row_major_warp_f32, gemv_row_major_warp_f64;

    /// Row-major A, a warp per row, 16-byte loads: four times the bytes per instruction.
    #[launch(warp_per_row)]
    #[launch_bounds(BLOCK, 4)]
    gemv_row_major_vector: gemv_row_major_vector_f32, gemv_row_major_vector_f64;

    /// Column-major A, the columns split among 32 warps: 32 times the loads in flight.
    #[launch(split_launch)]
    #[launch_bounds(SPLIT_BLOCK, FULL_SM_THREADS / SPLIT_BLOCK)]
    gemv_col_major_split: gemv_col_major_split_f32, gemv_col_major_split_f64;

    /// Column-major A, split columns and 16-byte loads: whole lines, 512 bytes per instruction.
    #[launch(vector_split_launch)]
    #[launch_bounds(SPLIT_BLOCK, FULL_SM_THREADS / SPLIT_BLOCK)]
    gemv_col_major_vector: gemv_col_major_vector_f32, gemv_col_major_vector_f64;
}

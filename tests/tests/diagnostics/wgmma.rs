//! Hopper's warpgroup MMA on the emulator: a 64×64 product from tiles in
//! the interleaved layout and, chained over k, from tiles swizzled as a
//! 128-byte tensor map writes them, and with A from registers, each
//! against the CPU's; a descriptor
//! whose leading offset is wrong giving a wrong product; a warp that does
//! not issue the `wgmma` whole; and a stage overwritten while a `wgmma`
//! that reads it is in flight.

use std::sync::Mutex;

use gpu_emulator::{Diagnostic, Fault, LaneProblem, WarpOp};
use gpu_std::bf16;
use gpu_std::bulk::fence_proxy_async_shared_cta;
use gpu_std::mma::{FragmentA, Pair};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use gpu_std::wgmma::{Accumulators, MatrixDescriptor, Swizzle};
use rand::Rng;

use crate::support::{assert_fault, one_block, rng};

/// The tile's side: A is 64×K, B is K×64, D is 64×64.
const SIDE: usize = 64;

/// How a test lays A and B out and describes them.
#[derive(Clone, Copy)]
enum Layout {
    /// K = 16, core matrices of 16-byte rows: A K-major, its two chunks
    /// along k `leading` bytes apart (128 is right), the next eight rows
    /// 256 on; B N-major, eight columns a chunk, the next eight k 128
    /// bytes on, the next eight columns 256.
    Interleaved { leading: u32 },
    /// K = 64 in four steps of 16: A rows of 128 bytes, B rows of 64
    /// columns, each 16-byte chunk XORed with its row's index among eight,
    /// as a tensor map with a 128-byte swizzle writes them.
    Swizzled128,
}

impl Layout {
    fn k(self) -> usize {
        match self {
            Self::Interleaved { .. } => 16,
            Self::Swizzled128 => 64,
        }
    }

    /// The element index in shared memory of A(r, k), and of B(k, n)
    /// after A's `SIDE`·K elements.
    fn a_index(self, r: usize, k: usize) -> usize {
        match self {
            Self::Interleaved { .. } => (r % 8 * 16 + r / 8 * 256 + k / 8 * 128 + k % 8 * 2) / 2,
            Self::Swizzled128 => (r * 128 + ((k / 8) ^ (r % 8)) * 16 + k % 8 * 2) / 2,
        }
    }

    fn b_index(self, k: usize, n: usize) -> usize {
        let bytes = match self {
            Self::Interleaved { .. } => k % 8 * 16 + k / 8 * 128 + n / 8 * 256 + n % 8 * 2,
            Self::Swizzled128 => k * 128 + ((n / 8) ^ (k % 8)) * 16 + n % 8 * 2,
        };
        SIDE * self.k() + bytes / 2
    }

    /// The descriptors of step `step`'s 16 k.
    fn descriptors(
        self,
        tile: SharedArray<bf16>,
        step: u32,
    ) -> (MatrixDescriptor, MatrixDescriptor) {
        let b = (SIDE * self.k()) as u32;
        match self {
            Self::Interleaved { leading } => (
                MatrixDescriptor::new(tile, 0, Swizzle::None, leading, 256),
                MatrixDescriptor::new(tile, b, Swizzle::None, 128, 256),
            ),
            Self::Swizzled128 => (
                MatrixDescriptor::new(tile, 16 * step, Swizzle::B128, 16, 1024),
                MatrixDescriptor::new(tile, b + 1024 * step, Swizzle::B128, 8192, 1024),
            ),
        }
    }
}

/// Random bf16 values: A's 64×K, then B's K×64, row-major.
fn random_operands(k: usize) -> Vec<f32> {
    let mut rng = rng();
    (0..2 * SIDE * k)
        .map(|_| bf16::from_f32(rng.random_range(-1.0..1.0)).to_f32())
        .collect()
}

/// Where the test's `wgmma`s take A from.
#[derive(Clone, Copy, PartialEq)]
enum AFrom {
    Shared,
    /// Each warp's 16 rows as `mma.sync`'s A fragments, straight from the
    /// values.
    Registers,
}

/// Thread `t`'s fragment of A (64×K row-major in `values`) for the 16 k
/// of step `step`: its warp's rows, laid out as `mma.sync`'s A.
fn fragment(values: &[f32], k: usize, t: u32, step: u32) -> FragmentA<bf16> {
    let (warp, lane) = (t as usize / 32, t as usize % 32);
    let (row, column) = (16 * warp + lane / 4, 16 * step as usize + 2 * (lane % 4));
    let pair = |r: usize, c: usize| {
        let at = |c: usize| bf16::from_f32(values[r * k + c]);
        Pair::new(at(c), at(c + 1))
    };
    FragmentA([
        pair(row, column),
        pair(row + 8, column),
        pair(row, column + 8),
        pair(row + 8, column + 8),
    ])
}

/// D = A·B on one warpgroup: every thread writes its share of `values`
/// in `layout` and fences it for the async proxy, the block passes a
/// barrier, and the warpgroup's `wgmma`s, one per 16 k, run, A from
/// shared memory or registers as `from` says; thread `skipping`
/// (if any) issues none, and thread `overwriting` (if any) writes A's
/// first element after a barrier while they are in flight. Returns D,
/// row-major.
fn product(
    values: &[f32],
    (layout, from): (Layout, AFrom),
    skipping: Option<u32>,
    overwriting: Option<u32>,
) -> Result<Vec<f32>, Diagnostic> {
    let k = layout.k();
    let d = Mutex::new(vec![f32::NAN; SIDE * SIDE]);
    let body = || {
        let t = thread_idx_x();
        // SAFETY: the launch gives both tiles; the emulator checks the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            for index in (t as usize..SIDE * k).step_by(128) {
                let (r, c) = (index / k, index % k);
                tile.write(layout.a_index(r, c) as u32, bf16::from_f32(values[index]));
                let (row, n) = (index / SIDE, index % SIDE);
                let b = values[SIDE * k + index];
                tile.write(layout.b_index(row, n) as u32, bf16::from_f32(b));
            }
            fence_proxy_async_shared_cta();
            sync_threads();
            if skipping == Some(t) {
                return;
            }
            let mut flight = Accumulators::<32>::ZERO.fence();
            for step in 0..k as u32 / 16 {
                let (a, b) = layout.descriptors(tile, step);
                flight = match from {
                    AFrom::Shared => flight.mma_async::<bf16>(a, b, true),
                    AFrom::Registers => {
                        let a = fragment(values, k, t, step);
                        flight.mma_async_registers::<bf16>(a, b, true)
                    }
                };
            }
            if let Some(writer) = overwriting {
                sync_threads();
                if t == writer {
                    tile.write(layout.a_index(0, 0) as u32, bf16::from_f32(7.0));
                }
            }
            let accumulators = flight.wait();
            let (warp, lane) = (t / 32, t % 32);
            let mut d = d.lock().unwrap();
            for (i, value) in accumulators.0.into_iter().enumerate() {
                let i = i as u32;
                let row = 16 * warp + lane / 4 + 8 * (i / 2 % 2);
                let column = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
                d[(row * SIDE as u32 + column) as usize] = value;
            }
        }
    };
    let bytes = (2 * 2 * SIDE * k) as u32;
    gpu_emulator::run("wgmma", &one_block(128, bytes), &body)?;
    Ok(d.into_inner().unwrap())
}

/// Each element of D against the emulator's tensor cores: each `wgmma`
/// adds its 16 products to D exactly and rounds once to f32. How many
/// elements differ.
fn wrong_elements(values: &[f32], k: usize, d: &[f32]) -> usize {
    let (a, b) = values.split_at(SIDE * k);
    (0..SIDE * SIDE)
        .filter(|&index| {
            let (r, n) = (index / SIDE, index % SIDE);
            let step = |sum: f32, step: usize| {
                let products = (16 * step..16 * step + 16)
                    .map(|l| f64::from(a[r * k + l]) * f64::from(b[l * SIDE + n]));
                (f64::from(sum) + products.sum::<f64>()) as f32
            };
            d[index] != (0..k / 16).fold(0.0, step)
        })
        .count()
}

#[test]
fn a_warpgroup_multiplies_interleaved_tiles() {
    let layout = Layout::Interleaved { leading: 128 };
    let values = random_operands(layout.k());
    let d = product(&values, (layout, AFrom::Shared), None, None).unwrap();
    assert_eq!(wrong_elements(&values, layout.k(), &d), 0);
}

#[test]
fn a_warpgroup_multiplies_128_byte_swizzled_tiles_chained_over_k() {
    let layout = Layout::Swizzled128;
    let values = random_operands(layout.k());
    let d = product(&values, (layout, AFrom::Shared), None, None).unwrap();
    assert_eq!(wrong_elements(&values, layout.k(), &d), 0);
}

/// A in registers, each warp holding its rows as `mma.sync`'s A, gives
/// the product A in shared memory gives.
#[test]
fn a_warpgroup_multiplies_a_from_registers_by_swizzled_b() {
    let layout = Layout::Swizzled128;
    let values = random_operands(layout.k());
    let d = product(&values, (layout, AFrom::Registers), None, None).unwrap();
    assert_eq!(wrong_elements(&values, layout.k(), &d), 0);
}

/// The descriptor, not the layout the kernel meant, says where the
/// elements are: A's second chunk of k, 128 bytes on, read 256 bytes on
/// (the next eight rows' first chunk) gives another product.
#[test]
fn a_descriptor_with_a_wrong_leading_offset_gives_a_wrong_product() {
    let values = random_operands(16);
    let wrong = Layout::Interleaved { leading: 256 };
    let d = product(&values, (wrong, AFrom::Shared), None, None).unwrap();
    assert!(wrong_elements(&values, 16, &d) > SIDE * SIDE / 2);
}

#[test]
fn a_warp_that_does_not_issue_the_wgmma_whole_is_reported() {
    let values = random_operands(16);
    let layout = Layout::Interleaved { leading: 128 };
    let diagnostic = product(&values, (layout, AFrom::Shared), Some(37), None).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::BadWarpCall {
            call: WarpOp::Wgmma,
            lane: 5,
            problem: LaneProblem::Returned,
            ..
        }
    );
}

/// Thread 0 read A(0, 0) for its rows; written again after a barrier, but
/// before the wait, the tensor cores might still be reading it.
#[test]
fn a_stage_overwritten_while_a_wgmma_reads_it_is_reported() {
    let values = random_operands(64);
    let layout = (Layout::Swizzled128, AFrom::Shared);
    let diagnostic = product(&values, layout, None, Some(0)).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaOperandOverwritten {
            thread: (0, 0, 0),
            offset: 0,
            ..
        }
    );
}

//! The warp's matrix instructions: `ldmatrix` reading a tile that a
//! missing barrier leaves racing, a row past the tile, a row off its
//! 16-byte boundary, and an `mma_sync` that a lane skips; and one warp's
//! product, fragments by `ldmatrix`, against the CPU's.

use gpu_emulator::{self, AccessKind, Fault, LaneProblem, WarpOp};
use gpu_std::bf16;
use gpu_std::mma::{Accumulator, FragmentA, FragmentB, ldmatrix, mma_sync};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use rand::Rng;

use crate::support::{assert_fault, one_block, rng};

/// Elements of a 16×16 tile of bf16 and of the 16×8 one after it.
const A_ELEMENTS: u32 = 16 * 16;
const TILE_BYTES: u32 = 2 * (A_ELEMENTS + 16 * 8);

/// One warp: lane t writes its eight elements of the two tiles from
/// `values`, waits at a barrier if `barrier`, and multiplies them with
/// fragments by `ldmatrix`, A's row of lane t shifted by `shift` elements
/// and read from row `row_of(t)`; C is written to `c`.
fn product(
    values: &[f32],
    barrier: bool,
    row_of: fn(u32) -> u32,
    shift: u32,
    c: &std::sync::Mutex<Vec<f32>>,
) -> Result<(), gpu_emulator::Diagnostic> {
    let body = || {
        let t = thread_idx_x();
        // SAFETY: the launch gives both tiles; the emulator checks the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            for e in 0..12 {
                let index = 12 * t + e;
                tile.write(index, bf16::from_f32(values[index as usize]));
            }
            if barrier {
                sync_threads();
            }
            let a = FragmentA(ldmatrix(tile, row_of(t) * 16 + t / 16 * 8 + shift, false));
            let b = FragmentB(ldmatrix(tile, A_ELEMENTS + (t % 16) * 8, true));
            let d = mma_sync(a, b, Accumulator::ZERO);
            let (g, q) = (t / 4, t % 4);
            let mut c = c.lock().unwrap();
            for (i, value) in d.0.into_iter().enumerate() {
                let (r, j) = (g + 8 * (i as u32 / 2), 2 * q + i as u32 % 2);
                c[(r * 8 + j) as usize] = value;
            }
        }
    };
    gpu_emulator::run("mma", &one_block(32, TILE_BYTES), &body)
}

/// Random bf16 values, 12 a lane: the 16×16 A and the 16×8 B.
fn random_tiles() -> Vec<f32> {
    let mut rng = rng();
    (0..32 * 12)
        .map(|_| bf16::from_f32(rng.random_range(-1.0..1.0)).to_f32())
        .collect()
}

#[test]
fn a_warp_multiplies_fragments_that_ldmatrix_loaded() {
    let values = random_tiles();
    let c = std::sync::Mutex::new(vec![f32::NAN; 16 * 8]);
    product(&values, true, |t| t % 16, 0, &c).unwrap();
    let c = c.into_inner().unwrap();
    for r in 0..16 {
        for j in 0..8 {
            let exact: f64 = (0..16)
                .map(|i| f64::from(values[r * 16 + i]) * f64::from(values[256 + i * 8 + j]))
                .sum();
            // One rounding to f32 of an exact sum.
            assert_eq!(c[r * 8 + j], exact as f32, "C({r}, {j})");
        }
    }
}

#[test]
fn ldmatrix_without_a_barrier_after_other_threads_writes_is_reported() {
    let c = std::sync::Mutex::new(vec![0.0; 16 * 8]);
    let diagnostic = product(&random_tiles(), false, |t| t % 16, 0, &c).unwrap_err();
    assert_fault!(diagnostic, Fault::SharedRace { .. });
}

#[test]
fn an_ldmatrix_row_past_the_tile_is_reported() {
    let c = std::sync::Mutex::new(vec![0.0; 16 * 8]);
    // Lane 15 names row 40 of a 24-row allocation.
    let row_of = |t: u32| if t == 15 { 40 } else { t % 16 };
    let diagnostic = product(&random_tiles(), true, row_of, 0, &c).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::SharedOutOfBounds {
            thread: (15, 0, 0),
            kind: AccessKind::Read,
            offset: 2 * 40 * 16,
            size: 16,
            limit: TILE_BYTES,
        }
    );
}

/// `ldmatrix.x1` reads the rows that lanes 0–7 name and no other: the
/// addresses of lanes 8–31, here far past the tile, are never used, as on
/// the GPU, and each lane gets its two elements of the one matrix.
#[test]
fn an_ldmatrix_x1_reads_only_the_rows_of_the_first_eight_lanes() {
    let got = std::sync::Mutex::new(vec![0u32; 32]);
    let body = || {
        let t = thread_idx_x();
        // SAFETY: the launch gives the 8×8 tile; the emulator checks the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            for e in 0..2 {
                tile.write(2 * t + e, bf16::from_f32((2 * t + e) as f32));
            }
            sync_threads();
            let row = if t < 8 { 8 * t } else { 1 << 20 };
            let [pair] = ldmatrix::<_, 1>(tile, row, false);
            got.lock().unwrap()[t as usize] = pair.to_bits();
        }
    };
    gpu_emulator::run("ldmatrix_x1", &one_block(32, 2 * 64), &body).unwrap();
    for (lane, &bits) in got.into_inner().unwrap().iter().enumerate() {
        let first = (lane / 4 * 8 + 2 * (lane % 4)) as f32;
        let pair = [first, first + 1.0].map(|v| u32::from(bf16::from_f32(v).to_bits()));
        assert_eq!(bits, pair[0] | pair[1] << 16, "lane {lane}");
    }
}

#[test]
fn an_ldmatrix_row_off_its_16_byte_boundary_is_reported() {
    let c = std::sync::Mutex::new(vec![0.0; 16 * 8]);
    let diagnostic = product(&random_tiles(), true, |t| t % 16, 1, &c).unwrap_err();
    assert!(
        matches!(
            diagnostic.fault,
            Fault::SharedMisaligned {
                thread: (0, 0, 0),
                ..
            }
        ),
        "{}",
        diagnostic.fault
    );
}

#[test]
fn an_mma_that_a_lane_skips_is_reported() {
    let body = || {
        if thread_idx_x() == 31 {
            return;
        }
        let a = FragmentA([gpu_std::mma::Pair::from_bits(0); 4]);
        let b = FragmentB([gpu_std::mma::Pair::from_bits(0); 2]);
        std::hint::black_box(mma_sync::<bf16>(a, b, Accumulator::ZERO));
    };
    let diagnostic = gpu_emulator::run("mma", &one_block(32, 0), &body).unwrap_err();
    let Fault::BadWarpCall {
        call,
        lane,
        problem,
        ..
    } = diagnostic.fault
    else {
        panic!("{}", diagnostic.fault);
    };
    assert_eq!(
        (call, lane, problem),
        (
            WarpOp::Mma(gpu_emulator::MmaInput::Bf16),
            31,
            LaneProblem::Returned
        )
    );
}

/// A report names each shape of `ldmatrix` as the PTX writes it.
#[test]
fn each_ldmatrix_shape_has_its_own_name_in_reports() {
    let names = [
        (1, false, "ldmatrix_x1"),
        (2, false, "ldmatrix_x2"),
        (4, false, "ldmatrix_x4"),
        (1, true, "ldmatrix_x1_trans"),
        (2, true, "ldmatrix_x2_trans"),
        (4, true, "ldmatrix_x4_trans"),
    ];
    for (matrices, trans, name) in names {
        assert_eq!(WarpOp::LdMatrix { matrices, trans }.name(), name);
    }
}

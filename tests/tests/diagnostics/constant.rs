//! Constant arrays (`constant_array!`): read as the host set them, of any
//! scalar type, and a read before they are set, past their end or as
//! another type than the host set is reported.

use gpu_emulator::{self, Fault};
use gpu_std::global::GlobalMut;
use gpu_std::thread::thread_idx_x;
use rand::Rng;

use crate::support::{assert_says, one_block, rng};

/// Reads element `index` of a constant array of 4.
///
/// # Safety
/// Inside an emulated kernel.
unsafe fn read_constant(out: GlobalMut<f32>, index: u32) {
    let table = gpu_std::constant_array!(DIAGNOSED: [f32; 4]);
    // SAFETY: by this function's contract; the emulator checks the rest.
    unsafe { out.write(thread_idx_x() as usize, table.read(index)) };
}

#[test]
fn a_constant_array_is_read_as_set_and_checked() {
    let mut out = vec![f32::NAN; 2];
    let view = GlobalMut::new("out", &mut out);
    let run = |index| {
        // SAFETY: the emulator checks the reads.
        gpu_emulator::run("read_constant", &one_block(2, 0), &|| unsafe {
            read_constant(view, index)
        })
    };
    assert_eq!(
        run(1).unwrap_err().fault,
        Fault::ConstantUnset {
            thread: (0, 0, 0),
            array: "DIAGNOSED",
            index: 1
        }
    );
    gpu_emulator::set_constant("DIAGNOSED", &[1.0f32, 2.0, 3.0, 4.0]);
    run(1).unwrap();
    assert_eq!(out, [2.0, 2.0]);
    assert_eq!(
        run(4).unwrap_err().fault,
        Fault::ConstantOutOfBounds {
            thread: (0, 0, 0),
            array: "DIAGNOSED",
            index: 4,
            len: 4
        }
    );
}

/// Thread t writes element `(t + shift) % 16` of a constant array of 16
/// `i64`.
///
/// # Safety
/// Inside an emulated kernel; `out` has as many elements as threads.
unsafe fn read_wide_constant(out: GlobalMut<i64>, shift: u32) {
    let table = gpu_std::constant_array!(WIDE: [i64; 16]);
    let t = thread_idx_x();
    // SAFETY: by this function's contract; the index is below 16.
    unsafe { out.write(t as usize, table.read((t + shift) % 16)) };
}

#[test]
fn a_constant_array_of_i64_is_read_as_set_and_not_as_another_type() {
    let mut rng = rng();
    let values: Vec<i64> = (0..16).map(|_| rng.random()).collect();
    let shift = rng.random_range(0..16);
    let mut out = vec![0i64; 32];
    let view = GlobalMut::new("out", &mut out);
    let run = || {
        // SAFETY: the emulator checks the reads.
        gpu_emulator::run("read_wide_constant", &one_block(32, 0), &|| unsafe {
            read_wide_constant(view, shift)
        })
    };
    gpu_emulator::set_constant("WIDE", &values);
    run().unwrap();
    let expected: Vec<i64> = (0..32).map(|t| values[(t + shift as usize) % 16]).collect();
    assert_eq!(out, expected);
    // The same 128 bytes, as 32 i32: on a GPU the kernel would read halves
    // of them as whole values.
    let halves: Vec<i32> = (0..32).map(|_| rng.random()).collect();
    gpu_emulator::set_constant("WIDE", &halves);
    let diagnostic = run().unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::ConstantType {
            thread: (0, 0, 0),
            array: "WIDE",
            set: "i32",
            read: "i64"
        }
    );
    assert_says(&diagnostic, "as i64, but the host set it as i32");
}

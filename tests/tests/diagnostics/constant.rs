//! Constant arrays (`constant_array!`): read as the host set them, and a
//! read before they are set or past their end is reported.

use gpu_emulator::{self, Fault};
use gpu_std::global::GlobalMut;
use gpu_std::thread::thread_idx_x;

use crate::support::one_block;

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
    gpu_emulator::set_constant("DIAGNOSED", &[1.0, 2.0, 3.0, 4.0]);
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

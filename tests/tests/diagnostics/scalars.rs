//! Buffers and scalar arguments of every scalar type, through the host's
//! emulator backend as a kernel crate launches them: a crate of its own
//! kernels needs nothing of the host but `Backend`.
// A kernel of every parameter kind at once is the point of the test.
#![allow(clippy::too_many_arguments)]

use gpu_host::{Backend, Emulator};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{block_dim_x, block_idx_x, thread_idx_x};
use gpu_std::{Launch, bf16, f16, kernels};
use rand::Rng;

use crate::support::rng;

/// One thread per element of `n`.
fn per_element(&n: &u32) -> Launch {
    Launch::covering((n, 1, 1), (64, 1, 1), 0)
}

/// This thread's element.
fn element() -> u32 {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

kernels! {
    /// Kernels of narrow and wide integers.
    pub const INTEGERS: [Kernel<(Global<i8>, Global<u16>, GlobalMut<i64>, i8, u16, i64, u32), u32>];

    /// `out[i] = a[i] · scale + b[i] · stride + offset`, widened to i64.
    ///
    /// # Safety
    /// Every buffer has `n` elements.
    #[launch(per_element)]
    #[launch_bounds(64)]
    pub unsafe fn widen(a: Global<i8>, b: Global<u16>, out: GlobalMut<i64>, scale: i8, stride: u16, offset: i64, n: u32) {
        let i = element();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n.
            unsafe {
                let value = i64::from(a.read(i)) * i64::from(scale)
                    + i64::from(b.read(i)) * i64::from(stride)
                    + offset;
                out.write(i, value);
            }
        }
    }
}

kernels! {
    /// Kernels of half floats and 32- and 64-bit integers.
    pub const MIXED: [Kernel<(Global<f16>, Global<u64>, GlobalMut<bf16>, GlobalMut<i32>, f16, u64, i32, u32), u32>];

    /// `halves[i] · scale` as a bf16, and `words[i] ^ mask` folded to i32
    /// plus `bias`.
    ///
    /// # Safety
    /// Every buffer has `n` elements.
    #[launch(per_element)]
    #[launch_bounds(64)]
    pub unsafe fn convert(halves: Global<f16>, words: Global<u64>, brains: GlobalMut<bf16>, folded: GlobalMut<i32>, scale: f16, mask: u64, bias: i32, n: u32) {
        let i = element();
        if i < n {
            let i = i as usize;
            // SAFETY: i < n.
            unsafe {
                brains.write(i, bf16::from_f32(halves.read(i).to_f32() * scale.to_f32()));
                let word = words.read(i) ^ mask;
                folded.write(i, ((word >> 32) as i32 ^ word as i32).wrapping_add(bias));
            }
        }
    }
}

#[test]
fn buffers_and_arguments_of_narrow_and_wide_integers_reach_the_kernel() {
    let mut rng = rng();
    let n = rng.random_range(1..300u32);
    let a: Vec<i8> = (0..n).map(|_| rng.random()).collect();
    let b: Vec<u16> = (0..n).map(|_| rng.random()).collect();
    let (scale, stride, offset): (i8, u16, i64) = (
        rng.random(),
        rng.random(),
        rng.random_range(-(1 << 40)..1 << 40),
    );
    let emulator = Emulator::default();
    let a_buffer = emulator.upload("a", &a).unwrap();
    let b_buffer = emulator.upload("b", &b).unwrap();
    let mut out = emulator.alloc::<i64>("out", n as usize).unwrap();
    assert!(
        emulator
            .download(&out)
            .unwrap()
            .iter()
            .all(|&value| value == -1),
        "poisoned as -1"
    );
    let args = (&a_buffer, &b_buffer, &mut out, scale, stride, offset, n);
    // SAFETY: every buffer has n elements.
    unsafe { emulator.launch(&INTEGERS[0], &n, args) }.unwrap();
    let expected: Vec<i64> = (0..n as usize)
        .map(|i| i64::from(a[i]) * i64::from(scale) + i64::from(b[i]) * i64::from(stride) + offset)
        .collect();
    assert_eq!(emulator.download(&out).unwrap(), expected);
}

#[test]
fn buffers_and_arguments_of_half_floats_and_64_bit_words_reach_the_kernel() {
    let mut rng = rng();
    let n = rng.random_range(1..300u32);
    let halves: Vec<f16> = (0..n)
        .map(|_| f16::from_f32(rng.random_range(-8.0..8.0)))
        .collect();
    let words: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let scale = f16::from_f32(rng.random_range(-4.0..4.0));
    let (mask, bias): (u64, i32) = (rng.random(), rng.random());
    let emulator = Emulator::default();
    let halves_buffer = emulator.upload("halves", &halves).unwrap();
    let words_buffer = emulator.upload("words", &words).unwrap();
    let mut brains = emulator.alloc::<bf16>("brains", n as usize).unwrap();
    let mut folded = emulator.alloc::<i32>("folded", n as usize).unwrap();
    let args = (
        &halves_buffer,
        &words_buffer,
        &mut brains,
        &mut folded,
        scale,
        mask,
        bias,
        n,
    );
    // SAFETY: every buffer has n elements.
    unsafe { emulator.launch(&MIXED[0], &n, args) }.unwrap();
    let expected: Vec<bf16> = halves
        .iter()
        .map(|half| bf16::from_f32(half.to_f32() * scale.to_f32()))
        .collect();
    assert_eq!(emulator.download(&brains).unwrap(), expected);
    let expected: Vec<i32> = words
        .iter()
        .map(|&word| {
            let word = word ^ mask;
            ((word >> 32) as i32 ^ word as i32).wrapping_add(bias)
        })
        .collect();
    assert_eq!(emulator.download(&folded).unwrap(), expected);
}

#[test]
fn a_constant_array_is_set_through_the_backend_with_its_element_type() {
    let mut rng = rng();
    let values: Vec<u16> = (0..8).map(|_| rng.random()).collect();
    let emulator = Emulator::default();
    emulator.set_constant("BACKEND_SHORTS", &values).unwrap();
    let mut out = vec![0u16; 8];
    let view = GlobalMut::new("out", &mut out);
    let launch = Launch::covering((8, 1, 1), (8, 1, 1), 0);
    // SAFETY: 8 threads, 8 elements.
    gpu_emulator::run("read_shorts", &launch, &|| unsafe {
        let table = gpu_std::constant_array!(BACKEND_SHORTS: [u16; 8]);
        let t = thread_idx_x();
        view.write(t as usize, table.read(7 - t));
    })
    .unwrap();
    let reversed: Vec<u16> = values.iter().rev().copied().collect();
    assert_eq!(out, reversed);
}

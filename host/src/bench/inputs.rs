//! Random inputs on the GPU, in as many copies as it takes to keep them out
//! of L2: a kernel timed over and over on one small input set would read it
//! from L2 after the first run, and report a bandwidth DRAM cannot give.
//!
//! Each copy holds every buffer a run touches, outputs included, at its own
//! addresses; the runs take the copies in turn. The copies are identical,
//! which does not matter: caches go by address, not by content.

use cudarc::driver::CudaSlice;
use rand::Rng;
use rand::distr::Uniform;

use crate::backend::Backend;
use crate::device::Gpu;
use crate::error::Result;
use crate::kernels::blur::ImageShape;
use crate::kernels::gemv::{Element, GemvShape};
use crate::kernels::matmul::MatmulShape;
use crate::verify::{random_vec, uniform_floats};

/// The copies together span at least this many L2 caches, so that between
/// two runs on one copy at least 3 L2s' worth of other data went through.
/// The memory it costs is bounded: under this many L2s plus one copy.
pub const L2_MULTIPLE: usize = 4;

/// How many copies of a set of `set_bytes` to rotate through.
pub fn copies(set_bytes: usize, l2_bytes: Option<usize>) -> usize {
    l2_bytes.map_or(1, |l2| (L2_MULTIPLE * l2).div_ceil(set_bytes.max(1)).max(1))
}

/// Copies of one input set, handed out in turn.
pub struct Rotation<S> {
    sets: Vec<S>,
    next: usize,
}

impl<S> Rotation<S> {
    fn build(count: usize, make: impl FnMut() -> Result<S>) -> Result<Self> {
        Ok(Self {
            sets: std::iter::repeat_with(make)
                .take(count)
                .collect::<Result<_>>()?,
            next: 0,
        })
    }

    /// The copy for the next run.
    pub fn next(&mut self) -> &mut S {
        let index = self.next;
        self.next = (index + 1) % self.sets.len();
        &mut self.sets[index]
    }
}

pub struct MatmulSet {
    pub a: CudaSlice<f32>,
    pub b: CudaSlice<f32>,
    pub c: CudaSlice<f32>,
}

pub fn matmul(
    gpu: &Gpu,
    shape: MatmulShape,
    l2_bytes: Option<usize>,
    rng: &mut impl Rng,
) -> Result<Rotation<MatmulSet>> {
    let [a_len, b_len, c_len] = shape.checked_lens()?;
    let (a, b) = (
        uniform_floats::<f32>(a_len, rng),
        uniform_floats(b_len, rng),
    );
    let count = copies(shape.min_bytes() as usize, l2_bytes);
    Rotation::build(count, || {
        Ok(MatmulSet {
            a: gpu.upload("A", &a)?,
            b: gpu.upload("B", &b)?,
            c: gpu.alloc("C", c_len)?,
        })
    })
}

/// A serves both layouts: the transpose of a random matrix is just as random.
pub struct GemvSet<T> {
    pub a: CudaSlice<T>,
    pub x: CudaSlice<T>,
    pub y: CudaSlice<T>,
}

pub fn gemv<T: Element>(
    gpu: &Gpu,
    shape: GemvShape,
    l2_bytes: Option<usize>,
    rng: &mut impl Rng,
) -> Result<Rotation<GemvSet<T>>> {
    let [a_len, x_len, y_len] = shape.checked_lens()?;
    let a = uniform_floats::<T>(a_len, rng);
    let x = uniform_floats::<T>(x_len, rng);
    let y = uniform_floats::<T>(y_len, rng);
    let count = copies(shape.min_bytes::<T>() as usize, l2_bytes);
    Rotation::build(count, || {
        Ok(GemvSet {
            a: gpu.upload("A", &a)?,
            x: gpu.upload("x", &x)?,
            y: gpu.upload("y", &y)?,
        })
    })
}

pub struct BlurSet {
    pub input: CudaSlice<u8>,
    pub output: CudaSlice<u8>,
}

pub fn blur(
    gpu: &Gpu,
    image: ImageShape,
    l2_bytes: Option<usize>,
    rng: &mut impl Rng,
) -> Result<Rotation<BlurSet>> {
    let len = image.checked_len()?;
    let samples = random_vec(
        len,
        Uniform::new_inclusive(0u8, 255).expect("a valid range"),
        rng.random(),
    );
    let count = copies(image.min_bytes() as usize, l2_bytes);
    Rotation::build(count, || {
        Ok(BlurSet {
            input: gpu.upload("input image", &samples)?,
            output: gpu.alloc("output image", len)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_are_copied_until_they_span_four_l2s() {
        let l2 = Some(50 << 20);
        assert_eq!(copies(3 << 20, l2), 67);
        assert_eq!(copies(200 << 20, l2), 1);
        assert_eq!(copies(150 << 20, l2), 2);
        assert_eq!(copies(1 << 30, l2), 1);
        assert_eq!(copies(1 << 20, None), 1);
    }

    #[test]
    fn the_copies_come_round_in_turn() {
        let mut rotation = Rotation::build(3, {
            let mut made = 0;
            move || {
                made += 1;
                Ok(made)
            }
        })
        .unwrap();
        let order: Vec<i32> = (0..5).map(|_| *rotation.next()).collect();
        assert_eq!(order, [1, 2, 3, 1, 2]);
    }
}

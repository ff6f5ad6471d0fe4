//! The buffer sets the families share: what a kernel reads and the one
//! output it writes whole, uploaded, checked against a shape and named in
//! errors. A family whose buffers are particular (gemv's A in two layouts,
//! the texture, the tensor map, the L2's persisting window) declares its
//! own and implements [`Buffers`] for it.

use gpu_host::backend::{Backend, Buffer, Value};

use crate::error::{Error, Result};

/// A family's buffers on a backend, and the output in them that every
/// kernel of the family writes whole: what a check poisons before the
/// kernel runs and compares with the reference after.
pub trait Buffers<B: Backend> {
    /// The output's element.
    type Output: Value + Into<f64> + Sync;

    fn output(&mut self) -> &mut Buffer<B, Self::Output>;
}

/// What [`InputOutput`]'s buffers are called in errors, unless a family
/// names them otherwise.
pub const NAMES: [&str; 2] = ["input", "output"];

/// The buffers of a kernel that reads one array and writes another: most
/// lesson families', and the transpose's, of one element type; the
/// histogram's bytes and counts.
pub struct InputOutput<B: Backend, T: Value = f32, U: Value = T> {
    pub input: Buffer<B, T>,
    pub output: Buffer<B, U>,
}

impl<B: Backend, T: Value, U: Value> InputOutput<B, T, U> {
    /// `input` uploaded, and an output of `output_len` poisoned elements;
    /// `names` (input, output) name them in errors.
    pub fn upload(
        backend: &B,
        names: [&'static str; 2],
        input: &[T],
        output_len: usize,
    ) -> Result<Self> {
        Ok(Self {
            input: backend.upload(names[0], input)?,
            output: backend.alloc(names[1], output_len)?,
        })
    }

    /// Rejects buffers whose lengths are not `lens` (input, output), the
    /// shape's, named `names`.
    pub fn expect_lens(
        &self,
        backend: &B,
        names: [&'static str; 2],
        lens: [usize; 2],
    ) -> Result<()> {
        let actual = [backend.len(&self.input), backend.len(&self.output)];
        expect_lens(names, lens, actual)
    }
}

impl<B: Backend, T: Value, U: Value + Into<f64> + Sync> Buffers<B> for InputOutput<B, T, U> {
    type Output = U;

    fn output(&mut self) -> &mut Buffer<B, U> {
        &mut self.output
    }
}

/// The buffers of a kernel that reads two arrays of `T` and writes a third
/// of f32: the matmuls' A, B and C, the constant lesson's x, coefficients
/// and y.
pub struct TwoInputs<B: Backend, T: Value = f32> {
    pub first: Buffer<B, T>,
    pub second: Buffer<B, T>,
    pub output: Buffer<B, f32>,
}

impl<B: Backend, T: Value> TwoInputs<B, T> {
    /// Both inputs uploaded, and an output of `output_len` poisoned
    /// elements; `names` (first, second, output) name them in errors.
    pub fn upload(
        backend: &B,
        names: [&'static str; 3],
        [first, second]: [&[T]; 2],
        output_len: usize,
    ) -> Result<Self> {
        Ok(Self {
            first: backend.upload(names[0], first)?,
            second: backend.upload(names[1], second)?,
            output: backend.alloc(names[2], output_len)?,
        })
    }

    /// Rejects buffers whose lengths are not `lens` (first, second,
    /// output), the shape's, named `names`.
    pub fn expect_lens(
        &self,
        backend: &B,
        names: [&'static str; 3],
        lens: [usize; 3],
    ) -> Result<()> {
        let actual = [
            backend.len(&self.first),
            backend.len(&self.second),
            backend.len(&self.output),
        ];
        expect_lens(names, lens, actual)
    }
}

impl<B: Backend, T: Value> Buffers<B> for TwoInputs<B, T> {
    type Output = f32;

    fn output(&mut self) -> &mut Buffer<B, f32> {
        &mut self.output
    }
}

/// Rejects the first buffer of `names` whose length, of `actual`, is not
/// the shape's, of `lens`.
fn expect_lens<const N: usize>(
    names: [&'static str; N],
    lens: [usize; N],
    actual: [usize; N],
) -> Result<()> {
    let mut buffers = names.into_iter().zip(lens).zip(actual);
    buffers.try_for_each(|((what, expected), actual)| expect_len(what, expected, actual))
}

/// Rejects a buffer whose length is not what the shape says.
pub fn expect_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(Error::ShapeMismatch {
            what,
            expected,
            actual,
        });
    }
    Ok(())
}

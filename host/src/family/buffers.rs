//! The buffer sets the families share: what a kernel reads and the one
//! output it writes whole, uploaded as a shape lays them out, checked
//! against it before a launch, and named in errors. A family whose
//! buffers are particular (gemv's A in two layouts, the texture, the
//! tensor map, the L2's persisting window, the histogram's start counts)
//! declares its own and implements [`Buffers`] for them.

use gpu_host::backend::{Backend, Buffer, Value};
use gpu_std::tensor::TiledMap;

use crate::error::{Error, Result};

/// A family's buffers on a backend: how its inputs are uploaded as a
/// shape lays them out, how a launch checks them against it, and the
/// output in them that every kernel of the family writes whole, which a
/// check poisons before the kernel runs and compares with the reference
/// after.
pub trait Buffers<B: Backend>: Sized {
    /// The output's element.
    type Output: Value + Into<f64> + Sync;
    /// What they are uploaded from: the family's inputs on the host.
    type Inputs;
    /// What a shape says of them: for most, each one's name in errors and
    /// length ([`Arrays`]).
    type Layout;

    /// The inputs uploaded, and the output allocated, poisoned.
    fn upload(backend: &B, inputs: &Self::Inputs, layout: &Self::Layout) -> Result<Self>;

    /// Rejects buffers that are not as `layout` says: a launch trusts them
    /// to be.
    fn expect(&self, backend: &B, layout: &Self::Layout) -> Result<()>;

    fn output(&mut self) -> &mut Buffer<B, Self::Output>;
}

/// The layout of plain arrays, the inputs first and the output last: what
/// each is called in errors, and how many elements it holds.
#[derive(Clone, Copy, Debug)]
pub struct Arrays<const N: usize> {
    pub names: [&'static str; N],
    pub lens: [usize; N],
}

impl<const N: usize> Arrays<N> {
    /// Arrays called `names` in errors, of `lens` elements.
    pub fn new(names: [&'static str; N], lens: [usize; N]) -> Self {
        Self { names, lens }
    }

    /// Rejects the first array whose length, of `actual`, is not the
    /// layout's.
    pub fn expect(&self, actual: [usize; N]) -> Result<()> {
        let mut arrays = self.names.into_iter().zip(self.lens).zip(actual);
        arrays.try_for_each(|((what, expected), actual)| expect_len(what, expected, actual))
    }
}

/// What [`InputOutput`]'s buffers are called in errors, unless a family
/// names them otherwise.
pub const NAMES: [&str; 2] = ["input", "output"];

/// The buffers of a kernel that reads one array and writes another: most
/// lesson families', and the transpose's and the blur's, of one element
/// type; the distributed lesson's words.
pub struct InputOutput<B: Backend, T: Value = f32, U: Value = T> {
    pub input: Buffer<B, T>,
    pub output: Buffer<B, U>,
}

impl<B: Backend, T: Value, U: Value + Into<f64> + Sync> Buffers<B> for InputOutput<B, T, U> {
    type Output = U;
    type Inputs = Vec<T>;
    type Layout = Arrays<2>;

    fn upload(backend: &B, input: &Vec<T>, layout: &Arrays<2>) -> Result<Self> {
        let [input_name, output_name] = layout.names;
        Ok(Self {
            input: backend.upload(input_name, input)?,
            output: backend.alloc(output_name, layout.lens[1])?,
        })
    }

    fn expect(&self, backend: &B, layout: &Arrays<2>) -> Result<()> {
        layout.expect([backend.len(&self.input), backend.len(&self.output)])
    }

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

/// [`TwoInputs`]'s buffers, the output writable.
pub type Parts<'a, B, T> = (&'a Buffer<B, T>, &'a Buffer<B, T>, &'a mut Buffer<B, f32>);

impl<B: Backend, T: Value> TwoInputs<B, T> {
    /// The two inputs, and the output to write.
    pub fn parts(&mut self) -> Parts<'_, B, T> {
        (&self.first, &self.second, &mut self.output)
    }
}

impl<B: Backend, T: Value> Buffers<B> for TwoInputs<B, T> {
    type Output = f32;
    type Inputs = [Vec<T>; 2];
    type Layout = Arrays<3>;

    fn upload(backend: &B, [first, second]: &[Vec<T>; 2], layout: &Arrays<3>) -> Result<Self> {
        let [first_name, second_name, output_name] = layout.names;
        Ok(Self {
            first: backend.upload(first_name, first)?,
            second: backend.upload(second_name, second)?,
            output: backend.alloc(output_name, layout.lens[2])?,
        })
    }

    fn expect(&self, backend: &B, layout: &Arrays<3>) -> Result<()> {
        let actual = [
            backend.len(&self.first),
            backend.len(&self.second),
            backend.len(&self.output),
        ];
        layout.expect(actual)
    }

    fn output(&mut self) -> &mut Buffer<B, f32> {
        &mut self.output
    }
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

/// Rejects a tensor map whose array or box is not what the shape says.
pub fn expect_map(what: &'static str, expected: TiledMap, actual: TiledMap) -> Result<()> {
    if expected != actual {
        return Err(Error::ShapeMismatch {
            what,
            expected: expected.width as usize * expected.height as usize,
            actual: actual.width as usize * actual.height as usize,
        });
    }
    Ok(())
}

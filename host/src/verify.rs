//! Verification: fresh random inputs, a poisoned output before every run,
//! and every output element compared with the CPU reference.

use approx::abs_diff_eq;
use rand::distr::{Distribution, Uniform};
use rand::{Rng, SeedableRng, rngs::SmallRng};
use rayon::prelude::*;

use crate::backend::Backend;
use crate::error::Result;
use crate::kernels::blur::{Blur, ImageShape};
use crate::kernels::gemv::{Element, Gemv, GemvShape, Layout};
use crate::kernels::matmul::{Matmul, MatmulShape};
use crate::reference::{self, Expected};

/// How a kernel's output compares with the reference.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// ‖out − ref‖₂ / ‖ref‖₂ (‖out − ref‖₂ when ref is all zeros).
    pub relative_error: f64,
    /// Elements outside their tolerance, NaN (never written) included.
    pub mismatches: usize,
    pub first_mismatch: Option<Mismatch>,
    pub len: usize,
}

#[derive(Clone, Debug)]
pub struct Mismatch {
    pub index: usize,
    pub got: f64,
    pub expected: f64,
    pub tolerance: f64,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} elements wrong, relative error {:.2e}",
            self.mismatches, self.len, self.relative_error
        )?;
        if let Some(Mismatch {
            index,
            got,
            expected,
            tolerance,
        }) = &self.first_mismatch
        {
            write!(
                f,
                "; first at {index}: got {got}, expected {expected} ± {tolerance:.2e}"
            )?;
        }
        Ok(())
    }
}

/// Compares every element of `output` with `expected`.
pub fn compare<T: Copy + Into<f64> + Sync>(output: &[T], expected: &Expected) -> Comparison {
    assert_eq!(
        output.len(),
        expected.values.len(),
        "output and reference differ in length"
    );
    let (error_squared, reference_squared) = output
        .par_iter()
        .zip(&expected.values)
        .map(|(&got, &want)| ((got.into() - want).powi(2), want * want))
        .reduce(|| (0.0, 0.0), |(e1, r1), (e2, r2)| (e1 + e2, r1 + r2));
    let mismatch = |index: usize| {
        let (got, want, tolerance) = (
            output[index].into(),
            expected.values[index],
            expected.tolerance[index],
        );
        (!abs_diff_eq!(got, want, epsilon = tolerance)).then_some(Mismatch {
            index,
            got,
            expected: want,
            tolerance,
        })
    };
    let mismatches = (0..output.len())
        .into_par_iter()
        .filter(|&i| mismatch(i).is_some())
        .count();
    let first_mismatch = if mismatches == 0 {
        None
    } else {
        (0..output.len()).find_map(mismatch)
    };
    let relative_error = if reference_squared > 0.0 {
        error_squared / reference_squared
    } else {
        error_squared
    }
    .sqrt();
    Comparison {
        relative_error,
        mismatches,
        first_mismatch,
        len: output.len(),
    }
}

/// `len` values drawn from `distribution`, in parallel but reproducibly:
/// chunk `i` has its own generator seeded from (`seed`, `i`).
pub fn random_vec<T: Send, D: Distribution<T> + Sync>(
    len: usize,
    distribution: D,
    seed: u64,
) -> Vec<T> {
    const CHUNK: usize = 1 << 16;
    (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|chunk| {
            let mut rng =
                SmallRng::seed_from_u64(seed ^ (chunk as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let count = CHUNK.min(len - chunk * CHUNK);
            (0..count)
                .map(|_| distribution.sample(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `len` values drawn uniformly from [−1, 1).
pub(crate) fn uniform_floats<T: Element>(len: usize, rng: &mut impl Rng) -> Vec<T> {
    let unit = Uniform::new(-1.0, 1.0).expect("a valid range");
    random_vec(len, unit, rng.random())
        .into_iter()
        .map(T::from_f64)
        .collect()
}

/// One set of random matmul inputs on a backend, with their reference.
pub struct MatmulCase<B: Backend> {
    pub shape: MatmulShape,
    a: B::Buffer<f32>,
    b: B::Buffer<f32>,
    c: B::Buffer<f32>,
    expected: Expected,
}

impl<B: Backend> MatmulCase<B> {
    pub fn new(backend: &B, shape: MatmulShape, rng: &mut impl Rng) -> Result<Self> {
        let [a_len, b_len, c_len] = shape.checked_lens()?;
        let a = uniform_floats::<f32>(a_len, rng);
        let b = uniform_floats::<f32>(b_len, rng);
        let expected = reference::matmul(&a, &b, shape);
        Ok(Self {
            shape,
            a: backend.upload("A", &a)?,
            b: backend.upload("B", &b)?,
            c: backend.alloc("C", c_len)?,
            expected,
        })
    }

    /// Launches the kernel on the case's buffers.
    pub fn launch(&mut self, backend: &B, kernel: Matmul) -> Result<()> {
        backend.matmul(kernel, self.shape, &self.a, &self.b, &mut self.c)
    }

    /// Poisons C, runs the kernel and compares all of C with the reference.
    pub fn check(&mut self, backend: &B, kernel: Matmul) -> Result<Comparison> {
        backend.poison(&mut self.c)?;
        self.launch(backend, kernel)?;
        Ok(compare(&backend.download(&self.c)?, &self.expected))
    }
}

/// One set of random gemv inputs on a backend, with their reference. A is
/// stored in one layout at a time, rewritten when a kernel needs the other,
/// so the largest sizes need memory for one copy only.
pub struct GemvCase<B: Backend, T: Element> {
    pub shape: GemvShape,
    pub alpha: T,
    pub beta: T,
    /// A, row-major, and the initial y, on the host.
    a_host: Vec<T>,
    y_initial: Vec<T>,
    a: B::Buffer<T>,
    a_layout: Layout,
    x: B::Buffer<T>,
    y: B::Buffer<T>,
    expected: Expected,
}

impl<B: Backend, T: Element> GemvCase<B, T> {
    pub fn new(
        backend: &B,
        shape: GemvShape,
        alpha: T,
        beta: T,
        rng: &mut impl Rng,
    ) -> Result<Self> {
        let [a_len, x_len, y_len] = shape.checked_lens()?;
        let a_host = uniform_floats::<T>(a_len, rng);
        let x = uniform_floats::<T>(x_len, rng);
        let y_initial = uniform_floats::<T>(y_len, rng);
        let expected = reference::gemv(
            alpha,
            &a_host,
            Layout::RowMajor,
            &x,
            beta,
            &y_initial,
            shape,
        );
        Ok(Self {
            shape,
            alpha,
            beta,
            a: backend.upload("A", &a_host)?,
            a_host,
            a_layout: Layout::RowMajor,
            x: backend.upload("x", &x)?,
            y: backend.alloc("y", y_len)?,
            y_initial,
            expected,
        })
    }

    /// Stores A on the backend in `layout`.
    fn store_a(&mut self, backend: &B, layout: Layout) -> Result<()> {
        if self.a_layout != layout {
            let GemvShape { m, n } = self.shape;
            let stored: Vec<T> = match layout {
                Layout::RowMajor => self.a_host.clone(),
                Layout::ColMajor => (0..m * n)
                    .into_par_iter()
                    .map(|index| self.a_host[(index % m) * n + index / m])
                    .collect(),
            };
            backend.overwrite(&stored, &mut self.a)?;
            self.a_layout = layout;
        }
        Ok(())
    }

    /// Launches the kernel on the case's buffers, with A already in its layout.
    pub fn launch(&mut self, backend: &B, kernel: Gemv) -> Result<()> {
        backend.gemv(
            kernel,
            self.shape,
            self.alpha,
            &self.a,
            &self.x,
            self.beta,
            &mut self.y,
        )
    }

    /// Resets y (poisons it when β = 0, since it must not be read), runs the
    /// kernel and compares all of y with the reference.
    pub fn check(&mut self, backend: &B, kernel: Gemv) -> Result<Comparison> {
        self.store_a(backend, kernel.layout())?;
        if self.beta.into() == 0.0 {
            backend.poison(&mut self.y)?;
        } else {
            backend.overwrite(&self.y_initial, &mut self.y)?;
        }
        self.launch(backend, kernel)?;
        Ok(compare(&backend.download(&self.y)?, &self.expected))
    }
}

/// One random image on a backend, with its reference blur.
pub struct BlurCase<B: Backend> {
    pub image: ImageShape,
    pub radius: u32,
    input: B::Buffer<u8>,
    output: B::Buffer<u8>,
    expected: Expected,
}

impl<B: Backend> BlurCase<B> {
    /// Samples are drawn from 0..=254, so the poison 255 can never be a
    /// correct output.
    pub fn new(backend: &B, image: ImageShape, radius: u32, rng: &mut impl Rng) -> Result<Self> {
        let len = image.checked_len()?;
        Blur::Naive.check_radius(radius)?;
        let input = random_vec(
            len,
            Uniform::new_inclusive(0u8, 254).expect("a valid range"),
            rng.random(),
        );
        let values: Vec<f64> = reference::blur(&input, image, radius as usize)
            .into_iter()
            .map(f64::from)
            .collect();
        let expected = Expected {
            tolerance: vec![0.0; values.len()],
            values,
        };
        Ok(Self {
            image,
            radius,
            input: backend.upload("input image", &input)?,
            output: backend.alloc("output image", len)?,
            expected,
        })
    }

    /// Launches the kernel on the case's buffers.
    pub fn launch(&mut self, backend: &B, kernel: Blur) -> Result<()> {
        backend.blur(
            kernel,
            self.image,
            self.radius,
            &self.input,
            &mut self.output,
        )
    }

    /// Poisons the output, runs the kernel and compares every sample with
    /// the reference, exactly.
    pub fn check(&mut self, backend: &B, kernel: Blur) -> Result<Comparison> {
        backend.poison(&mut self.output)?;
        self.launch(backend, kernel)?;
        Ok(compare(&backend.download(&self.output)?, &self.expected))
    }
}

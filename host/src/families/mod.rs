//! Every kernel family, in teaching order: the one list the command line,
//! the default run, the bench and the tests iterate.

pub mod access;
pub mod banks;
pub mod blur;
pub mod bulk;
pub mod caches;
pub mod chase;
pub mod constant;
pub(crate) mod declare;
pub mod distributed;
pub mod gemv;
pub mod histogram;
pub mod intensity;
pub mod l2;
pub mod matmul;
pub mod matmul_bf16;
pub mod pair_sum;
pub mod prelude;
pub mod readonly;
pub mod registers;
mod shape;
pub mod tensor;
pub mod texture;
pub mod transpose;
pub mod width;

use gpu_host::Error as HostError;
use gpu_std::{Instances, Kernel, LaunchBounds};

use crate::error::{Error, Result};
use crate::family::{Family, Sizes};

/// Something done for every family in turn.
pub trait Visitor {
    fn visit<F: Family>(&mut self) -> Result<()>;
}

/// Calls `visitor` for every family, in teaching order.
pub fn visit(visitor: &mut impl Visitor) -> Result<()> {
    visitor.visit::<matmul::Matmul>()?;
    visitor.visit::<matmul_bf16::MatmulBf16>()?;
    visitor.visit::<gemv::Gemv<f32>>()?;
    visitor.visit::<gemv::Gemv<f64>>()?;
    visitor.visit::<blur::Blur>()?;
    visitor.visit::<transpose::Transpose>()?;
    visitor.visit::<access::Access>()?;
    visitor.visit::<width::Width>()?;
    visitor.visit::<constant::Constant>()?;
    visitor.visit::<registers::Registers>()?;
    visitor.visit::<banks::Banks>()?;
    visitor.visit::<caches::Caches>()?;
    visitor.visit::<readonly::ReadOnly>()?;
    visitor.visit::<texture::TextureFamily>()?;
    visitor.visit::<l2::L2>()?;
    visitor.visit::<bulk::Bulk>()?;
    visitor.visit::<tensor::Tensor>()?;
    visitor.visit::<distributed::Distributed>()?;
    visitor.visit::<histogram::Histogram>()?;
    visitor.visit::<chase::Chase>()?;
    visitor.visit::<pair_sum::PairSum>()?;
    visitor.visit::<intensity::Intensity>()
}

/// One kernel, as listings show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub family: &'static str,
    pub name: &'static str,
    pub lesson: &'static str,
    /// Whether `bench` times it when no kernel is named.
    pub benched: bool,
    /// Whether it uses local memory on purpose, as its lesson.
    pub local_memory: bool,
    pub bounds: LaunchBounds,
    /// Whether it runs from Hopper's arch-specific build only.
    pub arch_specific: bool,
    pub instances: Option<Instances>,
}

impl KernelInfo {
    /// Its entry points: its name, or one per instance.
    pub fn entries(&self) -> Vec<&'static str> {
        gpu_std::entries(self.name, self.instances)
    }

    fn of<F: Family>(kernel: &Kernel<F::Args, F::Problem>) -> Self {
        Self {
            family: F::NAME,
            name: kernel.name,
            lesson: kernel.lesson(),
            benched: F::BENCHED,
            local_memory: kernel.local_memory,
            bounds: kernel.bounds,
            arch_specific: kernel.arch_specific,
            instances: kernel.instances,
        }
    }
}

/// Every kernel of every family, in teaching order.
pub fn kernels() -> Vec<KernelInfo> {
    struct Collect(Vec<KernelInfo>);
    impl Visitor for Collect {
        fn visit<F: Family>(&mut self) -> Result<()> {
            let kernels = F::KERNELS.iter();
            self.0.extend(kernels.map(KernelInfo::of::<F>));
            Ok(())
        }
    }
    let mut collect = Collect(Vec::new());
    visit(&mut collect).expect("collecting names cannot fail");
    collect.0
}

/// Each family that picks among its kernels by shape, and how
/// ([`Family::PICKS`]).
pub fn pickers() -> Vec<(&'static str, &'static str)> {
    struct Collect(Vec<(&'static str, &'static str)>);
    impl Visitor for Collect {
        fn visit<F: Family>(&mut self) -> Result<()> {
            if let Some(picks) = F::PICKS {
                self.0.push((F::NAME, picks));
            }
            Ok(())
        }
    }
    let mut collect = Collect(Vec::new());
    visit(&mut collect).expect("collecting pickers cannot fail");
    collect.0
}

/// Every family's name, once, in teaching order.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = kernels().iter().map(|kernel| kernel.family).collect();
    names.dedup();
    names
}

/// Checks every kernel of `kernels` against its family's sizes, without a
/// GPU, so that bad input is reported before any work.
pub fn check(kernels: &[&'static str], sizes: &Sizes) -> Result<()> {
    struct Check<'a>(&'a [&'static str], &'a Sizes);
    impl Visitor for Check<'_> {
        fn visit<F: Family>(&mut self) -> Result<()> {
            let kernels: Vec<_> = F::KERNELS
                .iter()
                .filter(|k| self.0.contains(&k.name))
                .collect();
            for dims in self.1.dims::<F>() {
                for shape in self.1.shapes_of::<F>(&dims) {
                    // The kernels made for the shape, or, where none is,
                    // all of them, so that the first says why.
                    let takers: Vec<_> = kernels
                        .iter()
                        .copied()
                        .filter(|kernel| F::made_for(kernel, shape).is_ok())
                        .collect();
                    let checked = if takers.is_empty() {
                        kernels.clone()
                    } else {
                        takers
                    };
                    for kernel in checked {
                        match F::check(kernel, shape) {
                            Err(error @ Error::Host(HostError::GridTooLarge { .. })) => {
                                return Err(largest_dimension::<F>(kernel, self.1, &dims, error));
                            }
                            checked => checked?,
                        }
                    }
                }
            }
            Ok(())
        }
    }
    visit(&mut Check(kernels, sizes))
}

/// Turns a grid too large for `kernel` at `dims` into the largest value of
/// the dimension that makes it so, when one alone does.
fn largest_dimension<F: Family>(
    kernel: &Kernel<F::Args, F::Problem>,
    sizes: &Sizes,
    dims: &[usize],
    error: Error,
) -> Error {
    let Error::Host(HostError::GridTooLarge {
        axis,
        blocks,
        limit,
        ..
    }) = error
    else {
        return error;
    };
    let fits = |index: usize, value: usize| {
        let mut dims = dims.to_vec();
        dims[index] = value;
        !matches!(
            F::check(kernel, sizes.shape::<F>(&dims)),
            Err(Error::Host(HostError::GridTooLarge { axis: a, .. })) if a == axis
        )
    };
    let Some(index) = (0..dims.len()).find(|&index| fits(index, 1)) else {
        return error;
    };
    // The grid grows with the dimension: the largest value that fits lies
    // in [1, dims[index]).
    let (mut fitting, mut failing) = (1, dims[index]);
    while failing - fitting > 1 {
        let middle = fitting + (failing - fitting) / 2;
        if fits(index, middle) {
            fitting = middle;
        } else {
            failing = middle;
        }
    }
    Error::DimensionTooLarge {
        kernel: kernel.name,
        dimension: F::SIZE.names[index],
        size: dims[index],
        max: fitting,
        axis,
        blocks,
        limit,
    }
}

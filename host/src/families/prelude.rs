//! What a family's file uses, in one import: the trait and the pieces
//! [`crate::family`] offers, what a shape derives, the random inputs, the
//! reference and the options.

pub use std::fmt;

pub use clap::{Arg, ArgMatches, value_parser};
pub use gpu_host::backend::Backend;
pub use gpu_std::Kernel;
pub use rand::rngs::SmallRng;
pub use rayon::prelude::*;
pub use serde::{Deserialize, Serialize};

pub use crate::error::{Error, Result};
pub(crate) use crate::families::declare::family;
pub(crate) use crate::families::shape::shape;
pub use crate::family::{
    Arrays, Bound, Buffers, CpuOutput, Declaration, Family, Host, InputOutput, Kernels, Launch,
    NAMES, Op, Shape, SizeSyntax, Source, TwoInputs, Work, at_most, dims, expect_len, expect_map,
    indexable, multiple_of, nonzero, option, power_of_two, square_or_whole, value,
};
pub use crate::reference::{Expected, gamma};
pub use crate::verify::uniform_floats;

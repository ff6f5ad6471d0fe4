//! A size and its options as the command line gives them: the dimensions
//! it parses, the checks every family's problem makes of them, and the
//! options a family adds of its own.

use clap::builder::{IntoResettable, ValueParser};
use clap::{Arg, ArgMatches};

use crate::error::{Error, Result};

/// Rejects a zero dimension, and one beyond the kernels' `u32`.
pub fn nonzero(what: &'static str, size: usize) -> Result<u32> {
    if size == 0 {
        return Err(Error::ZeroSize { what });
    }
    u32::try_from(size).map_err(|_| Error::TooLarge {
        what,
        size: size as u128,
        limit: u32::MAX.into(),
    })
}

/// Rejects a size beyond `limit`.
pub fn at_most(what: &'static str, size: impl Into<u128>, limit: impl Into<u64>) -> Result<()> {
    let (size, limit) = (size.into(), limit.into());
    if size > u128::from(limit) {
        return Err(Error::TooLarge { what, size, limit });
    }
    Ok(())
}

/// Rejects what [`nonzero`] rejects, and a size that is not a power of two
/// of at least `least`.
pub fn power_of_two(what: &'static str, size: usize, least: usize) -> Result<u32> {
    let checked = nonzero(what, size)?;
    if !size.is_power_of_two() || size < least {
        return Err(Error::NotPowerOfTwo { what, size, least });
    }
    Ok(checked)
}

/// Rejects a size that is not a multiple of `of`, saying `why` it must be.
pub fn multiple_of(what: &'static str, size: usize, of: usize, why: &'static str) -> Result<()> {
    if !size.is_multiple_of(of) {
        return Err(Error::NotMultiple {
            what,
            size,
            of,
            why,
        });
    }
    Ok(())
}

/// Rejects an array whose element indices would not fit the kernels' `u32`
/// index arithmetic.
pub fn indexable(what: &'static str, dimensions: &[u32]) -> Result<usize> {
    let size = dimensions.iter().map(|&d| u128::from(d)).product::<u128>();
    at_most(what, size, u32::MAX)?;
    Ok(size as usize)
}

/// The dimensions `dims` as an array of N; one number stands for all N.
pub fn dims<const N: usize>(dims: &[usize]) -> [usize; N] {
    match dims {
        [one] => [*one; N],
        _ => dims.try_into().expect("the command line checks the count"),
    }
}

/// An option of a family's own beyond its size: `--ID VALUE_NAME`, read by
/// `parser`, `default` where not given.
pub fn option(
    id: &'static str,
    value_name: &'static str,
    parser: impl IntoResettable<ValueParser>,
    default: &'static str,
    help: &'static str,
) -> Arg {
    Arg::new(id)
        .long(id)
        .help(help)
        .value_name(value_name)
        .value_parser(parser)
        .default_value(default)
}

/// The value of the option `id`, which has a default.
pub fn value<T: Clone + Send + Sync + 'static>(options: &ArgMatches, id: &str) -> T {
    options
        .get_one::<T>(id)
        .expect("the option has a default")
        .clone()
}

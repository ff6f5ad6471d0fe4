//! Every way a request can fail, each with a message a user can act on.

use std::path::{Path, PathBuf};

use cudarc::cublas::result::CublasError;

const GIB: f64 = (1u64 << 30) as f64;

/// What a run stopped by a signal leaves behind.
pub const NOTHING_WRITTEN: &str = "no output was written, and any earlier one is as it was";

/// The error type of every fallible function in this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what} must not be zero")]
    ZeroSize { what: &'static str },
    #[error("{what} must be a power of two of at least {least}, not {size}")]
    NotPowerOfTwo {
        what: &'static str,
        size: usize,
        least: usize,
    },
    #[error("{what} must be a multiple of {of}, not {size}{why}")]
    NotMultiple {
        what: &'static str,
        size: usize,
        of: usize,
        why: &'static str,
    },
    #[error(
        "clusters of {cluster} blocks must hold 1 to {} blocks and divide the {blocks} blocks",
        gpu_std::MAX_CLUSTER_BLOCKS
    )]
    ClusterSize { cluster: usize, blocks: usize },
    #[error("{what} has {actual} elements, but the shape needs {expected}")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        actual: usize,
    },
    #[error("{what} is too large: {size} exceeds the limit of {limit}")]
    TooLarge {
        what: &'static str,
        size: u128,
        limit: u64,
    },
    #[error(
        "{dimension} = {size} is too large for {kernel}: it would need {blocks} blocks along {axis}, \
         more than the limit of {limit}; {dimension} is at most {max}"
    )]
    DimensionTooLarge {
        kernel: &'static str,
        dimension: &'static str,
        size: usize,
        max: usize,
        axis: char,
        blocks: u32,
        limit: u32,
    },
    #[error("{kernel} does not read a texture with {modes}: it reads border-linear only")]
    ModesUnsupported { kernel: &'static str, modes: String },
    #[error("{0} is not a blur kernel")]
    NotABlurKernel(String),
    #[error(
        "blur radius {radius} is too large for {kernel} on {channels}-channel images: at most {max}"
    )]
    RadiusTooLarge {
        kernel: &'static str,
        channels: usize,
        radius: u32,
        max: u32,
    },
    #[error("{kernel} blurs images of at most {max} channels, not {channels}")]
    TooManyChannels {
        kernel: &'static str,
        channels: usize,
        max: u32,
    },
    #[error(
        "{what} is {ops:.1e} operations {}, more than the {limit:.1e} allowed here: \
         {because}; choose a smaller problem{}",
        if *launches > 1 { format!("in its {launches} launches") } else { "per run".into() },
        if *launches > 1 { " or fewer runs" } else { "" }
    )]
    TooMuchWork {
        what: String,
        ops: f64,
        /// The launches `ops` counts.
        launches: usize,
        limit: f64,
        because: &'static str,
    },
    #[error(
        "{what} needs {:.1} GiB of host memory for its inputs and reference, but only {:.1} GiB \
         are free; choose a smaller size",
        *bytes as f64 / GIB,
        *available as f64 / GIB
    )]
    NotEnoughHostMemory {
        what: String,
        bytes: u64,
        available: u64,
    },
    #[error("{kernel} computed a wrong output on the emulator: {comparison}")]
    WrongOnEmulator {
        kernel: &'static str,
        comparison: String,
    },
    #[error("{kernel} computed a wrong output while measuring a ceiling: {comparison}")]
    WrongCeiling {
        kernel: &'static str,
        comparison: String,
    },
    #[error(
        "no cuBLAS found: libcublas could not be loaded (is the CUDA toolkit's cuBLAS installed?)"
    )]
    NoCublas,
    #[error(
        "no NPP found: libnppif (the CUDA toolkit's NPP filtering library) could not be loaded"
    )]
    NoNpp,
    #[error("NPP has no box filter for {channels} channels at radius {radius}")]
    NppUnsupported { channels: usize, radius: u32 },
    #[error("NPP's box filter failed with status {status}")]
    Npp { status: i32 },
    #[error("cuBLAS error while {action}: {source}")]
    Cublas {
        action: &'static str,
        #[source]
        source: CublasError,
    },
    #[error("cannot read {}: {source}", path.display())]
    Picture {
        path: PathBuf,
        #[source]
        source: image::ImageError,
    },
    #[error(
        "{} is not a picture in a format this program reads (PNG, JPEG, BMP, TIFF, WebP or GIF)",
        .0.display()
    )]
    NotAPicture(PathBuf),
    #[error(
        "cannot write {}: its extension names no format a picture is written in \
         (png, jpg or jpeg, bmp, tif or tiff, webp, gif)",
        .0.display()
    )]
    PictureFormat(PathBuf),
    #[error("the output {} is the input: give another with -o", .0.display())]
    OutputIsInput(PathBuf),
    #[error("{kernel} blurred the picture WRONG ({comparison}); nothing was written")]
    WrongPicture {
        kernel: &'static str,
        comparison: String,
    },
    #[error("cannot draw a plot: {0}")]
    Plot(String),
    #[error("interrupted: {NOTHING_WRITTEN}")]
    Interrupted,
    #[error("cannot watch for Ctrl-C and the other signals that stop a run: {0}")]
    Signal(String),
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),
    #[error(
        "cannot write {}: it is {kind}; give a file, a FIFO, a character device or - \
         (standard output)",
        path.display()
    )]
    OutputKind { path: PathBuf, kind: &'static str },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Docs { path: PathBuf, message: String },
    #[error("{} is not a bench run's JSON (`bench --json`): {why}", path.display())]
    NotABenchRun { path: PathBuf, why: String },
    #[error(
        "the ceilings in {} were measured on {there}, and this GPU is {here}: measure them \
         (without --ceilings) or give a run of this GPU",
        path.display()
    )]
    CeilingsElsewhere {
        path: PathBuf,
        there: String,
        here: String,
    },
    #[error(
        "{} has no ceiling for {which}, which this run needs: measure them (without \
         --ceilings) or give a run that has it",
        path.display()
    )]
    CeilingMissing { path: PathBuf, which: &'static str },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Host(#[from] gpu_host::Error),
}

impl Error {
    /// The error of writing the file at `path`.
    pub(crate) fn write(path: &Path, source: std::io::Error) -> Self {
        Self::Write {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches what was being done to a cuBLAS error.
pub(crate) trait During<T> {
    fn during(self, action: &'static str) -> Result<T>;
}

impl<T> During<T> for Result<T, CublasError> {
    fn during(self, action: &'static str) -> Result<T> {
        self.map_err(|source| Error::Cublas { action, source })
    }
}

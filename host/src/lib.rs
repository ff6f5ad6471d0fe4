//! The host side of locality: it loads the PTX compiled from the `gpu`
//! crate, launches each kernel through a safe wrapper, checks every output
//! element against a CPU reference and times the kernels; or runs the same
//! kernels, compiled for the host, under the CPU emulator.

pub mod backend;
pub mod bench;
pub mod cli;
pub mod device;
pub mod emulator;
pub mod error;
pub mod kernels;
pub mod reference;
pub mod report;
pub mod suite;
pub mod timing;
pub mod verify;

pub use backend::Backend;
pub use device::Gpu;
pub use emulator::Emulator;
pub use error::{Error, Result};

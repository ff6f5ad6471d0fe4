//! The host side of locality: it loads the PTX compiled from the `kernels`
//! crate, launches every kernel through one typed path, checks every output
//! element against a CPU reference and times the kernels; or runs the same
//! kernels, compiled for the host, under the CPU emulator.
//!
//! The layers, each using only those above it: `error`, `timing`,
//! `console`, `atomic`, `interrupt`; `backend` (buffers, kernel parameters, the launch); `device` and
//! `emulator` (the two backends); `blas`; `reference`, `verify`; `family`
//! (what the host knows of a family), `case`; `families` (each family, and
//! the list of them); `suite`, `report`, `bench`, `picture`; `lessons`; `docs`; `cli`.

pub mod backend;
pub mod bench;
pub mod blas;
pub mod case;
pub mod cli;
pub mod console;
pub mod device;
pub mod docs;
pub mod emulator;
pub mod error;
pub mod families;
pub mod family;
pub mod interrupt;
pub mod lessons;
pub mod npp;
pub mod output;
pub mod picture;
pub mod reference;
pub mod report;
pub mod suite;
pub mod timing;
pub mod verify;

pub use backend::Backend;
pub use device::Gpu;
pub use emulator::{CountingEmulator, Emulator};
pub use error::{Error, Result};

//! The host side of locality: it loads the PTX compiled from the `kernels`
//! crate, launches every kernel through one typed path, checks every output
//! element against a CPU reference and times the kernels; or runs the same
//! kernels, compiled for the host, under the CPU emulator.
//!
//! Buffers, launches, timing and the two backends (the GPU and the CPU
//! emulator) come from the `gpu-host` crate, as they would for any kernel
//! crate. The layers here, each using only those above it: `error`,
//! `console`, `interrupt`; `gpu` (the project's PTX and twins); `blas`; `reference`, `verify`; `family`
//! (what the host knows of a family), `case`; `families` (each family, and
//! the list of them); `suite`, `report`, `bench`, `picture`; `lessons`; `docs`; `cli`.

pub mod bench;
pub mod blas;
pub mod case;
pub mod cli;
pub mod console;
pub mod docs;
pub mod error;
pub mod families;
pub mod family;
pub mod gpu;
pub mod interrupt;
pub mod lessons;
pub mod npp;
pub mod output;
pub mod peers;
pub mod picture;
pub mod reference;
pub mod report;
pub mod suite;
pub mod verify;

pub use error::{Error, Result};
pub use gpu_host::{Backend, CountingEmulator, Emulator, Gpu};

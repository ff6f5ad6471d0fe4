//! Deliberately broken kernels, kept here and not in the library: the
//! emulator must stop each one with the right diagnostic, naming the kernel,
//! the block and the threads involved, and for global memory the buffer and
//! the index, without the process crashing. And correct kernels that use CUDA's
//! rule that a returned thread no longer counts at a barrier must pass.
//!
//! One module a kind of diagnostic; the tiled matmul, which the bounds and
//! race checks both break, in a module of its own.

mod atomics;
mod barriers;
mod bulk;
mod clusters;
mod constant;
mod copies;
mod global;
mod global_races;
mod limits;
mod matmul;
mod mma;
mod panics;
mod peers;
mod proxy;
mod races;
mod read_only;
mod ring;
mod scalars;
mod shared;
mod shared_atomics;
mod statics;
mod streaming;
mod support;
mod tensor;
mod texture;
mod timers;
mod typed_shared;
mod warpgroup;
mod wgmma;

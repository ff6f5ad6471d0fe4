//! Integration tests of locality; the tests live in `tests/`.
//!
//! - `ptx`: the compiled PTX has every entry point, shared memory and
//!   barriers where the lesson needs them, no local memory, no undefined call.
//! - `errors`: every bad input is a typed error, checked without a GPU.
//! - `gpu`: every kernel against the CPU reference on many shapes; reported
//!   as "not run: no CUDA device" (ignored, never passed) without a GPU.

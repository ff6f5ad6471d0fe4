//! Compiles the `kernels` crate to PTX for the host to embed: `kernels.ptx`
//! for every GPU from Turing on, `kernels_sm80.ptx` for Ampere on.

fn main() {
    gpu_builder::PtxBuilder::new("../gpu")
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
}

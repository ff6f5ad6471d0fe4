fn main() {
    gpu_builder::PtxBuilder::new(".").build().unwrap_or_else(|error| panic!("{error}"));
}

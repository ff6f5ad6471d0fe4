//! The four PTX builds, the body of an entry point in any, and every
//! entry point the families define, which every other module reads.

use locality::families;
use locality::gpu::PTX as BUILDS;

/// The build for every GPU from Turing on.
pub const PTX: &str = BUILDS.sm75;

/// The build for Ampere on.
pub const PTX_SM80: &str = BUILDS.sm80;

/// The build for Hopper on.
pub const PTX_SM90: &str = BUILDS.sm90;

/// Hopper's arch-specific build, which runs on 9.0 only.
pub const PTX_SM90A: &str = BUILDS.sm90a;

/// The oldest build a kernel that needs compute capability `capability`
/// (the arch-specific build of it, where `arch_specific`) runs from.
pub fn oldest_build_for((major, minor): (u32, u32), arch_specific: bool) -> &'static str {
    match (major, minor) {
        _ if arch_specific => PTX_SM90A,
        (9, 0) => PTX_SM90,
        _ => BUILDS.for_capability((major as i32, minor as i32)),
    }
}

/// The body of one entry point in the sm_75 PTX: from its `.entry` line to
/// the closing brace.
pub fn body(entry_point: &str) -> &'static str {
    body_in(PTX, entry_point)
}

/// The same in `ptx`, any build.
pub fn body_in(ptx: &'static str, entry_point: &str) -> &'static str {
    let start = ptx
        .find(&format!(".entry {entry_point}("))
        .unwrap_or_else(|| panic!("no entry point {entry_point}"));
    let length = ptx[start..]
        .find("\n}\n")
        .expect("every body ends with a closing brace");
    &ptx[start..start + length]
}

/// Every kernel's entry points: its name, or one per instance.
pub fn every_entry_point() -> Vec<&'static str> {
    let kernels = families::kernels();
    kernels.iter().flat_map(|kernel| kernel.entries()).collect()
}

//! Compiles the `gpu` crate to PTX with rustc's own NVPTX backend, for the
//! host crate to embed.
//!
//! The nested cargo gets its own target directory and a clean environment:
//! none of the host build's flags or profile settings may leak into it.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The oldest GPU architecture the PTX targets; the driver compiles it for
/// newer ones when the module loads.
const TARGET_CPU: &str = "sm_75";

/// LLVM unrolls a loop of a constant trip count completely only while the
/// unrolled body stays under this many instructions' cost. Its default (300
/// on NVPTX) unrolls the 16-wide tile's inner loop but not the 32-wide one,
/// which nvcc does unroll: left at the default, `matmul_tiled_32` pays a
/// loop branch and counter every 4 FMAs and runs 6% slower than its CUDA
/// C++ twin. Loops whose trip count is known only at run time are not
/// affected.
const UNROLL_THRESHOLD: u32 = 1000;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let gpu_dir = manifest_dir.join("../gpu");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let target_dir = out_dir.join("gpu-target");

    println!("cargo::rerun-if-changed={}", gpu_dir.join("src").display());
    println!(
        "cargo::rerun-if-changed={}",
        gpu_dir.join("Cargo.toml").display()
    );

    let cargo = env::var_os("CARGO").expect("set by cargo");
    let mut command = Command::new(cargo);
    command.env_clear();
    for key in [
        "PATH",
        "HOME",
        "TMPDIR",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
    ] {
        if let Some(value) = env::var_os(key) {
            command.env(key, value);
        }
    }
    command
        .current_dir(&gpu_dir)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .args([
            "rustc",
            "--release",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
        ])
        .args(["--crate-type", "cdylib", "--"])
        .args(["--emit=asm", &format!("-Ctarget-cpu={TARGET_CPU}")])
        .arg(format!("-Cllvm-args=-unroll-threshold={UNROLL_THRESHOLD}"))
        // Fat LTO writes the whole program's PTX as the `.s` file; the link
        // step after it would want `llvm-bitcode-linker`, which rustup does
        // not ship for this target, so it is replaced by a no-op.
        .arg("-Clinker=true");

    let status = command
        .status()
        .expect("could not run cargo for the gpu crate");
    assert!(status.success(), "compiling the gpu crate to PTX failed");

    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/deps/gpu.s");
    copy_ptx(&ptx, &out_dir.join("kernels.ptx"));
}

fn copy_ptx(from: &Path, to: &Path) {
    let ptx = std::fs::read_to_string(from)
        .unwrap_or_else(|e| panic!("no PTX at {}: {e}", from.display()));
    assert!(
        ptx.contains(".entry"),
        "the PTX at {} has no kernel entry point",
        from.display()
    );
    std::fs::write(to, ptx).unwrap_or_else(|e| panic!("could not write {}: {e}", to.display()));
}

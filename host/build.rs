//! Compiles the `kernels` crate to PTX with rustc's own NVPTX backend, for the
//! host crate to embed.
//!
//! The nested cargo gets its own target directory and a clean environment:
//! none of the host build's flags or profile settings may leak into it.

use std::collections::HashMap;
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The GPU architectures the kernels are compiled for, each to a PTX file
/// of its own: the oldest the project runs on, and the first with
/// asynchronous copies (`cp.async`), which the runtime uses from there on
/// and replaces with plain loads and stores below. The host loads the
/// newest one the GPU can run; the driver compiles it for the GPU.
const TARGETS: [(&str, &str); 2] = [("sm_75", "kernels.ptx"), ("sm_80", "kernels_sm80.ptx")];

/// LLVM unrolls a loop of a constant trip count completely only while the
/// unrolled body stays under this many instructions' cost. Its default (300
/// on NVPTX) unrolls the 16-wide tile's inner loop but not the 32-wide one,
/// which nvcc does unroll: left at the default, `matmul_tiled_32` pays a
/// loop branch and counter every 4 FMAs and runs 6% slower than its CUDA
/// C++ twin. Loops whose trip count is known only at run time are not
/// affected.
const UNROLL_THRESHOLD: u32 = 1000;

/// The built-in target's data layout gives every pointer 64 bits. Shared
/// memory is at most 228 KiB, so CUDA C++ addresses it with 32-bit
/// registers; with 64-bit pointers each shared access pays a widening and a
/// 64-bit add, and the SASS cannot fold offsets into its loads. These
/// entries give shared (3), constant (4), local (5), tensor (6) and cluster
/// shared (7) memory 32-bit pointers: the layout LLVM's NVPTX backend
/// expects under `--nvptx-short-ptr`, which rustc checks.
const SHORT_POINTERS: &str = "p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32";

/// The name of the target the kernels are built for: the built-in
/// `nvptx64-nvidia-cuda` with [`SHORT_POINTERS`].
const TARGET: &str = "nvptx64-nvidia-cuda-short-ptr";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let gpu_dir = manifest_dir.join("../kernels");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));

    // The kernels, and the device runtime and launch vocabulary they use.
    for dir in [
        &gpu_dir,
        &manifest_dir.join("../crates/gpu-std"),
        &manifest_dir.join("../crates/gpu-core"),
    ] {
        println!("cargo::rerun-if-changed={}", dir.join("src").display());
        println!(
            "cargo::rerun-if-changed={}",
            dir.join("Cargo.toml").display()
        );
    }

    let target_spec = out_dir.join(format!("{TARGET}.json"));
    write_target_spec(&target_spec);

    // Both builds at once: each is one rustc process for most of its time.
    let builds: Vec<_> = TARGETS
        .iter()
        .map(|&(cpu, file)| {
            let target_dir = out_dir.join(format!("gpu-target-{cpu}"));
            let child = gpu_build(&gpu_dir, &target_spec, &target_dir, cpu)
                .spawn()
                .expect("could not run cargo for the kernels crate");
            (child, target_dir, file)
        })
        .collect();
    for (mut child, target_dir, file) in builds {
        let status = child.wait().expect("could not wait for cargo");
        assert!(
            status.success(),
            "compiling the kernels crate to PTX failed"
        );
        let ptx = target_dir.join(TARGET).join("release/deps/kernels.s");
        copy_ptx(&ptx, &out_dir.join(file));
    }
}

/// The nested cargo that compiles the kernels crate to PTX for `cpu`.
fn gpu_build(gpu_dir: &Path, target_spec: &Path, target_dir: &Path, cpu: &str) -> Command {
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
        .current_dir(gpu_dir)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        // Every crate of the build, the device runtime's and core's too, is
        // compiled for `cpu`: the runtime picks `cp.async` by it.
        .env(
            "CARGO_ENCODED_RUSTFLAGS",
            [
                format!("-Ctarget-cpu={cpu}"),
                format!("-Cllvm-args=-unroll-threshold={UNROLL_THRESHOLD}"),
            ]
            .join("\x1f"),
        )
        // The workspace turns overflow checks on for the emulated kernels
        // and runtime; on the GPU they would only add branches to a trap.
        .args([
            "--config",
            "profile.release.package.kernels.overflow-checks=false",
            "--config",
            "profile.release.package.gpu-std.overflow-checks=false",
        ])
        .args([
            "rustc",
            "--release",
            "-Zbuild-std=core",
            "-Zjson-target-spec",
        ])
        .arg("--target")
        .arg(target_spec)
        .args(["--crate-type", "cdylib", "--"])
        .arg("--emit=asm")
        // Fat LTO writes the whole program's PTX as the `.s` file; the link
        // step after it would want `llvm-bitcode-linker`, which rustup does
        // not ship for this target, so it is replaced by a no-op.
        .arg("-Clinker=true");
    command
}

/// Writes the spec of [`TARGET`]: rustc's own spec of `nvptx64-nvidia-cuda`
/// with [`SHORT_POINTERS`] in its data layout, and the LLVM option that
/// makes the backend agree with it.
fn write_target_spec(path: &Path) {
    let rustc = env::var_os("RUSTC").expect("set by cargo");
    let output = Command::new(rustc)
        .args(["-Zunstable-options", "--print", "target-spec-json"])
        .args(["--target", "nvptx64-nvidia-cuda"])
        .output()
        .expect("could not run rustc for the nvptx64 target's spec");
    assert!(
        output.status.success(),
        "rustc could not print the nvptx64 target's spec: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut spec: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&output.stdout)
            .expect("rustc printed a target spec that is not JSON");
    let layout = spec["data-layout"]
        .as_str()
        .expect("the target spec has a data layout");
    let (endianness, rest) = layout
        .split_once('-')
        .expect("a data layout starts with its endianness");
    let rest = rest
        .split('-')
        .filter(|entry| !entry.starts_with('p'))
        .collect::<Vec<_>>()
        .join("-");
    spec.insert(
        "data-layout".into(),
        format!("{endianness}-{SHORT_POINTERS}-{rest}").into(),
    );
    spec.insert("llvm-args".into(), serde_json::json!(["--nvptx-short-ptr"]));
    let json = serde_json::to_string_pretty(&spec).expect("a JSON map serializes");
    std::fs::write(path, json)
        .unwrap_or_else(|e| panic!("could not write {}: {e}", path.display()));
}

fn copy_ptx(from: &Path, to: &Path) {
    let ptx = std::fs::read_to_string(from)
        .unwrap_or_else(|e| panic!("no PTX at {}: {e}", from.display()));
    assert!(
        ptx.contains(".entry"),
        "the PTX at {} has no kernel entry point",
        from.display()
    );
    let ptx = with_launch_bounds(&ptx);
    std::fs::write(to, ptx).unwrap_or_else(|e| panic!("could not write {}: {e}", to.display()));
}

/// `ptx` with each kernel's launch bounds moved into its entry.
///
/// `kernels!` writes a kernel's `#[launch_bounds(max_threads, min_blocks)]`
/// as a line `// launch_bounds NAME MAX_THREADS MIN_BLOCKS` of the PTX (0
/// for no fewest blocks); here it becomes the `.maxntid` and
/// `.minnctapersm` directives between
/// the entry's parameters and its body, where CUDA C++'s
/// `__launch_bounds__` puts them and where ptxas reads them. Every entry
/// has bounds, and every bound an entry.
fn with_launch_bounds(ptx: &str) -> String {
    let mut bounds = HashMap::new();
    let mut lines = Vec::new();
    for line in ptx.lines() {
        match line.strip_prefix("// launch_bounds ") {
            Some(declared) => {
                let fields: Vec<&str> = declared.split(' ').collect();
                let [name, max_threads, min_blocks] = fields[..] else {
                    panic!("a launch bounds line of the PTX is malformed: {line}");
                };
                let mut directives = format!(".maxntid {max_threads}, 1, 1\n");
                if min_blocks != "0" {
                    directives.push_str(&format!(".minnctapersm {min_blocks}\n"));
                }
                assert!(
                    bounds.insert(name, directives).is_none(),
                    "kernel {name} has launch bounds twice"
                );
            }
            None => lines.push(line),
        }
    }
    let mut placed = String::with_capacity(ptx.len());
    let mut entry = None;
    for line in lines {
        if let Some(name) = line.strip_prefix(".visible .entry ") {
            entry = Some(name.trim_end_matches('('));
        } else if line == "{"
            && let Some(name) = entry.take()
        {
            let directives = bounds
                .remove(name)
                .unwrap_or_else(|| panic!("kernel {name} has no launch bounds"));
            placed.push_str(&directives);
        }
        placed.push_str(line);
        placed.push('\n');
    }
    let mut orphans: Vec<_> = bounds.into_keys().collect();
    orphans.sort();
    assert!(
        orphans.is_empty(),
        "launch bounds of kernels the PTX does not define: {orphans:?}"
    );
    placed
}

//! Compiles a kernel crate written with `gpu-std` to PTX from a build
//! script, with rustc's own NVPTX backend: the step Rust-CUDA's
//! `cuda_builder` takes, on stock nightly Rust. (Rust-CUDA's code generator,
//! `rustc_codegen_nvvm`, needs LLVM 7 for every GPU before Blackwell, which
//! no package registry provides, so it does not build here.)
//!
//! ```no_run
//! // In the build.rs of the crate that launches the kernels:
//! gpu_builder::PtxBuilder::new("../gpu")
//!     .build()
//!     .unwrap_or_else(|error| panic!("{error}"));
//! ```
//!
//! writes `NAME.ptx` (for `sm_75`, which loads on every GPU from Turing
//! on), `NAME_sm80.ptx` (for `sm_80` and newer, where `gpu-std`'s
//! asynchronous copies are `cp.async`), `NAME_sm90.ptx` (for `sm_90`
//! and newer, with `gpu-std`'s bulk copies and transaction barriers) and
//! `NAME_sm90a.ptx` (for `sm_90a`, Hopper alone, with its `wgmma` and
//! `setmaxnreg`) into `OUT_DIR`, `NAME` the kernel
//! crate's, for `include_str!(concat!(env!("OUT_DIR"), "/NAME.ptx"))`.
//! Each kernel's `#[launch_bounds]` becomes its entry's `.maxntid` and
//! `.minnctapersm`. The kernel crate and every path dependency it has on
//! the GPU are watched, so the PTX is rebuilt when one changes, and only
//! then.
//!
//! It needs the nightly toolchain with the `rust-src` component (the build
//! compiles `core` for the GPU, since rustup ships none for it), and says
//! so when either is missing.
#![deny(missing_docs)]

use std::collections::HashMap;
use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The GPU architectures a kernel crate is compiled for, each to a PTX
/// file of its own (`NAME` and this suffix), with the PTX ISA features
/// each needs: the oldest the project runs on; the first with
/// asynchronous copies (`cp.async`), which the runtime uses from there on
/// and replaces with plain loads and stores below; and the first with bulk
/// copies and transaction barriers, whose instructions need PTX ISA 8.0,
/// and the tensor-map fence, 8.3 (LLVM's default for sm_90 is 7.8; a
/// driver of CUDA 12.3 or newer compiles 8.3); and Hopper's arch-specific
/// build, the only one with `wgmma` and `setmaxnreg`, whose PTX loads on
/// compute capability 9.0 and no other. The host loads the newest one the
/// GPU can run; the driver compiles it for the GPU.
const TARGETS: [(&str, &str, &str); 4] = [
    ("sm_75", "", ""),
    ("sm_80", "_sm80", ""),
    ("sm_90", "_sm90", "+ptx83"),
    ("sm_90a", "_sm90a", "+ptx83"),
];

/// LLVM unrolls a loop of a constant trip count completely only while the
/// unrolled body stays under this many instructions' cost. Its default (300
/// on NVPTX) unrolls the 16-wide tile's inner loop but not the 32-wide one,
/// which nvcc does unroll: left at the default, `matmul_tiled_32` pays a
/// loop branch and counter every 4 FMAs and runs 6% slower than its CUDA
/// C++ twin. Loops whose trip count is known only at run time are not
/// affected.
pub const UNROLL_THRESHOLD: u32 = 1000;

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

/// Set in the environment, a build keeps the PTX the last one wrote, where
/// there is one, instead of compiling the kernel crate again. It is for
/// tools that rebuild the host many times only to run its kernels on the
/// emulator, mutation testing above all (`tools/mutate-guards`): the PTX
/// the host then embeds is no longer its source's.
pub const REUSE_PTX: &str = "GPU_BUILDER_REUSE_PTX";

/// Why a kernel crate could not be compiled to PTX.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn error(message: impl Into<String>) -> Error {
    Error(message.into())
}

/// Compiles one kernel crate to PTX: see the crate's documentation.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    kernel_crate: PathBuf,
    unroll_threshold: u32,
}

/// The PTX files a build wrote, oldest architecture first.
#[derive(Clone, Debug)]
pub struct Built {
    /// `(architecture, path)`, e.g. `("sm_75", OUT_DIR/kernels.ptx)`.
    pub files: Vec<(&'static str, PathBuf)>,
}

impl PtxBuilder {
    /// The kernel crate at `kernel_crate`, a path relative to the build
    /// script's crate (or absolute).
    pub fn new(kernel_crate: impl Into<PathBuf>) -> Self {
        Self {
            kernel_crate: kernel_crate.into(),
            unroll_threshold: UNROLL_THRESHOLD,
        }
    }

    /// LLVM's unrolling threshold for the kernels (see [`UNROLL_THRESHOLD`]
    /// for the default's reason).
    pub fn unroll_threshold(mut self, threshold: u32) -> Self {
        self.unroll_threshold = threshold;
        self
    }

    /// Compiles the crate for every architecture at once, into `OUT_DIR`.
    pub fn build(self) -> Result<Built, Error> {
        // A crate that holds its kernels and launches them too runs its
        // build script again inside its own build for the GPU: there,
        // nothing is left to compile.
        if env::var("TARGET").is_ok_and(|target| target.starts_with("nvptx")) {
            return Ok(Built { files: Vec::new() });
        }
        let manifest_dir = env_path("CARGO_MANIFEST_DIR")?;
        let out_dir = env_path("OUT_DIR")?;
        let crate_dir = manifest_dir.join(&self.kernel_crate);
        let (name, local) = watch(&crate_dir)?;
        let lib = name.replace('-', "_");
        let ptx_file = |suffix: &str| out_dir.join(format!("{lib}{suffix}.ptx"));
        println!("cargo::rerun-if-env-changed={REUSE_PTX}");
        if env::var_os(REUSE_PTX).is_some() {
            let files: Vec<_> = TARGETS
                .iter()
                .map(|&(cpu, suffix, _)| (cpu, ptx_file(suffix)))
                .collect();
            if files.iter().all(|(_, file)| file.is_file()) {
                println!("cargo::warning={REUSE_PTX} is set: {name}'s PTX is the last build's");
                return Ok(Built { files });
            }
        }
        check_toolchain()?;
        let target_spec = out_dir.join(format!("{TARGET}.json"));
        write_target_spec(&target_spec)?;
        // Every build at once: each is one rustc process for most of its time.
        let mut builds = Vec::new();
        for &(cpu, suffix, features) in &TARGETS {
            let target_dir = nested_target_dir(&out_dir, cpu);
            let child = nested_build(
                &crate_dir,
                &local,
                &target_spec,
                &target_dir,
                (cpu, features),
                self.unroll_threshold,
            )
            .spawn()
            .map_err(|e| {
                error(format!(
                    "could not run cargo for {}: {e}",
                    crate_dir.display()
                ))
            })?;
            builds.push((child, target_dir, cpu, suffix));
        }
        let mut files = Vec::new();
        for (mut child, target_dir, cpu, suffix) in builds {
            let status = child
                .wait()
                .map_err(|e| error(format!("could not wait for cargo: {e}")))?;
            if !status.success() {
                return Err(error(format!(
                    "compiling {name} to PTX for {cpu} failed (the errors are above)"
                )));
            }
            let ptx = target_dir
                .join(TARGET)
                .join(format!("release/deps/{lib}.s"));
            let file = ptx_file(suffix);
            copy_ptx(&ptx, &file)?;
            files.push((cpu, file));
        }
        Ok(Built { files })
    }
}

/// Where the nested build for `cpu` works: `gpu/CPU` in the outer build's
/// target directory (`OUT_DIR` is `TARGET_DIR/[TRIPLE/]PROFILE/build/
/// PACKAGE-HASH/out`), shared by every kernel crate and every profile of
/// that build, so that `core` and the runtime, compiled for the GPU, are
/// built and stored once for all of them (a nested build is the same
/// whatever the outer profile; cargo's lock takes the builds in turn).
/// Elsewhere, under `OUT_DIR`.
fn nested_target_dir(out_dir: &Path, cpu: &str) -> PathBuf {
    let mut ancestors = out_dir.ancestors();
    match (ancestors.nth(2), ancestors.nth(1)) {
        (Some(build), Some(target)) if build.file_name().is_some_and(|name| name == "build") => {
            target.join("gpu").join(cpu)
        }
        _ => out_dir.join(format!("gpu-target-{cpu}")),
    }
}

fn env_path(key: &str) -> Result<PathBuf, Error> {
    env::var_os(key).map(PathBuf::from).ok_or_else(|| {
        error(format!(
            "{key} is not set: gpu-builder runs in a build script"
        ))
    })
}

/// A nightly rustc with the standard library's sources, which the build
/// compiles `core` from.
fn check_toolchain() -> Result<(), Error> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let run = |args: &[&str]| -> Result<String, Error> {
        let output = Command::new(&rustc)
            .args(args)
            .output()
            .map_err(|e| error(format!("could not run rustc: {e}")))?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let version = run(&["--version"])?;
    if !version.contains("nightly") {
        return Err(error(format!(
            "{version} is not a nightly: the NVPTX build needs -Zbuild-std (pin a nightly in rust-toolchain.toml)"
        )));
    }
    let sysroot = PathBuf::from(run(&["--print", "sysroot"])?);
    let core = sysroot.join("lib/rustlib/src/rust/library/core");
    if !core.is_dir() {
        return Err(error(format!(
            "no source of core at {}: add the rust-src component (rustup component add rust-src)",
            core.display()
        )));
    }
    Ok(())
}

/// Tells cargo to rerun the build when the kernel crate at `crate_dir`, or
/// a path dependency it has on the GPU, changes; returns its name and
/// theirs.
fn watch(crate_dir: &Path) -> Result<(String, Vec<String>), Error> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .output()
        .map_err(|e| error(format!("could not run cargo metadata: {e}")))?;
    if !output.status.success() {
        return Err(error(format!(
            "no kernel crate at {}: {}",
            crate_dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| error(format!("cargo metadata printed no JSON: {e}")))?;
    let manifest = crate_dir
        .join("Cargo.toml")
        .canonicalize()
        .map_err(|e| error(format!("no kernel crate at {}: {e}", crate_dir.display())))?;
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let local = |id: &str| {
        packages
            .iter()
            .find(|package| package["id"] == id && package["source"].is_null())
    };
    let root = packages
        .iter()
        .find(|package| {
            package["manifest_path"]
                .as_str()
                .map(PathBuf::from)
                .as_deref()
                == Some(&manifest)
        })
        .ok_or_else(|| {
            error(format!(
                "cargo metadata does not list {}",
                manifest.display()
            ))
        })?;
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut pending = vec![root["id"].as_str().unwrap_or_default().to_string()];
    let mut seen = Vec::new();
    let mut names = Vec::new();
    while let Some(id) = pending.pop() {
        if seen.contains(&id) {
            continue;
        }
        let Some(package) = local(&id) else { continue };
        if let Some(dir) = package["manifest_path"]
            .as_str()
            .map(Path::new)
            .and_then(Path::parent)
        {
            println!("cargo::rerun-if-changed={}", dir.join("src").display());
            println!(
                "cargo::rerun-if-changed={}",
                dir.join("Cargo.toml").display()
            );
        }
        let node = nodes.iter().find(|node| node["id"] == id.as_str());
        for dep in node
            .and_then(|node| node["deps"].as_array())
            .into_iter()
            .flatten()
        {
            // Dependencies for the host only (the emulator) do not reach the PTX.
            let on_gpu = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|kind| kind["kind"].is_null() && kind["target"].is_null());
            if on_gpu && let Some(pkg) = dep["pkg"].as_str() {
                pending.push(pkg.to_string());
            }
        }
        if let Some(name) = package["name"].as_str() {
            names.push(name.to_string());
        }
        seen.push(id);
    }
    Ok((root["name"].as_str().unwrap_or_default().to_string(), names))
}

/// The nested cargo that compiles the kernel crate at `crate_dir` to PTX
/// for `cpu` with target `features`; `local` are its own and its path
/// dependencies' names.
fn nested_build(
    crate_dir: &Path,
    local: &[String],
    target_spec: &Path,
    target_dir: &Path,
    (cpu, features): (&str, &str),
    unroll_threshold: u32,
) -> Command {
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
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
        .current_dir(crate_dir)
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
                format!("-Ctarget-feature={features}"),
                format!("-Cllvm-args=-unroll-threshold={unroll_threshold}"),
            ]
            .join("\x1f"),
        )
        // A workspace may turn overflow checks on for the emulated kernels
        // and runtime; on the GPU they would only add branches to a trap.
        .args(local.iter().flat_map(|name| {
            [
                "--config".to_string(),
                format!("profile.release.package.{name}.overflow-checks=false"),
            ]
        }))
        .args([
            "rustc",
            "--lib",
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
fn write_target_spec(path: &Path) -> Result<(), Error> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .args(["-Zunstable-options", "--print", "target-spec-json"])
        .args(["--target", "nvptx64-nvidia-cuda"])
        .output()
        .map_err(|e| error(format!("could not run rustc: {e}")))?;
    if !output.status.success() {
        return Err(error(format!(
            "rustc could not print the nvptx64 target's spec: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let mut spec: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&output.stdout)
            .map_err(|e| error(format!("rustc printed a target spec that is not JSON: {e}")))?;
    let layout = spec["data-layout"].as_str().unwrap_or_default();
    let (endianness, rest) = layout
        .split_once('-')
        .ok_or_else(|| error(format!("an unexpected data layout: {layout}")))?;
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
        .map_err(|e| error(format!("could not write {}: {e}", path.display())))
}

/// The PTX at `from`, with each kernel's launch bounds in its entry, to `to`.
fn copy_ptx(from: &Path, to: &Path) -> Result<(), Error> {
    let ptx = std::fs::read_to_string(from)
        .map_err(|e| error(format!("no PTX at {}: {e}", from.display())))?;
    if !ptx.contains(".entry") {
        return Err(error(format!(
            "the PTX at {} has no kernel entry point: declare kernels with gpu_std::kernels!",
            from.display()
        )));
    }
    let ptx = with_launch_bounds(&ptx)?;
    std::fs::write(to, ptx).map_err(|e| error(format!("could not write {}: {e}", to.display())))
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
fn with_launch_bounds(ptx: &str) -> Result<String, Error> {
    let mut bounds = HashMap::new();
    let mut lines = Vec::new();
    for line in ptx.lines() {
        match line.strip_prefix("// launch_bounds ") {
            Some(declared) => {
                let fields: Vec<&str> = declared.split(' ').collect();
                let [name, max_threads, min_blocks] = fields[..] else {
                    return Err(error(format!(
                        "a launch bounds line of the PTX is malformed: {line}"
                    )));
                };
                let mut directives = format!(".maxntid {max_threads}, 1, 1\n");
                if min_blocks != "0" {
                    directives.push_str(&format!(".minnctapersm {min_blocks}\n"));
                }
                if bounds.insert(name, directives).is_some() {
                    return Err(error(format!("kernel {name} has launch bounds twice")));
                }
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
                .ok_or_else(|| error(format!("kernel {name} has no launch bounds")))?;
            placed.push_str(&directives);
        }
        placed.push_str(line);
        placed.push('\n');
    }
    let mut orphans: Vec<_> = bounds.into_keys().collect();
    orphans.sort();
    if !orphans.is_empty() {
        return Err(error(format!(
            "launch bounds of kernels the PTX does not define: {orphans:?}"
        )));
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "// launch_bounds copy 256 4\n// launch_bounds fill 128 0\n\
        .visible .entry copy(\n\t.param .u64 a\n)\n{\n\tret;\n}\n\
        .visible .entry fill(\n)\n{\n\tret;\n}\n";

    #[test]
    fn launch_bounds_move_into_their_entries() {
        let placed = with_launch_bounds(PTX).unwrap();
        assert!(placed.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 4\n{\n\tret;"));
        assert!(placed.contains("fill(\n)\n.maxntid 128, 1, 1\n{"));
        assert!(!placed.contains("// launch_bounds"));
    }

    #[test]
    fn an_entry_without_bounds_or_bounds_without_an_entry_is_an_error() {
        let unbounded = PTX.replace("// launch_bounds fill 128 0\n", "");
        let error = with_launch_bounds(&unbounded).unwrap_err();
        assert_eq!(error.to_string(), "kernel fill has no launch bounds");
        let orphan = format!("// launch_bounds gone 32 0\n{PTX}");
        let error = with_launch_bounds(&orphan).unwrap_err();
        assert!(error.to_string().contains("[\"gone\"]"), "{error}");
    }

    #[test]
    fn nested_builds_share_the_target_directory_where_out_dir_is_cargo_s() {
        let shared = |out: &str| nested_target_dir(Path::new(out), "sm_80");
        assert_eq!(
            shared("/t/release/build/k-1f/out"),
            Path::new("/t/gpu/sm_80")
        );
        assert_eq!(
            shared("/t/x86_64-unknown-linux-gnu/debug/build/k-1f/out"),
            Path::new("/t/x86_64-unknown-linux-gnu/gpu/sm_80")
        );
        assert_eq!(
            shared("/elsewhere/out"),
            Path::new("/elsewhere/out/gpu-target-sm_80")
        );
    }
}

//! What the PTX the build produced must and must not contain, for every
//! kernel of every family.

use gpu_host::gpu::{entry_points, with_register_cap};
use locality::families::{self, Visitor};
use locality::family::Family;
use locality::gpu::PTX as BUILDS;

/// The build for every GPU from Turing on.
const PTX: &str = BUILDS.sm75;

/// The build for Ampere on.
const PTX_SM80: &str = BUILDS.sm80;

/// The body of one entry point in the sm_75 PTX: from its `.entry` line to
/// the closing brace.
fn body(entry_point: &str) -> &'static str {
    body_in(PTX, entry_point)
}

fn body_in(ptx: &'static str, entry_point: &str) -> &'static str {
    let start = ptx
        .find(&format!(".entry {entry_point}("))
        .unwrap_or_else(|| panic!("no entry point {entry_point}"));
    let length = ptx[start..]
        .find("\n}\n")
        .expect("every body ends with a closing brace");
    &ptx[start..start + length]
}

/// The statically sized shared arrays the PTX declares (`shared_array!`).
fn static_shared_arrays() -> Vec<&'static str> {
    PTX.lines()
        .filter_map(|line| line.strip_prefix(".shared .align 16 .b8 "))
        .filter_map(|declaration| declaration.split('[').next())
        .collect()
}

/// Every kernel's entry points, and whether each has shared memory: its launch contract asks
/// for some (on its family's first test shape), or it takes the address of
/// a static shared array.
fn kernels_and_shared_memory() -> Vec<(&'static str, bool)> {
    struct Collect(Vec<(&'static str, bool)>);
    impl Visitor for Collect {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            let problem = F::problem(F::test_shapes()[0])?;
            for kernel in F::KERNELS {
                for entry in kernel.entries() {
                    let declared = static_shared_arrays()
                        .iter()
                        .any(|array| body(entry).contains(&format!(", {array};")));
                    let shared = (kernel.launch)(&problem).shared_bytes > 0 || declared;
                    self.0.push((entry, shared));
                }
            }
            Ok(())
        }
    }
    let mut collect = Collect(Vec::new());
    families::visit(&mut collect).unwrap();
    collect.0
}

#[test]
fn a_static_shared_array_is_declared_with_its_size() {
    assert!(
        PTX.contains(".shared .align 16 .b8 BANK_TILE[4096];"),
        "the bank-conflict tile is not a 4 KiB static shared array"
    );
    assert!(body("bank_conflicts").contains(", BANK_TILE;"));
}

/// Every kernel's entry points: its name, or one per instance.
fn every_entry_point() -> Vec<&'static str> {
    let kernels = families::kernels();
    kernels.iter().flat_map(|kernel| kernel.entries()).collect()
}

#[test]
fn every_entry_point_is_defined_and_no_other() {
    let mut defined: Vec<&str> = entry_points(PTX).collect();
    let mut expected = every_entry_point();
    defined.sort_unstable();
    expected.sort_unstable();
    assert_eq!(defined, expected);
}

#[test]
fn kernels_with_shared_memory_stage_through_it_between_barriers() {
    let kernels = kernels_and_shared_memory();
    assert!(kernels.iter().any(|&(_, shared)| shared));
    for (kernel, _) in kernels.into_iter().filter(|&(_, shared)| shared) {
        let body = body(kernel);
        assert!(
            body.contains("st.shared"),
            "{kernel} never writes shared memory"
        );
        assert!(
            body.contains("ld.shared"),
            "{kernel} never reads shared memory"
        );
        assert!(body.contains("bar.sync"), "{kernel} has no barrier");
    }
}

/// The build gives shared memory 32-bit pointers (see `host/build.rs`), as
/// CUDA C++ does: a 64-bit shared address costs a widening and a 64-bit add
/// per access, and keeps ptxas from folding offsets into the loads.
#[test]
fn shared_memory_is_addressed_with_32_bit_registers() {
    let accesses: Vec<&str> = PTX
        .lines()
        .filter(|line| line.contains("ld.shared") || line.contains("st.shared"))
        .collect();
    assert!(!accesses.is_empty());
    for access in accesses {
        assert!(
            !access.contains("[%rd"),
            "a shared-memory access through a 64-bit address: {}",
            access.trim()
        );
    }
}

/// Overflow checks are on for the kernels' host build and off for the PTX
/// (`host/build.rs`): on the GPU they could only add branches to a trap.
#[test]
fn the_ptx_has_no_overflow_checks() {
    assert!(
        !PTX.contains("_overflow"),
        "the PTX build checks for overflow"
    );
}

#[test]
fn kernels_without_shared_memory_use_none_and_no_barrier() {
    for (kernel, _) in kernels_and_shared_memory()
        .into_iter()
        .filter(|&(_, shared)| !shared)
    {
        let body = body(kernel);
        assert!(!body.contains(".shared"), "{kernel} uses shared memory");
        assert!(!body.contains("bar.sync"), "{kernel} has a barrier");
    }
}

/// Local memory only where a kernel's lesson is local memory
/// (`#[launch(contract, local_memory)]`), and there it is.
#[test]
fn only_the_local_memory_lesson_uses_local_memory() {
    struct Check(Vec<&'static str>);
    impl Visitor for Check {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for kernel in F::KERNELS {
                for (ptx, entry) in [PTX, PTX_SM80]
                    .into_iter()
                    .flat_map(|ptx| kernel.entries().into_iter().map(move |entry| (ptx, entry)))
                {
                    let local = body_in(ptx, entry).contains(".local");
                    assert_eq!(local, kernel.local_memory, "{entry}");
                }
                if kernel.local_memory {
                    self.0.push(kernel.name);
                }
            }
            Ok(())
        }
    }
    let mut check = Check(Vec::new());
    families::visit(&mut check).unwrap();
    assert_eq!(check.0, ["array_in_local_memory"]);
}

#[test]
fn every_called_function_is_defined_in_the_ptx() {
    assert!(
        !PTX.contains(".extern .func"),
        "the PTX declares a function it does not define"
    );
    for line in PTX
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("call"))
    {
        let callee = line
            .split_whitespace()
            .nth(1)
            .expect("a call names its callee")
            .trim_end_matches([',', ';']);
        assert!(
            PTX.contains(&format!(".func {callee}(")),
            "{callee} is called but not defined"
        );
    }
}

#[test]
fn targets_compute_capability_7_5() {
    assert!(
        PTX.contains("\n.target sm_75\n"),
        "the PTX should target sm_75, the oldest supported GPU"
    );
    assert!(PTX.contains("\n.address_size 64\n"));
}

#[test]
fn gpus_from_compute_capability_8_0_get_the_ptx_with_asynchronous_copies() {
    assert!(PTX_SM80.contains("\n.target sm_80\n"));
    assert_eq!(BUILDS.for_capability((7, 5)), PTX);
    for capability in [(8, 0), (8, 6), (9, 0), (12, 0)] {
        assert_eq!(BUILDS.for_capability(capability), PTX_SM80);
    }
    let entry_points = |ptx: &str| -> Vec<String> {
        ptx.lines()
            .filter(|line| line.starts_with(".visible .entry "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(entry_points(PTX), entry_points(PTX_SM80));
    // Eight 4-byte copies of A a thread per slice, and of B eight more or,
    // where B's rows are 16-byte aligned, two 16-byte ones; each started
    // before the loop and in it. Below 8.0 the same copies are loads and
    // stores.
    let pipelined = body_in(PTX_SM80, "matmul_pipelined");
    assert_eq!(pipelined.matches("cp.async.ca.shared.global").count(), 32);
    assert_eq!(pipelined.matches("cp.async.cg.shared.global").count(), 4);
    assert_eq!(pipelined.matches("cp.async.commit_group").count(), 2);
    assert_eq!(pipelined.matches("cp.async.wait_group 0").count(), 2);
    // The 128×256 tiles in slices of 8: four copies of A a thread and eight
    // of B (two 16-byte ones), started before the loop and in it; each
    // waits before the loop and at the last step of each slice.
    for name in ["matmul_wide", "matmul_rasterised"] {
        let body = body_in(PTX_SM80, name);
        assert_eq!(
            body.matches("cp.async.ca.shared.global").count(),
            24,
            "{name}"
        );
        assert_eq!(
            body.matches("cp.async.cg.shared.global").count(),
            4,
            "{name}"
        );
        assert_eq!(body.matches("cp.async.commit_group").count(), 2, "{name}");
        assert_eq!(body.matches("cp.async.wait_group 0").count(), 2, "{name}");
    }
    assert!(!PTX.contains("cp.async"));
    assert!(!body_in(PTX_SM80, "matmul_warptiled").contains("cp.async"));
}

#[test]
fn global_memory_views_are_plain_pointers_in_the_ptx() {
    // A view is one 64-bit pointer parameter, as a raw pointer would be.
    let body = body("matmul_naive");
    let parameters = body.matches(".param .u64 .ptr").count();
    assert_eq!(parameters, 3, "{body}");
}

#[test]
fn fused_multiply_adds_where_the_kernels_ask_for_them() {
    for kernel in [
        "matmul_naive",
        "matmul_tiled_16",
        "matmul_tiled_32",
        "gemv_col_major_f32",
    ] {
        assert!(
            body(kernel).contains("fma.rn.f32"),
            "{kernel} has no fma.rn.f32"
        );
    }
    assert!(body("gemv_col_major_f64").contains("fma.rn.f64"));
}

/// What follows a twin's optional `__launch_bounds__(...)` (its parentheses
/// balanced) and the whitespace after it: the kernel's name, then `(`.
fn skip_launch_bounds(declaration: &str) -> &str {
    let Some(bounds) = declaration.strip_prefix("__launch_bounds__") else {
        return declaration;
    };
    let mut depth = 0;
    for (at, c) in bounds.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => continue,
        }
        if depth == 0 {
            return bounds[at + 1..].trim_start();
        }
    }
    panic!("unbalanced __launch_bounds__ in {declaration}");
}

#[test]
fn every_kernel_has_a_cuda_cpp_twin_and_no_twin_lacks_a_kernel() {
    let mut twins: Vec<&str> = kernels::CUDA_TWINS
        .split("extern \"C\" __global__ void ")
        .skip(1)
        .filter_map(|rest| skip_launch_bounds(rest).split('(').next())
        .collect();
    // The gemv twins are declared through a macro: kernel##_f32 and _f64.
    let gemv: Vec<String> = kernels::CUDA_TWINS
        .lines()
        .filter_map(|line| line.strip_prefix("GEMV_ENTRY_POINTS("))
        .flat_map(|rest| {
            let kernel = rest.trim_end_matches(')');
            [format!("{kernel}_f32"), format!("{kernel}_f64")]
        })
        .collect();
    // The shuffled blur's instances too: blur_shuffled_C_R.
    let shuffled: Vec<String> = kernels::CUDA_TWINS
        .lines()
        .filter_map(|line| line.strip_prefix("SHUFFLED_INSTANCE("))
        .map(|rest| {
            let values = rest.trim_end_matches(')').replace(", ", "_");
            format!("blur_shuffled_{values}")
        })
        .collect();
    twins.retain(|name| !name.contains("##"));
    twins.extend(gemv.iter().chain(&shuffled).map(String::as_str));
    let mut kernels = every_entry_point();
    twins.sort_unstable();
    kernels.sort_unstable();
    assert_eq!(twins, kernels);
}

#[test]
fn the_gemv_ladder_uses_the_instructions_its_lessons_name() {
    let mut checked = 0;
    for name in every_entry_point() {
        let body = body(name);
        let vector = name.contains("_vector_");
        if name.contains("_warp_") || vector {
            assert!(
                body.contains("shfl.sync.bfly.b32"),
                "{name} sums without shuffles"
            );
            checked += 1;
        }
        if vector {
            let load = if name.ends_with("f32") {
                "ld.global.nc.v4.b32"
            } else {
                "ld.global.nc.v2.b64"
            };
            assert!(body.contains(load), "{name} has no 16-byte load");
        }
    }
    assert_eq!(checked, 6, "the warp and vector kernels, in f32 and f64");
}

#[test]
fn the_separable_blurs_move_words_and_the_running_one_scans_by_shuffles() {
    for name in ["blur_separable", "blur_running", "blur_specialised"] {
        let body = body(name);
        assert!(body.contains("ld.global.b32"), "{name} has no 4-byte load");
        assert!(body.contains("st.global.b32"), "{name} has no 4-byte store");
    }
    assert_eq!(body("blur_running").matches("shfl.sync.up.b32").count(), 5);
    // Five per channel, in each of the four channel counts it is compiled for.
    assert_eq!(
        body("blur_specialised").matches("shfl.sync.up.b32").count(),
        5 * (1 + 2 + 3 + 4)
    );
    assert!(!body("blur_separable").contains("shfl.sync"));
}

#[test]
fn the_matmul_ladder_uses_the_instructions_its_lessons_name() {
    // Slices of eight unrolled: eight FMAs a thread eight times in the 1-D
    // kernel, eight 8×8 outer products in the 2-D one. The vectorised and
    // warp-tiled kernels take one step along a slice of 16 (a loop): an 8×8
    // outer product from four 16-byte shared loads. The pipelined ones step
    // in pairs, each on fragments loaded the step before: a pair in the
    // loop along the slice (8×8 outer products from 4 loads each, or, from
    // the wide kernel on, 8×16 ones from 6) and the slice's last pair after
    // it. The next slice's first fragments LLVM loads at the slice's head,
    // some of the 16-byte loads split into four 4-byte ones.
    for (name, fmas, vector_loads) in [
        ("matmul_coarse_1d", 64, 0),
        ("matmul_blocked_2d", 512, 0),
        ("matmul_vectorised", 64, 4),
        ("matmul_warptiled", 64, 4),
        ("matmul_pipelined", 4 * 64, 2 + 2 * 4 + 4),
        ("matmul_wide", 4 * 128, 4 + 2 * 6 + 6),
        ("matmul_rasterised", 4 * 128, 4 + 2 * 6 + 6),
    ] {
        let body = body(name);
        assert_eq!(body.matches("fma.rn.f32").count(), fmas, "{name}");
        assert_eq!(
            body.matches("ld.shared.v4.b32").count(),
            vector_loads,
            "{name}"
        );
    }
}

/// The access-width lesson's claim, in the PTX: a pair of `f32` aligned to
/// 4 bytes is two 4-byte loads, aligned to 8 one 8-byte load; 16 bytes
/// a thread is one vector load.
#[test]
fn a_pairs_alignment_decides_its_load_width() {
    for ptx in [PTX, PTX_SM80] {
        let loads = |kernel: &str| -> Vec<&str> {
            body_in(ptx, kernel)
                .lines()
                .filter(|line| line.contains("ld.global") && !line.contains(".b8"))
                .map(str::trim)
                .collect()
        };
        let align_4 = loads("copy_pairs_align_4");
        assert_eq!(align_4.len(), 2, "{align_4:?}");
        assert!(
            align_4.iter().all(|load| load.starts_with("ld.global.b32")),
            "{align_4:?}"
        );
        let align_8 = loads("copy_pairs_align_8");
        assert_eq!(align_8.len(), 1, "{align_8:?}");
        assert!(align_8[0].starts_with("ld.global.b64"), "{align_8:?}");
        let wide = loads("copy_bytes_16");
        assert_eq!(wide.len(), 1, "{wide:?}");
        assert!(wide[0].starts_with("ld.global.nc.v4.b32"), "{wide:?}");
    }
}

/// The constant array the host sets by name is declared under that name,
/// 256 floats, and read with `ld.const`.
#[test]
fn the_coefficients_are_a_constant_array_read_with_ld_const() {
    for ptx in [PTX, PTX_SM80] {
        let declaration = format!(
            ".visible .const .align 4 .b8 {}[1024];",
            kernels::constant::TABLE
        );
        assert!(ptx.contains(&declaration), "no {declaration}");
        let body = body_in(ptx, "coefficients_from_constant");
        assert!(body.contains("ld.const.b32"), "no ld.const");
        assert!(!body_in(ptx, "coefficients_from_global").contains("ld.const"));
    }
}

/// The register lesson's cap goes on its one entry, after its launch
/// bounds and before its body, where PTX puts performance directives.
#[test]
fn a_register_cap_is_a_maxnreg_on_its_entry_alone() {
    // `body_in` reads the build's own PTX, which lives as long as the test.
    let capped: &'static str = with_register_cap(PTX, "array_in_registers", 32)
        .unwrap()
        .leak();
    assert_eq!(capped.matches(".maxnreg").count(), 1);
    let entry = body_in(capped, "array_in_registers");
    let (parameters, body) = entry.split_once("\n{").unwrap();
    assert!(
        parameters.ends_with(".minnctapersm 2\n.maxnreg 32"),
        "{parameters}"
    );
    assert!(!body.contains(".maxnreg"));
    assert_eq!(capped.replace("\n.maxnreg 32", ""), PTX);
    assert!(with_register_cap(PTX, "no_such_kernel", 32).is_none());
}

/// Every entry carries its declaration's launch bounds, in both builds:
/// `.maxntid` always, `.minnctapersm` where the kernel declares the fewest
/// blocks, between its parameters and its body, as ptxas reads them.
#[test]
fn every_entry_carries_its_launch_bounds() {
    for kernel in families::kernels() {
        let mut directives = format!(")\n.maxntid {}, 1, 1\n", kernel.bounds.max_threads);
        if let Some(blocks) = kernel.bounds.min_blocks {
            directives.push_str(&format!(".minnctapersm {blocks}\n"));
        }
        directives.push('{');
        for (ptx, entry) in [PTX, PTX_SM80]
            .into_iter()
            .flat_map(|ptx| kernel.entries().into_iter().map(move |entry| (ptx, entry)))
        {
            assert!(
                body_in(ptx, entry).contains(&directives),
                "{entry}'s entry does not carry {directives:?}"
            );
        }
    }
    assert!(
        !PTX.contains("// launch_bounds"),
        "a launch bounds line was left in the PTX"
    );
}

/// Each kernel's bounds are its contract's block, on every test shape: not
/// smaller (the GPU would refuse the launch), and not larger (ptxas would
/// allocate registers for blocks that never come).
#[test]
fn launch_bounds_are_the_block_each_contract_launches() {
    struct Check;
    impl Visitor for Check {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for shape in F::test_shapes() {
                let problem = F::problem(shape)?;
                for kernel in F::KERNELS {
                    let (x, y, z) = (kernel.launch)(&problem).block;
                    assert_eq!(x * y * z, kernel.bounds.max_threads, "{}", kernel.name);
                }
            }
            Ok(())
        }
    }
    families::visit(&mut Check).unwrap();
}

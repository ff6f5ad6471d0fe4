//! What each build targets and leaves out: sm_75 for every GPU from Turing
//! on, sm_80 with asynchronous copies from Ampere on, sm_90 with bulk
//! copies from Hopper on, sm_90a for Hopper alone, no overflow checks, and
//! no call to a function it does not define.

use locality::gpu::PTX as BUILDS;

use crate::builds::{PTX, PTX_SM80, PTX_SM90, PTX_SM90A, body_in, every_entry_point};

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
    for capability in [(8, 0), (8, 6), (8, 9)] {
        assert_eq!(BUILDS.for_capability(capability), PTX_SM80);
    }
    let entry_points = |ptx: &str| -> Vec<String> {
        ptx.lines()
            .filter(|line| line.starts_with(".visible .entry "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(entry_points(PTX), entry_points(PTX_SM80));
    assert_eq!(entry_points(PTX), entry_points(PTX_SM90));
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

/// A 9.0 GPU runs Hopper's arch-specific build, which every newer GPU
/// lacks; each kernel that does not need its instructions is the same
/// code as in the portable sm_90 build, so that what the H100 runs is what
/// a newer GPU runs.
#[test]
fn a_compute_capability_9_0_gpu_gets_the_arch_specific_ptx() {
    assert!(PTX_SM90A.contains("\n.version 8.3\n.target sm_90a\n"));
    assert_eq!(BUILDS.for_capability((9, 0)), PTX_SM90A);
    let arch_specific: Vec<&str> = locality::families::kernels()
        .iter()
        .filter(|kernel| kernel.arch_specific)
        .flat_map(|kernel| kernel.entries())
        .collect();
    for entry in every_entry_point() {
        if !arch_specific.contains(&entry) {
            let [a, portable] =
                [PTX_SM90A, PTX_SM90].map(|ptx| numbered_apart(body_in(ptx, entry)));
            assert_eq!(a, portable, "{entry}");
        }
    }
}

/// `body` without the numbers of its labels, local frame and call
/// sequences (`$L__BB12_3`, `__local_depot12`, `callseq 12`), which count
/// what comes before it in its module: the builds differ in the
/// arch-specific kernels.
fn numbered_apart(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = ["$L__BB", "__local_depot", "callseq "]
        .iter()
        .filter_map(|name| rest.find(name).map(|at| at + name.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = rest[at..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// The bulk copies and transaction barriers are in the sm_90 build only,
/// which needs PTX ISA 8.3 (the tensor-map fence; the bulk copies 8.0);
/// the older builds hold the kernel as a trap,
/// which the host never launches.
#[test]
fn gpus_from_compute_capability_9_0_get_the_ptx_with_bulk_copies() {
    assert!(PTX_SM90.contains("\n.version 8.3\n.target sm_90\n"));
    for capability in [(10, 0), (12, 0)] {
        assert_eq!(BUILDS.for_capability(capability), PTX_SM90);
    }
    let bulk = body_in(PTX_SM90, "reverse_bulk");
    for instruction in [
        "mbarrier.init.shared::cta.b64",
        "fence.proxy.async.shared::cta",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        "mbarrier.try_wait.parity.shared::cta.b64",
    ] {
        assert_eq!(bulk.matches(instruction).count(), 1, "{instruction}");
    }
    let tensor = body_in(PTX_SM90, "transpose_tensor");
    for instruction in [
        "fence.proxy.tensormap::generic.acquire.sys",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
    ] {
        assert_eq!(tensor.matches(instruction).count(), 1, "{instruction}");
    }
    for older in [PTX, PTX_SM80] {
        let body = body_in(older, "transpose_tensor");
        assert!(body.contains("trap;") && !body.contains("tensormap"));
        let body = body_in(older, "reverse_bulk");
        assert!(body.contains("trap;") && !body.contains("mbarrier"));
        assert!(!older.contains("cp.async.bulk"));
    }
    assert!(body_in(PTX_SM90, "reverse_async").contains("cp.async.cg.shared.global"));
}

/// The cluster kernels map the next block's memory and wait at cluster
/// barriers in the sm_90 build, and are a trap in the older ones.
#[test]
fn the_cluster_kernels_map_a_neighbours_memory_in_the_sm_90_build_only() {
    for kernel in ["sum_neighbour", "chase_neighbour"] {
        let body = body_in(PTX_SM90, kernel);
        for instruction in [
            "mov.u32 %r5, %cluster_nctarank;",
            "mapa.u64",
            "barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;",
        ] {
            let name = instruction.split_whitespace().next().unwrap();
            assert!(body.contains(name), "{kernel}: {instruction}");
        }
        assert_eq!(body.matches("barrier.cluster.wait").count(), 2, "{kernel}");
        for older in [PTX, PTX_SM80] {
            let body = body_in(older, kernel);
            assert!(body.contains("trap;") && !body.contains("mapa"), "{kernel}");
        }
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

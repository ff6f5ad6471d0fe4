//! What the PTX the build produced must and must not contain.

use locality::device::PTX;
use locality::kernels::entry_points;

/// The body of one entry point: from its `.entry` line to the closing brace.
fn body(entry_point: &str) -> &'static str {
    let start = PTX
        .find(&format!(".entry {entry_point}("))
        .unwrap_or_else(|| panic!("no entry point {entry_point}"));
    let length = PTX[start..]
        .find("\n}\n")
        .expect("every body ends with a closing brace");
    &PTX[start..start + length]
}

const TILED: [&str; 5] = [
    "matmul_tiled_16",
    "matmul_tiled_32",
    "gemv_col_major_shared_x_f32",
    "gemv_col_major_shared_x_f64",
    "blur_tiled",
];

#[test]
fn every_entry_point_is_defined_and_no_other() {
    let defined: Vec<&str> = PTX
        .lines()
        .filter_map(|line| line.strip_prefix(".visible .entry "))
        .map(|rest| rest.trim_end_matches('('))
        .collect();
    let mut expected: Vec<&str> = entry_points().collect();
    let mut defined_sorted = defined.clone();
    expected.sort_unstable();
    defined_sorted.sort_unstable();
    assert_eq!(defined_sorted, expected);
}

#[test]
fn tiled_kernels_stage_through_shared_memory_between_barriers() {
    for kernel in TILED {
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

#[test]
fn untiled_kernels_use_no_shared_memory_and_no_barrier() {
    for kernel in entry_points().filter(|name| !TILED.contains(name)) {
        let body = body(kernel);
        assert!(!body.contains(".shared"), "{kernel} uses shared memory");
        assert!(!body.contains("bar.sync"), "{kernel} has a barrier");
    }
}

#[test]
fn no_kernel_uses_local_memory() {
    for marker in [".local", "__local_depot", "%SP", "%SPL"] {
        assert!(
            !PTX.contains(marker),
            "the PTX uses local memory ({marker})"
        );
    }
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

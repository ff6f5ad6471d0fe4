//! The memory spaces each kernel uses: shared memory staged between
//! barriers where its contract asks for some, with 32-bit addresses, and
//! none elsewhere; local memory only in the local-memory lesson; the
//! constant array read with `ld.const`.

use locality::families::{self, Visitor};
use locality::family::Family;

use crate::builds::{PTX, PTX_SM80, PTX_SM90, PTX_SM90A, body, body_in, oldest_build_for};

/// The statically sized shared arrays the PTX declares (`shared_array!`).
fn static_shared_arrays() -> Vec<&'static str> {
    PTX.lines()
        .filter_map(|line| line.strip_prefix(".shared .align 16 .b8 "))
        .filter_map(|declaration| declaration.split('[').next())
        .collect()
}

/// The kernels whose threads each read back only what they copied into
/// shared memory themselves, and so need no barrier; at radius 0 the
/// staged blur copies its rows through none.
const OWN_SLOTS_ONLY: [&str; 1] = ["blur_staged"];

/// Every kernel's entry points, the oldest build that runs it, and
/// whether each has shared memory: its launch contract asks for some (on
/// any of its family's test shapes), or it takes the address of a static
/// shared array.
fn kernels_and_shared_memory() -> Vec<(&'static str, &'static str, bool)> {
    struct Collect(Vec<(&'static str, &'static str, bool)>);
    impl Visitor for Collect {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            let problems = F::test_shapes()
                .into_iter()
                .map(F::problem)
                .collect::<locality::Result<Vec<_>>>()?;
            for kernel in F::KERNELS {
                let asks = problems
                    .iter()
                    .any(|problem| (kernel.launch)(problem).shared_bytes > 0);
                for entry in kernel.entries() {
                    let declared = static_shared_arrays()
                        .iter()
                        .any(|array| body(entry).contains(&format!(", {array};")));
                    let shared = asks || declared;
                    self.0.push((
                        entry,
                        oldest_build_for(kernel.capability, kernel.arch_specific),
                        shared,
                    ));
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

#[test]
fn kernels_with_shared_memory_stage_through_it_between_barriers() {
    let kernels = kernels_and_shared_memory();
    assert!(kernels.iter().any(|&(.., shared)| shared));
    for (kernel, ptx, _) in kernels.into_iter().filter(|&(.., shared)| shared) {
        let body = body_in(ptx, kernel);
        let own_slots = OWN_SLOTS_ONLY.iter().any(|name| kernel.starts_with(name));
        if own_slots && !body.contains(".shared") {
            continue;
        }
        // Asynchronous, bulk and tensor copies write it without a store.
        assert!(
            body.contains("st.shared") || body.contains("cp.async"),
            "{kernel} never writes shared memory"
        );
        // A cluster's kernels read the shared memory another block staged
        // through the address `mapa` maps, between cluster barriers; the
        // tensor-core kernels read theirs into fragments with `ldmatrix`,
        // or multiply it where it is with `wgmma`.
        assert!(
            ["ld.shared", "mapa.u64", "ldmatrix", "wgmma.mma_async"]
                .iter()
                .any(|read| body.contains(read)),
            "{kernel} never reads shared memory"
        );
        assert!(
            own_slots || body.contains("bar.sync") || body.contains("barrier.cluster.wait"),
            "{kernel} has no barrier"
        );
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

#[test]
fn kernels_without_shared_memory_use_none_and_no_barrier() {
    for (kernel, ptx, _) in kernels_and_shared_memory()
        .into_iter()
        .filter(|&(.., shared)| !shared)
    {
        let body = body_in(ptx, kernel);
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
                // An arch-specific kernel is a trap in the other builds.
                let builds = if kernel.arch_specific {
                    vec![PTX_SM90A]
                } else {
                    vec![PTX, PTX_SM80, PTX_SM90]
                };
                for (ptx, entry) in builds
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

/// The constant array the host sets by name is declared under that name,
/// 256 floats, and read with `ld.const`.
#[test]
fn the_coefficients_are_a_constant_array_read_with_ld_const() {
    for ptx in [PTX, PTX_SM80, PTX_SM90] {
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

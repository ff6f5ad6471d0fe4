//! The entry points: every kernel's and no other, each with a CUDA C++
//! twin, its parameters plain pointers, its launch bounds and, where the
//! register lesson asks, a register cap.

use gpu_host::gpu::{entry_points, with_register_cap};
use locality::families::{self, Visitor};
use locality::family::Family;

use crate::builds::{PTX, PTX_SM80, PTX_SM90, body, body_in, every_entry_point};

#[test]
fn every_entry_point_is_defined_and_no_other() {
    assert_every_entry_point(entry_points(PTX).collect());
}

/// Asserts that `names` are the entry points of every kernel, in any
/// order.
fn assert_every_entry_point(mut names: Vec<&str>) {
    let mut expected = every_entry_point();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected);
}

#[test]
fn global_memory_views_are_plain_pointers_in_the_ptx() {
    // A view is one 64-bit pointer parameter, as a raw pointer would be.
    let body = body("matmul_naive");
    let parameters = body.matches(".param .u64 .ptr").count();
    assert_eq!(parameters, 3, "{body}");
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
    // The shuffled, staged and in-flight blurs' instances too:
    // blur_shuffled_C_R, blur_staged_C_R, blur_in_flight_C_R.
    let shuffled: Vec<String> = kernels::CUDA_TWINS
        .lines()
        .filter_map(|line| {
            [
                ("SHUFFLED_INSTANCE(", "shuffled"),
                ("STAGED_INSTANCE(", "staged"),
                ("IN_FLIGHT_INSTANCE(", "in_flight"),
            ]
            .iter()
            .find_map(|(prefix, kernel)| Some((*kernel, line.strip_prefix(prefix)?)))
        })
        .map(|(kernel, rest)| {
            let values = rest.trim_end_matches(')').replace(", ", "_");
            format!("blur_{kernel}_{values}")
        })
        .collect();
    // And the kernels of a macro whose first argument is the kernel's name.
    let named = kernels::CUDA_TWINS.lines().filter_map(|line| {
        let rest = ["COPY_AS(", "DSMEM_KERNEL("]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))?;
        rest.split([',', ')']).next()
    });
    // A macro's own body declares `name` or `kernel##_f32`: no kernel.
    twins.retain(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    twins.extend(gemv.iter().chain(&shuffled).map(String::as_str));
    twins.extend(named);
    assert_every_entry_point(twins);
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
        for (ptx, entry) in [PTX, PTX_SM80, PTX_SM90]
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

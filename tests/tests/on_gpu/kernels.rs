//! Every kernel against the CPU reference on the GPU, its twin and its
//! sm_75 build too (where it runs on Turing), every blur at every radius, and what the driver made
//! of each kernel.

use libtest_mimic::{Failed, Trial};
use locality::Gpu;
use locality::families::blur::{Blur, BlurShape, max_radius};
use locality::families::{self, Visitor};
use locality::family::{Declaration, Family};
use locality_tests::{check_kernel, quiet_seed};

use crate::devices::{failed, gpu, gpu_sm75, twin};

/// Every kernel of every family, and its CUDA C++ twin, on each of its
/// family's test shapes it is made for, with a fresh seed that a failure names.
pub fn kernel_trials() -> Vec<Trial> {
    struct Trials(Vec<Trial>);
    impl Visitor for Trials {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for kernel in F::KERNELS {
                let shapes = F::test_shapes().into_iter();
                for shape in shapes.filter(|&shape| F::made_for(kernel, shape).is_ok()) {
                    self.0.push(Trial::test(
                        format!("{} {shape:?}", kernel.name),
                        move || {
                            check_kernel::<Gpu, F>(gpu()?, kernel, shape, quiet_seed())
                                .map_err(Failed::from)
                        },
                    ));
                    let name = format!("{} (CUDA C++ twin) {shape:?}", kernel.name);
                    self.0.push(Trial::test(name, move || {
                        check_kernel::<Gpu, F>(twin()?, kernel, shape, quiet_seed())
                            .map_err(Failed::from)
                    }));
                    if kernel.capability > (7, 5) {
                        continue;
                    }
                    let name = format!("{} (sm_75 PTX) {shape:?}", kernel.name);
                    self.0.push(Trial::test(name, move || {
                        check_kernel::<Gpu, F>(gpu_sm75()?, kernel, shape, quiet_seed())
                            .map_err(Failed::from)
                    }));
                }
            }
            Ok(())
        }
    }
    let mut trials = Trials(Vec::new());
    families::visit(&mut trials).expect("listing trials cannot fail");
    trials.0
}

/// Every blur kernel and twin at every radius it accepts, from 0 to its
/// maximum, for 1 to 4 channels, as the emulated test does.
pub fn radius_trials() -> Vec<Trial> {
    Blur::KERNELS
        .iter()
        .flat_map(|kernel| {
            [false, true].map(|on_twin| {
                let label = if on_twin { " (CUDA C++ twin)" } else { "" };
                let name = format!("{}{label} at every radius it accepts", kernel.name);
                Trial::test(name, move || {
                    let gpu = if on_twin { twin()? } else { gpu()? };
                    for channels in 1..=4 {
                        for radius in 0..=max_radius(kernel, channels) {
                            let shape = BlurShape::new(23, 11, channels as usize, radius);
                            let seed = quiet_seed() ^ u64::from(radius << 3 | channels);
                            check_kernel::<Gpu, Blur>(gpu, kernel, shape, seed)?;
                        }
                    }
                    Ok(())
                })
            })
        })
        .collect()
}

/// What the driver made of each kernel: the PTX test cannot see spills
/// that ptxas adds when it compiles for this GPU.
pub fn resource_trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "NVRTC compiles every kernel's CUDA C++ twin for this GPU",
            || twin().map(drop),
        ),
        Trial::test(
            "only the local-memory lesson uses local memory as the driver compiled it for this GPU",
            || {
                let gpu = gpu()?;
                let mut wrong = Vec::new();
                for kernel in families::kernels() {
                    for entry in kernel.entries() {
                        let resources = gpu.resources(&[entry]).map_err(failed)?;
                        if (resources.local_bytes > 0) != kernel.local_memory {
                            wrong.push(format!("{entry}: {} bytes", resources.local_bytes));
                        }
                    }
                }
                match wrong.as_slice() {
                    [] => Ok(()),
                    wrong => {
                        Err(format!("local memory not as declared: {}", wrong.join(", ")).into())
                    }
                }
            },
        ),
    ]
}

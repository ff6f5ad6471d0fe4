//! The plans the options make: the kernels `--kernel` selects, at the sizes
//! given or the target's defaults, with the runs and the work limit of the
//! default run or of the bench.

use gpu_host::timing::Runs;

use crate::error::Result;
use crate::families;
use crate::family::{Sizes, Target};
use crate::suite::{Plan, WorkLimit};

use super::options::{BenchArgs, Cli};

impl Cli {
    /// The entry points selected, in teaching order.
    pub fn selected_kernels(&self) -> Vec<&'static str> {
        selected(&self.kernels)
    }

    /// The plan for `target`, with its default sizes where none were given,
    /// checked against every selected kernel before any work starts.
    pub fn plan(&self, target: Target) -> Result<Plan> {
        self.plan_at(target, self.sizes.sizes(target))
    }

    /// The plan for the emulator at its own small sizes, whatever sizes
    /// were given for the GPU.
    pub(super) fn emulated_defaults(&self) -> Result<Plan> {
        self.plan_at(Target::Emulator, self.sizes.defaults(Target::Emulator))
    }

    fn plan_at(&self, target: Target, sizes: Sizes) -> Result<Plan> {
        let (warmup, runs, limit) = match target {
            Target::Gpu => (3, 20, WorkLimit::VERIFIED),
            // One run, since the time is the emulator's.
            Target::Emulator => (0, 1, WorkLimit::EMULATED),
        };
        let plan = Plan {
            kernels: self.selected_kernels(),
            sizes,
            runs: Runs {
                warmup,
                timed: self.runs.map_or(runs, |runs| runs as usize),
            },
            limit,
        };
        plan.validate()?;
        Ok(plan)
    }
}

impl BenchArgs {
    pub fn plan(&self) -> Plan {
        // The lessons' kernels are timed by `locality lessons`, unless named.
        let kernels = match self.kernels.as_slice() {
            [] => families::kernels()
                .into_iter()
                .filter(|kernel| kernel.benched)
                .map(|kernel| kernel.name)
                .collect(),
            named => selected(named),
        };
        Plan {
            kernels,
            sizes: self.sizes.sizes(Target::Gpu),
            runs: Runs {
                warmup: 3,
                timed: self.runs as usize,
            },
            limit: WorkLimit::BENCHED,
        }
    }
}

/// The entry points that `--kernel` names select, in teaching order: all of
/// them when none is named.
fn selected(names: &[String]) -> Vec<&'static str> {
    families::kernels()
        .into_iter()
        .filter(|kernel| {
            names.is_empty()
                || names
                    .iter()
                    .any(|name| kernel.name == name || kernel.family == name)
        })
        .map(|kernel| kernel.name)
        .collect()
}

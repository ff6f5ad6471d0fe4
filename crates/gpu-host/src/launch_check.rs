//! The host's checks of a launch contract before any launch: the limits
//! of every GPU from Turing on and the kernel's own launch bounds.

use gpu_std::{Kernel, Launch, shared};

use crate::error::{Error, Result};

/// The largest grid along x, and along y and z, on every CUDA GPU.
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65_535, 65_535];

/// `kernel`'s launch contract for `problem`, once it is within the limits
/// of every GPU from Turing on, launch-sized shared memory within the
/// 48 KiB a block gets without an opt-in, and within the kernel's own
/// launch bounds: what a family checks its shapes against, so that they
/// run on every GPU.
pub fn checked_launch<A, P>(kernel: &Kernel<A, P>, problem: &P) -> Result<Launch> {
    checked_launch_within(kernel, problem, shared::LIMIT_BYTES)
}

/// [`checked_launch`] with launch-sized shared memory up to
/// `shared_limit` bytes: what a backend launches, the GPU up to its
/// device's opt-in limit (which it checks itself, with the kernel's static
/// arrays), the emulator up to Hopper's.
pub fn checked_launch_within<A, P>(
    kernel: &Kernel<A, P>,
    problem: &P,
    shared_limit: u64,
) -> Result<Launch> {
    let launch = (kernel.launch)(problem);
    let (x, y, z) = launch.grid;
    for ((blocks, limit), axis) in [x, y, z].into_iter().zip(MAX_GRID).zip(['x', 'y', 'z']) {
        if blocks > limit {
            return Err(Error::GridTooLarge {
                kernel: kernel.name,
                axis,
                blocks,
                limit,
            });
        }
    }
    if !launch.clusters_tile_grid() {
        return Err(Error::ClusterShape {
            kernel: kernel.name,
            grid: launch.grid,
            cluster: launch.cluster,
        });
    }
    let (x, y, z) = launch.block;
    let threads = x.saturating_mul(y).saturating_mul(z);
    if threads > kernel.bounds.max_threads {
        return Err(Error::BeyondLaunchBounds {
            kernel: kernel.name,
            threads,
            max_threads: kernel.bounds.max_threads,
        });
    }
    if u64::from(launch.shared_bytes) > shared_limit {
        return Err(Error::SharedTooLarge {
            kernel: kernel.name,
            bytes: launch.shared_bytes,
            limit: shared_limit,
        });
    }
    Ok(launch)
}

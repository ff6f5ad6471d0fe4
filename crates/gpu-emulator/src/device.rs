//! The device runtime's operations on the CPU: what `gpu-std` calls on the
//! host where the GPU build talks to the hardware. Each acts on the
//! emulated thread that is running, and reports what CUDA leaves undefined
//! as the running launch's diagnostic. Kernels call `gpu-std`, never these.

use std::panic::Location;

pub use super::AccessKind;
use super::cluster::Accessor;
pub use super::matrix::{Fragment, MmaInput, Registers};
use super::texture::{self, Missing};
use super::traffic::Space;
use super::warp::meet;
pub use super::warp::{Reduction, ShuffleKind, WarpOp};
use super::{
    CONSTANTS, Copy as PendingCopy, Current, Dim3, Fault, SharedMemory, Wait, on_shared, running,
    stop, with_current,
};
pub use warpgroup::{WgmmaA, fence_proxy_async, warpgroup_call, wgmma, wgmma_retire};

mod warpgroup;

/// The running thread's index in its block (`threadIdx`).
pub fn thread_idx() -> Dim3 {
    with_current(|current| current.thread)
}

/// The running block's index in the grid (`blockIdx`).
pub fn block_idx() -> Dim3 {
    with_current(|current| current.block)
}

/// Threads per block along x, y and z (`blockDim`).
pub fn block_dim() -> Dim3 {
    with_current(|current| current.launch.block)
}

/// The running thread's lane: its linear index in the block, modulo 32
/// (PTX's `%laneid`).
pub fn lane_id() -> u32 {
    with_current(|current| current.linear % 32)
}

/// Blocks in the grid along x, y and z (`gridDim`).
pub fn grid_dim() -> Dim3 {
    with_current(|current| current.launch.grid)
}

/// Makes the running thread wait at the block-wide barrier called at
/// `barrier` (`__syncthreads`) until the block's live threads all wait.
pub fn sync_threads(barrier: &'static Location<'static>) {
    let yielder = with_current(|current| current.yielder.get());
    // SAFETY: the yielder belongs to the coroutine that is running this code.
    unsafe { (*yielder).suspend(Wait::Barrier(barrier)) };
}

/// This lane's result of the warp collective `op` over the lanes of
/// `mask`, `bits` its own operand, made at `site`: once every lane of the
/// mask has reached it (see the crate's `warp` module).
pub fn warp_call(op: WarpOp, mask: u32, bits: u64, site: &'static Location<'static>) -> u64 {
    meet(op, mask, bits, [0; 10], site);
    running().warp_result.get()
}

/// This lane's registers from the matrix instruction `op` (`mma.sync` or
/// `ldmatrix`), which all 32 lanes of the warp make together at `site`,
/// `registers` its own (see [`Registers`] for what each brings).
pub fn warp_matrix_call(
    op: WarpOp,
    registers: Registers,
    site: &'static Location<'static>,
) -> Fragment {
    meet(op, u32::MAX, 0, registers, site);
    running().warp_registers.get()
}

/// Makes the running thread wait at the cluster-wide barrier called at
/// `barrier` (`barrier.cluster.arrive` and `wait`, CUDA's
/// `cluster.sync()`) until the cluster's live threads all wait.
pub fn cluster_sync(barrier: &'static Location<'static>) {
    let yielder = with_current(|current| current.yielder.get());
    // SAFETY: the yielder belongs to the coroutine that is running this code.
    unsafe { (*yielder).suspend(Wait::ClusterBarrier(barrier)) };
}

/// The running block's rank in its cluster (`%cluster_ctarank`).
pub fn cluster_block_rank() -> u32 {
    with_current(|current| current.rank)
}

/// Blocks in the running block's cluster (`%cluster_nctarank`).
pub fn cluster_blocks() -> u32 {
    with_current(|current| current.launch.cluster_blocks())
}

/// Checks and records an access of `size` bytes at the running block's
/// shared `address`, mapped to the block of rank `rank` in its cluster
/// (`mapa`), made at `site`; the address in that block's memory.
pub fn distributed_shared_access(
    address: *const u8,
    rank: u32,
    size: usize,
    kind: AccessKind,
    site: &'static Location<'static>,
) -> *mut u8 {
    let checked = with_current(|current| {
        let blocks = current.launch.cluster_blocks();
        if rank >= blocks {
            return Err(Fault::ClusterRankOutOfRange {
                thread: current.thread,
                rank,
                blocks,
            });
        }
        let offset = current.memory.borrow().offset_of(address);
        let space = Space::Distributed { rank };
        current.record(site, kind, space, offset as u64, size as u32);
        if rank == current.rank {
            let mut memory = current.memory.borrow_mut();
            let (me, block) = (current.linear, current.launch.block);
            memory.access(me, block, offset, size as u32, kind)?;
            return Ok(address.cast_mut());
        }
        let accessor = Accessor {
            rank: current.rank,
            thread: current.thread,
            linear: current.linear,
            epoch: current.memory.borrow().epoch,
        };
        let mut owner = current.cluster.memories[rank as usize].borrow_mut();
        let mapped = owner.remote_access(&accessor, offset, size as u32, kind)?;
        Ok(mapped)
    });
    checked.unwrap_or_else(|fault| stop(fault))
}

/// Element `index` of the constant array `name` of `len` elements of `T`,
/// read at `site` by the running thread.
pub fn constant_read<T: Copy + 'static>(
    name: &'static str,
    len: u32,
    index: u32,
    site: &'static Location<'static>,
) -> T {
    let size = size_of::<T>() as u64;
    let thread = with_current(|current| {
        let space = Space::Constant { array: name };
        current.record(
            site,
            AccessKind::Read,
            space,
            size * u64::from(index),
            size as u32,
        );
        current.thread
    });
    if index >= len {
        stop(Fault::ConstantOutOfBounds {
            thread,
            array: name,
            index,
            len,
        });
    }
    let value = CONSTANTS.with_borrow(|constants| {
        let constant = constants.iter().find(|constant| constant.name == name)?;
        let Some(values) = constant.values.downcast_ref::<Vec<T>>() else {
            return Some(Err(Fault::ConstantType {
                thread,
                array: name,
                set: constant.element,
                read: std::any::type_name::<T>(),
            }));
        };
        values.get(index as usize).copied().map(Ok)
    });
    match value {
        Some(Ok(value)) => value,
        Some(Err(fault)) => stop(fault),
        None => stop(Fault::ConstantUnset {
            thread,
            array: name,
            index,
        }),
    }
}

/// The running thread's `clock64()`: its steps so far (each call into the
/// device runtime is one, this one too), which only grow.
pub fn clock64() -> u64 {
    with_current(|current| current.steps.get())
}

/// `%globaltimer`: the host's monotonic clock in nanoseconds, from the
/// first time any emulated thread read it, so that it is shared by every
/// block, as the GPU's is by every SM.
pub fn globaltimer() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    // A step, as every call into the runtime is.
    with_current(|_| ());
    let start = *START.get_or_init(std::time::Instant::now);
    start.elapsed().as_nanos() as u64
}

/// What the running thread's fetch at `(x, y)` through texture `handle`
/// reads, made at `site` (`tex2D<float>`): the exact weighted sum rounded
/// to f32 once.
pub fn texture_fetch(handle: u64, x: f32, y: f32, site: &'static Location<'static>) -> f32 {
    let fetched = with_current(|current| {
        let texture = texture::live(handle).map_err(|missing| match missing {
            Missing::Unset => Fault::TextureUnset {
                thread: current.thread,
            },
            Missing::Destroyed => Fault::TextureDestroyed {
                thread: current.thread,
                handle,
            },
        })?;
        let sample = texture::sample(&texture, x, y);
        let texels = sample
            .texels
            .map(|texel| texel.map_or(u32::MAX, |index| index as u32));
        let first = texels.iter().copied().find(|&texel| texel != u32::MAX);
        let space = Space::Texture { handle, texels };
        let offset = 4 * u64::from(first.unwrap_or(0));
        current.record(site, AccessKind::Read, space, offset, 4);
        Ok(sample.value as f32)
    });
    fetched.unwrap_or_else(|fault| stop(fault))
}

/// The address of the running block's static shared array `name`, of
/// `bytes` bytes.
pub fn static_shared(name: &'static str, bytes: u32) -> *mut u8 {
    let declared = with_current(|current| {
        // Declared in every block of the cluster at once, at the same
        // offset, as on the GPU, where every block has them all from its
        // start: another block may map it before its own threads name it.
        for (memory, rank) in current.cluster.memories.iter().zip(0..) {
            if rank != current.rank {
                memory.borrow_mut().declare(name, bytes)?;
            }
        }
        current.memory.borrow_mut().declare(name, bytes)
    });
    declared.unwrap_or_else(|fault| stop(fault))
}

/// Stops the running thread for touching element `index` of the static
/// shared array `array` of `len` elements.
pub fn static_shared_out_of_bounds(
    array: &'static str,
    index: u32,
    len: u32,
    kind: AccessKind,
) -> ! {
    let thread = with_current(|current| current.thread);
    stop(Fault::StaticSharedOutOfBounds {
        thread,
        kind,
        array,
        index,
        len,
    })
}

/// The first byte of the launch-sized shared memory (CUDA's
/// `extern __shared__` array).
pub fn shared_base() -> *mut u8 {
    with_current(|current| current.memory.borrow().base)
}

/// Checks and records an access of `size` bytes at `address`, made at
/// `site`.
pub fn shared_access(
    address: *const u8,
    size: usize,
    kind: AccessKind,
    site: &'static Location<'static>,
) {
    on_shared(address, |current, memory, offset| {
        let (me, block) = (current.linear, current.launch.block);
        memory.access(me, block, offset, size as u32, kind)?;
        current.record(site, kind, Space::Shared, offset as u64, size as u32);
        Ok(())
    });
}

/// Starts an asynchronous copy of `bytes` to shared `address`, made at
/// `site`: checked and recorded as a shared store now, landed at the
/// thread's wait.
pub fn memcpy_async(address: *const u8, bytes: &[u8], site: &'static Location<'static>) {
    on_shared(address, |current, memory, offset| {
        let size = bytes.len() as u32;
        memory.start_copy(current.linear, current.launch.block, offset, size)?;
        current.record(site, AccessKind::Write, Space::Shared, offset as u64, size);
        current.pipeline.borrow_mut().open.push(PendingCopy {
            offset: offset as u32,
            bytes: bytes.to_vec(),
        });
        Ok(())
    });
}

/// `mbarrier.init` of the barrier at shared `address` for `count`
/// arrivals a phase, by the running thread.
pub fn mbarrier_init(address: *const u8, count: u32) {
    on_shared(address, |current, memory, offset| {
        let (me, block) = (current.linear, current.launch.block);
        let (thread, offset) = memory.use_barrier(me, block, offset, AccessKind::Write)?;
        memory.barriers.init(thread, offset, count)
    });
}

/// One arrival of the running thread at the barrier at shared `address`,
/// expecting `bytes` more of bulk copies in the phase
/// (`mbarrier.arrive.expect_tx`).
pub fn mbarrier_arrive(address: *const u8, bytes: u32) {
    on_shared(address, |current, memory, offset| {
        let (me, block) = (current.linear, current.launch.block);
        let (thread, offset) = memory.use_barrier(me, block, offset, AccessKind::Read)?;
        memory.barriers.arrive(me, thread, offset, bytes)
    });
}

/// Makes the running thread wait, at `site`, until the phase of `parity`
/// of the barrier at shared `address` completes
/// (`mbarrier.try_wait.parity` in a loop).
pub fn mbarrier_wait(address: *const u8, parity: u32, site: &'static Location<'static>) {
    let wait = |current: &Current<'_>, memory: &mut SharedMemory, offset| {
        let (me, block) = (current.linear, current.launch.block);
        let done = memory.mbarrier_try_wait(me, block, offset, parity)?;
        Ok((done, offset))
    };
    while let (false, offset) = on_shared(address, wait) {
        let yielder = with_current(|current| current.yielder.get());
        // SAFETY: the yielder belongs to the coroutine that is running this
        // code.
        unsafe { (*yielder).suspend(Wait::Mbarrier(site, offset)) };
    }
}

/// Issues a bulk copy of `bytes`, read from global memory now, to shared
/// `address`, which must be a multiple of `alignment` bytes, completing on
/// the barrier at shared `barrier`
/// (`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`, or
/// its `.tensor` form): the bytes land when the barrier's phase completes.
pub fn bulk_copy(address: *const u8, bytes: &[u8], barrier: *const u8, alignment: u32) {
    on_shared(address, |current, memory, offset| {
        let copy = PendingCopy {
            offset: offset as u32,
            bytes: bytes.to_vec(),
        };
        let barrier = memory.offset_of(barrier);
        let (me, block) = (current.linear, current.launch.block);
        memory.start_bulk(me, block, copy, barrier, alignment)
    });
    with_current(|current| current.bulk_copies.set(current.bulk_copies.get() + 1));
}

/// `fence.proxy.tensormap::generic.acquire`: the running thread may use
/// the tensor map over the array at `source` from now on.
pub fn tensor_map_acquire(source: usize) {
    with_current(|current| current.tensor_maps.borrow_mut().push(source));
}

/// Stops the running thread where it uses the tensor map over the array at
/// `source`, called `buffer`, without having acquired it.
pub fn tensor_map_use(source: usize, buffer: &'static str) {
    let fault = with_current(|current| {
        (!current.tensor_maps.borrow().contains(&source)).then_some(Fault::TensorMapNotAcquired {
            thread: current.thread,
            buffer,
        })
    });
    if let Some(fault) = fault {
        stop(fault);
    }
}

/// Closes the running thread's open group of copies.
pub fn pipeline_commit() {
    with_current(|current| current.commit_copies());
}

/// Lands all but the newest `keep` of the running thread's committed groups.
pub fn pipeline_wait(keep: u32) {
    if let Err(fault) = with_current(|current| current.land_copies(keep)) {
        stop(fault);
    }
}

/// One access to a global buffer, as the runtime's views report it.
pub struct GlobalAccess {
    /// The buffer's name in diagnostics.
    pub buffer: &'static str,
    /// The buffer's first byte, which tells buffers apart.
    pub base: usize,
    /// Elements the buffer has.
    pub len: usize,
    /// The access's first element.
    pub index: usize,
    /// Elements the access moves at once: 1, a vector's, or fewer at the
    /// end of a buffer.
    pub elements: usize,
    /// What `index` must be a multiple of: the access's width in elements.
    pub alignment: usize,
    /// Bytes per element.
    pub element_bytes: usize,
    /// Bytes each of the access's instructions moves: all of them, except
    /// for one element whose alignment is less than its size, which the
    /// compiler moves in pieces of its alignment (a `#[repr(C)]` pair of
    /// `f32` is two 4-byte loads), and the hardware counts so.
    pub piece_bytes: usize,
    /// Whether the access reads or writes.
    pub kind: AccessKind,
    /// Whether a read takes the read-only path (`ld.global.nc`, CUDA's
    /// `__ldg`): the path is not coherent with the launch's own stores, so
    /// nothing may write the bytes in the same launch.
    pub non_coherent: bool,
    /// Whether a bulk copy reads the elements, which the traffic counts
    /// apart from the load/store path's.
    pub bulk: bool,
    /// An atomic's scope: the threads it is atomic with. `None` for a
    /// plain access.
    pub scope: Option<super::Scope>,
    /// Where the buffer's bytes live, which the traffic counts apart.
    pub placement: super::Placement,
}

/// Checks and records an access to elements `index..index + elements` of a
/// global buffer of `len` elements, made at `site`.
pub fn global_access(access: GlobalAccess, site: &'static Location<'static>) {
    if !access.placement.reachable() {
        stop(Fault::GlobalUnreachable {
            thread: with_current(|current| current.thread),
            kind: access.kind,
            buffer: access.buffer,
            placement: access.placement,
        });
    }
    let in_bounds = access
        .index
        .checked_add(access.elements)
        .is_some_and(|end| end <= access.len);
    let aligned = access.index.is_multiple_of(access.alignment);
    let (thread, race) = with_current(|current| {
        let mut race = Ok(());
        if in_bounds && aligned {
            let space = if access.bulk {
                Space::Bulk {
                    base: access.base,
                    copy: current.bulk_copies.get(),
                }
            } else {
                Space::Global {
                    base: access.base,
                    buffer: access.buffer,
                    placement: access.placement,
                }
            };
            let offset = (access.index * access.element_bytes) as u64;
            let size = access.elements * access.element_bytes;
            for piece in (0..size).step_by(access.piece_bytes) {
                let bytes = access.piece_bytes.min(size - piece) as u32;
                current.record(site, access.kind, space, offset + piece as u64, bytes);
            }
            race = current.global_access(&access);
        }
        (current.thread, race)
    });
    if !in_bounds {
        stop(Fault::GlobalOutOfBounds {
            thread,
            kind: access.kind,
            buffer: access.buffer,
            index: access.index.max(access.len),
            len: access.len,
        });
    }
    if !aligned {
        stop(Fault::GlobalMisaligned {
            thread,
            buffer: access.buffer,
            index: access.index,
            bytes: access.alignment * access.element_bytes,
        });
    }
    if let Err(fault) = race {
        stop(fault);
    }
}

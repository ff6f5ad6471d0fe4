#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

use super::shared::SharedArray;

/// A special register of the cluster, read with one `mov` in the sm_90
/// build, a trap below it; the emulator's answer on the host.
macro_rules! cluster_register {
    ($(#[$meta:meta])* $name:ident => $register:literal, $emulated:ident) => {
        $(#[$meta])*
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
            {
                let value: u32;
                // SAFETY: reading a special register has no side effects.
                unsafe {
                    core::arch::asm!(
                        concat!("mov.u32 {value}, ", $register, ";"),
                        value = out(reg32) value,
                        options(pure, nomem, nostack),
                    );
                }
                value
            }
            #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
            {
                super::below_sm90(&());
                0
            }
            #[cfg(not(target_arch = "nvptx64"))]
            emulator::$emulated()
        }
    };
}

cluster_register! {
    /// `cluster.block_rank()`: this block's index in its cluster, x
    /// fastest (`%cluster_ctarank`); 0 in a launch without clusters.
    block_rank => "%cluster_ctarank", cluster_block_rank
}

cluster_register! {
    /// `cluster.num_blocks()`: blocks in this block's cluster
    /// (`%cluster_nctarank`); 1 in a launch without clusters.
    num_blocks => "%cluster_nctarank", cluster_blocks
}

/// `cluster.sync()`: waits until every thread of every block of the
/// cluster has arrived (`barrier.cluster.arrive` and `wait`), and makes
/// the shared-memory writes made before it, to any block's memory, visible
/// after it, to every block. It is also a barrier of the block.
///
/// Every live thread of the cluster must reach the same one. Before a
/// block exits, a cluster barrier must lie between the other blocks'
/// last accesses to its shared memory and its end: the memory is gone
/// once the block exits.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: by the contract above; the arrival releases and the wait
    // acquires the cluster's shared-memory writes (their default
    // semantics), and the asm is a compiler barrier too.
    unsafe {
        core::arch::asm!(
            "barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;",
            options(nostack),
        );
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
    super::below_sm90(&());
    #[cfg(not(target_arch = "nvptx64"))]
    emulator::cluster_sync(core::panic::Location::caller());
}

/// The launch-sized shared memory of another block of the cluster, or of
/// this one, seen from this block: CUDA's `cluster.map_shared_rank(p,
/// rank)`, the same offset in the memory of the block of rank `rank`.
///
/// It is the generic address `mapa` gave, as CUDA's is: a read or write
/// is a generic load or store (`LD`/`ST`) that the hardware routes
/// through the SM-to-SM network to a neighbouring SM's shared memory, or
/// to this block's own.
#[derive(Clone, Copy)]
pub struct DistributedShared {
    base: *mut u32,
    #[cfg(not(target_arch = "nvptx64"))]
    rank: u32,
}

/// `cluster.map_shared_rank(tile, rank)`: `tile` in the shared memory of
/// the block of rank `rank` in this block's cluster.
///
/// # Safety
/// `rank` is below [`num_blocks`].
#[inline(always)]
pub unsafe fn map_shared_rank(tile: SharedArray<u32>, rank: u32) -> DistributedShared {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    {
        let mapped: u64;
        // SAFETY: mapping an address reads and writes nothing.
        unsafe {
            core::arch::asm!(
                "mapa.u64 {mapped}, {address}, {rank};",
                mapped = out(reg64) mapped,
                address = in(reg64) tile.address(0),
                rank = in(reg32) rank,
                options(pure, nomem, nostack),
            );
        }
        DistributedShared {
            base: mapped as *mut u32,
        }
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
    {
        super::below_sm90(&(tile, rank));
        DistributedShared {
            base: core::ptr::null_mut(),
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    DistributedShared {
        base: tile.address(0),
        rank,
    }
}

impl DistributedShared {
    /// Reads element `index`.
    ///
    /// # Safety
    /// `index` is inside the allocation; the element was written with a
    /// cluster barrier between the write and this read where another
    /// block wrote it (a block barrier where another thread of this block
    /// did), and the block that owns it has not exited. The emulator
    /// checks all of it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, index: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract; the cluster barriers that
        // order the accesses are compiler barriers too.
        unsafe {
            *self.base.add(index as usize)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let mapped = self.mapped(index, emulator::AccessKind::Read);
            // SAFETY: the emulator has checked the access and mapped it.
            unsafe { mapped.read() }
        }
    }

    /// Writes element `index`.
    ///
    /// # Safety
    /// `index` is inside the allocation; no other thread, of any block,
    /// touches the element between the same two cluster barriers (block
    /// barriers, for the threads of the block that owns it), and that
    /// block has not exited.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, index: u32, value: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            *self.base.add(index as usize) = value;
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let mapped = self.mapped(index, emulator::AccessKind::Write);
            // SAFETY: the emulator has checked the access and mapped it.
            unsafe { mapped.write(value) }
        }
    }

    /// Where element `index` lies in the emulated block's memory, once
    /// the emulator has checked an access of `kind` to it.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn mapped(self, index: u32, kind: emulator::AccessKind) -> *mut u32 {
        let address = self.base.wrapping_add(index as usize).cast();
        let site = core::panic::Location::caller();
        emulator::distributed_shared_access(address, self.rank, 4, kind, site).cast()
    }
}

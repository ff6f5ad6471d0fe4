//! Global memory as the emulator watches it: for each byte of each buffer
//! a launch touches, who last wrote it and who read it, in which barrier
//! interval ("epoch") of which block. Bytes, because views of one buffer
//! may differ in their element type (a copy's bulk in words, its tail in
//! bytes).
//!
//! A `sync_threads` orders the threads of its own block only; nothing orders
//! two blocks of one launch, which the GPU runs in any order or at once. So
//! two accesses to one element by different threads, at least one a write,
//! race unless both threads are in one block and a barrier lies between
//! them. Epochs are numbered across the launch, so an access made in an
//! epoch before the current block's first was made by another block.
//! (compute-sanitizer's racecheck watches shared memory only.) A byte read
//! through the read-only path (`ld.global.nc`) may not be written in the
//! launch at all, by any thread, before or after, barrier or not: that
//! path is not coherent with the launch's stores.

use super::device::GlobalAccess;
use super::{Access, AccessKind, Dim3, Fault, Launch, Scope, coordinates};

/// The shadows of the buffers a launch has touched, by their first byte.
#[derive(Default)]
pub(crate) struct GlobalMemory {
    buffers: Vec<(usize, Vec<Shadow>)>,
}

/// When and by whom: the epoch, the block's linear index in the grid and
/// the thread's in its block. Epoch 0 is no access at all.
#[derive(Clone, Copy, Default)]
struct Toucher {
    epoch: u32,
    block: u32,
    thread: u32,
}

/// Who last wrote one byte, who read it in the latest epoch that read
/// it (and a second reader of that epoch, if any), one read by an
/// earlier block than that epoch's, which any later write races with, and
/// a read through the read-only path, which no write of the launch may
/// meet.
///
/// Atomics are ordered with each other, so the shadow keeps them apart
/// from plain writes: the latest atomic (and whether its scope was its
/// block), and one by another block than the latest's, which a plain
/// access races with as it does with a write.
#[derive(Clone, Copy, Default)]
struct Shadow {
    write: Toucher,
    read: Toucher,
    other_reader: Option<u32>,
    earlier_block_read: Toucher,
    non_coherent_read: Toucher,
    atomic: Toucher,
    atomic_in_block: bool,
    other_block_atomic: Toucher,
}

impl Shadow {
    /// A read that a write or an atomic by `now` would race with.
    fn unordered_read(&self, now: &Now<'_>) -> Option<Toucher> {
        let read = self.read;
        if self.earlier_block_read.epoch != 0 {
            Some(self.earlier_block_read)
        } else if read.epoch != 0 && !now.ordered_after(read) {
            Some(read)
        } else if read.epoch == now.epoch {
            self.other_reader.map(|thread| Toucher { thread, ..read })
        } else {
            None
        }
    }
}

/// The host memory the emulator keeps beside each byte of global memory
/// that a launch touches, for its race checks: what a large emulated
/// problem costs beyond its data.
pub const SHADOW_BYTES_PER_BYTE: usize = size_of::<Shadow>();

/// The running thread, in the launch's epochs.
pub(crate) struct Now<'a> {
    pub launch: &'a Launch,
    pub epoch: u32,
    /// The current block's first epoch.
    pub block_start: u32,
    pub block: Dim3,
    pub thread: u32,
}

impl Now<'_> {
    fn toucher(&self) -> Toucher {
        let (x, y, z) = self.block;
        let (gx, gy, _) = self.launch.grid;
        Toucher {
            epoch: self.epoch,
            block: x + gx * (y + gy * z),
            thread: self.thread,
        }
    }

    /// Whether `earlier` happened before this thread's access: in this
    /// block, and by this thread or before a barrier.
    fn ordered_after(&self, earlier: Toucher) -> bool {
        // The blocks of a cluster run at once, their epochs interleaved.
        earlier.block == self.toucher().block
            && earlier.epoch >= self.block_start
            && (earlier.epoch < self.epoch || earlier.thread == self.thread)
    }

    /// The fault of a byte both written and read through the read-only
    /// path in one launch, whichever came first.
    fn written_read_only(&self, access: &GlobalAccess, byte: usize, other: Toucher) -> Fault {
        let (gx, gy, _) = self.launch.grid;
        let me = self.toucher();
        let (write, read) = match access.kind {
            AccessKind::Write | AccessKind::Atomic => (me, other),
            AccessKind::Read => (other, me),
        };
        let at = |toucher: Toucher| {
            (
                coordinates(toucher.thread, self.launch.block),
                coordinates(toucher.block, (gx, gy, 1)),
            )
        };
        Fault::WrittenReadOnly {
            buffer: access.buffer,
            index: byte / access.element_bytes,
            writer: at(write),
            reader: at(read),
        }
    }

    /// The fault of two blocks' atomics to one byte, one of them scoped
    /// to its block.
    fn narrow_atomic(&self, access: &GlobalAccess, byte: usize, earlier: Toucher) -> Fault {
        let (gx, gy, _) = self.launch.grid;
        Fault::AtomicScopeTooNarrow {
            buffer: access.buffer,
            index: byte / access.element_bytes,
            earlier: coordinates(earlier.thread, self.launch.block),
            earlier_block: coordinates(earlier.block, (gx, gy, 1)),
            later: coordinates(self.thread, self.launch.block),
        }
    }

    fn race(
        &self,
        access: &GlobalAccess,
        byte: usize,
        earlier: Toucher,
        kind: AccessKind,
    ) -> Fault {
        let (gx, gy, _) = self.launch.grid;
        Fault::GlobalRace {
            buffer: access.buffer,
            index: byte / access.element_bytes,
            earlier: Access {
                thread: coordinates(earlier.thread, self.launch.block),
                kind,
            },
            earlier_block: coordinates(earlier.block, (gx, gy, 1)),
            later: Access {
                thread: coordinates(self.thread, self.launch.block),
                kind: access.kind,
            },
        }
    }
}

impl GlobalMemory {
    /// Checks one access in bounds of its view and records it, byte by
    /// byte: `elements` elements from `index`.
    pub(crate) fn access(&mut self, access: &GlobalAccess, now: &Now<'_>) -> Result<(), Fault> {
        let at = match self
            .buffers
            .iter()
            .position(|(base, _)| *base == access.base)
        {
            Some(at) => at,
            None => {
                self.buffers.push((access.base, Vec::new()));
                self.buffers.len() - 1
            }
        };
        let shadows = &mut self.buffers[at].1;
        // Views of one buffer may differ in length: the shadow only grows.
        let bytes = access.len * access.element_bytes;
        shadows.resize(shadows.len().max(bytes), Shadow::default());
        let me = now.toucher();
        let first = access.index * access.element_bytes;
        let size = access.elements * access.element_bytes;
        for (shadow, byte) in shadows[first..first + size].iter_mut().zip(first..) {
            let written = shadow.write;
            if access.non_coherent && written.epoch != 0 {
                return Err(now.written_read_only(access, byte, written));
            }
            let read_only = shadow.non_coherent_read;
            if access.kind != AccessKind::Read && read_only.epoch != 0 {
                return Err(now.written_read_only(access, byte, read_only));
            }
            if written.epoch != 0 && !now.ordered_after(written) {
                return Err(now.race(access, byte, written, AccessKind::Write));
            }
            if access.kind != AccessKind::Atomic {
                for atomic in [shadow.atomic, shadow.other_block_atomic] {
                    if atomic.epoch != 0 && !now.ordered_after(atomic) {
                        return Err(now.race(access, byte, atomic, AccessKind::Atomic));
                    }
                }
            }
            match access.kind {
                AccessKind::Read => {
                    if access.non_coherent {
                        shadow.non_coherent_read = me;
                    }
                    if shadow.read.epoch != 0 && shadow.read.epoch < now.block_start {
                        shadow.earlier_block_read = shadow.read;
                    }
                    if shadow.read.epoch != me.epoch {
                        shadow.read = me;
                        shadow.other_reader = None;
                    } else if shadow.read.thread != me.thread && shadow.other_reader.is_none() {
                        shadow.other_reader = Some(me.thread);
                    }
                }
                AccessKind::Write | AccessKind::Atomic => {
                    if let Some(reader) = shadow.unordered_read(now) {
                        return Err(now.race(access, byte, reader, AccessKind::Read));
                    }
                    if access.kind == AccessKind::Write {
                        shadow.write = me;
                        continue;
                    }
                    let in_block = access.scope == Some(Scope::Block);
                    let earlier = shadow.atomic;
                    if earlier.epoch != 0 && earlier.block != me.block {
                        if in_block || shadow.atomic_in_block {
                            return Err(now.narrow_atomic(access, byte, earlier));
                        }
                        shadow.other_block_atomic = earlier;
                    }
                    shadow.atomic = me;
                    shadow.atomic_in_block = in_block;
                }
            }
        }
        Ok(())
    }
}

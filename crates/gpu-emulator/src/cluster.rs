//! Distributed shared memory: the blocks of a cluster run at once, and a
//! thread may read and write the shared memory of another block of its
//! cluster. Only a cluster barrier (`barrier.cluster`, CUDA's
//! `cluster.sync()`) orders the accesses of two blocks: each shared byte's
//! shadow carries the cluster barrier interval ("phase") of its last write
//! and of its latest reads, and which blocks made them, so two blocks
//! touching one byte in one phase, one of them writing, are a race,
//! whatever order the emulator runs them in. A block's shared memory is
//! gone once it exits: another block's access to it in the phase in which
//! it exits, before or after, is a diagnostic too, the missing
//! `cluster.sync()` before a kernel's end.

use super::{Access, AccessKind, Dim3, Fault, REMOTE, STATIC_START, Shadow, SharedMemory};

/// A thread touching another block's shared memory: its block's rank in
/// the cluster, its index and linear index in its block, and its block's
/// current barrier interval.
pub(crate) struct Accessor {
    pub rank: u32,
    pub thread: Dim3,
    pub linear: u32,
    pub epoch: u32,
}

impl Shadow {
    /// The rank of a block other than `rank`'s that wrote the byte in phase
    /// `now`, and of one that read it.
    fn other_blocks(&self, now: u32, rank: u32) -> (Option<u32>, Option<u32>) {
        let (written, writer) = self.cluster_write;
        let (read, readers) = self.cluster_readers;
        let others = readers & !(1 << rank);
        (
            (written == now && writer != rank).then_some(writer),
            (read == now && others != 0).then(|| others.trailing_zeros()),
        )
    }
}

impl SharedMemory {
    /// Checks an access to `byte` of this block's memory by a thread of the
    /// block of rank `rank` (this one's or another's) against the other
    /// blocks' accesses in this phase, and records it.
    pub(crate) fn cluster_access(
        &mut self,
        byte: u32,
        rank: u32,
        later: Access,
    ) -> Result<(), Fault> {
        // A cluster of one block has no other block to race with.
        if self.cluster.len() == 1 {
            return Ok(());
        }
        let now = self.phase;
        let shadow = &mut self.shadow[byte as usize];
        let race = |earlier: u32, earlier_kind| Fault::ClusterRace {
            owner: self.cluster[self.rank as usize],
            offset: byte,
            earlier_block: self.cluster[earlier as usize],
            earlier_kind,
            later_block: self.cluster[rank as usize],
            later,
        };
        let (writer, reader) = shadow.other_blocks(now, rank);
        if let Some(writer) = writer {
            return Err(race(writer, AccessKind::Write));
        }
        match later.kind {
            AccessKind::Read => {
                if shadow.cluster_readers.0 != now {
                    shadow.cluster_readers = (now, 0);
                }
                shadow.cluster_readers.1 |= 1 << rank;
            }
            AccessKind::Write | AccessKind::Atomic => {
                if let Some(reader) = reader {
                    return Err(race(reader, AccessKind::Read));
                }
                shadow.cluster_write = (now, rank);
            }
        }
        Ok(())
    }

    /// Checks an access of `size` bytes at `offset` of this block's memory
    /// by `accessor`, a thread of another block of the cluster, and records
    /// it; the address it touches.
    pub(crate) fn remote_access(
        &mut self,
        accessor: &Accessor,
        offset: i64,
        size: u32,
        kind: AccessKind,
    ) -> Result<*mut u8, Fault> {
        let (rank, thread) = (accessor.rank, accessor.thread);
        let owner = self.cluster[self.rank as usize];
        let accessor_block = self.cluster[rank as usize];
        let exited = |offset| Fault::NeighbourExited {
            owner,
            accessor: accessor_block,
            kind,
            offset,
        };
        if self.exited {
            return Err(exited(offset as u32));
        }
        let offset = self.checked_offset(thread, offset, (size, size), kind)?;
        for byte in offset..offset + size {
            let now = self.phase;
            let (written, writer) = self.shadow[byte as usize].cluster_write;
            let (epoch, linear) = self.shadow[byte as usize].remote_writer;
            // Two threads of the accessing block, one writing, with no
            // barrier of that block between.
            if written == now
                && writer == rank
                && epoch == accessor.epoch
                && linear != accessor.linear
            {
                return Err(Fault::ClusterRace {
                    owner,
                    offset: byte,
                    earlier_block: accessor_block,
                    earlier_kind: AccessKind::Write,
                    later_block: accessor_block,
                    later: Access { thread, kind },
                });
            }
            self.cluster_access(byte, rank, Access { thread, kind })?;
            let epoch = self.epoch;
            let shadow = &mut self.shadow[byte as usize];
            if shadow.copier.is_some() || shadow.bulk.is_some() {
                // The owner's copies in flight are the owner's to wait for:
                // no other block can order itself after them.
                return Err(Fault::ClusterRace {
                    owner,
                    offset: byte,
                    earlier_block: owner,
                    earlier_kind: AccessKind::Write,
                    later_block: accessor_block,
                    later: Access { thread, kind },
                });
            }
            match kind {
                AccessKind::Read if shadow.write_epoch < self.block_start => {
                    return Err(Fault::SharedUninitialized {
                        thread,
                        offset: byte,
                    });
                }
                AccessKind::Read => {}
                AccessKind::Write | AccessKind::Atomic => {
                    shadow.write_epoch = epoch;
                    shadow.writer = REMOTE;
                    shadow.remote_writer = (accessor.epoch, accessor.linear);
                }
            }
        }
        Ok(self.address_of(offset.into()))
    }

    /// The address of the byte at `offset`, which lies inside the memory.
    fn address_of(&mut self, offset: i64) -> *mut u8 {
        match self.static_words.as_mut() {
            Some(words) if offset >= STATIC_START => words
                .as_mut_ptr()
                .cast::<u8>()
                .wrapping_add((offset - STATIC_START) as usize),
            _ => self.base.wrapping_add(offset as usize),
        }
    }

    /// The block's threads have all returned: its memory is gone, and so
    /// an access by another block in this phase is a diagnostic, made
    /// before or after.
    pub(crate) fn exit(&mut self) -> Result<(), Fault> {
        self.exited = true;
        if self.cluster.len() == 1 {
            return Ok(());
        }
        let (now, rank) = (self.phase, self.rank);
        let remote =
            self.shadow
                .iter()
                .find_map(|(shadow, offset)| match shadow.other_blocks(now, rank) {
                    (Some(writer), _) => Some((writer, AccessKind::Write, offset)),
                    (None, reader) => reader.map(|reader| (reader, AccessKind::Read, offset)),
                });
        match remote {
            Some((accessor, kind, offset)) => Err(Fault::NeighbourExited {
                owner: self.cluster[rank as usize],
                accessor: self.cluster[accessor as usize],
                kind,
                offset,
            }),
            None => Ok(()),
        }
    }
}

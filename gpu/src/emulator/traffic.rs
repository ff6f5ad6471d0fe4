//! Memory traffic as the hardware counts it, from the emulated accesses.
//!
//! The lanes of a warp are the 32 threads of consecutive linear index in
//! the block. One warp-level memory instruction is the lanes' k-th access
//! from one call site, of one kind, between the same two barriers: exact for
//! converged code, where every lane executes the same instructions; in
//! divergent code the lanes that took a branch are grouped by how often each
//! reached the site, which is what the hardware does when the branches
//! reconverge before the next access and an approximation otherwise.
//!
//! For each instruction, global memory counts one request and the distinct
//! 32-byte sectors and 128-byte lines its active lanes touch (buffers are
//! taken to start on a 256-byte boundary, as `cudaMalloc`'s do); shared
//! memory counts wavefronts: 32 banks of 4 bytes, a wavefront serving at
//! most one 4-byte word per bank (lanes reading the same word share it); an
//! 8-byte access is served by half-warps and a 16-byte one by quarter-warps,
//! each group at least one wavefront. A bank conflict is a wavefront beyond
//! the fewest the access could take.

use core::ops::AddAssign;
use std::collections::{BTreeMap, HashMap};

use super::AccessKind;

/// What a launch moved, counted per warp-level instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub global_load: Global,
    pub global_store: Global,
    pub shared_load: Shared,
    pub shared_store: Shared,
    /// The global loads again, by buffer.
    pub loads_by_buffer: BTreeMap<&'static str, Global>,
}

/// Global-memory instructions of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Global {
    /// Warp-level instructions.
    pub requests: u64,
    /// Distinct 32-byte sectors, summed over the instructions.
    pub sectors: u64,
    /// Distinct 128-byte lines, summed over the instructions.
    pub lines: u64,
    /// Distinct bytes the lanes asked for: a byte read by several lanes of
    /// one instruction counts once.
    pub bytes_used: u64,
}

impl Global {
    /// Bytes moved in sectors.
    pub fn bytes_fetched(&self) -> u64 {
        32 * self.sectors
    }
}

/// Shared-memory instructions of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shared {
    /// Warp-level instructions.
    pub requests: u64,
    /// Passes through the 32 banks.
    pub wavefronts: u64,
    /// Wavefronts beyond the fewest each instruction could take.
    pub bank_conflicts: u64,
}

impl AddAssign for Global {
    fn add_assign(&mut self, other: Self) {
        self.requests += other.requests;
        self.sectors += other.sectors;
        self.lines += other.lines;
        self.bytes_used += other.bytes_used;
    }
}

impl AddAssign for Shared {
    fn add_assign(&mut self, other: Self) {
        self.requests += other.requests;
        self.wavefronts += other.wavefronts;
        self.bank_conflicts += other.bank_conflicts;
    }
}

impl AddAssign for Traffic {
    fn add_assign(&mut self, other: Self) {
        self.global_load += other.global_load;
        self.global_store += other.global_store;
        self.shared_load += other.shared_load;
        self.shared_store += other.shared_store;
        for (buffer, loads) in other.loads_by_buffer {
            *self.loads_by_buffer.entry(buffer).or_default() += loads;
        }
    }
}

/// Which memory an access went to: a global buffer (by its base address) or
/// the block's shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Space {
    Global { base: usize, buffer: &'static str },
    Shared,
}

/// One emulated thread's access: where from, what, and which of that call
/// site's accesses since the last barrier it was.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    /// The call site, by the address of its `Location`.
    pub site: usize,
    pub kind: AccessKind,
    pub space: Space,
    /// The access's place among this thread's accesses from `site` since the
    /// last barrier.
    pub nth: u32,
    /// Byte offset in the buffer or in shared memory.
    pub offset: u64,
    pub size: u32,
    /// The thread's lane in its warp.
    pub lane: u32,
}

/// One warp-level instruction's identity: its call site, which of the
/// site's accesses it is, and the buffer's address (0 for shared memory).
type Key = (usize, u32, usize);

fn key(record: &Record) -> Key {
    let buffer = match record.space {
        Space::Global { base, .. } => base,
        Space::Shared => 0,
    };
    (record.site, record.nth, buffer)
}

/// The traffic of one warp's accesses between two barriers: every lane's
/// records, lane after lane, each lane's in the order it made them.
pub(super) fn count(records: &[Record]) -> Traffic {
    // Instructions in the order they were first seen. A lane's next record
    // is nearly always the next instruction's, as in converged code; the
    // map finds the others.
    let mut instructions: Vec<(Key, Vec<Record>)> = Vec::new();
    let mut known: HashMap<Key, usize> = HashMap::new();
    let (mut lane, mut next) = (u32::MAX, 0);
    for record in records {
        if record.lane != lane {
            (lane, next) = (record.lane, 0);
        }
        let key = key(record);
        let slot = match instructions.get(next) {
            Some((expected, _)) if *expected == key => next,
            _ => *known.entry(key).or_insert_with(|| {
                instructions.push((key, Vec::with_capacity(32)));
                instructions.len() - 1
            }),
        };
        instructions[slot].1.push(*record);
        next = slot + 1;
    }
    let mut traffic = Traffic::default();
    for (_, lanes) in &instructions {
        let first = &lanes[0];
        match (first.space, first.kind) {
            (Space::Global { buffer, .. }, AccessKind::Read) => {
                let loads = global(lanes);
                traffic.global_load += loads;
                *traffic.loads_by_buffer.entry(buffer).or_default() += loads;
            }
            (Space::Global { .. }, AccessKind::Write) => traffic.global_store += global(lanes),
            (Space::Shared, AccessKind::Read) => traffic.shared_load += shared(lanes),
            (Space::Shared, AccessKind::Write) => traffic.shared_store += shared(lanes),
        }
    }
    traffic
}

/// The distinct `unit`-byte blocks the lanes' accesses touch.
fn distinct(lanes: &[Record], unit: u64) -> u64 {
    let mut blocks: Vec<u64> = lanes
        .iter()
        .flat_map(|lane| lane.offset / unit..=(lane.offset + u64::from(lane.size) - 1) / unit)
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks.len() as u64
}

/// One global instruction: its sectors and lines.
fn global(lanes: &[Record]) -> Global {
    let mut ranges: Vec<(u64, u64)> = lanes
        .iter()
        .map(|lane| (lane.offset, lane.offset + u64::from(lane.size)))
        .collect();
    ranges.sort_unstable();
    let (mut bytes_used, mut covered) = (0, 0);
    for (start, end) in ranges {
        let start = start.max(covered);
        if end > start {
            bytes_used += end - start;
            covered = end;
        }
    }
    Global {
        requests: 1,
        sectors: distinct(lanes, 32),
        lines: distinct(lanes, 128),
        bytes_used,
    }
}

/// One shared instruction: its wavefronts, by groups of lanes that fill the
/// 128 bytes of the banks once at most.
fn shared(lanes: &[Record]) -> Shared {
    let size = lanes.iter().map(|lane| lane.size).max().unwrap_or(4).max(4);
    let lanes_per_group = (128 / size).clamp(1, 32);
    let (mut wavefronts, mut groups) = (0, 0);
    for group in 0..32 / lanes_per_group {
        // The distinct 4-byte words of the group, by bank.
        let mut words: Vec<(u64, u64)> = lanes
            .iter()
            .filter(|lane| lane.lane / lanes_per_group == group)
            .flat_map(|lane| lane.offset / 4..=(lane.offset + u64::from(lane.size) - 1) / 4)
            .map(|word| (word % 32, word))
            .collect();
        if words.is_empty() {
            continue;
        }
        words.sort_unstable();
        words.dedup();
        let deepest = words
            .chunk_by(|a, b| a.0 == b.0)
            .map(<[(u64, u64)]>::len)
            .max()
            .unwrap_or(1);
        wavefronts += deepest as u64;
        groups += 1;
    }
    Shared {
        requests: 1,
        wavefronts,
        bank_conflicts: wavefronts - groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(offsets: impl Iterator<Item = u64>, size: u32, space: Space) -> Vec<Record> {
        offsets
            .enumerate()
            .map(|(lane, offset)| Record {
                site: 1,
                kind: AccessKind::Read,
                space,
                nth: 0,
                offset,
                size,
                lane: lane as u32,
            })
            .collect()
    }

    const BUFFER: Space = Space::Global {
        base: 0,
        buffer: "a",
    };

    #[test]
    fn a_coalesced_f32_load_is_four_sectors_and_a_strided_one_thirty_two() {
        let coalesced = count(&lanes((0..32).map(|i| 4 * i), 4, BUFFER)).global_load;
        assert_eq!(
            (coalesced.requests, coalesced.sectors, coalesced.lines),
            (1, 4, 1)
        );
        let strided = count(&lanes((0..32).map(|i| 4096 * i), 4, BUFFER)).global_load;
        assert_eq!(
            (strided.sectors, strided.lines, strided.bytes_used),
            (32, 32, 128)
        );
        let broadcast = count(&lanes((0..32).map(|_| 8), 8, BUFFER)).global_load;
        assert_eq!((broadcast.sectors, broadcast.bytes_used), (1, 8));
    }

    #[test]
    fn bank_conflicts_follow_the_banks() {
        let conflicts = |offsets: Vec<u64>, size| {
            count(&lanes(offsets.into_iter(), size, Space::Shared)).shared_load
        };
        // Consecutive words, one word for all, and a column of a 32-wide
        // tile: no conflict, a broadcast, and a 32-way conflict.
        assert_eq!(
            conflicts((0..32).map(|i| 4 * i).collect(), 4).bank_conflicts,
            0
        );
        assert_eq!(conflicts(vec![12; 32], 4).bank_conflicts, 0);
        let column = conflicts((0..32).map(|i| 128 * i).collect(), 4);
        assert_eq!((column.wavefronts, column.bank_conflicts), (32, 31));
        // A padded column (33-wide rows): none.
        assert_eq!(
            conflicts((0..32).map(|i| 132 * i).collect(), 4).bank_conflicts,
            0
        );
        // Consecutive 8-byte words: two half-warps, no conflict.
        let doubles = conflicts((0..32).map(|i| 8 * i).collect(), 8);
        assert_eq!((doubles.wavefronts, doubles.bank_conflicts), (2, 0));
        // Consecutive 16-byte vectors: four quarter-warps, no conflict.
        let vectors = conflicts((0..32).map(|i| 16 * i).collect(), 16);
        assert_eq!((vectors.wavefronts, vectors.bank_conflicts), (4, 0));
    }
}

//! Memory traffic as the hardware counts it, from the emulated accesses.
//!
//! The lanes of a warp are the 32 threads of consecutive linear index in
//! the block. One warp-level memory instruction is the lanes' k-th access
//! from one call site between the same two barriers: exact for converged
//! code, where every lane executes the same instructions. In divergent code
//! a lane that made fewer accesses from a site than the others skipped some
//! iterations or took a guard the others did not; the emulator cannot see
//! which, so it pairs each of that lane's accesses, in order, with the
//! instruction whose accesses lie nearest its address (see `count`, and
//! docs/traffic.md for how near this comes to the hardware).
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
use std::collections::BTreeMap;

use super::{AccessKind, Placement};

/// What a launch moved, counted per warp-level instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Loads from global memory.
    pub global_load: Global,
    /// Stores to global memory.
    pub global_store: Global,
    /// Bulk copies' reads of global memory (`cp.async.bulk`): the Tensor
    /// Memory Accelerator's, outside the load/store path the other
    /// counts are of; one request a copy.
    pub bulk_load: Global,
    /// Loads from shared memory.
    pub shared_load: Shared,
    /// Stores to shared memory, asynchronous copies' writes included.
    pub shared_store: Shared,
    /// Loads from the shared memory of a block of the cluster through its
    /// mapped address (`ld.shared::cluster`), the block's own included;
    /// counted as the block's own shared loads are.
    pub distributed_load: Shared,
    /// Stores to it (`st.shared::cluster`).
    pub distributed_store: Shared,
    /// Reads of constant arrays.
    pub constant_load: Constant,
    /// Texture fetches.
    pub texture_load: Texture,
    /// Atomic operations on global memory, which the L2 cache performs.
    pub global_atomic: Atomics,
    /// Atomic operations on shared memory.
    pub shared_atomic: Atomics,
    /// The global loads again, by buffer.
    pub loads_by_buffer: BTreeMap<&'static str, Global>,
    /// The global loads and stores again, by where their buffers' bytes
    /// live: the device's DRAM, host memory mapped into the GPU's address
    /// space, or managed memory.
    pub by_placement: BTreeMap<Placement, Placed>,
}

/// The global loads and stores of one [`Placement`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    /// Loads.
    pub load: Global,
    /// Stores.
    pub store: Global,
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

/// Atomic instructions of one space. Lanes of one instruction that update
/// the same address are served one after another: `updates - addresses`
/// of them waited behind another lane's (contention within the warp).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Atomics {
    /// Warp-level instructions.
    pub requests: u64,
    /// The lanes' operations, summed over the instructions.
    pub updates: u64,
    /// Distinct addresses, summed over the instructions.
    pub addresses: u64,
    /// Distinct 32-byte sectors, summed over the instructions.
    pub sectors: u64,
}

/// Constant-memory reads: the constant cache serves a warp one distinct
/// address at a time, all the lanes that ask for it at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Constant {
    /// Warp-level instructions.
    pub requests: u64,
    /// Distinct addresses, summed over the instructions: the passes the
    /// cache takes.
    pub addresses: u64,
}

/// Texture fetches: the texture unit takes a warp's fetches a quad of
/// lanes at a time, one request each (Nsight Compute counts 8 a full
/// warp), and reads the texels they need, each once. Which sectors those
/// are depends on the CUDA array's layout, which NVIDIA does not document,
/// so the count stops at texels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Texture {
    /// Quads of lanes with a fetch, summed over the warp-level
    /// instructions.
    pub requests: u64,
    /// Distinct texels the lanes' fetches read, summed over the
    /// instructions: one a point fetch, up to four a linear one.
    pub texels: u64,
}

/// Adds counts field by field, as the traffic of warps, blocks and
/// launches adds up.
macro_rules! add_fields {
    ($($counts:ty: $($field:ident),+;)*) => {$(
        impl AddAssign for $counts {
            fn add_assign(&mut self, other: Self) {
                $(self.$field += other.$field;)+
            }
        }
    )*};
}

add_fields! {
    Global: requests, sectors, lines, bytes_used;
    Shared: requests, wavefronts, bank_conflicts;
    Atomics: requests, updates, addresses, sectors;
    Constant: requests, addresses;
    Texture: requests, texels;
    Placed: load, store;
}

impl AddAssign for Traffic {
    fn add_assign(&mut self, other: Self) {
        self.global_load += other.global_load;
        self.global_store += other.global_store;
        self.bulk_load += other.bulk_load;
        self.shared_load += other.shared_load;
        self.shared_store += other.shared_store;
        self.distributed_load += other.distributed_load;
        self.distributed_store += other.distributed_store;
        self.constant_load += other.constant_load;
        self.texture_load += other.texture_load;
        self.global_atomic += other.global_atomic;
        self.shared_atomic += other.shared_atomic;
        for (buffer, loads) in other.loads_by_buffer {
            *self.loads_by_buffer.entry(buffer).or_default() += loads;
        }
        for (placement, placed) in other.by_placement {
            *self.by_placement.entry(placement).or_default() += placed;
        }
    }
}

/// Which memory an access went to: a global buffer (by its base address,
/// with its name and placement),
/// the block's shared memory, the shared memory of a block of the cluster
/// through its mapped address (by its rank), a constant array (by its
/// name's address), or a texture (by its handle, with the texels the
/// fetch read, `u32::MAX` for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    Global {
        base: usize,
        buffer: &'static str,
        placement: Placement,
    },
    Bulk {
        base: usize,
        copy: u32,
    },
    Shared,
    Distributed {
        rank: u32,
    },
    Constant {
        array: &'static str,
    },
    Texture {
        handle: u64,
        texels: [u32; 4],
    },
}

/// One emulated thread's access: where from, what, and where to.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    /// The call site, by the address of its `Location`.
    pub site: usize,
    pub kind: AccessKind,
    pub space: Space,
    /// Byte offset in the buffer or in shared memory.
    pub offset: u64,
    pub size: u32,
    /// The thread's lane in its warp.
    pub lane: u32,
}

/// The traffic of one warp's accesses between two barriers: every lane's
/// records, lane after lane, each lane's in the order it made them.
///
/// The accesses of one call site (and buffer) are paired into instructions
/// by their place in each lane's sequence: the k-th with the k-th, as in
/// converged code. A lane that made fewer accesses from the site than
/// others skipped some, under a guard or a shorter loop, and the hardware
/// would have paired its accesses by loop iteration; here each is paired
/// with the instruction, in order, whose accesses lie nearest its own
/// address, which is what the iteration decides in the kernels' loops.
///
/// A bulk copy is one instruction of one thread, however many rows of a
/// tensor it reads: its reads are grouped by the copy they belong to.
pub(super) fn count(records: &[Record]) -> Traffic {
    let mut traffic = Traffic::default();
    let mut copies: BTreeMap<(u32, u32, usize), Vec<Record>> = BTreeMap::new();
    // Each (site, buffer)'s accesses, lane by lane, in order.
    let mut sites: BTreeMap<(usize, usize), Vec<Vec<Record>>> = BTreeMap::new();
    for record in records {
        let buffer = match record.space {
            Space::Bulk { base, copy } => {
                copies
                    .entry((record.lane, copy, base))
                    .or_default()
                    .push(*record);
                continue;
            }
            Space::Global { base, .. } => base,
            Space::Shared => 0,
            Space::Distributed { rank } => 1 + rank as usize,
            Space::Constant { array } => array.as_ptr() as usize,
            Space::Texture { handle, .. } => handle as usize,
        };
        let lanes = sites.entry((record.site, buffer)).or_default();
        match lanes.last_mut() {
            Some(lane) if lane[0].lane == record.lane => lane.push(*record),
            _ => lanes.push(vec![*record]),
        }
    }
    for copy in copies.values() {
        traffic.bulk_load += global(copy);
    }
    for lanes in sites.values() {
        for instruction in instructions(lanes) {
            let first = &instruction[0];
            match (first.space, first.kind) {
                (
                    Space::Global {
                        buffer, placement, ..
                    },
                    AccessKind::Read,
                ) => {
                    let loads = global(&instruction);
                    traffic.global_load += loads;
                    *traffic.loads_by_buffer.entry(buffer).or_default() += loads;
                    traffic.by_placement.entry(placement).or_default().load += loads;
                }
                (Space::Global { placement, .. }, AccessKind::Write) => {
                    let stores = global(&instruction);
                    traffic.global_store += stores;
                    traffic.by_placement.entry(placement).or_default().store += stores;
                }
                (Space::Global { .. }, AccessKind::Atomic) => {
                    traffic.global_atomic += atomics(&instruction);
                }
                (Space::Bulk { .. }, _) => unreachable!("bulk copies are counted by copy"),
                (Space::Shared, AccessKind::Read) => traffic.shared_load += shared(&instruction),
                (Space::Shared, AccessKind::Write) => traffic.shared_store += shared(&instruction),
                (Space::Shared, AccessKind::Atomic) => {
                    traffic.shared_atomic += atomics(&instruction)
                }
                (Space::Distributed { .. }, AccessKind::Read) => {
                    traffic.distributed_load += shared(&instruction);
                }
                (Space::Distributed { .. }, AccessKind::Write | AccessKind::Atomic) => {
                    traffic.distributed_store += shared(&instruction);
                }
                (Space::Constant { .. }, _) => {
                    traffic.constant_load += Constant {
                        requests: 1,
                        addresses: distinct(&instruction, 4),
                    }
                }
                (Space::Texture { .. }, _) => {
                    traffic.texture_load += Texture {
                        requests: quads(&instruction),
                        texels: texels(&instruction),
                    }
                }
            }
        }
    }
    traffic
}

/// One site's accesses, lane by lane, paired into warp-level instructions.
fn instructions(lanes: &[Vec<Record>]) -> Vec<Vec<Record>> {
    let most = lanes.iter().map(Vec::len).max().unwrap_or(0);
    let reference = lanes
        .iter()
        .find(|lane| lane.len() == most)
        .expect("one lane made the most accesses");
    let mut instructions: Vec<Vec<Record>> = vec![Vec::new(); most];
    for lane in lanes {
        let mut next = 0;
        for (index, record) in lane.iter().enumerate() {
            // The slots this access can take, leaving room for the rest.
            let last = most - (lane.len() - index);
            let slot = (next..=last)
                .min_by_key(|&slot| reference[slot].offset.abs_diff(record.offset))
                .unwrap_or(next);
            instructions[slot].push(*record);
            next = slot + 1;
        }
    }
    instructions.retain(|instruction| !instruction.is_empty());
    instructions
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

/// The quads (lanes 4k to 4k + 3) among one instruction's lanes: the
/// texture unit takes a warp's fetches a quad at a time.
fn quads(lanes: &[Record]) -> u64 {
    let mut quads: Vec<u32> = lanes.iter().map(|lane| lane.lane / 4).collect();
    quads.sort_unstable();
    quads.dedup();
    quads.len() as u64
}

/// The distinct texels one texture instruction's lanes read.
fn texels(lanes: &[Record]) -> u64 {
    let mut texels: Vec<u32> = lanes
        .iter()
        .flat_map(|lane| match lane.space {
            Space::Texture { texels, .. } => texels,
            _ => unreachable!("a texture instruction holds texture fetches only"),
        })
        .filter(|&texel| texel != u32::MAX)
        .collect();
    texels.sort_unstable();
    texels.dedup();
    texels.len() as u64
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

/// One atomic instruction: its lanes, their distinct addresses and sectors.
fn atomics(lanes: &[Record]) -> Atomics {
    let mut addresses: Vec<u64> = lanes.iter().map(|lane| lane.offset).collect();
    addresses.sort_unstable();
    addresses.dedup();
    Atomics {
        requests: 1,
        updates: lanes.len() as u64,
        addresses: addresses.len() as u64,
        sectors: distinct(lanes, 32),
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
                offset,
                size,
                lane: lane as u32,
            })
            .collect()
    }

    const BUFFER: Space = Space::Global {
        base: 0,
        buffer: "a",
        placement: Placement::Device,
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

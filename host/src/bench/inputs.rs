//! Inputs on the GPU in as many copies as it takes to keep them out of L2:
//! a kernel timed over and over on one small input set would read it from
//! L2 after the first run, and report a bandwidth DRAM cannot give.
//!
//! Each copy holds every buffer a run touches, outputs included, at its own
//! addresses; the runs take the copies in turn. The copies are identical,
//! which does not matter: caches go by address, not by content.

use crate::error::Result;

/// The copies together span at least this many L2 caches, so that between
/// two runs on one copy at least 3 L2s' worth of other data went through.
/// The memory it costs is bounded: under this many L2s plus one copy.
pub const L2_MULTIPLE: usize = 4;

/// How many copies of a set of `set_bytes` to rotate through.
pub fn copies(set_bytes: usize, l2_bytes: Option<usize>) -> usize {
    l2_bytes.map_or(1, |l2| (L2_MULTIPLE * l2).div_ceil(set_bytes.max(1)).max(1))
}

/// Copies of one input set, handed out in turn.
pub struct Rotation<S> {
    sets: Vec<S>,
    next: usize,
}

impl<S> Rotation<S> {
    /// `count` copies, each made by `make`.
    pub fn build(count: usize, make: impl FnMut() -> Result<S>) -> Result<Self> {
        Ok(Self {
            sets: std::iter::repeat_with(make)
                .take(count)
                .collect::<Result<_>>()?,
            next: 0,
        })
    }

    /// The copy for the next run.
    pub fn next(&mut self) -> &mut S {
        let index = self.next;
        self.next = (index + 1) % self.sets.len();
        &mut self.sets[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_are_copied_until_they_span_four_l2s() {
        let l2 = Some(50 << 20);
        assert_eq!(copies(3 << 20, l2), 67);
        assert_eq!(copies(200 << 20, l2), 1);
        assert_eq!(copies(150 << 20, l2), 2);
        assert_eq!(copies(1 << 30, l2), 1);
        assert_eq!(copies(1 << 20, None), 1);
    }

    #[test]
    fn the_copies_come_round_in_turn() {
        let mut rotation = Rotation::build(3, {
            let mut made = 0;
            move || {
                made += 1;
                Ok(made)
            }
        })
        .unwrap();
        let order: Vec<i32> = (0..5).map(|_| *rotation.next()).collect();
        assert_eq!(order, [1, 2, 3, 1, 2]);
    }
}

//! The shadows of a block's shared bytes, indexed by offset as the
//! accesses compute it: the launch-sized memory's from 0, the static
//! arrays' from [`STATIC_START`], kept in two vectors so that the gap
//! between them, as large as the most launch-sized memory a block may
//! have, costs nothing.

use std::ops::{Index, IndexMut};

use super::{STATIC_START, Shadow};

/// One [`Shadow`] per byte of the launch-sized memory and of the static
/// arrays declared so far.
pub(crate) struct Shadows {
    launch_sized: Vec<Shadow>,
    statics: Vec<Shadow>,
}

impl Shadows {
    /// The shadows of `launch_sized` bytes, and of no static array yet.
    pub(crate) fn new(launch_sized: u32) -> Self {
        Self {
            launch_sized: vec![Shadow::default(); launch_sized as usize],
            statics: Vec::new(),
        }
    }

    /// Makes room for static arrays of `bytes` in all.
    pub(crate) fn grow_statics(&mut self, bytes: u32) {
        let bytes = (bytes as usize).max(self.statics.len());
        self.statics.resize(bytes, Shadow::default());
    }

    /// Every shadow, with its byte's offset.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Shadow, u32)> {
        let statics = self.statics.iter().zip(STATIC_START as u32..);
        self.launch_sized.iter().zip(0u32..).chain(statics)
    }
}

impl Index<usize> for Shadows {
    type Output = Shadow;

    fn index(&self, offset: usize) -> &Shadow {
        match offset.checked_sub(STATIC_START as usize) {
            Some(inside) => &self.statics[inside],
            None => &self.launch_sized[offset],
        }
    }
}

impl IndexMut<usize> for Shadows {
    fn index_mut(&mut self, offset: usize) -> &mut Shadow {
        match offset.checked_sub(STATIC_START as usize) {
            Some(inside) => &mut self.statics[inside],
            None => &mut self.launch_sized[offset],
        }
    }
}

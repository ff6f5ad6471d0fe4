use super::bulk::Mbarrier;
#[cfg(not(target_arch = "nvptx64"))]
use super::global::Global;
use super::shared::SharedArray;
pub use gpu_core::{Element, MAX_BOX_SIDE, Swizzle, TiledMap, swizzle_128b};
#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

/// An element type a tensor map's array may hold.
pub trait MapElement: Copy + 'static {
    /// The map's name for it.
    const ELEMENT: Element;
}

impl MapElement for f32 {
    const ELEMENT: Element = Element::F32;
}

impl MapElement for crate::bf16 {
    const ELEMENT: Element = Element::Bf16;
}

/// A tiled tensor map of a 2-D array of `T`, as a kernel receives it:
/// the global address of the 128-byte `CUtensorMap` the host encoded
/// (`cuTensorMapEncodeTiled`) and copied to global memory, which
/// describes the array, its box and the box's layout in shared memory.
///
/// CUDA C++ passes the map by value, as a `const __grid_constant__
/// CUtensorMap` parameter. Rust cannot: a kernel parameter aligned to 64
/// bytes stops rustc's NVPTX calling convention, and a parameter whose
/// address a kernel takes is copied to local memory, where the Tensor
/// Memory Accelerator cannot read it. So the map lives in global memory,
/// and each block acquires it once ([`TensorMap2d::acquire`]).
#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct TensorMap2d<T = f32> {
    map: *const u8,
    element: core::marker::PhantomData<T>,
}

/// A tiled tensor map of a 2-D array of `T`, as an emulated kernel
/// receives it: a view of the array and the map's shape.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
pub struct TensorMap2d<T = f32> {
    source: Global<T>,
    map: TiledMap,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> TensorMap2d<T> {
    /// The map `map` of the array `source`, `map.width × map.height`
    /// elements, row-major.
    pub fn new(source: Global<T>, map: TiledMap) -> Self {
        Self { source, map }
    }
}

impl<T> TensorMap2d<T> {
    /// `fence.proxy.tensormap::generic.acquire.sys`: makes the map the
    /// host wrote visible to the tensor copies this thread issues after
    /// it. A thread acquires the map once, before its first copy.
    #[inline(always)]
    pub fn acquire(self) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: a fence on the map's 128 bytes reads and writes nothing
        // that Rust sees.
        unsafe {
            core::arch::asm!(
                "fence.proxy.tensormap::generic.acquire.sys [{map}], 128;",
                map = in(reg64) self.map,
                options(nostack),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        super::below_sm90(&self);
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::tensor_map_acquire(self.source.base_address());
    }
}

/// `cp.async.bulk.tensor.2d`: starts copying the box whose first element
/// is column `x`, row `y` of `map`'s array into shared memory from
/// `tile[index]` on, laid out as the map says ([`TiledMap::box_index`]);
/// one instruction, executed by the Tensor Memory Accelerator, which
/// fills the box's elements outside the array with zeros. The box's bytes,
/// all of them, count towards `barrier`'s current phase, which completes
/// only once they have landed.
///
/// # Safety
/// This thread has acquired the map ([`TensorMap2d::acquire`]); the box
/// lies inside the launch-sized shared memory, from a multiple of the
/// map's [`TiledMap::destination_alignment`] bytes of the shared window
/// on; no thread touches it until it has waited on the phase (or passed
/// a barrier after a thread that did), and no thread writes the array
/// during the launch; an arrival of the phase expects the box's bytes.
/// The emulator checks all of it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn memcpy_async_tensor_2d<T: MapElement>(
    tile: SharedArray<T>,
    index: u32,
    map: TensorMap2d<T>,
    x: i32,
    y: i32,
    barrier: Mbarrier,
) {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: by this function's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \
             [{to}], [{map}, {{{x}, {y}}}], [{barrier}];",
            to = in(reg32) tile.shared_address(index),
            map = in(reg64) map.map,
            x = in(reg32) x,
            y = in(reg32) y,
            barrier = in(reg32) barrier.word().shared_address(0),
            options(nostack),
        );
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
    super::below_sm90(&(tile, index, map, x, y, barrier));
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let shape = map.map;
        emulator::tensor_map_use(map.source.base_address(), map.source.name());
        let mut bytes = vec![0; shape.box_bytes() as usize];
        let columns = i64::from(x).max(0)
            ..(i64::from(x) + i64::from(shape.box_width)).min(shape.width.into());
        for row in 0..shape.box_height {
            let array_row = i64::from(y) + i64::from(row);
            if !(0..i64::from(shape.height)).contains(&array_row) || columns.is_empty() {
                continue;
            }
            let first = array_row as usize * shape.width as usize + columns.start as usize;
            let values = map.source.read_box_row(first, columns.clone().count());
            let size = size_of::<T>();
            for (column, value) in columns.clone().zip(values) {
                let at = size * shape.box_index(row, (column - i64::from(x)) as u32) as usize;
                // SAFETY: `T` is plain data of `size` bytes.
                let value = unsafe { core::slice::from_raw_parts((&raw const value).cast(), size) };
                bytes[at..at + size].copy_from_slice(value);
            }
        }
        emulator::bulk_copy(
            tile.address(index).cast(),
            &bytes,
            barrier.word().address(0).cast(),
            shape.destination_alignment(),
        );
    }
}

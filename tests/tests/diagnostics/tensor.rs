//! Tensor copies (`tensor`): one copy reads a 2-D box of an array through
//! a tensor map, fills what falls outside the array with zeros, and lays
//! the box out in shared memory as the map says, swizzled or not; a copy
//! through a map its thread has not acquired, a swizzled copy to a place
//! the swizzle cannot start at, and a read before the wait are reported.

use gpu_emulator::{self, AccessKind, Diagnostic, Fault};
use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::tensor::{
    Element, MapElement, Swizzle, TensorMap2d, TiledMap, memcpy_async_tensor_2d, swizzle_128b,
};
use gpu_std::thread::{sync_threads, thread_idx_x};

use crate::support::{assert_says, one_block};

/// The array: 6 rows of 40 elements, element (r, c) = 100 r + c + 1.
const WIDTH: u32 = 40;
const HEIGHT: u32 = 6;

/// The box: 8 rows of 32 elements, one thread an element.
const BOX: (u32, u32) = (32, 8);
const BOX_ELEMENTS: u32 = BOX.0 * BOX.1;

/// The barrier's place, in 8-byte words: after the box, moved or not.
const BARRIER: u32 = (4 * BOX_ELEMENTS + 128) / 8;

/// The box's first column and row: past the array's top and right edges.
const AT: (i32, i32) = (16, -2);

/// What is broken in the copy below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TensorBug {
    None,
    /// Thread 0 never acquires the map.
    NotAcquired,
    /// The box lands 64 bytes into shared memory.
    Misplaced,
    /// The threads read the box without waiting.
    NoWait,
}

fn map(swizzle: Swizzle) -> TiledMap {
    TiledMap {
        width: WIDTH,
        height: HEIGHT,
        box_width: BOX.0,
        box_height: BOX.1,
        swizzle,
        element: Element::F32,
    }
}

/// Thread 0 acquires `map` (where `acquire`) and copies its box at `at`
/// into `tile` through `barrier`, which it initialises; every thread then
/// waits for the copy (where `wait`).
///
/// # Safety
/// As [`memcpy_async_tensor_2d`]'s, but for what `acquire` and `wait`
/// leave out; called by every thread of the block.
pub(crate) unsafe fn tensor_copy<T: MapElement>(
    tile: SharedArray<T>,
    barrier: Mbarrier,
    (map, shape): (TensorMap2d<T>, TiledMap),
    at: (i32, i32),
    (acquire, wait): (bool, bool),
) {
    // SAFETY: by this function's contract.
    unsafe {
        if thread_idx_x() == 0 {
            if acquire {
                map.acquire();
            }
            barrier.init(1);
            fence_proxy_async_shared_cta();
        }
        sync_threads();
        if thread_idx_x() == 0 {
            barrier.arrive_expect_tx(shape.box_bytes());
            memcpy_async_tensor_2d(tile, 0, map, at.0, at.1, barrier);
        }
        if wait {
            barrier.wait(0);
        }
    }
}

/// Thread 0 copies the box at [`AT`] into shared memory; every thread
/// `t` then writes box element (t / 32, t % 32) to `out[t]`, found where
/// the map's layout puts it, and the raw element at `t` to `raw[t]`.
unsafe fn copy_box(
    map: TensorMap2d,
    shape: TiledMap,
    out: GlobalMut<f32>,
    raw: GlobalMut<f32>,
    bug: TensorBug,
) {
    let t = thread_idx_x();
    let offset = if bug == TensorBug::Misplaced { 16 } else { 0 };
    unsafe {
        let tile = SharedArray::<f32>::launch_sized().after(offset);
        let barrier = Mbarrier::at(SharedArray::launch_sized().after(BARRIER));
        let (acquire, wait) = (bug != TensorBug::NotAcquired, bug != TensorBug::NoWait);
        tensor_copy(tile, barrier, (map, shape), AT, (acquire, wait));
        out.write(t as usize, tile.read(shape.box_index(t / BOX.0, t % BOX.0)));
        raw.write(t as usize, tile.read(t));
    }
}

fn copy(swizzle: Swizzle, bug: TensorBug) -> (Result<(), Diagnostic>, Vec<f32>, Vec<f32>) {
    let array: Vec<f32> = (0..HEIGHT * WIDTH)
        .map(|i| (100 * (i / WIDTH) + i % WIDTH + 1) as f32)
        .collect();
    let (mut out, mut raw) = (
        vec![f32::NAN; BOX_ELEMENTS as usize],
        vec![f32::NAN; BOX_ELEMENTS as usize],
    );
    let shape = map(swizzle);
    let tensor = TensorMap2d::new(Global::new("map", &array), shape);
    let (out_view, raw_view) = (
        GlobalMut::new("out", &mut out),
        GlobalMut::new("raw", &mut raw),
    );
    // SAFETY: one thread a box element; the box's bytes, and at most 64
    // more, then the barrier's, in 2 KiB of shared memory; the emulator
    // checks the rest.
    let launch = one_block(BOX_ELEMENTS, 2048);
    let result = gpu_emulator::run("copy_box", &launch, &|| unsafe {
        copy_box(tensor, shape, out_view, raw_view, bug)
    });
    (result, out, raw)
}

/// Box element (r, c): the array's, or 0 outside it.
fn expected(row: u32, column: u32) -> f32 {
    let (r, c) = (AT.1 + row as i32, AT.0 + column as i32);
    if (0..HEIGHT as i32).contains(&r) && (0..WIDTH as i32).contains(&c) {
        (100 * r + c + 1) as f32
    } else {
        0.0
    }
}

fn fault(bug: TensorBug) -> Fault {
    copy(Swizzle::Bytes128, bug)
        .0
        .expect_err("the emulator must report the bug")
        .fault
}

#[test]
fn a_tensor_copy_reads_its_box_and_fills_zeros_outside_the_array() {
    for swizzle in [Swizzle::None, Swizzle::Bytes128] {
        let (result, out, raw) = copy(swizzle, TensorBug::None);
        result.unwrap();
        for t in 0..BOX_ELEMENTS {
            let (row, column) = (t / BOX.0, t % BOX.0);
            assert_eq!(
                out[t as usize],
                expected(row, column),
                "{swizzle:?}, ({row}, {column})"
            );
            // Raw element t holds the box element the swizzle moved there.
            let held = match swizzle {
                Swizzle::None => t,
                Swizzle::Bytes128 => swizzle_128b(t),
            };
            assert_eq!(
                raw[t as usize],
                expected(held / BOX.0, held % BOX.0),
                "{swizzle:?}, {t}"
            );
        }
    }
}

#[test]
fn a_swizzle_moves_each_rows_chunks_by_its_place_among_eight() {
    // Row 3's chunk 1 (elements 4 to 7) lands at chunk 1 ^ 3 = 2.
    assert_eq!(swizzle_128b(3 * 32 + 5), 3 * 32 + 8 + 1);
    // Row 9 is row 1 of the next eight.
    assert_eq!(swizzle_128b(9 * 32), 9 * 32 + 4);
    for i in 0..1024 {
        assert_eq!(swizzle_128b(swizzle_128b(i)), i);
    }
}

#[test]
fn a_tensor_map_used_without_acquiring_it_is_reported() {
    let diagnostic = copy(Swizzle::Bytes128, TensorBug::NotAcquired)
        .0
        .unwrap_err();
    let Fault::TensorMapNotAcquired { thread, buffer } = diagnostic.fault else {
        panic!("not an unacquired map: {diagnostic}");
    };
    assert_eq!((thread, buffer), ((0, 0, 0), "map"));
    assert_says(&diagnostic, "TensorMap2d::acquire");
}

#[test]
fn a_swizzled_copy_off_its_alignment_is_reported() {
    let Fault::BulkCopyShape {
        offset, alignment, ..
    } = fault(TensorBug::Misplaced)
    else {
        panic!("not a refused copy");
    };
    assert_eq!((offset, alignment), (64, 1024));
}

#[test]
fn reading_a_tensor_copy_without_waiting_is_reported() {
    let Fault::BulkInFlight { access, .. } = fault(TensorBug::NoWait) else {
        panic!("not a copy in flight");
    };
    assert_eq!((access.thread, access.kind), ((0, 0, 0), AccessKind::Read));
}

//! Atomics: each operation's result against a CPU model, a histogram of
//! random bytes through shared and global atomics in any block order, and
//! every way an atomic and a plain access can meet unordered, each
//! reported with both threads.

use gpu_emulator::traffic::Atomics;
use gpu_emulator::{self, Access, AccessKind, BlockOrder, Diagnostic, Fault, Launch, Limits};
use gpu_std::Scope;
use gpu_std::atomic::{
    atomic_add, atomic_and, atomic_cas, atomic_dec, atomic_exch, atomic_inc, atomic_max,
    atomic_min, atomic_or, atomic_xor,
};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use gpu_std::warp;
use rand::Rng;

use crate::support::{one_block, rng};

fn blocks(grid: u32, threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        grid: (grid, 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
        cluster: (1, 1, 1),
    }
}

fn run_in(order: BlockOrder, launch: &Launch, body: &dyn Fn()) -> Result<(), Diagnostic> {
    gpu_emulator::run_within("atomics", launch, Limits::default(), order, body)
}

/// Every thread of 3 blocks of 64 applies `op` with its own random value
/// to element `thread % 5` of 5 starting ones; the elements at the end
/// must be `fold` of the start and every value, in any block order.
fn every_thread_updates<T>(
    op: unsafe fn(gpu_std::atomic::Place<T>, T) -> T,
    fold: fn(T, T) -> T,
    random: fn(&mut rand::rngs::SmallRng) -> T,
) where
    T: Copy + PartialEq + std::fmt::Debug + 'static,
{
    let mut rng = rng();
    let values: Vec<T> = (0..192).map(|_| random(&mut rng)).collect();
    let start: Vec<T> = (0..5).map(|_| random(&mut rng)).collect();
    let mut expected = start.clone();
    for (thread, &value) in values.iter().enumerate() {
        let slot = &mut expected[thread % 64 % 5];
        *slot = fold(*slot, value);
    }
    for seed in 0..3 {
        let mut out = start.clone();
        let (input, view) = (
            Global::new("values", &values),
            GlobalMut::new("out", &mut out),
        );
        let body = || {
            let (t, b) = (thread_idx_x(), block_idx_x());
            // SAFETY: one value a thread; element t % 5 of the five.
            unsafe {
                let value = input.read((b * 64 + t) as usize);
                op(view.element((t % 5) as usize), value);
            }
        };
        run_in(BlockOrder::from_seed(seed), &blocks(3, 64, 0), &body).unwrap();
        assert_eq!(
            out,
            expected,
            "in block order {}",
            BlockOrder::from_seed(seed)
        );
    }
}

#[test]
fn integer_atomics_agree_with_the_cpu_in_any_block_order() {
    every_thread_updates::<u32>(atomic_add, u32::wrapping_add, |r| r.random());
    every_thread_updates::<i32>(atomic_add, i32::wrapping_add, |r| r.random());
    every_thread_updates::<u64>(atomic_add, u64::wrapping_add, |r| r.random());
    every_thread_updates::<i64>(atomic_add, i64::wrapping_add, |r| r.random());
    every_thread_updates::<u32>(atomic_min, u32::min, |r| r.random());
    every_thread_updates::<i32>(atomic_min, i32::min, |r| r.random());
    every_thread_updates::<i64>(atomic_max, i64::max, |r| r.random());
    every_thread_updates::<u64>(atomic_max, u64::max, |r| r.random());
    every_thread_updates::<u32>(
        atomic_and,
        |a, b| a & b,
        |r| r.random::<u32>() | r.random::<u32>(),
    );
    every_thread_updates::<u64>(
        atomic_or,
        |a, b| a | b,
        |r| r.random::<u64>() & r.random::<u64>(),
    );
    every_thread_updates::<i32>(atomic_xor, |a, b| a ^ b, |r| r.random());
}

#[test]
fn float_additions_of_integers_agree_exactly() {
    // Small integers add exactly in any order.
    every_thread_updates::<f32>(atomic_add, |a, b| a + b, |r| r.random_range(-64..64) as f32);
    every_thread_updates::<f64>(atomic_add, |a, b| a + b, |r| r.random_range(-64..64) as f64);
}

/// Thread 0 of one block applies `body` to a buffer holding `start`; what
/// the buffer holds then, and what the atomic returned.
fn one_thread<T: Copy + 'static>(start: T, body: fn(GlobalMut<T>) -> T) -> (T, T) {
    let mut out = [start];
    let mut old = [start];
    let (view, returned) = (
        GlobalMut::new("out", &mut out),
        GlobalMut::new("old", &mut old),
    );
    // SAFETY: one thread, element 0 of each buffer.
    let thread = || unsafe { returned.write(0, body(view)) };
    gpu_emulator::run("one", &one_block(1, 0), &thread).unwrap();
    (out[0], old[0])
}

#[test]
fn exchange_compare_and_swap_increment_and_decrement_return_the_old_value() {
    // SAFETY (each): element 0 of a buffer of one.
    assert_eq!(
        one_thread(7u32, |o| unsafe { atomic_exch(o.element(0), 9) }),
        (9, 7)
    );
    assert_eq!(
        one_thread(1.5f64, |o| unsafe { atomic_exch(o.element(0), -2.0) }),
        (-2.0, 1.5)
    );
    assert_eq!(
        one_thread(7u64, |o| unsafe { atomic_cas(o.element(0), 7, 3) }),
        (3, 7)
    );
    assert_eq!(
        one_thread(7i32, |o| unsafe { atomic_cas(o.element(0), 6, 3) }),
        (7, 7)
    );
    // Compared by bits: -0.0 is not 0.0.
    assert_eq!(
        one_thread(-0.0f32, |o| unsafe { atomic_cas(o.element(0), 0.0, 1.0) })
            .0
            .to_bits(),
        (-0.0f32).to_bits()
    );
    assert_eq!(
        one_thread(4u32, |o| unsafe { atomic_inc(o.element(0), 9) }),
        (5, 4)
    );
    assert_eq!(
        one_thread(9u32, |o| unsafe { atomic_inc(o.element(0), 9) }),
        (0, 9)
    );
    assert_eq!(
        one_thread(4u32, |o| unsafe { atomic_dec(o.element(0), 9) }),
        (3, 4)
    );
    assert_eq!(
        one_thread(0u32, |o| unsafe { atomic_dec(o.element(0), 9) }),
        (9, 0)
    );
    assert_eq!(
        one_thread(12u32, |o| unsafe { atomic_dec(o.element(0), 9) }),
        (9, 12)
    );
}

/// A 256-bin histogram of `bytes`: each block counts its share in shared
/// memory with block-scoped atomics, then adds its bins to the global ones.
fn histogram(bytes: &[u32], grid: u32) -> Result<Vec<u32>, Diagnostic> {
    let mut bins = vec![0u32; 256];
    let (input, output) = (
        Global::new("bytes", bytes),
        GlobalMut::new("bins", &mut bins),
    );
    let n = bytes.len() as u32;
    let body = || {
        let (t, threads) = (thread_idx_x(), block_dim_x());
        // SAFETY: 256 u32 of launch-sized memory, one bin each; every
        // index below is inside its buffer.
        unsafe {
            let local = SharedArray::<u32>::launch_sized();
            local.write(t, 0);
            sync_threads();
            let mut i = block_idx_x() * threads + t;
            while i < n {
                atomic_add(local.element(input.read(i as usize)), 1);
                i += threads * grid;
            }
            sync_threads();
            atomic_add(output.element(t as usize), local.read(t));
        }
    };
    run_in(
        BlockOrder::from_seed(grid.into()),
        &blocks(grid, 256, 1024),
        &body,
    )?;
    Ok(bins)
}

#[test]
fn a_histogram_privatised_in_shared_memory_counts_every_byte() {
    let mut rng = rng();
    // Skewed: most bytes in a few bins, so that lanes collide.
    let bytes: Vec<u32> = (0..5000)
        .map(|_| {
            if rng.random_bool(0.7) {
                rng.random_range(0..4)
            } else {
                rng.random_range(0..256)
            }
        })
        .collect();
    let mut expected = vec![0u32; 256];
    bytes.iter().for_each(|&byte| expected[byte as usize] += 1);
    for grid in [1, 3, 7] {
        assert_eq!(histogram(&bytes, grid).unwrap(), expected, "{grid} blocks");
    }
}

#[test]
fn a_plain_increment_racing_an_atomic_one_in_shared_memory_is_reported() {
    let body = || {
        let t = thread_idx_x();
        // SAFETY: one word of launch-sized memory.
        unsafe {
            let bin = SharedArray::<u32>::launch_sized();
            if t == 0 {
                bin.write(0, 0);
            }
            sync_threads();
            if t == 5 {
                bin.write(0, bin.read(0) + 1);
            } else {
                atomic_add(bin.element(0), 1);
            }
        }
    };
    let diagnostic = gpu_emulator::run("racy", &one_block(32, 4), &body).unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    let kinds = [earlier.kind, later.kind];
    assert!(kinds.contains(&AccessKind::Atomic), "{diagnostic}");
    assert!(
        earlier.thread == (5, 0, 0) || later.thread == (5, 0, 0),
        "{diagnostic}"
    );
    assert!(
        diagnostic.to_string().contains("atomically updated"),
        "{diagnostic}"
    );
}

#[test]
fn a_shared_atomic_on_a_word_never_written_is_reported() {
    // SAFETY: one word of launch-sized memory, never zeroed.
    let body = || unsafe {
        atomic_add(SharedArray::<u32>::launch_sized().element(0), 1);
    };
    let diagnostic = gpu_emulator::run("unset", &one_block(32, 4), &body).unwrap_err();
    assert!(
        matches!(
            diagnostic.fault,
            Fault::SharedUninitialized { offset: 0, .. }
        ),
        "{diagnostic}"
    );
}

/// Runs `body` on 2 blocks of 32 threads over `out`, one element.
fn two_blocks(body: fn(GlobalMut<u32>)) -> Result<(), Diagnostic> {
    let mut out = [0u32];
    let view = GlobalMut::new("out", &mut out);
    gpu_emulator::run("two", &blocks(2, 32, 0), &|| body(view))
}

fn access(thread: (u32, u32, u32), kind: AccessKind) -> Access {
    Access { thread, kind }
}

#[test]
fn atomics_from_every_block_to_one_element_are_no_race() {
    // SAFETY (each): element 0 of a buffer of one.
    two_blocks(|out| unsafe {
        atomic_add(out.element(0), 1);
    })
    .unwrap();
    two_blocks(|out| unsafe {
        atomic_max(out.element(0).in_scope(Scope::System), 1);
    })
    .unwrap();
}

#[test]
fn a_plain_read_of_what_another_block_updates_atomically_is_a_race() {
    let diagnostic = two_blocks(|out| unsafe {
        // SAFETY: element 0 of a buffer of one.
        if block_idx_x() == 0 {
            atomic_add(out.element(0), 1);
        } else if thread_idx_x() == 3 {
            let _ = out.read(0);
        }
    })
    .unwrap_err();
    assert_eq!(diagnostic.block, (1, 0, 0));
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalRace {
            buffer: "out",
            index: 0,
            earlier: access((31, 0, 0), AccessKind::Atomic),
            earlier_block: (0, 0, 0),
            later: access((3, 0, 0), AccessKind::Read),
        }
    );
}

#[test]
fn an_atomic_after_another_blocks_plain_write_is_a_race() {
    let diagnostic = two_blocks(|out| unsafe {
        // SAFETY: element 0 of a buffer of one.
        match (block_idx_x(), thread_idx_x()) {
            (0, 7) => out.write(0, 5),
            (1, 2) => {
                atomic_add(out.element(0), 1);
            }
            _ => {}
        }
    })
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalRace {
            buffer: "out",
            index: 0,
            earlier: access((7, 0, 0), AccessKind::Write),
            earlier_block: (0, 0, 0),
            later: access((2, 0, 0), AccessKind::Atomic),
        }
    );
}

#[test]
fn a_block_reads_its_own_atomics_after_a_barrier() {
    let mut out = [0u32; 2];
    let view = GlobalMut::new("out", &mut out);
    let body = || {
        let b = block_idx_x() as usize;
        // SAFETY: element b of two, one a block.
        unsafe {
            atomic_add(view.element(b), 1);
            sync_threads();
            if thread_idx_x() == 0 {
                view.write(b, view.read(b) * 10);
            }
        }
    };
    gpu_emulator::run("own", &blocks(2, 32, 0), &body).unwrap();
    assert_eq!(out, [320, 320]);
}

#[test]
fn block_scoped_atomics_from_two_blocks_to_one_element_are_reported() {
    for narrow_first in [true, false] {
        let body = |out: GlobalMut<u32>| {
            let scope = |block| match (block == 0) == narrow_first {
                true => Scope::Block,
                false => Scope::Device,
            };
            // SAFETY: element 0 of a buffer of one.
            unsafe { atomic_add(out.element(0).in_scope(scope(block_idx_x())), 1) };
        };
        let mut out = [0u32];
        let view = GlobalMut::new("out", &mut out);
        let diagnostic =
            gpu_emulator::run("narrow", &blocks(2, 32, 0), &|| body(view)).unwrap_err();
        assert_eq!(
            diagnostic.fault,
            Fault::AtomicScopeTooNarrow {
                buffer: "out",
                index: 0,
                earlier: (31, 0, 0),
                earlier_block: (0, 0, 0),
                later: (0, 0, 0),
            },
            "narrow first: {narrow_first}"
        );
        assert!(
            diagnostic.to_string().contains("Scope::Device"),
            "{diagnostic}"
        );
    }
}

#[test]
fn atomics_are_counted_apart_from_loads_and_stores() {
    let mut out = [0u32; 64];
    let view = GlobalMut::new("out", &mut out);
    let body = || {
        let t = thread_idx_x();
        // SAFETY: elements 0 and t of 64.
        unsafe {
            atomic_add(view.element(0), 1);
            atomic_add(view.element(t as usize), 1);
        }
    };
    let traffic = gpu_emulator::run_counting(
        "counted",
        &one_block(32, 0),
        Limits::default(),
        BlockOrder::Forward,
        &body,
    )
    .unwrap();
    assert_eq!(
        traffic.global_store.requests + traffic.global_load.requests,
        0
    );
    assert_eq!(
        traffic.global_atomic,
        Atomics {
            requests: 2,
            updates: 64,
            addresses: 1 + 32,
            sectors: 1 + 4,
        }
    );
}

/// Runs `body` on one block of 32 threads over one word of launch-sized
/// memory that thread 0 zeroes before a barrier.
fn one_word(body: fn(SharedArray<u32>, u32)) -> Result<(), Diagnostic> {
    let thread = || {
        let t = thread_idx_x();
        // SAFETY: one word of launch-sized memory.
        unsafe {
            let word = SharedArray::<u32>::launch_sized();
            if t == 0 {
                word.write(0, 0);
            }
            sync_threads();
            body(word, t);
        }
    };
    gpu_emulator::run("one_word", &one_block(32, 4), &thread)
}

#[test]
fn a_plain_read_after_every_other_threads_atomic_is_reported() {
    // The last thread to run reads: every atomic came before it.
    let diagnostic = one_word(|word, t| unsafe {
        if t == 31 {
            let _ = word.read(0);
        } else {
            atomic_add(word.element(0), 1);
        }
    })
    .unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    assert_eq!(
        earlier,
        access((0, 0, 0), AccessKind::Atomic),
        "{diagnostic}"
    );
    assert_eq!(later, access((31, 0, 0), AccessKind::Read), "{diagnostic}");
}

#[test]
fn a_thread_reads_and_writes_what_it_alone_updated_atomically() {
    one_word(|word, t| unsafe {
        if t == 3 {
            atomic_add(word.element(0), 5);
            word.write(0, word.read(0) * 2);
        }
    })
    .unwrap();
}

#[test]
fn a_thread_that_updated_atomically_races_with_another_threads_atomic() {
    // A shuffle holds lane 0 until lane 1 has made its atomic, and orders
    // no memory: lane 0's plain read then meets lane 1's atomic.
    let diagnostic = one_word(|word, t| unsafe {
        if t < 2 {
            atomic_add(word.element(0), 1);
            warp::shfl_sync(0b11, t, 0);
            if t == 0 {
                let _ = word.read(0);
            }
        }
    })
    .unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    assert_eq!(
        earlier,
        access((1, 0, 0), AccessKind::Atomic),
        "{diagnostic}"
    );
    assert_eq!(later, access((0, 0, 0), AccessKind::Read), "{diagnostic}");
}

#[test]
fn a_syncwarp_orders_the_lanes_atomics_before_a_plain_read() {
    one_word(|word, t| unsafe {
        atomic_add(word.element(0), 1);
        warp::syncwarp(warp::ALL_LANES);
        // Lanes 0 and 1, the two atomics the shadow keeps.
        if t < 2 {
            assert_eq!(word.read(0), 32);
        }
    })
    .unwrap();
}

#[test]
fn a_lane_reads_its_own_atomic_made_after_a_syncwarp() {
    // Lane 0's atomic comes first and is ordered by the syncwarp; lane 1's
    // own, after it, is its own to read.
    one_word(|word, t| unsafe {
        if t == 0 {
            atomic_add(word.element(0), 1);
        }
        warp::syncwarp(warp::ALL_LANES);
        if t == 1 {
            atomic_add(word.element(0), 1);
            assert_eq!(word.read(0), 2);
        }
    })
    .unwrap();
}

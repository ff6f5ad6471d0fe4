//! Atomics on global memory: each operation's result against a CPU
//! model in any block order, and every way an atomic and a plain access,
//! or two blocks' atomics of too narrow a scope, meet unordered, each
//! reported with both threads; and their traffic, counted apart.

use gpu_emulator::traffic::Atomics;
use gpu_emulator::{self, Access, AccessKind, BlockOrder, Diagnostic, Fault, Launch, Limits};
use gpu_std::Scope;
use gpu_std::atomic::{
    atomic_add, atomic_and, atomic_cas, atomic_dec, atomic_exch, atomic_inc, atomic_max,
    atomic_min, atomic_or, atomic_xor,
};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{block_idx_x, sync_threads, thread_idx_x};
use rand::Rng;

use crate::support::{assert_says, blocks, one_block, rng};

pub fn run_in(order: BlockOrder, launch: &Launch, body: &dyn Fn()) -> Result<(), Diagnostic> {
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
    // Counters that wrap at a limit of 9: past it up, and at 0 or past it
    // down.
    for (start, after) in [(4u32, 5), (9, 0)] {
        let incremented = one_thread(start, |o| unsafe { atomic_inc(o.element(0), 9) });
        assert_eq!(incremented, (after, start));
    }
    for (start, after) in [(4u32, 3), (0, 9), (12, 9)] {
        let decremented = one_thread(start, |o| unsafe { atomic_dec(o.element(0), 9) });
        assert_eq!(decremented, (after, start));
    }
}

/// Runs `body` on 2 blocks of 32 threads over `out`, one element.
fn two_blocks(body: fn(GlobalMut<u32>)) -> Result<(), Diagnostic> {
    let mut out = [0u32];
    let view = GlobalMut::new("out", &mut out);
    gpu_emulator::run("two", &blocks(2, 32, 0), &|| body(view))
}

pub fn access(thread: (u32, u32, u32), kind: AccessKind) -> Access {
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

/// The race at `out[0]`: thread `earlier` of block 0's access of
/// `earlier_kind`, then thread `later`'s of `later_kind`, in the block
/// that reports it.
fn race_at_out_0(
    earlier: u32,
    earlier_kind: AccessKind,
    later: u32,
    later_kind: AccessKind,
) -> Fault {
    Fault::GlobalRace {
        buffer: "out",
        index: 0,
        earlier: access((earlier, 0, 0), earlier_kind),
        earlier_block: (0, 0, 0),
        later: access((later, 0, 0), later_kind),
    }
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
        race_at_out_0(31, AccessKind::Atomic, 3, AccessKind::Read)
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
        race_at_out_0(7, AccessKind::Write, 2, AccessKind::Atomic)
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
        assert_says(&diagnostic, "Scope::Device");
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

#[test]
fn a_blocks_read_after_its_own_atomics_still_races_with_another_blocks() {
    // Block 1's last atomic is its own, ordered by its barrier; block 0's,
    // before it, is ordered with nothing in block 1.
    let diagnostic = two_blocks(|out| unsafe {
        atomic_add(out.element(0), 1);
        sync_threads();
        if block_idx_x() == 1 && thread_idx_x() == 0 {
            let _ = out.read(0);
        }
    })
    .unwrap_err();
    assert_eq!(diagnostic.block, (1, 0, 0));
    let Fault::GlobalRace {
        earlier,
        earlier_block,
        later,
        ..
    } = diagnostic.fault
    else {
        panic!("{diagnostic}");
    };
    assert_eq!(
        (earlier.kind, earlier_block),
        (AccessKind::Atomic, (0, 0, 0))
    );
    assert_eq!(later, access((0, 0, 0), AccessKind::Read));
}

//! Global-memory races: two threads of one launch touching one element, at
//! least one writing, with nothing ordering them. A barrier orders the
//! threads of its own block; nothing orders two blocks.

use gpu_emulator::{self, Access, AccessKind, BlockOrder, Diagnostic, Fault, Launch, Limits};
use gpu_std::global::GlobalMut;
use gpu_std::thread::{block_idx_x, block_idx_y, block_idx_z, sync_threads, thread_idx_x};
use gpu_std::warp;

use crate::support::blocks;

/// Runs `body` over `grid` blocks of 32 threads, with `out` of 64
/// elements poisoned.
fn run(grid: u32, body: fn(GlobalMut<f32>)) -> (Result<(), Diagnostic>, Vec<f32>) {
    let mut out = vec![f32::NAN; 64];
    let view = GlobalMut::new("out", &mut out);
    let launch = blocks(grid, 32, 0);
    let result = gpu_emulator::run("racy", &launch, &|| body(view));
    (result, out)
}

/// The race at `out[index]`: `earlier` by a thread of `earlier_block`, then
/// `later` by a thread of the block that reports it.
fn race(index: usize, earlier: Access, earlier_block: (u32, u32, u32), later: Access) -> Fault {
    Fault::GlobalRace {
        buffer: "out",
        index,
        earlier,
        earlier_block,
        later,
    }
}

fn read(thread: (u32, u32, u32)) -> Access {
    Access {
        thread,
        kind: AccessKind::Read,
    }
}

fn write(thread: (u32, u32, u32)) -> Access {
    Access {
        thread,
        kind: AccessKind::Write,
    }
}

#[test]
fn two_blocks_writing_one_element_race() {
    // SAFETY: 32 threads a block, each writing one of the 64 elements.
    let (result, _) = run(2, |out| unsafe { out.write(thread_idx_x() as usize, 1.0) });
    let diagnostic = result.unwrap_err();
    assert_eq!(diagnostic.block, (1, 0, 0));
    assert_eq!(
        diagnostic.fault,
        race(0, write((0, 0, 0)), (0, 0, 0), write((0, 0, 0)))
    );
    assert!(
        diagnostic.to_string().ends_with(
            "global-memory race at out[0]: thread (0, 0, 0) of block (0, 0, 0) wrote it and \
             thread (0, 0, 0) wrote it with nothing ordering them (a sync_threads orders the \
             threads of its own block only)"
        ),
        "{diagnostic}"
    );
}

#[test]
fn a_block_reading_what_another_wrote_races_and_a_barrier_does_not_help() {
    // SAFETY: as above; block 1 reads what block 0 wrote.
    let (result, _) = run(2, |out| unsafe {
        let t = thread_idx_x() as usize;
        if block_idx_x() == 0 {
            out.write(t, 1.0);
        }
        sync_threads();
        if block_idx_x() == 1 {
            out.write(32 + t, out.read(t));
        }
    });
    assert_eq!(
        result.unwrap_err().fault,
        race(0, write((0, 0, 0)), (0, 0, 0), read((0, 0, 0)))
    );
}

/// Thread t writes element t, then reads t + 1 (mod 32), the barrier
/// between them when `synced`.
fn rotate(out: GlobalMut<f32>, synced: bool) {
    let t = thread_idx_x();
    // SAFETY: 32 threads in one block, within the 64 elements.
    unsafe {
        out.write(t as usize, t as f32);
        if synced {
            sync_threads();
        }
        out.write(32 + t as usize, out.read(((t + 1) % 32) as usize));
    }
}

#[test]
fn a_neighbours_element_read_before_the_barrier_races_with_its_write() {
    let (result, _) = run(1, |out| rotate(out, false));
    // Thread 0 runs first: it reads element 1 before thread 1 writes it.
    assert_eq!(
        result.unwrap_err().fault,
        race(1, read((0, 0, 0)), (0, 0, 0), write((1, 0, 0)))
    );
}

#[test]
fn a_neighbours_element_read_after_the_barrier_is_ordered() {
    let (result, out) = run(1, |out| rotate(out, true));
    result.unwrap();
    let expected: Vec<f32> = (0..32).map(|t| ((t + 1) % 32) as f32).collect();
    assert_eq!(out[32..], expected);
}

#[test]
fn a_race_between_blocks_names_both_in_a_three_dimensional_grid_in_either_order() {
    // Blocks (0, 1, 1) and (1, 2, 1) of a 2×3×2 grid write out[5]; the
    // block that runs second reports the race, naming the first.
    let racers = [(0, 1, 1), (1, 2, 1)];
    let body = |out: GlobalMut<f32>| {
        let block = (block_idx_x(), block_idx_y(), block_idx_z());
        if racers.contains(&block) && thread_idx_x() == 5 {
            // SAFETY: element 5 of 64.
            unsafe { out.write(5, 1.0) };
        }
    };
    let launch = Launch {
        grid: (2, 3, 2),
        block: (32, 1, 1),
        shared_bytes: 0,
        cluster: (1, 1, 1),
    };
    for (order, [earlier, later]) in [
        (BlockOrder::Forward, racers),
        (BlockOrder::Reverse, [racers[1], racers[0]]),
    ] {
        let mut out = vec![f32::NAN; 64];
        let view = GlobalMut::new("out", &mut out);
        let diagnostic =
            gpu_emulator::run_within("racy", &launch, Limits::default(), order, &|| body(view))
                .unwrap_err();
        assert_eq!(diagnostic.block, later, "{order}");
        let Fault::GlobalRace {
            index,
            earlier_block,
            ..
        } = diagnostic.fault
        else {
            panic!("{order}: {diagnostic}");
        };
        assert_eq!((index, earlier_block), (5, earlier), "{order}");
    }
}

#[test]
fn reads_by_many_threads_then_a_barrier_then_a_write_in_one_block_are_ordered() {
    // SAFETY: element 0 of 64; every thread reads it, thread 0 writes it
    // once the block has passed the barrier.
    let (result, out) = run(1, |out| unsafe {
        std::hint::black_box(out.read(0));
        sync_threads();
        if thread_idx_x() == 0 {
            out.write(0, 2.0);
        }
    });
    result.unwrap();
    assert_eq!(out[0], 2.0);
}

#[test]
fn a_block_writing_what_another_read_races_though_it_read_it_too() {
    // Both blocks read out[0]; block 1 then writes it, after a barrier that
    // orders its own read only: block 0's read is still unordered with it.
    // SAFETY: element 0 of 64.
    let (result, _) = run(2, |out| unsafe {
        std::hint::black_box(out.read(0));
        sync_threads();
        if block_idx_x() == 1 && thread_idx_x() == 0 {
            out.write(0, 2.0);
        }
    });
    let diagnostic = result.unwrap_err();
    assert_eq!(diagnostic.block, (1, 0, 0));
    assert_eq!(
        diagnostic.fault,
        race(0, read((0, 0, 0)), (0, 0, 0), write((0, 0, 0)))
    );
}

#[test]
fn a_reader_writing_what_another_thread_read_in_the_same_interval_races() {
    // Every lane reads out[0] and meets the others at a shuffle, which
    // orders no memory; lane 0 then writes it, while lane 1's read is
    // unordered with the write.
    // SAFETY: element 0 of 64.
    let (result, _) = run(1, |out| unsafe {
        let value = out.read(0);
        std::hint::black_box(warp::shfl_xor_sync(warp::ALL_LANES, value, 1));
        if thread_idx_x() == 0 {
            out.write(0, 2.0);
        }
    });
    assert_eq!(
        result.unwrap_err().fault,
        race(0, read((1, 0, 0)), (0, 0, 0), write((0, 0, 0)))
    );
}

#[test]
fn a_thread_reading_twice_and_then_writing_races_with_no_one() {
    // SAFETY: element t of 64, read twice and written by thread t alone.
    let (result, out) = run(1, |out| unsafe {
        let t = thread_idx_x() as usize;
        let twice = out.read(t) + out.read(t);
        out.write(t, if twice.is_nan() { 1.0 } else { twice });
    });
    result.unwrap();
    assert_eq!(out[..32], [1.0; 32]);
}

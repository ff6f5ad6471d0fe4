//! The kernels on the CPU emulator, against the CPU, at odd sizes and on
//! fresh random inputs (`SEED=n` replays one); and a histogram whose one
//! thread increments its bin without an atomic, which the emulator
//! reports as the race it is.

use gpu_host::{Backend, Emulator};
use gpu_std::atomic::atomic_add;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{sync_threads, thread_idx_x};
use gpu_std::{Kernel, kernels, shared_array};
use histogram::{BINS, BLOCK, COMPACT, HISTOGRAM, HistogramArgs, Size, grid, histogram_of};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// A generator from `SEED`, or from a fresh seed it prints.
fn rng() -> SmallRng {
    let seed = std::env::var("SEED").map_or_else(|_| rand::random(), |seed| seed.parse().unwrap());
    println!("SEED={seed} replays this test");
    SmallRng::seed_from_u64(seed)
}

fn count(kernel: &Kernel<HistogramArgs, Size>, bytes: &[u8]) -> gpu_host::Result<Vec<u32>> {
    let backend = Emulator::default();
    let input = backend.upload("bytes", bytes)?;
    let mut bins = backend.upload("bins", &vec![0u32; BINS as usize])?;
    let n = bytes.len() as u32;
    // SAFETY: n bytes, 256 bins.
    unsafe { backend.launch(kernel, &Size { n }, (&input, &mut bins, n))? };
    backend.download(&bins)
}

#[test]
fn the_histogram_counts_every_byte() {
    let mut rng = rng();
    for n in [1, 255, 4097, 70_001] {
        // Skewed: most bytes in four bins, so that lanes meet at them.
        let bytes: Vec<u8> = (0..n)
            .map(|_| if rng.random_bool(0.6) { rng.random_range(0..4) } else { rng.random() })
            .collect();
        assert_eq!(count(&HISTOGRAM[0], &bytes).unwrap(), histogram_of(&bytes), "{n} bytes");
    }
}

#[test]
fn the_compaction_keeps_every_value_above_the_threshold_once() {
    let mut rng = rng();
    let backend = Emulator::default();
    for n in [1, 31, 33, 1000, 5000] {
        let values: Vec<u32> = (0..n).map(|_| rng.random_range(0..1000)).collect();
        let threshold = rng.random_range(0..1000);
        let input = backend.upload("values", &values).unwrap();
        let mut kept = backend.alloc("kept", values.len()).unwrap();
        let mut count = backend.upload("count", &[0u32]).unwrap();
        // SAFETY: n values, room for all of them kept, one count.
        unsafe {
            backend
                .launch(&COMPACT[0], &Size { n }, (&input, &mut kept, &mut count, n, threshold))
                .unwrap()
        };
        let mut expected: Vec<u32> = values.iter().copied().filter(|&v| v > threshold).collect();
        let count = backend.download(&count).unwrap()[0] as usize;
        let mut got = backend.download(&kept).unwrap()[..count].to_vec();
        // Warps take their places in whatever order their atomics run.
        expected.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, expected, "{n} values above {threshold}");
    }
}

kernels! {
    /// The histogram with one thread's increment not atomic.
    pub const RACY: [Kernel<HistogramArgs, Size>];

    /// As `histogram`, thread 5 incrementing its bin with a plain read and write.
    #[launch(grid)]
    #[launch_bounds(BLOCK)]
    pub unsafe fn histogram_racy(bytes: Global<u8>, bins: GlobalMut<u32>, n: u32) {
        let local = unsafe { shared_array!(RACY_BINS: [u32; BINS]) };
        let t = thread_idx_x();
        unsafe { local.write(t, 0) };
        sync_threads();
        if t < n {
            let byte = u32::from(unsafe { bytes.read(t as usize) });
            if t == 5 {
                unsafe { local.write(byte, local.read(byte) + 1) };
            } else {
                unsafe { atomic_add(local.element(byte), 1) };
            }
        }
        sync_threads();
        unsafe { atomic_add(bins.element(t as usize), local.read(t)) };
    }
}

#[test]
fn a_plain_increment_racing_the_atomic_ones_is_reported() {
    let error = count(&RACY[0], &[7; 64]).unwrap_err().to_string();
    assert!(
        error.contains("shared-memory race at byte 28 of the shared array RACY_BINS"),
        "{error}"
    );
    assert!(error.contains("atomically updated"), "{error}");
    assert!(error.contains("thread (5, 0, 0)"), "{error}");
}

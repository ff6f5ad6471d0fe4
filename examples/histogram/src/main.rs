//! Runs the histogram on GPU 0 over `BYTES` random bytes (2^28 if not
//! given) and the compaction over as many values, checks both against the
//! CPU, and times them.

use gpu_host::{Backend, Gpu, Runs};
use histogram::{BINS, COMPACT, HISTOGRAM, Size, histogram_of};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = std::env::args().nth(1).map_or(Ok(1 << 28), |n| n.parse::<u32>())?;
    if n == 0 {
        return Err("BYTES: 1 to 2^32 - 1".into());
    }
    let bytes: Vec<u8> = (0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let gpu = Gpu::new(0, &gpu_host::include_ptx!("histogram"))?;
    let runs = Runs { warmup: 10, timed: 100 };
    let (input, zeros) = (gpu.upload("bytes", &bytes)?, vec![0u32; BINS as usize]);
    let mut bins = gpu.upload("bins", &zeros)?;
    // SAFETY: n bytes, 256 bins.
    unsafe { gpu.launch(&HISTOGRAM[0], &Size { n }, (&input, &mut bins, n))? };
    if gpu.download(&bins)? != histogram_of(&bytes) {
        return Err("the histogram counted WRONG".into());
    }
    // Timed after the check: each launch adds to the bins.
    // SAFETY: as above.
    let launch = || unsafe { gpu.launch(&HISTOGRAM[0], &Size { n }, (&input, &mut bins, n)) };
    let ms = gpu.median_ms(runs, launch)?;
    println!(
        "{}: histogram of {n} bytes correct, {ms:.3} ms, {:.0} GB/s",
        gpu.name(),
        n as f64 / ms / 1e6
    );
    let values: Vec<u32> = bytes.iter().map(|&byte| byte.into()).collect();
    let (input, mut kept) = (gpu.upload("values", &values)?, gpu.alloc("kept", values.len())?);
    let mut count = gpu.upload("count", &[0u32])?;
    // SAFETY: n values, room for all of them kept, one count.
    unsafe { gpu.launch(&COMPACT[0], &Size { n }, (&input, &mut kept, &mut count, n, 127))? };
    let mut got = gpu.download(&kept)?;
    got.truncate(gpu.download(&count)?[0] as usize);
    let mut expected: Vec<u32> = values.iter().copied().filter(|&v| v > 127).collect();
    got.sort_unstable();
    expected.sort_unstable();
    if got != expected {
        return Err("the compaction kept WRONG".into());
    }
    println!("compaction of {n} values correct: {} kept", got.len());
    Ok(())
}

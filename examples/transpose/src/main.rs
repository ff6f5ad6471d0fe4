//! Runs each transpose on GPU 0 at `ROWS COLS` (8192 8192 if not given),
//! checks every element, and times it beside a copy of the same bytes.

use gpu_host::{Backend, Gpu, Runs};
use transpose::{KERNELS, Shape, transposed};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes = std::env::args().skip(1).map(|size| size.parse::<u32>());
    let (rows, cols) = (sizes.next().unwrap_or(Ok(8192))?, sizes.next().unwrap_or(Ok(8192))?);
    let shape = Shape { rows, cols };
    let elements = rows.checked_mul(cols).filter(|&n| n > 0).ok_or("ROWS × COLS: 1 to 2^32 - 1")?;
    let input: Vec<f32> =
        (0..elements).map(|i| (i.wrapping_mul(2_654_435_761) >> 8) as f32).collect();
    let gpu = Gpu::new(0, &gpu_host::include_ptx!("transpose"))?;
    let (x, mut y) = (gpu.upload("input", &input)?, gpu.alloc("output", input.len())?);
    let (runs, mut times) = (Runs { warmup: 10, timed: 100 }, Vec::new());
    for kernel in KERNELS {
        gpu.poison(&mut y)?;
        // SAFETY: both buffers hold rows × cols elements, which fit in u32.
        let mut launch = || unsafe { gpu.launch(kernel, &shape, (&x, &mut y, rows, cols)) };
        launch()?;
        times.push((kernel.name, gpu.median_ms(runs, launch)?));
        if gpu.download(&y)? != transposed(&input, shape) {
            return Err(format!("{} transposed WRONG", kernel.name).into());
        }
    }
    // Timed last, so that it finds the GPU as warm as the kernels found it.
    let copy_ms = gpu.median_ms(runs, || gpu.copy(&x, &mut y))?;
    println!("{}, {rows} × {cols} f32: a copy takes {copy_ms:.3} ms", gpu.name());
    for (name, ms) in times {
        println!("{name:16} correct, {ms:.3} ms, {:.2}× the copy", copy_ms / ms);
    }
    Ok(())
}

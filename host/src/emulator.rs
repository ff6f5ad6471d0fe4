//! The CPU emulator as a [`Backend`]: buffers are host vectors, and each
//! launch runs the `gpu` crate's kernels, compiled for the host, under
//! `gpu::emulator`, which checks every barrier and shared-memory access.

use std::time::Instant;

use cudarc::driver::LaunchConfig;
use gpu::emulator::{self, Launch};

use crate::backend::{Backend, Value};
use crate::error::{Error, Result};
use crate::kernels::blur::{Blur, ImageShape};
use crate::kernels::gemv::{Element, Gemv, GemvShape};
use crate::kernels::matmul::{Matmul, MatmulShape};
use crate::timing::{Runs, median};

/// Runs kernels on the CPU, one emulated thread at a time.
pub struct Emulator;

/// Runs one launch of `kernel` under the emulator.
fn emulate(kernel: &'static str, config: LaunchConfig, body: &dyn Fn()) -> Result<()> {
    let launch = Launch {
        kernel,
        grid: config.grid_dim,
        block: config.block_dim,
        shared_bytes: config.shared_mem_bytes,
    };
    emulator::run(&launch, body).map_err(Error::Emulator)
}

impl Backend for Emulator {
    type Buffer<T: Value> = Vec<T>;

    fn description(&self) -> String {
        "CPU emulator".to_string()
    }

    fn upload<T: Value>(&self, _what: &'static str, data: &[T]) -> Result<Vec<T>> {
        Ok(data.to_vec())
    }

    fn alloc<T: Value>(&self, what: &'static str, len: usize) -> Result<Vec<T>> {
        let mut buffer = Vec::new();
        buffer
            .try_reserve_exact(len)
            .map_err(|_| Error::OutOfMemory {
                what,
                bytes: len.saturating_mul(size_of::<T>()),
            })?;
        buffer.resize(len, T::POISON);
        Ok(buffer)
    }

    fn poison<T: Value>(&self, buffer: &mut Vec<T>) -> Result<()> {
        buffer.fill(T::POISON);
        Ok(())
    }

    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut Vec<T>) -> Result<()> {
        buffer.copy_from_slice(data);
        Ok(())
    }

    fn download<T: Value>(&self, buffer: &Vec<T>) -> Result<Vec<T>> {
        Ok(buffer.clone())
    }

    fn matmul(
        &self,
        kernel: Matmul,
        shape: MatmulShape,
        a: &Vec<f32>,
        b: &Vec<f32>,
        c: &mut Vec<f32>,
    ) -> Result<()> {
        let config = kernel.checked_launch(shape, [a.len(), b.len(), c.len()])?;
        let (m, n, k) = (shape.m as u32, shape.n as u32, shape.k as u32);
        let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
        let entry = match kernel {
            Matmul::Naive => gpu::matmul::matmul_naive,
            Matmul::Tiled16 => gpu::matmul::matmul_tiled_16,
            Matmul::Tiled32 => gpu::matmul::matmul_tiled_32,
        };
        // SAFETY: the buffers match the checked shape, and the emulator
        // runs the launch configuration the kernel's contract asks for.
        emulate(kernel.entry_point(), config, &|| unsafe {
            entry(a, b, c, m, n, k)
        })
    }

    fn gemv<T: Element>(
        &self,
        kernel: Gemv,
        shape: GemvShape,
        alpha: T,
        a: &Vec<T>,
        x: &Vec<T>,
        beta: T,
        y: &mut Vec<T>,
    ) -> Result<()> {
        let config = kernel.checked_launch::<T>(shape, [a.len(), x.len(), y.len()])?;
        let (m, n) = (shape.m as u32, shape.n as u32);
        let (a, x, y) = (a.as_ptr(), x.as_ptr(), y.as_mut_ptr());
        let entry = T::HOST_KERNELS[Gemv::ALL
            .iter()
            .position(|&k| k == kernel)
            .expect("every kernel is in ALL")];
        // SAFETY: as for `matmul`.
        emulate(kernel.entry_point::<T>(), config, &|| unsafe {
            entry(alpha, a, x, beta, y, m, n)
        })
    }

    fn blur(
        &self,
        kernel: Blur,
        image: ImageShape,
        radius: u32,
        input: &Vec<u8>,
        output: &mut Vec<u8>,
    ) -> Result<()> {
        let config = kernel.checked_launch(image, radius, [input.len(), output.len()])?;
        let (width, height, channels) = (
            image.width as u32,
            image.height as u32,
            image.channels as u32,
        );
        let (input, output) = (input.as_ptr(), output.as_mut_ptr());
        let entry = match kernel {
            Blur::Naive => gpu::blur::blur_naive,
            Blur::Tiled => gpu::blur::blur_tiled,
        };
        // SAFETY: as for `matmul`.
        emulate(kernel.entry_point(), config, &|| unsafe {
            entry(input, output, width, height, channels, radius)
        })
    }

    /// Wall-clock time of the emulation: it says how long the emulator
    /// took, nothing about a GPU.
    fn median_ms(&self, runs: Runs, mut launch: impl FnMut() -> Result<()>) -> Result<f64> {
        for _ in 0..runs.warmup {
            launch()?;
        }
        let mut times = Vec::with_capacity(runs.timed);
        for _ in 0..runs.timed.max(1) {
            let start = Instant::now();
            launch()?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok(median(&mut times))
    }
}

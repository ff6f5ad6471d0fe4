//! The CPU emulator as a [`Backend`]: buffers are host vectors, and each
//! launch runs the kernel, compiled for the host, under `gpu_emulator`, which checks every barrier and every shared- and
//! global-memory access; [`CountingEmulator`] also counts each launch's
//! memory traffic as the hardware would.

use std::cell::RefCell;

use gpu_emulator::Limits;
use gpu_emulator::traffic::Traffic;
use gpu_std::Kernel;

use crate::backend::{Backend, HostMemory, Params, Value, checked_launch};
use crate::error::{Error, Result};
use crate::timing::{self, Runs};

/// Runs kernels on the CPU, one emulated thread at a time.
pub struct Emulator;

impl Backend for Emulator {
    type Memory = HostMemory;

    fn description(&self) -> String {
        "CPU emulator".to_string()
    }

    fn upload<T: Value>(&self, what: &'static str, data: &[T]) -> Result<Vec<T>> {
        let mut buffer = self.alloc(what, data.len())?;
        buffer.copy_from_slice(data);
        Ok(buffer)
    }

    fn len<T: Value>(&self, buffer: &Vec<T>) -> usize {
        buffer.len()
    }

    fn alloc<T: Value>(&self, what: &'static str, len: usize) -> Result<Vec<T>> {
        let mut buffer = Vec::new();
        buffer
            .try_reserve_exact(len)
            .map_err(|_| Error::OutOfHostMemory {
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

    fn set_constant(&self, name: &'static str, values: &[f32]) -> Result<()> {
        gpu_emulator::set_constant(name, values);
        Ok(())
    }

    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, HostMemory>,
    ) -> Result<()> {
        let launch = checked_launch(kernel, problem)?;
        A::entry(kernel, &args)?;
        let args = A::emulated(args, kernel.params);
        // SAFETY: the caller vouches for the kernel's contract; the
        // emulator runs the contract's own launch shape, and checks every
        // global access against its buffer.
        let limits = Limits::within(kernel.bounds);
        gpu_emulator::run_within(kernel.name, &launch, limits, &|| unsafe {
            (kernel.run)(args)
        })
        .map_err(Error::Emulator)
    }

    /// Wall-clock time of the emulation: it says how long the emulator
    /// took, nothing about a GPU.
    fn median_ms<E: From<Error>>(
        &self,
        runs: Runs,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<f64, E> {
        timing::wall_median_ms(runs, launch)
    }
}

/// The emulator, counting every launch's memory traffic: requests, sectors
/// and bank conflicts per warp-level instruction (`gpu_emulator::traffic`).
#[derive(Default)]
pub struct CountingEmulator {
    /// Each kernel's last launch.
    counted: RefCell<Vec<(&'static str, Traffic)>>,
}

impl Backend for CountingEmulator {
    type Memory = HostMemory;

    fn description(&self) -> String {
        "CPU emulator, counting memory traffic".to_string()
    }

    fn upload<T: Value>(&self, what: &'static str, data: &[T]) -> Result<Vec<T>> {
        Emulator.upload(what, data)
    }

    fn len<T: Value>(&self, buffer: &Vec<T>) -> usize {
        buffer.len()
    }

    fn alloc<T: Value>(&self, what: &'static str, len: usize) -> Result<Vec<T>> {
        Emulator.alloc(what, len)
    }

    fn poison<T: Value>(&self, buffer: &mut Vec<T>) -> Result<()> {
        Emulator.poison(buffer)
    }

    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut Vec<T>) -> Result<()> {
        Emulator.overwrite(data, buffer)
    }

    fn download<T: Value>(&self, buffer: &Vec<T>) -> Result<Vec<T>> {
        Emulator.download(buffer)
    }

    fn set_constant(&self, name: &'static str, values: &[f32]) -> Result<()> {
        gpu_emulator::set_constant(name, values);
        Ok(())
    }

    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, HostMemory>,
    ) -> Result<()> {
        let launch = checked_launch(kernel, problem)?;
        A::entry(kernel, &args)?;
        let args = A::emulated(args, kernel.params);
        // SAFETY: as for `Emulator::launch`.
        let traffic = gpu_emulator::run_counting(
            kernel.name,
            &launch,
            Limits::within(kernel.bounds),
            &|| unsafe { (kernel.run)(args) },
        )
        .map_err(Error::Emulator)?;
        let mut counted = self.counted.borrow_mut();
        counted.retain(|(name, _)| *name != kernel.name);
        counted.push((kernel.name, traffic));
        Ok(())
    }

    fn median_ms<E: From<Error>>(
        &self,
        runs: Runs,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<f64, E> {
        timing::wall_median_ms(runs, launch)
    }

    fn traffic(&self, kernel: &str) -> Option<Traffic> {
        let counted = self.counted.borrow();
        counted
            .iter()
            .find(|(name, _)| *name == kernel)
            .map(|(_, traffic)| traffic.clone())
    }
}

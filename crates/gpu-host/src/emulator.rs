//! The CPU emulator as a [`Backend`]: buffers are host vectors, and each
//! launch runs the kernel, compiled for the host, under `gpu_emulator`,
//! which checks every barrier and every shared- and global-memory access; [`CountingEmulator`] also counts each launch's
//! memory traffic as the hardware would.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::sync::Arc;

use gpu_emulator::texture::{self, Texture};
use gpu_emulator::traffic::Traffic;
use gpu_emulator::{BlockOrder, Diagnostic, Limits};
use gpu_std::tensor::{MapElement, TiledMap};
use gpu_std::{Kernel, Launch, Placement, Sampling, shared};

use crate::backend::{
    Advice, Backend, HostMemory, Memory, Params, TensorMap, TextureObject, Value,
    check_allocatable, check_overwrite, check_tensor_map, check_texture, checked_launch_within,
    require_managed,
};
use crate::error::{Error, Result};
use crate::l2::{
    EMULATED_PERSISTING_L2, PersistingL2, PersistingWindow, WindowHolder, check_window,
};
use crate::timing::{self, Runs, Timing};

thread_local! {
    /// Who holds the persisting window of this OS thread's emulators,
    /// which share one stream as the launches of one GPU do.
    static WINDOW: Arc<WindowHolder> = Arc::default();
    /// The pairs (from, to) of this OS thread's emulated GPUs where `from`
    /// reaches `to`'s memory: peer access, as a process's CUDA contexts
    /// hold it.
    static PEERS: RefCell<BTreeSet<(usize, usize)>> = RefCell::default();
    /// The emulated GPU whose launch is taking its arguments now.
    static LAUNCHING: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The emulated GPUs of a host: two, so that the two-GPU lessons' kernels
/// run on the emulator as they do on a pair of GPUs.
pub const EMULATED_GPUS: usize = 2;

/// Whether emulated GPU `from`'s kernels reach GPU `to`'s memory: its own,
/// or a peer's once peer access was enabled ([`PEERS`]).
fn reaches(from: usize, to: usize) -> bool {
    from == to || PEERS.with_borrow(|peers| peers.contains(&(from, to)))
}

/// A texture of the emulator's: its handle in `gpu_emulator`'s registry
/// of this OS thread, which holds a copy of its texels.
pub struct HostTexture {
    handle: u64,
}

impl TextureObject for HostTexture {
    fn handle(&self) -> &u64 {
        &self.handle
    }
}

impl Drop for HostTexture {
    fn drop(&mut self) {
        texture::destroy_texture(self.handle);
    }
}

/// A buffer of the emulator's: the host's own vector, with the placement
/// it stands for, which the traffic report counts its accesses by.
#[derive(Clone, Debug, PartialEq)]
pub struct HostBuffer<T> {
    elements: Vec<T>,
    placement: Placement,
    /// The emulated GPU that allocated it.
    device: usize,
}

impl<T> std::ops::Deref for HostBuffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.elements
    }
}

impl<T> std::ops::DerefMut for HostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.elements
    }
}

impl Memory for HostMemory {
    type Buffer<T: Value> = HostBuffer<T>;
    type Texture = HostTexture;
    type EncodedMap = ();

    fn placement<T: Value>(buffer: &HostBuffer<T>) -> Placement {
        buffer.placement
    }

    /// Another emulated GPU's device memory is the peer's, reached or not
    /// as peer access between the two says.
    fn seen_by_kernel<T: Value>(buffer: &HostBuffer<T>) -> Placement {
        match (buffer.placement, LAUNCHING.get()) {
            (Placement::Device, Some(device)) if device != buffer.device => {
                match reaches(device, buffer.device) {
                    true => Placement::Peer,
                    false => Placement::PeerWithoutAccess,
                }
            }
            (placement, _) => placement,
        }
    }
}

/// Runs kernels on the CPU, one emulated thread at a time, each launch's
/// blocks in `order` (forward by default), as emulated GPU 0 unless
/// [`Emulator::on_device`] says another.
#[derive(Clone, Copy, Debug, Default)]
pub struct Emulator {
    /// The order in which each launch's blocks run.
    pub order: BlockOrder,
    /// Which of the [`EMULATED_GPUS`] it is.
    device: usize,
}

impl Emulator {
    /// The emulator, running each launch's blocks in the order `seed`
    /// picks (forward, reverse or shuffled: [`BlockOrder::from_seed`]), so
    /// that the seed that replays a run's inputs replays its block order
    /// too.
    pub fn from_seed(seed: u64) -> Self {
        Self {
            order: BlockOrder::from_seed(seed),
            device: 0,
        }
    }

    /// The same emulator as emulated GPU `ordinal`, one of
    /// [`EMULATED_GPUS`]: its buffers are that GPU's memory, which another
    /// emulated GPU's kernels reach only by peer access.
    pub fn on_device(self, ordinal: usize) -> Result<Self> {
        if ordinal >= EMULATED_GPUS {
            return Err(Error::NoSuchDevice {
                requested: ordinal,
                available: EMULATED_GPUS,
            });
        }
        Ok(Self {
            device: ordinal,
            ..self
        })
    }

    /// Which emulated GPU it is.
    pub fn ordinal(&self) -> usize {
        self.device
    }
}

impl Backend for Emulator {
    type Memory = HostMemory;

    fn description(&self) -> String {
        format!("CPU emulator, {}", self.order)
    }

    fn len<T: Value>(&self, buffer: &HostBuffer<T>) -> usize {
        buffer.len()
    }

    /// Host memory whatever the placement: the emulator's device is the
    /// host, and the placement is what its accesses are counted under
    /// (and, unmapped, refused).
    fn alloc_in<T: Value>(
        &self,
        what: &'static str,
        len: usize,
        placement: Placement,
    ) -> Result<HostBuffer<T>> {
        check_allocatable(placement, true)?;
        let mut elements = Vec::new();
        elements
            .try_reserve_exact(len)
            .map_err(|_| Error::OutOfHostMemory {
                what,
                bytes: len.saturating_mul(size_of::<T>()),
            })?;
        elements.resize(len, T::POISON);
        Ok(HostBuffer {
            elements,
            placement,
            device: self.device,
        })
    }

    fn poison<T: Value>(&self, buffer: &mut HostBuffer<T>) -> Result<()> {
        buffer.fill(T::POISON);
        Ok(())
    }

    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut HostBuffer<T>) -> Result<()> {
        check_overwrite(buffer.len(), data)?;
        buffer.copy_from_slice(data);
        Ok(())
    }

    fn download<T: Value>(&self, buffer: &HostBuffer<T>) -> Result<Vec<T>> {
        Ok(buffer.to_vec())
    }

    /// Nothing to move: the emulator's memory is the host's.
    fn prefetch<T: Value>(&self, buffer: &HostBuffer<T>, _to_device: bool) -> Result<()> {
        require_managed(buffer.placement)
    }

    /// Nothing to place: the emulator's memory is the host's.
    fn advise<T: Value>(&self, buffer: &HostBuffer<T>, _advice: Advice) -> Result<()> {
        require_managed(buffer.placement)
    }

    fn enable_peer_access(&self, peer: &Emulator) -> Result<()> {
        if self.device == peer.device {
            return Err(Error::PeerUnreachable {
                from: self.device,
                to: peer.device,
                why: "it is the same GPU",
            });
        }
        PEERS.with_borrow_mut(|peers| peers.insert((self.device, peer.device)));
        Ok(())
    }

    fn reaches(&self, other: &Emulator) -> bool {
        reaches(self.device, other.device)
    }

    /// Nothing to wait for: every emulated launch is done when it returns.
    fn wait_for(&self, _other: &Emulator) -> Result<()> {
        Ok(())
    }

    fn texture(
        &self,
        texels: &HostBuffer<f32>,
        width: usize,
        height: usize,
        sampling: Sampling,
    ) -> Result<HostTexture> {
        check_texture(texels.len(), width, height)?;
        let handle = texture::create_texture(Texture {
            texels: texels.to_vec(),
            width: width as u32,
            height: height as u32,
            sampling,
        });
        Ok(HostTexture { handle })
    }

    fn tensor_map<T: MapElement + Value>(
        &self,
        source: HostBuffer<T>,
        shape: TiledMap,
    ) -> Result<TensorMap<HostMemory, T>> {
        check_tensor_map::<T>(source.len(), shape)?;
        Ok(TensorMap::new(source, shape, ()))
    }

    fn persisting_l2(&self) -> Result<Option<PersistingL2>> {
        Ok(Some(EMULATED_PERSISTING_L2))
    }

    /// Checks the window as the GPU would and sets nothing: the emulator
    /// has no L2, and a window changes no value a kernel computes.
    fn persist<T: Value>(
        &self,
        buffer: &HostBuffer<T>,
        carve_out: usize,
    ) -> Result<PersistingWindow> {
        let holder = WINDOW.with(Arc::clone);
        let bytes = size_of_val(&**buffer);
        let hit_ratio = check_window(self.persisting_l2()?, bytes, carve_out, &holder)?;
        Ok(PersistingWindow::new(hit_ratio, holder, || ()))
    }

    /// Every kernel: the emulator has what each GPU the project runs on has.
    fn capability(&self) -> Option<(u32, u32)> {
        None
    }

    fn set_constant<T: Value>(&self, name: &'static str, values: &[T]) -> Result<()> {
        gpu_emulator::set_constant(name, values);
        Ok(())
    }

    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, HostMemory>,
    ) -> Result<()> {
        // SAFETY: passed on from the caller.
        unsafe { emulate(kernel, problem, args, *self, gpu_emulator::run_within) }
    }

    /// Wall-clock time of the emulation: it says how long the emulator
    /// took, nothing about a GPU.
    fn timing_after<E: From<Error>>(
        &self,
        runs: Runs,
        setup: impl FnMut() -> Result<(), E>,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<Timing, E> {
        timing::wall_timing_after(runs, setup, launch)
    }
}

/// The emulator, counting every launch's memory traffic: requests, sectors
/// and bank conflicts per warp-level instruction (`gpu_emulator::traffic`).
#[derive(Default)]
pub struct CountingEmulator {
    /// The emulator that runs each launch, in its block order.
    emulator: Emulator,
    /// Each kernel's last launch.
    counted: RefCell<Vec<(&'static str, Traffic)>>,
}

impl CountingEmulator {
    /// The counting emulator, running each launch's blocks in the order
    /// `seed` picks, as [`Emulator::from_seed`] does.
    pub fn from_seed(seed: u64) -> Self {
        Self::counting(Emulator::from_seed(seed))
    }

    /// `emulator`, counting.
    pub fn counting(emulator: Emulator) -> Self {
        Self {
            emulator,
            counted: RefCell::default(),
        }
    }
}

impl Backend for CountingEmulator {
    type Memory = HostMemory;

    fn description(&self) -> String {
        format!("{}, counting memory traffic", self.emulator.description())
    }

    fn len<T: Value>(&self, buffer: &HostBuffer<T>) -> usize {
        buffer.len()
    }

    fn alloc_in<T: Value>(
        &self,
        what: &'static str,
        len: usize,
        placement: Placement,
    ) -> Result<HostBuffer<T>> {
        self.emulator.alloc_in(what, len, placement)
    }

    fn poison<T: Value>(&self, buffer: &mut HostBuffer<T>) -> Result<()> {
        self.emulator.poison(buffer)
    }

    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut HostBuffer<T>) -> Result<()> {
        self.emulator.overwrite(data, buffer)
    }

    fn download<T: Value>(&self, buffer: &HostBuffer<T>) -> Result<Vec<T>> {
        self.emulator.download(buffer)
    }

    fn prefetch<T: Value>(&self, buffer: &HostBuffer<T>, to_device: bool) -> Result<()> {
        self.emulator.prefetch(buffer, to_device)
    }

    fn advise<T: Value>(&self, buffer: &HostBuffer<T>, advice: Advice) -> Result<()> {
        self.emulator.advise(buffer, advice)
    }

    fn enable_peer_access(&self, peer: &CountingEmulator) -> Result<()> {
        self.emulator.enable_peer_access(&peer.emulator)
    }

    fn reaches(&self, other: &CountingEmulator) -> bool {
        self.emulator.reaches(&other.emulator)
    }

    fn wait_for(&self, other: &CountingEmulator) -> Result<()> {
        self.emulator.wait_for(&other.emulator)
    }

    fn texture(
        &self,
        texels: &HostBuffer<f32>,
        width: usize,
        height: usize,
        sampling: Sampling,
    ) -> Result<HostTexture> {
        self.emulator.texture(texels, width, height, sampling)
    }

    fn tensor_map<T: MapElement + Value>(
        &self,
        source: HostBuffer<T>,
        shape: TiledMap,
    ) -> Result<TensorMap<HostMemory, T>> {
        self.emulator.tensor_map(source, shape)
    }

    fn persisting_l2(&self) -> Result<Option<PersistingL2>> {
        self.emulator.persisting_l2()
    }

    fn persist<T: Value>(
        &self,
        buffer: &HostBuffer<T>,
        carve_out: usize,
    ) -> Result<PersistingWindow> {
        self.emulator.persist(buffer, carve_out)
    }

    fn capability(&self) -> Option<(u32, u32)> {
        self.emulator.capability()
    }

    fn set_constant<T: Value>(&self, name: &'static str, values: &[T]) -> Result<()> {
        self.emulator.set_constant(name, values)
    }

    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, HostMemory>,
    ) -> Result<()> {
        // SAFETY: passed on from the caller.
        let traffic = unsafe {
            emulate(
                kernel,
                problem,
                args,
                self.emulator,
                gpu_emulator::run_counting,
            )
        }?;
        let mut counted = self.counted.borrow_mut();
        counted.retain(|(name, _)| *name != kernel.name);
        counted.push((kernel.name, traffic));
        Ok(())
    }

    fn timing_after<E: From<Error>>(
        &self,
        runs: Runs,
        setup: impl FnMut() -> Result<(), E>,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<Timing, E> {
        self.emulator.timing_after(runs, setup, launch)
    }

    fn traffic(&self, kernel: &str) -> Option<Traffic> {
        let counted = self.counted.borrow();
        counted
            .iter()
            .find(|(name, _)| *name == kernel)
            .map(|(_, traffic)| traffic.clone())
    }
}

/// How `gpu_emulator` runs a launch: `run_within`, or `run_counting`,
/// which also counts its memory traffic.
type EmulatorRun<R> =
    fn(&'static str, &Launch, Limits, BlockOrder, &dyn Fn()) -> Result<R, Diagnostic>;

/// Runs `kernel` on `problem` with `run` (`gpu_emulator::run_within` or
/// `run_counting`) as `emulator`'s GPU, its blocks in its order, once its
/// launch contract is within the limits and its arguments pick an
/// instance it was compiled for; each buffer argument is seen as that GPU
/// sees it ([`Memory::seen_by_kernel`]).
///
/// # Safety
/// As for [`Backend::launch`].
unsafe fn emulate<A: Params, P, R>(
    kernel: &Kernel<A, P>,
    problem: &P,
    args: A::Host<'_, HostMemory>,
    emulator: Emulator,
    run: EmulatorRun<R>,
) -> Result<R> {
    // Hopper's opt-in limit, as the emulator holds it.
    let launch = checked_launch_within(kernel, problem, shared::OPT_IN_LIMIT_BYTES)?;
    A::entry(kernel, &args)?;
    LAUNCHING.set(Some(emulator.device));
    let args = A::emulated(args, kernel.params);
    LAUNCHING.set(None);
    // SAFETY: the caller vouches for the kernel's contract; the emulator
    // runs the contract's own launch shape within the kernel's launch
    // bounds, and checks every global access against its buffer.
    let body = || unsafe { (kernel.run)(args) };
    run(
        kernel.name,
        &launch,
        Limits::within(kernel.bounds),
        emulator.order,
        &body,
    )
    .map_err(Error::Emulator)
}

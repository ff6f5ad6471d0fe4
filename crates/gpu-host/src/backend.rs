//! Where kernels run: the GPU, or the CPU emulator. A backend knows buffers,
//! launches and timing, and no kernel by name: every kernel is launched
//! through [`Backend::launch`], typed by the kernel's own parameter list as
//! `gpu_std::kernels!` declared it.

use std::any::Any;

use cudarc::driver::{CudaStream, DevicePtr};
use gpu_emulator::traffic::Traffic;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::tensor::{MapElement, TensorMap2d, TiledMap};
use gpu_std::texture::Texture2d;
use gpu_std::{Kernel, Placement, Sampling};

use crate::error::{Error, Result};
use crate::l2::{PersistingL2, PersistingWindow};
use crate::timing::{Runs, Timing};

pub use crate::launch_check::{checked_launch, checked_launch_within};
pub use crate::value::{DeviceRepr, Value};

/// Where a backend keeps its buffers.
pub trait Memory: 'static {
    /// A buffer of `T` in this memory.
    type Buffer<T: Value>;
    /// A texture of this memory's backend ([`Backend::texture`]).
    type Texture: TextureObject;
    /// A tensor map as this memory holds it once encoded: the GPU's 128
    /// bytes in global memory; nothing for the emulator, which reads the
    /// map's shape.
    type EncodedMap;

    /// Where `buffer`'s bytes live.
    fn placement<T: Value>(buffer: &Self::Buffer<T>) -> Placement;

    /// Where `buffer`'s bytes live as the kernel being launched sees
    /// them: on the emulator, another emulated GPU's memory is
    /// [`Placement::Peer`], or [`Placement::PeerWithoutAccess`]; otherwise
    /// where they live.
    fn seen_by_kernel<T: Value>(buffer: &Self::Buffer<T>) -> Placement {
        Self::placement(buffer)
    }
}

/// Refuses a placement no allocation makes on a backend: another GPU's
/// memory, and unmapped host memory where `unmapped` is not allowed.
pub(crate) fn check_allocatable(placement: Placement, unmapped: bool) -> Result<()> {
    let why = match placement {
        Placement::Peer | Placement::PeerWithoutAccess => {
            "allocate it on the GPU whose memory it is, and enable peer access to that GPU"
        }
        Placement::Unmapped if !unmapped => {
            "a GPU's buffers are memory its kernels reach; unmapped host memory is the host's own \
             vector, which copies reach"
        }
        _ => return Ok(()),
    };
    Err(Error::NotAllocatable { placement, why })
}

/// A tiled tensor map over a buffer of `T` ([`Backend::tensor_map`]),
/// which a kernel's [`TensorMap2d`] parameter receives. It owns the buffer
/// it maps, whose address the map holds.
pub struct TensorMap<M: Memory, T: Value = f32> {
    source: M::Buffer<T>,
    shape: TiledMap,
    encoded: M::EncodedMap,
}

impl<M: Memory, T: Value> TensorMap<M, T> {
    /// The map of `source`, of `shape`, as `encoded`.
    pub(crate) fn new(source: M::Buffer<T>, shape: TiledMap, encoded: M::EncodedMap) -> Self {
        Self {
            source,
            shape,
            encoded,
        }
    }

    /// The buffer it maps, for the kernels' other parameters.
    pub fn source(&self) -> &M::Buffer<T> {
        &self.source
    }

    /// The array's shape and the box's.
    pub fn shape(&self) -> TiledMap {
        self.shape
    }
}

/// Checks a tensor map of `shape` over a buffer of `len` elements of `T`.
pub(crate) fn check_tensor_map<T: MapElement>(len: usize, shape: TiledMap) -> Result<()> {
    let problem = if shape.element == T::ELEMENT {
        shape.problem()
    } else {
        Some("the map's element type must be the buffer's")
    };
    if let Some(why) = problem {
        return Err(Error::TensorMapShape {
            width: shape.width,
            height: shape.height,
            box_width: shape.box_width,
            box_height: shape.box_height,
            why,
        });
    }
    let elements = shape.width as usize * shape.height as usize;
    if len != elements {
        return Err(Error::LengthMismatch {
            what: "a tensor map's array",
            expected: elements,
            actual: len,
        });
    }
    Ok(())
}

/// Checks that `data` fits a buffer of `len` elements exactly, as
/// [`Backend::overwrite`] asks.
pub(crate) fn check_overwrite<T>(len: usize, data: &[T]) -> Result<()> {
    if len != data.len() {
        return Err(Error::LengthMismatch {
            what: "the buffer overwritten",
            expected: data.len(),
            actual: len,
        });
    }
    Ok(())
}

/// Refuses a prefetch or advice for a buffer in `placement` unless it is
/// managed memory, as the driver would.
pub(crate) fn require_managed(placement: Placement) -> Result<()> {
    match placement {
        Placement::Managed => Ok(()),
        placement => Err(Error::NotManaged { placement }),
    }
}

/// A texture as the host holds it: its handle, which a kernel's
/// [`Texture2d`] parameter receives; destroyed when dropped.
pub trait TextureObject {
    /// The handle (`cudaTextureObject_t`).
    fn handle(&self) -> &u64;
}

/// The largest 2-D texture on a CUDA array, texels wide and high, on
/// every GPU from Turing on.
pub const TEXTURE_LIMIT: (usize, usize) = (131_072, 65_536);

/// Checks a texture of `width × height` texels made of a buffer of `len`.
pub(crate) fn check_texture(len: usize, width: usize, height: usize) -> Result<()> {
    let (max_width, max_height) = TEXTURE_LIMIT;
    if !(1..=max_width).contains(&width) || !(1..=max_height).contains(&height) {
        return Err(Error::TextureSize { width, height });
    }
    if len != width * height {
        return Err(Error::LengthMismatch {
            what: "a texture's texels",
            expected: width * height,
            actual: len,
        });
    }
    Ok(())
}

/// The GPU's memory: device buffers in any placement (its [`Memory`] is
/// in `gpu`).
pub enum DeviceMemory {}

/// The emulator's memory: the host's own vectors (its [`Memory`] is in
/// `emulator`).
pub enum HostMemory {}

/// A texture of backend `B`.
pub type Texture<B> = <<B as Backend>::Memory as Memory>::Texture;

/// A buffer of `T` on backend `B`.
pub type Buffer<B, T> = <<B as Backend>::Memory as Memory>::Buffer<T>;

/// A kernel parameter, and what the host passes for it on each backend.
pub trait Param: Copy + 'static {
    /// The host's argument: a buffer for a global-memory view, the value
    /// itself for a scalar.
    type Host<'a, M: Memory>
    where
        M: 'a;

    /// The argument as a GPU launch passes it: its bits, from the low
    /// byte of a little-endian word on (the driver copies as many bytes
    /// as the parameter has).
    fn word(host: &Self::Host<'_, DeviceMemory>, stream: &CudaStream) -> u64;

    /// The parameter as the emulated kernel receives it; `name` is the
    /// parameter's, which names the buffer in diagnostics.
    fn emulated(host: Self::Host<'_, HostMemory>, name: &'static str) -> Self;

    /// The elements of a buffer argument; 0 for a scalar.
    fn elements(host: &Self::Host<'_, DeviceMemory>) -> usize {
        let _ = host;
        0
    }

    /// The GPU whose device memory a buffer argument is; `None` for a
    /// scalar, or memory every GPU of the process reaches (mapped host
    /// memory, managed memory).
    fn owner(host: &Self::Host<'_, DeviceMemory>) -> Option<usize> {
        let _ = host;
        None
    }

    /// A `u32` argument's value, which may pick a generic kernel's
    /// instance; `None` for any other.
    fn value<M: Memory>(host: &Self::Host<'_, M>) -> Option<u32> {
        let _ = host;
        None
    }
}

impl<T: Value> Param for Global<T> {
    type Host<'a, M: Memory>
        = &'a M::Buffer<T>
    where
        M: 'a;

    fn word(host: &Self::Host<'_, DeviceMemory>, stream: &CudaStream) -> u64 {
        host.device_ptr(stream).0
    }

    fn emulated(host: Self::Host<'_, HostMemory>, name: &'static str) -> Self {
        Global::new(name, host).placed(HostMemory::seen_by_kernel(host))
    }

    fn elements(host: &Self::Host<'_, DeviceMemory>) -> usize {
        host.len()
    }

    fn owner(host: &Self::Host<'_, DeviceMemory>) -> Option<usize> {
        host.owner()
    }
}

impl<T: Value> Param for GlobalMut<T> {
    type Host<'a, M: Memory>
        = &'a mut M::Buffer<T>
    where
        M: 'a;

    fn word(host: &Self::Host<'_, DeviceMemory>, stream: &CudaStream) -> u64 {
        host.device_ptr(stream).0
    }

    fn emulated(host: Self::Host<'_, HostMemory>, name: &'static str) -> Self {
        let placement = HostMemory::seen_by_kernel(host);
        GlobalMut::new(name, host).placed(placement)
    }

    fn elements(host: &Self::Host<'_, DeviceMemory>) -> usize {
        host.len()
    }

    fn owner(host: &Self::Host<'_, DeviceMemory>) -> Option<usize> {
        host.owner()
    }
}

impl Param for Texture2d {
    type Host<'a, M: Memory>
        = &'a M::Texture
    where
        M: 'a;

    fn word(host: &Self::Host<'_, DeviceMemory>, _stream: &CudaStream) -> u64 {
        *host.handle()
    }

    fn emulated(host: Self::Host<'_, HostMemory>, _name: &'static str) -> Self {
        Texture2d::from_handle(*host.handle())
    }
}

impl<T: MapElement + Value> Param for TensorMap2d<T> {
    type Host<'a, M: Memory>
        = &'a TensorMap<M, T>
    where
        M: 'a;

    fn word(host: &Self::Host<'_, DeviceMemory>, stream: &CudaStream) -> u64 {
        host.encoded.device_ptr(stream).0
    }

    fn emulated(host: Self::Host<'_, HostMemory>, name: &'static str) -> Self {
        let source =
            Global::new(name, &host.source).placed(HostMemory::seen_by_kernel(&host.source));
        TensorMap2d::new(source, host.shape)
    }

    fn owner(host: &Self::Host<'_, DeviceMemory>) -> Option<usize> {
        host.source.owner()
    }
}

macro_rules! scalar_params {
    ($($scalar:ty => $bits:expr),*) => {$(
        impl Param for $scalar {
            type Host<'a, M: Memory>
        = $scalar
    where
        M: 'a;

            fn word(host: &$scalar, _stream: &CudaStream) -> u64 {
                $bits(*host)
            }

            fn emulated(host: $scalar, _name: &'static str) -> Self {
                host
            }

            fn value<M: Memory>(host: &$scalar) -> Option<u32> {
                (host as &dyn Any).downcast_ref::<u32>().copied()
            }
        }
    )*};
}

// Each scalar's bits, zero-extended: the driver copies the parameter's own
// size from the word's low bytes, so a sign extension would not matter.
scalar_params!(
    u8 => u64::from,
    u16 => u64::from,
    u32 => u64::from,
    u64 => |value: u64| value,
    i8 => |value: i8| u64::from(value as u8),
    i16 => |value: i16| u64::from(value as u16),
    i32 => |value: i32| u64::from(value as u32),
    i64 => |value: i64| value as u64,
    half::f16 => |value: half::f16| u64::from(value.to_bits()),
    half::bf16 => |value: half::bf16| u64::from(value.to_bits()),
    f32 => |value: f32| u64::from(value.to_bits()),
    f64 => f64::to_bits
);
/// A kernel's whole parameter list: a tuple of [`Param`]s.
pub trait Params: Copy + 'static {
    /// The host's arguments: a tuple of each parameter's [`Param::Host`].
    type Host<'a, M: Memory>
    where
        M: 'a;

    /// Every argument as a GPU launch passes it ([`Param::word`]), in
    /// order.
    fn words(host: &Self::Host<'_, DeviceMemory>, stream: &CudaStream) -> Vec<u64>;

    /// The parameters as the emulated kernel receives them; `names` are
    /// the parameters' names, in order.
    fn emulated(host: Self::Host<'_, HostMemory>, names: &[&'static str]) -> Self;

    /// The elements of the largest buffer argument.
    fn largest(host: &Self::Host<'_, DeviceMemory>) -> usize;

    /// The GPUs whose device memory the buffer arguments are
    /// ([`Param::owner`]).
    fn owners(host: &Self::Host<'_, DeviceMemory>) -> Vec<usize>;

    /// The entry point of `kernel` that runs these arguments: for a generic
    /// kernel, the instance its arguments pick.
    fn entry<P, M: Memory>(
        kernel: &Kernel<Self, P>,
        host: &Self::Host<'_, M>,
    ) -> Result<&'static str>;
}

macro_rules! tuple_params {
    ($($param:ident $index:tt),*) => {
        impl<$($param: Param),*> Params for ($($param,)*) {
            type Host<'a, M: Memory>
        = ($($param::Host<'a, M>,)*)
    where
        M: 'a;

            fn words(host: &Self::Host<'_, DeviceMemory>, stream: &CudaStream) -> Vec<u64> {
                vec![$($param::word(&host.$index, stream)),*]
            }

            fn emulated(host: Self::Host<'_, HostMemory>, names: &[&'static str]) -> Self {
                ($($param::emulated(host.$index, names[$index]),)*)
            }

            fn largest(host: &Self::Host<'_, DeviceMemory>) -> usize {
                [$($param::elements(&host.$index)),*].into_iter().max().unwrap_or(0)
            }

            fn owners(host: &Self::Host<'_, DeviceMemory>) -> Vec<usize> {
                [$($param::owner(&host.$index)),*].into_iter().flatten().collect()
            }

            fn entry<P, M: Memory>(kernel: &Kernel<Self, P>, host: &Self::Host<'_, M>) -> Result<&'static str> {
                let values = [$($param::value::<M>(&host.$index)),*];
                let value_of = |name: &str| {
                    let index = kernel.params.iter().position(|&param| param == name)?;
                    values[index]
                };
                kernel.entry(value_of).ok_or_else(|| Error::NoInstance {
                    kernel: kernel.name,
                    values: kernel.instances.map_or_else(String::new, |instances| {
                        let named = instances.by.iter().map(|&by| format!("{by} = {:?}", value_of(by)));
                        named.collect::<Vec<_>>().join(", ")
                    }),
                })
            }
        }
    };
}

// Kernels of 1 to 12 parameters.
tuple_params!(A 0);
tuple_params!(A 0, B 1);
tuple_params!(A 0, B 1, C 2);
tuple_params!(A 0, B 1, C 2, D 3);
tuple_params!(A 0, B 1, C 2, D 3, E 4);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// Whether `backend` runs `kernel`: [`Error::NeedsCapability`] where the
/// kernel needs a newer compute capability than its code is for, and
/// [`Error::NeedsArchSpecific`] where it needs the arch-specific build of
/// its capability and the code is another.
pub fn runs<B: Backend + ?Sized, A, P>(backend: &B, kernel: &Kernel<A, P>) -> Result<()> {
    match backend.capability() {
        Some(has) if has < kernel.capability => Err(Error::NeedsCapability {
            kernel: kernel.name,
            needs: kernel.capability,
            has,
        }),
        Some(has)
            if kernel.arch_specific && (has != kernel.capability || !backend.arch_specific()) =>
        {
            Err(Error::NeedsArchSpecific {
                kernel: kernel.name,
                needs: kernel.capability,
                has,
            })
        }
        _ => Ok(()),
    }
}

/// A copy between the host and a GPU: which way, and from or into which
/// kind of host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// From the host to the GPU; otherwise back.
    pub to_device: bool,
    /// Page-locked host memory, which the GPU's copy engines reach directly;
    /// otherwise ordinary (pageable) memory, which the driver stages.
    pub pinned: bool,
}

/// How a managed buffer is used, which the driver places its pages by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Read far more than written: a processor that reads a page gets a
    /// copy of its own, and a write invalidates the others.
    ReadMostly,
    /// Keep the pages in the device's DRAM; the host's accesses map them
    /// rather than move them.
    PreferDevice,
    /// Keep the pages in the host's memory; the device's accesses map them
    /// rather than move them.
    PreferHost,
}

/// A place to run the kernels, with buffers of its own.
pub trait Backend {
    /// Where its buffers live.
    type Memory: Memory;

    /// What runs the kernels, for the report.
    fn description(&self) -> String;

    /// A new buffer holding `data`; `what` names it in errors.
    fn upload<T: Value>(&self, what: &'static str, data: &[T]) -> Result<Buffer<Self, T>> {
        self.upload_in(what, data, Placement::Device)
    }

    /// A new buffer holding `data` in `placement`'s memory.
    fn upload_in<T: Value>(
        &self,
        what: &'static str,
        data: &[T],
        placement: Placement,
    ) -> Result<Buffer<Self, T>> {
        let mut buffer = self.alloc_in(what, data.len(), placement)?;
        self.overwrite(data, &mut buffer)?;
        Ok(buffer)
    }

    /// A new buffer of `len` poisoned elements.
    fn alloc<T: Value>(&self, what: &'static str, len: usize) -> Result<Buffer<Self, T>> {
        self.alloc_in(what, len, Placement::Device)
    }

    /// A new buffer of `len` poisoned elements in `placement`'s memory.
    /// Host memory mapped into the GPU's address space is page-locked
    /// (`cuMemHostAlloc`); managed memory is refused where it is larger
    /// than the device's free memory ([`Error::ManagedBeyondFree`]),
    /// before anything is allocated.
    fn alloc_in<T: Value>(
        &self,
        what: &'static str,
        len: usize,
        placement: Placement,
    ) -> Result<Buffer<Self, T>>;

    /// Where `buffer`'s bytes live.
    fn placement<T: Value>(&self, buffer: &Buffer<Self, T>) -> Placement {
        Self::Memory::placement(buffer)
    }

    /// The number of elements of `buffer`.
    fn len<T: Value>(&self, buffer: &Buffer<Self, T>) -> usize;

    /// Sets every element to [`Value::POISON`].
    fn poison<T: Value>(&self, buffer: &mut Buffer<Self, T>) -> Result<()>;

    /// Replaces the contents of `buffer`, which has `data.len()` elements.
    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut Buffer<Self, T>) -> Result<()>;

    /// The contents of `buffer`, once every kernel before has finished.
    fn download<T: Value>(&self, buffer: &Buffer<Self, T>) -> Result<Vec<T>>;

    /// Moves a managed buffer's pages to the device, or to the host, after
    /// the work before it and ahead of the accesses that would fault them
    /// in one by one (`cuMemPrefetchAsync`); [`Error::NotManaged`] for a
    /// buffer in another placement.
    fn prefetch<T: Value>(&self, buffer: &Buffer<Self, T>, to_device: bool) -> Result<()>;

    /// Tells the driver how a managed buffer is used (`cuMemAdvise`):
    /// what it does with the pages, not what a kernel reads.
    /// [`Error::NotManaged`] for a buffer in another placement.
    fn advise<T: Value>(&self, buffer: &Buffer<Self, T>, advice: Advice) -> Result<()>;

    /// Lets this GPU's kernels reach `peer`'s buffers by their pointers
    /// (peer access, over NVLink or PCIe); once is enough. Refused, naming
    /// both GPUs, for the same GPU or where the driver says one cannot
    /// reach the other ([`Error::PeerUnreachable`]).
    fn enable_peer_access(&self, peer: &Self) -> Result<()>;

    /// Whether this GPU's kernels may take `other`'s buffers: it is the
    /// same GPU, or peer access to it is enabled. A launch given another
    /// GPU's buffer without it is refused ([`Error::PeerUnreachable`]) on
    /// the GPU, before the kernel runs, and stopped at the first access on
    /// the emulator.
    fn reaches(&self, other: &Self) -> bool;

    /// Makes this GPU's later work wait for all the work enqueued on
    /// `other` so far: what a kernel reading `other`'s buffers needs
    /// before it starts.
    fn wait_for(&self, other: &Self) -> Result<()>;

    /// A 2-D texture of `width × height` texels, a copy of `texels`
    /// (row-major, exactly that many) made after the work before it, read
    /// with `sampling`'s modes through unnormalized coordinates: a CUDA
    /// array and a texture object on it (`cudaMallocArray`,
    /// `cudaMemcpy2DToArray`, `cudaCreateTextureObject`), both destroyed
    /// when it is dropped.
    fn texture(
        &self,
        texels: &Buffer<Self, f32>,
        width: usize,
        height: usize,
        sampling: Sampling,
    ) -> Result<Texture<Self>>;

    /// A tiled tensor map of `source`, a row-major array of `f32` of
    /// `shape`'s size, whose boxes a tensor copy moves
    /// ([`gpu_std::tensor::memcpy_async_tensor_2d`]): on the GPU the map
    /// `cuTensorMapEncodeTiled` encodes, copied to global memory after the
    /// work before it, where a kernel acquires it. The map keeps the
    /// buffer.
    fn tensor_map<T: MapElement + Value>(
        &self,
        source: Buffer<Self, T>,
        shape: TiledMap,
    ) -> Result<TensorMap<Self::Memory, T>>;

    /// What this backend's L2 can keep persisting; `None` where it keeps
    /// nothing (a GPU before compute capability 8.0).
    fn persisting_l2(&self) -> Result<Option<PersistingL2>>;

    /// Keeps `buffer`'s lines in the L2 while the window lives: sets
    /// `carve_out` bytes of the L2 aside for persisting lines and puts an
    /// access-policy window over the buffer on the stream every launch
    /// uses, as many of its accesses persisting as the carve-out holds
    /// lines for and the rest normal (`cudaLimitPersistingL2CacheSize`,
    /// `cudaStreamAttributeAccessPolicyWindow`). A hint: what a kernel
    /// reads and writes is the same with it or without. The stream holds
    /// one window: asked for on another thread while one lives, a second
    /// waits until the first is dropped; on the thread that holds the
    /// first, it is [`Error::WindowInUse`].
    fn persist<T: Value>(
        &self,
        buffer: &Buffer<Self, T>,
        carve_out: usize,
    ) -> Result<PersistingWindow>;

    /// The compute capability of the code this backend runs: a kernel
    /// that needs a newer one is not launched ([`runs`]). `None` for a
    /// backend that runs every kernel, as the emulator does.
    fn capability(&self) -> Option<(u32, u32)>;

    /// Whether the code this backend runs is the arch-specific build for
    /// its capability (`sm_90a`), the only one that holds a kernel declared
    /// `arch_specific` ([`runs`]). The emulator's [`Backend::capability`]
    /// is `None`, which runs every kernel.
    fn arch_specific(&self) -> bool {
        false
    }

    /// Sets the constant array `name` (`constant_array!`) of the kernels
    /// this backend launches, as `cudaMemcpyToSymbol` does: `values` of
    /// the array's own element type, exactly as many as it has (on the
    /// GPU its bytes must match; the emulator also reports a kernel's read
    /// of it as another type).
    fn set_constant<T: Value>(&self, name: &'static str, values: &[T]) -> Result<()>;

    /// Launches `kernel` on `problem` with `args`, as its contract asks:
    /// the one path by which every kernel runs.
    ///
    /// # Safety
    /// `args` satisfy the kernel's `# Safety` contract for `problem`
    /// (buffer lengths, index limits), apart from the launch shape, which
    /// this function derives from the contract itself.
    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, Self::Memory>,
    ) -> Result<()>;

    /// The median time of `launch`, in milliseconds, and the runs' spread.
    fn timing<E: From<Error>>(
        &self,
        runs: Runs,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<Timing, E> {
        self.timing_after(runs, || Ok(()), launch)
    }

    /// [`Backend::timing`], with `setup` run before each run (the warm-up
    /// ones too) and left out of its time: what puts back the state each
    /// run must start from, such as a managed buffer's pages on the host.
    fn timing_after<E: From<Error>>(
        &self,
        runs: Runs,
        setup: impl FnMut() -> Result<(), E>,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<Timing, E>;

    /// The median time of `launch`, in milliseconds.
    fn median_ms<E: From<Error>>(
        &self,
        runs: Runs,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<f64, E> {
        self.timing(runs, launch).map(|timing| timing.median_ms)
    }

    /// The median time of copying `bytes` between the host and this
    /// backend's memory, in milliseconds; `None` where nothing is copied
    /// (the emulator's memory is the host's).
    fn transfer_ms(&self, _bytes: usize, _transfer: Transfer, _runs: Runs) -> Result<Option<f64>> {
        Ok(None)
    }

    /// What the last launch of `kernel` moved, where this backend counts it.
    fn traffic(&self, _kernel: &str) -> Option<Traffic> {
        None
    }
}

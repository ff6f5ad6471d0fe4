//! Two GPUs of one host working as one: a kernel of one reading the
//! other's memory in place (peer access, over NVLink where the GPUs have
//! it, PCIe otherwise), a copy from one to the other, and work enqueued on
//! both, ordered and timed together on the GPUs' own clocks.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUevent_flags, CUresult};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, result, sys,
};

use super::buffer::DeviceBuffer;
use crate::error::{During, Error, Result};
use crate::timing::{Runs, Timing};
use crate::value::Value;

/// The pairs (from, to) of this process's GPUs where `from` reaches
/// `to`'s memory: peer access, which CUDA holds per primary context, one
/// a GPU in a process.
static REACHED: Mutex<BTreeSet<(usize, usize)>> = Mutex::new(BTreeSet::new());

/// Whether GPU `from`'s kernels reach GPU `to`'s device memory: its own,
/// or a peer's once [`enable`] let it.
pub(super) fn reaches(from: usize, to: usize) -> bool {
    from == to
        || REACHED
            .lock()
            .is_ok_and(|reached| reached.contains(&(from, to)))
}

/// What the functions below need of a [`Gpu`](super::Gpu): its context,
/// its one stream, and the event another GPU's stream waits on to follow
/// it, recorded afresh for each wait.
#[derive(Clone, Copy)]
pub(super) struct Side<'a> {
    pub context: &'a Arc<CudaContext>,
    pub stream: &'a Arc<CudaStream>,
    pub marker: &'a CudaEvent,
}

impl Side<'_> {
    fn ordinal(self) -> usize {
        self.context.ordinal()
    }
}

/// The device `ordinal`, or the host, as the driver's memory calls name
/// a place.
pub(super) fn location(ordinal: usize, device: bool) -> sys::CUmemLocation {
    match device {
        true => sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal as i32,
        },
        false => sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        },
    }
}

/// Whether `from`'s kernels can reach `to`'s memory, as the driver says
/// (`cuDeviceCanAccessPeer`); a GPU is no peer of itself.
pub(super) fn can_access(from: Side<'_>, to: Side<'_>) -> Result<bool> {
    if from.ordinal() == to.ordinal() {
        return Ok(false);
    }
    let mut can = 0;
    // SAFETY: both devices are the contexts' own, open while they live.
    unsafe {
        sys::cuDeviceCanAccessPeer(&mut can, from.context.cu_device(), to.context.cu_device())
    }
    .result()
    .during("asking whether one GPU reaches another's memory")?;
    Ok(can != 0)
}

/// Peer access from `from` to `to`: between the contexts
/// (`cuCtxEnablePeerAccess`), and to `to`'s memory pool; refused, naming
/// both, for the same GPU or where the driver says there is no path.
pub(super) fn enable(from: Side<'_>, to: Side<'_>) -> Result<()> {
    let why = match from.ordinal() == to.ordinal() {
        true => Some("it is the same GPU"),
        false if !can_access(from, to)? => {
            Some("the driver reports no path for peer access between them")
        }
        false => None,
    };
    if let Some(why) = why {
        return Err(Error::PeerUnreachable {
            from: from.ordinal(),
            to: to.ordinal(),
            why,
        });
    }
    let action = "letting one GPU reach another's memory";
    from.context.bind_to_thread().during(action)?;
    // SAFETY: the peer's context is open while `to` lives; access lasts as
    // long as both contexts, which outlive every buffer.
    match unsafe { sys::cuCtxEnablePeerAccess(to.context.cu_ctx(), 0) } {
        CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
        other => other.result().during(action)?,
    }
    reach_pool(from, to)?;
    if let Ok(mut reached) = REACHED.lock() {
        reached.insert((from.ordinal(), to.ordinal()));
    }
    Ok(())
}

/// Lets `from` reach what `to` allocates from its default memory pool
/// (`cuMemPoolSetAccess`), as device buffers are allocated
/// (`cuMemAllocAsync`): peer access between contexts does not cover a
/// pool's memory, whose reads would stop the kernel.
fn reach_pool(from: Side<'_>, to: Side<'_>) -> Result<()> {
    let action = "letting one GPU reach another's memory pool";
    let mut pool = std::ptr::null_mut();
    // SAFETY: the device is `to`'s context's own; `pool` receives its
    // default pool, which lives as long as the device.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, to.context.cu_device()) }
        .result()
        .during(action)?;
    let access = sys::CUmemAccessDesc {
        location: location(from.ordinal(), true),
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: one descriptor, for `from`, of a pool of another device.
    unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) }
        .result()
        .during(action)
}

/// Makes `this` GPU's stream wait, on the GPU, for all the work enqueued on
/// `other`'s so far: `other`'s marker recorded, and waited for.
pub(super) fn follow(this: Side<'_>, other: Side<'_>) -> Result<()> {
    let action = "ordering one GPU's work after another's";
    // A wait takes the event as last recorded: recording it again later,
    // for another wait, leaves this one as it is.
    other.marker.record(other.stream).during(action)?;
    this.stream.wait(other.marker).during(action)
}

/// Enqueues a copy of `source`, a buffer of `peer`, into `destination`,
/// of the same length, on `this` GPU's stream (`cuMemcpyPeerAsync`), after
/// `peer`'s work so far: the copy engines move it across the link.
pub(super) fn copy_from<T: Value>(
    this: Side<'_>,
    peer: Side<'_>,
    source: &DeviceBuffer<T>,
    destination: &mut DeviceBuffer<T>,
) -> Result<()> {
    if source.len() != destination.len() {
        return Err(Error::LengthMismatch {
            what: "the peer copy's destination",
            expected: source.len(),
            actual: destination.len(),
        });
    }
    follow(this, peer)?;
    let bytes = destination.num_bytes();
    let (from, _read) = source.device_ptr(peer.stream);
    let (to, _written) = destination.device_ptr_mut(this.stream);
    let action = "copying from another GPU";
    this.context.bind_to_thread().during(action)?;
    // SAFETY: both ranges are exactly the buffers', of equal length, in
    // the contexts that made them; the source's writes are ordered before
    // the copy by the wait above.
    unsafe {
        result::memcpy_peer_async(
            this.context.cu_ctx(),
            to,
            peer.context.cu_ctx(),
            from,
            bytes,
            this.stream.cu_stream(),
        )
    }
    .during(action)
}

/// The timing of `launch`, which enqueues work on every GPU of `sides`, as
/// one: each run starts at an event of the first GPU that every other
/// waits for, and ends at the first GPU's event after it has waited for
/// all the others, so a run lasts from the earliest start to the latest
/// end, whichever GPU finishes last.
pub(super) fn timing_together<E: From<Error>>(
    sides: &[Side<'_>],
    runs: Runs,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<Timing, E> {
    let Some((&first, others)) = sides.split_first() else {
        return Ok(Timing::of(&mut []));
    };
    let mut run = || -> Result<(), E> {
        for &other in others {
            follow(other, first)?;
        }
        launch()?;
        for &other in others {
            follow(first, other)?;
        }
        Ok(())
    };
    for _ in 0..runs.warmup {
        run()?;
    }
    let event = || {
        first
            .context
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating an event")
    };
    let (start, end) = (event()?, event()?);
    let mut times = Vec::with_capacity(runs.timed);
    for _ in 0..runs.timed.max(1) {
        start.record(first.stream).during("recording an event")?;
        run()?;
        end.record(first.stream).during("recording an event")?;
        end.synchronize().during("running a kernel")?;
        times.push(f64::from(
            start.elapsed_ms(&end).during("reading an event")?,
        ));
    }
    Ok(Timing::of(&mut times))
}

//! NCCL's all-reduce across the GPUs of one host: what a user calls
//! instead of writing one, with one communicator a GPU, all driven from
//! this one thread inside an NCCL group, as NCCL requires of a thread that
//! drives several GPUs.

use std::sync::Arc;

use cudarc::driver::CudaStream;
use cudarc::nccl::result::{NcclError, group_end, group_start};
use cudarc::nccl::safe::{Comm, ReduceOp};

use super::buffer::DeviceBuffer;
use crate::error::{Error, Result};

/// One NCCL communicator for each GPU of a set, ranked in its order, each
/// enqueuing on its GPU's stream ([`Gpu::stream`](super::Gpu::stream)).
pub struct Communicators {
    comms: Vec<Comm>,
}

impl Communicators {
    /// Communicators for the GPUs of `streams`, each on its stream
    /// (`ncclCommInitAll`); refused with [`Error::NoNccl`] where NCCL's
    /// library is not there, before any NCCL call.
    pub fn new(streams: &[&Arc<CudaStream>]) -> Result<Self> {
        // SAFETY: only tries to open the library; no NCCL call is made.
        if !unsafe { cudarc::nccl::sys::is_culib_present() } {
            return Err(Error::NoNccl);
        }
        let streams = streams.iter().map(|&stream| stream.clone()).collect();
        let comms = Comm::from_devices(streams).map_err(nccl("creating communicators"))?;
        Ok(Self { comms })
    }

    /// Enqueues the sum of every GPU's `sent` into every GPU's `received`
    /// (`ncclAllReduce`, out of place), rank `i`'s buffers on GPU `i`,
    /// all of one length.
    pub fn all_reduce_sum(
        &self,
        sent: &[&DeviceBuffer<f32>],
        received: &mut [&mut DeviceBuffer<f32>],
    ) -> Result<()> {
        let len = sent.first().map_or(0, |buffer| buffer.len());
        let lengths = sent
            .iter()
            .map(|b| b.len())
            .chain(received.iter().map(|b| b.len()));
        if let Some(actual) = lengths.clone().find(|&other| other != len) {
            return Err(Error::LengthMismatch {
                what: "an all-reduce's buffer",
                expected: len,
                actual,
            });
        }
        let ranks = self.comms.len();
        if sent.len() != ranks || received.len() != ranks {
            return Err(Error::LengthMismatch {
                what: "an all-reduce's buffers, one a GPU",
                expected: ranks,
                actual: sent.len().min(received.len()),
            });
        }
        let action = "enqueuing an all-reduce";
        group_start().map_err(nccl(action))?;
        let each = self.comms.iter().zip(sent).zip(received.iter_mut());
        let enqueued = each
            .map(|((comm, sent), received)| comm.all_reduce(*sent, *received, &ReduceOp::Sum))
            .collect::<std::result::Result<Vec<_>, _>>();
        let ended = group_end();
        enqueued.map_err(nccl(action))?;
        ended.map_err(nccl(action))?;
        Ok(())
    }
}

fn nccl(action: &'static str) -> impl Fn(NcclError) -> Error {
    move |error| Error::Nccl {
        action,
        message: format!("{error:?}"),
    }
}

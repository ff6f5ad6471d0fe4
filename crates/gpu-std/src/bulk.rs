use super::global::Global;
use super::shared::SharedArray;
#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

/// One `mbarrier` instruction on `$barrier` with the operand named in it,
/// from sm_90 on; below, a report that the GPU lacks it; on the emulator,
/// the same operation. The caller's contract is the instruction's.
macro_rules! mbarrier_operation {
    ($barrier:expr, $instruction:literal, $operand:ident, $emulated:path) => {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: by the calling function's contract.
        unsafe {
            core::arch::asm!(
                $instruction,
                barrier = in(reg32) $barrier.word.shared_address(0),
                $operand = in(reg32) $operand,
                options(nostack),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        super::below_sm90(&$operand);
        #[cfg(not(target_arch = "nvptx64"))]
        $emulated($barrier.word.address(0).cast(), $operand);
    };
}

/// A barrier in shared memory (`mbarrier`, CUDA's `cuda::barrier` of a
/// block): a phase completes when the arrivals it was initialised for
/// have all been made and the bytes of bulk copies they said to expect
/// have all landed.
#[derive(Clone, Copy)]
pub struct Mbarrier {
    word: SharedArray<u64>,
}

impl Mbarrier {
    /// The barrier in the 8 bytes at the start of `memory`.
    ///
    /// # Safety
    /// Nothing else uses those bytes while the barrier is in use.
    #[inline(always)]
    pub unsafe fn at(memory: SharedArray<u64>) -> Self {
        Self { word: memory }
    }

    /// The barrier's 8 bytes, for the copies that complete on it.
    pub(crate) fn word(self) -> SharedArray<u64> {
        self.word
    }

    /// `mbarrier.init`: a new barrier whose phases each expect `count`
    /// arrivals. Another thread may use it after a `sync_threads`; a bulk
    /// copy after [`fence_proxy_async_shared_cta`] too.
    ///
    /// # Safety
    /// One thread initialises it, while no copy completes on it.
    #[inline(always)]
    pub unsafe fn init(self, count: u32) {
        mbarrier_operation!(
            self,
            "mbarrier.init.shared::cta.b64 [{barrier}], {count};",
            count,
            emulator::mbarrier_init
        );
    }

    /// `mbarrier.arrive.expect_tx`: this thread's arrival in the current
    /// phase, which will also wait for `bytes` more of bulk copies.
    ///
    /// # Safety
    /// The barrier is initialised and visible to this thread (a
    /// `sync_threads` after the initialisation), and its phase still
    /// expects an arrival.
    #[inline(always)]
    pub unsafe fn arrive_expect_tx(self, bytes: u32) {
        mbarrier_operation!(
            self,
            "{{ .reg .b64 state; \
             mbarrier.arrive.expect_tx.shared::cta.b64 state, [{barrier}], {bytes}; }}",
            bytes,
            emulator::mbarrier_arrive
        );
    }

    /// `mbarrier.arrive`: this thread's arrival in the current phase, as
    /// a consumer saying it is done with what the phase guarded.
    ///
    /// # Safety
    /// As [`Mbarrier::arrive_expect_tx`].
    #[inline(always)]
    pub unsafe fn arrive(self) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: by this function's contract.
        unsafe {
            core::arch::asm!(
                "{{ .reg .b64 state; mbarrier.arrive.shared::cta.b64 state, [{barrier}]; }}",
                barrier = in(reg32) self.word.shared_address(0),
                options(nostack),
            );
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        super::below_sm90(&self);
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::mbarrier_arrive(self.word.address(0).cast(), 0);
    }

    /// `mbarrier.try_wait.parity` until it succeeds: waits until the
    /// phase of `parity` (0 for the first, 1 for the second, and so on
    /// alternately) has completed. What its bulk copies wrote is then this
    /// thread's to read.
    ///
    /// # Safety
    /// As [`Mbarrier::arrive_expect_tx`], without the arrival.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn wait(self, parity: u32) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        loop {
            let done: u32;
            // SAFETY: by this function's contract; the asm is a compiler
            // barrier too, so no read of the copies' bytes moves above it.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .pred done; \
                     mbarrier.try_wait.parity.shared::cta.b64 done, [{barrier}], {parity}; \
                     selp.u32 {result}, 1, 0, done; }}",
                    barrier = in(reg32) self.word.shared_address(0),
                    parity = in(reg32) parity,
                    result = out(reg32) done,
                    options(nostack),
                );
            }
            if done != 0 {
                break;
            }
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        super::below_sm90(&parity);
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::mbarrier_wait(
            self.word.address(0).cast(),
            parity,
            core::panic::Location::caller(),
        );
    }
}

/// `cp.async.bulk` from global to shared memory: starts copying the
/// `count` elements from `source[element]` on to `tile[index]` on, one
/// instruction for the whole span, executed by the Tensor Memory
/// Accelerator; the bytes count towards `barrier`'s current phase, which
/// completes only once they have landed.
///
/// # Safety
/// `count` is a positive multiple of 4 (16 bytes); `index` and `element`
/// are multiples of 4 from 16-byte boundaries (the buffers' starts); the
/// span lies inside the buffer and the launch-sized shared memory; no
/// thread touches the destination until it has waited on the phase (or
/// passed a barrier after a thread that did) and no thread writes the
/// source during the launch; an arrival of the phase expects the bytes.
/// The emulator checks all of it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn memcpy_async_bulk(
    tile: SharedArray<f32>,
    index: u32,
    source: Global<f32>,
    element: usize,
    count: u32,
    barrier: Mbarrier,
) {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: by this function's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes \
             [{to}], [{from}], {bytes}, [{barrier}];",
            to = in(reg32) tile.shared_address(index),
            from = in(reg64) source.address(element),
            bytes = in(reg32) 4 * count,
            barrier = in(reg32) barrier.word.shared_address(0),
            options(nostack),
        );
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
    super::below_sm90(&(tile, index, source, element, count, barrier));
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let bytes: Vec<u8> = source
            .read_bulk(element, count as usize)
            .iter()
            .flat_map(|value| value.to_le_bytes())
            .collect();
        emulator::bulk_copy(
            tile.address(index).cast(),
            &bytes,
            barrier.word.address(0).cast(),
            16,
        );
    }
}

/// `fence.proxy.async.shared::cta`: orders this thread's earlier accesses
/// to shared memory, a barrier's initialisation above all, before the
/// bulk copies and `wgmma`s that follow, which read through the hardware's
/// asynchronous proxy. The emulator checks it for the `wgmma`s: each
/// element one reads that a thread stored is fenced by that thread, the
/// fence ordered before the `wgmma` (before the barrier that orders the
/// store).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn fence_proxy_async_shared_cta() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    // SAFETY: a fence reads and writes nothing.
    unsafe {
        core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    emulator::fence_proxy_async(core::panic::Location::caller());
}

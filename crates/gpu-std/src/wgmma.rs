//! Hopper's tensor cores, the warpgroup's way: `wgmma.mma_async`
//! multiplies a 64×N tile by four warps at once (a warpgroup, 128 threads
//! of consecutive index from a multiple of 128), reading A and B straight
//! from shared memory through matrix descriptors, and accumulating into
//! registers spread over the warpgroup as `mma.sync` spreads them over a
//! warp. A may come from registers instead, each warp holding its 16 rows
//! as `mma.sync` holds A
//! ([`InFlight::mma_async_registers`](crate::wgmma::InFlight::mma_async_registers)). The instruction is asynchronous: the tensor cores read the
//! operands and write the accumulators while the threads go on, until a
//! `wgmma.wait_group` retires it. Only the arch-specific build for
//! compute capability 9.0 (`sm_90a`) has it: a kernel that uses this
//! module is declared `#[compute_capability(9, 0, arch_specific)]`.
//!
//! An operand is 16 elements deep along k, in 16-byte chunks of eight
//! elements; its [`MatrixDescriptor`](crate::wgmma::MatrixDescriptor)
//! says where the chunks are (the layouts are drawn in the emulator's
//! `wgmma` module). The accumulators of warp w of the warpgroup are D's
//! rows 16w to 16w + 15, and lane l of it holds, for each 8 columns i, the
//! elements (r, 8i + 2q) and (r, 8i + 2q + 1) of rows r = 16w + l/4 and
//! r + 8, q = l % 4, in that order:
//! [`Accumulators`](crate::wgmma::Accumulators)`.0[4i..4i + 4]`.
//!
//! The types keep the accumulators out of reach while a `wgmma` may still
//! write them:
//! [`Accumulators::mma_async`](crate::wgmma::Accumulators::mma_async)
//! gives an [`InFlight`](crate::wgmma::InFlight), whose values only
//! [`InFlight::wait`](crate::wgmma::InFlight::wait) gives back. A
//! pipeline keeps them in flight across its stages:
//! [`InFlight::commit_group`](crate::wgmma::InFlight::commit_group) closes
//! a group of `wgmma`s and
//! [`InFlight::wait_group`](crate::wgmma::InFlight::wait_group) waits for
//! all but the newest, whose stages may then be refilled. The emulator
//! computes each `wgmma` from shared memory when it starts, checks that the
//! four warps of its warpgroup issue it (and `setmaxnreg`) together, that
//! its descriptors lie in the launch-sized memory and start where their
//! swizzle can, and that each element it reads was written by the TMA or
//! fenced for the async proxy by its writer, and reports a shared element
//! it read that is overwritten before the wait that retires it.

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

use super::mma::{FragmentA, Half};
use super::shared::SharedArray;

/// How an operand's rows are swizzled, as a tensor map's copy wrote them
/// (the descriptor's bits 62–63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// Core matrices of eight contiguous 16-byte rows.
    None = 0,
    /// Rows of 128 bytes, 16-byte chunks XORed with the row's index
    /// among eight (CUTLASS's `Swizzle<3, 4, 3>`).
    B128 = 1,
    /// Rows of 64 bytes (`Swizzle<2, 4, 3>`).
    B64 = 2,
    /// Rows of 32 bytes (`Swizzle<1, 4, 3>`).
    B32 = 3,
}

/// Where a `wgmma` operand lies in shared memory: the address of its
/// first chunk, the byte offsets between its 8×8 core matrices (leading:
/// the next along the chunks' dimension, which swizzled K-major layouts
/// ignore; stride: the next eight rows), and the swizzle, in the bit
/// fields of the PTX ISA's matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDescriptor(u64);

impl MatrixDescriptor {
    /// The operand whose first chunk is element `first` of `tile`, in the
    /// launch-sized shared memory, its core matrices `leading_bytes` and
    /// `stride_bytes` apart, swizzled as `swizzle` says. The address and
    /// both offsets are kept in 14 bits, over 16: each a multiple of 16
    /// below 256 KiB.
    #[inline(always)]
    pub fn new<T: Half>(
        tile: SharedArray<T>,
        first: u32,
        swizzle: Swizzle,
        leading_bytes: u32,
        stride_bytes: u32,
    ) -> Self {
        #[cfg(target_arch = "nvptx64")]
        let address = tile.shared_address(first);
        #[cfg(not(target_arch = "nvptx64"))]
        let address = {
            let element = tile.address(first).cast::<u8>();
            (element as usize - emulator::shared_base() as usize) as u32
        };
        let field = |bytes: u32| u64::from((bytes >> 4) & 0x3fff);
        Self(
            field(address)
                | field(leading_bytes) << 16
                | field(stride_bytes) << 32
                | (swizzle as u64) << 62,
        )
    }

    /// The descriptor's 64 bits.
    pub const fn to_bits(self) -> u64 {
        self.0
    }
}

/// A warpgroup's f32 accumulators of a 64×N tile, N = 2·`F` (64, 128 or
/// 256): `F` values a thread, laid out as the module says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accumulators<const F: usize>(pub [f32; F]);

impl<const F: usize> Accumulators<F> {
    /// All zeros.
    pub const ZERO: Self = Self([0.0; F]);

    /// `wgmma.fence`: hands the accumulators to the tensor cores, once
    /// the last writes of other instructions to them are done, for the
    /// `wgmma`s [`InFlight::mma_async`] queues.
    #[inline(always)]
    pub fn fence(self) -> InFlight<F> {
        // SAFETY: orders the accumulators' last writes by other
        // instructions before the wgmma reads them.
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
        unsafe {
            core::arch::asm!("wgmma.fence.sync.aligned;", options(nostack))
        };
        InFlight {
            accumulators: self.0,
            #[cfg(not(target_arch = "nvptx64"))]
            reads: Vec::new(),
            #[cfg(not(target_arch = "nvptx64"))]
            groups: 0,
        }
    }

    /// `wgmma.fence`, then `wgmma.mma_async.sync.aligned.m64nNk16.f32`
    /// with 16-bit `T` inputs: D = A·B + D, A 64×16 from `a` (K-major),
    /// B 16×N from `b` (N-major, B's rows along the chunks, where
    /// `b_transposed`; K-major otherwise), D these accumulators, on the
    /// tensor cores (`HGMMA`). Returns them in flight.
    ///
    /// # Safety
    /// All 128 threads of the warpgroup call it together with the same
    /// descriptors; every element they name lies in the block's shared
    /// memory, was written before a barrier and a
    /// `fence_proxy_async_shared_cta` (the tensor cores read through the
    /// async proxy), and is not written again until the wait.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn mma_async<T: Half>(
        self,
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        b_transposed: bool,
    ) -> InFlight<F> {
        // SAFETY: by this function's contract.
        unsafe { self.fence().mma_async::<T>(a, b, b_transposed) }
    }
}

/// Where a `wgmma` reads A from: shared memory through a descriptor, or
/// the registers of a thread's [`FragmentA`].
#[derive(Clone, Copy)]
enum OperandA {
    Shared(MatrixDescriptor),
    Registers([u32; 4]),
}

/// A `wgmma` the emulator started and has not retired: where it started,
/// the shared elements it read (offset and bits), and its group's number
/// once committed.
#[cfg(not(target_arch = "nvptx64"))]
type Started = (
    &'static core::panic::Location<'static>,
    Vec<(u32, u16)>,
    Option<u32>,
);

/// Accumulators a `wgmma` may still be writing: kept from the kernel
/// until [`InFlight::wait`].
#[derive(Debug)]
pub struct InFlight<const F: usize> {
    accumulators: [f32; F],
    /// Each wgmma not yet retired: its start, the shared elements it
    /// read, and its group's number once committed.
    #[cfg(not(target_arch = "nvptx64"))]
    reads: Vec<Started>,
    /// Groups committed so far.
    #[cfg(not(target_arch = "nvptx64"))]
    groups: u32,
}

impl<const F: usize> InFlight<F> {
    /// Another `wgmma.mma_async` into the same accumulators, queued behind
    /// the ones in flight (the tensor cores order them): as
    /// [`Accumulators::mma_async`], without its fence.
    ///
    /// # Safety
    /// As [`Accumulators::mma_async`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn mma_async<T: Half>(
        self,
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        b_transposed: bool,
    ) -> Self {
        // SAFETY: by this function's contract.
        unsafe { self.issue::<T>(OperandA::Shared(a), b, b_transposed) }
    }

    /// `wgmma.mma_async` with A from registers: each warp of the
    /// warpgroup holds its 16 rows of A (64×16) as `mma.sync` holds its A
    /// ([`FragmentA`], loaded by `ldmatrix`, say), and the tensor cores
    /// read B from shared memory as [`Accumulators::mma_async`] does,
    /// queued behind the `wgmma`s in flight.
    ///
    /// # Safety
    /// As [`Accumulators::mma_async`], for B; every thread of the
    /// warpgroup brings its own fragment of A, whose registers were last
    /// written before a `wgmma.fence` ([`InFlight::fence`] or
    /// [`Accumulators::fence`]) that precedes this call: the fence orders
    /// those writes before the tensor cores read them (CUTLASS's
    /// `warpgroup_arrive`), and one fence after all of a slice's
    /// fragments are loaded serves all its `wgmma`s. The emulator sees
    /// values, not registers, and cannot check this fence.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn mma_async_registers<T: Half>(
        self,
        a: FragmentA<T>,
        b: MatrixDescriptor,
        b_transposed: bool,
    ) -> Self {
        let a = OperandA::Registers(a.0.map(super::mma::Pair::to_bits));
        // SAFETY: by this function's contract.
        unsafe { self.issue::<T>(a, b, b_transposed) }
    }

    /// `wgmma.mma_async.sync.aligned.m64nNk16.f32` with 16-bit `T` inputs,
    /// A from `a`, B from `b` (N-major where `b_transposed`).
    ///
    /// # Safety
    /// As [`Accumulators::mma_async`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn issue<T: Half>(
        mut self,
        a: OperandA,
        b: MatrixDescriptor,
        b_transposed: bool,
    ) -> Self {
        const {
            assert!(
                F == 32 || F == 64 || F == 128,
                "wgmma tiles are 64×64, 64×128 or 64×256 here"
            )
        };
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
        {
            let d = &mut self.accumulators;
            let b = b.to_bits();
            // The accumulators' operands {0} to {F - 1}, listed from their
            // indices, then A (a descriptor, or four registers and no
            // transpose flag of its own), B and the scale of D by name.
            macro_rules! wgmma {
                ($n:literal; $first:literal $($i:literal)*) => {{
                    macro_rules! issue {
                        ($type:literal, $trans:literal) => {
                            match a {
                                OperandA::Shared(a) => {
                                    // SAFETY: by this function's contract.
                                    unsafe {
                                        core::arch::asm!(
                                            concat!(
                                                "{{ .reg .pred p; setp.ne.b32 p, {one}, 0; ",
                                                "wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.",
                                                $type, ".", $type, " {{{", stringify!($first), "}",
                                                $(", {", stringify!($i), "}",)*
                                                "}}, {a}, {b}, p, 1, 1, 0, ", $trans, "; }}"
                                            ),
                                            inout(reg32) d[$first], $(inout(reg32) d[$i],)*
                                            a = in(reg64) a.to_bits(), b = in(reg64) b,
                                            one = in(reg32) 1u32,
                                            options(nostack),
                                        )
                                    }
                                }
                                OperandA::Registers([a0, a1, a2, a3]) => {
                                    // SAFETY: by this function's contract.
                                    unsafe {
                                        core::arch::asm!(
                                            concat!(
                                                "{{ .reg .pred p; setp.ne.b32 p, {one}, 0; ",
                                                "wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.",
                                                $type, ".", $type, " {{{", stringify!($first), "}",
                                                $(", {", stringify!($i), "}",)*
                                                "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, ",
                                                $trans, "; }}"
                                            ),
                                            inout(reg32) d[$first], $(inout(reg32) d[$i],)*
                                            a0 = in(reg32) a0, a1 = in(reg32) a1,
                                            a2 = in(reg32) a2, a3 = in(reg32) a3,
                                            b = in(reg64) b, one = in(reg32) 1u32,
                                            options(nostack),
                                        )
                                    }
                                }
                            }
                        };
                    }
                    match (T::BF16, b_transposed) {
                        (true, false) => issue!("bf16", "0"),
                        (true, true) => issue!("bf16", "1"),
                        (false, false) => issue!("f16", "0"),
                        (false, true) => issue!("f16", "1"),
                    }
                }};
            }
            match F {
                32 => {
                    wgmma!(64; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
                }
                64 => {
                    wgmma!(128; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63)
                }
                128 => {
                    wgmma!(256; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127)
                }
                _ => unreachable!(),
            }
            self
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
        {
            let _ = (a, b, b_transposed);
            super::below_sm90a();
            self
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let input = if T::BF16 {
                emulator::MmaInput::Bf16
            } else {
                emulator::MmaInput::F16
            };
            let site = core::panic::Location::caller();
            let a = match a {
                OperandA::Shared(a) => emulator::WgmmaA::Shared(a.to_bits()),
                OperandA::Registers(a) => emulator::WgmmaA::Registers(a),
            };
            let operands = (a, b.to_bits());
            let read = emulator::wgmma(input, operands, b_transposed, &mut self.accumulators, site);
            self.reads.push((site, read, None));
            self
        }
    }

    /// `wgmma.fence` again, before the next batch of `wgmma`s: where
    /// other code runs between batches (a branch a thread takes alone),
    /// ptxas otherwise puts a fence of its own in that code and
    /// serialises every `wgmma` (its warning C7519).
    #[inline(always)]
    pub fn fence(self) -> Self {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
        // SAFETY: a fence; touches no memory.
        unsafe {
            core::arch::asm!("wgmma.fence.sync.aligned;", options(nostack))
        };
        self
    }

    /// `wgmma.commit_group`: the `wgmma`s started since the last commit
    /// become one group, which [`InFlight::wait_group`] can wait for.
    #[inline(always)]
    // Only the emulator's bookkeeping changes it.
    #[cfg_attr(target_arch = "nvptx64", allow(unused_mut))]
    pub fn commit_group(mut self) -> Self {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
        // SAFETY: closes a group; touches no memory.
        unsafe {
            core::arch::asm!("wgmma.commit_group.sync.aligned;", options(nostack))
        };
        #[cfg(not(target_arch = "nvptx64"))]
        {
            for (_, _, group) in &mut self.reads {
                group.get_or_insert(self.groups);
            }
            self.groups += 1;
        }
        self
    }

    /// `wgmma.wait_group N`: waits until at most the `N` groups committed
    /// last are unfinished, so that the shared memory the others read
    /// may be written again. The accumulators stay in flight: the groups
    /// still running write them.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    // Only the emulator's bookkeeping changes it.
    #[cfg_attr(target_arch = "nvptx64", allow(unused_mut))]
    pub fn wait_group<const N: u32>(mut self) -> Self {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
        // SAFETY: waits; touches no memory the kernel sees.
        unsafe {
            core::arch::asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack))
        };
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let waited = core::panic::Location::caller();
            let finished = |group: Option<u32>| group.is_some_and(|g| g + N < self.groups);
            for (started, read, _) in self.reads.iter().filter(|(_, _, group)| finished(*group)) {
                emulator::wgmma_retire(read, started, waited);
            }
            self.reads.retain(|(_, _, group)| !finished(*group));
        }
        self
    }

    /// `wgmma.commit_group` and `wgmma.wait_group 0`: every `wgmma` this
    /// thread started has finished; the accumulators, back in reach.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn wait(self) -> Accumulators<F> {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
        {
            let mut d = self.accumulators;
            // SAFETY: waits for the wgmmas that write `d`, which the asm
            // names so that no use of them moves above the wait.
            unsafe {
                core::arch::asm!(
                    "wgmma.commit_group.sync.aligned;",
                    "wgmma.wait_group.sync.aligned 0;",
                    options(nostack)
                );
            }
            for value in &mut d {
                // SAFETY: an empty asm that claims to change the value, so
                // that it is read after the wait.
                unsafe {
                    core::arch::asm!("/* {0} */", inout(reg32) * value, options(nomem, nostack))
                };
            }
            Accumulators(d)
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
        {
            super::below_sm90a();
            Accumulators(self.accumulators)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let waited = core::panic::Location::caller();
            for (started, read, _) in &self.reads {
                emulator::wgmma_retire(read, started, waited);
            }
            Accumulators(self.accumulators)
        }
    }
}

/// `setmaxnreg.dec` and `setmaxnreg.inc`: the warpgroup gives back
/// registers (a producer that only issues copies) or takes them (the
/// consumers, for their accumulators), to `N` a thread, from the pool
/// the block was launched with.
macro_rules! setmaxnreg {
    ($($(#[$doc:meta])* $name:ident => $instruction:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// Every thread of the warpgroup calls it together, with the same
        /// `N`: a multiple of 8 from 24 to 256; what the warpgroups take
        /// the others have given back.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<const N: u32>() {
            const { assert!(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24 to 256, by 8") };
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
            // SAFETY: by this function's contract.
            unsafe {
                core::arch::asm!(concat!($instruction, " {n};"), n = const N, options(nostack))
            };
            #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
            super::below_sm90a();
            #[cfg(not(target_arch = "nvptx64"))]
            emulator::warpgroup_call(
                emulator::WarpOp::SetMaxNReg,
                core::panic::Location::caller(),
            );
        }
    )*};
}

setmaxnreg! {
    /// Lowers this warpgroup's registers a thread to `N`
    /// (`setmaxnreg.dec.sync.aligned.u32`, CUTLASS's
    /// `warpgroup_reg_dealloc`).
    setmaxnreg_dec => "setmaxnreg.dec.sync.aligned.u32";
    /// Raises this warpgroup's registers a thread to `N`
    /// (`setmaxnreg.inc.sync.aligned.u32`, CUTLASS's
    /// `warpgroup_reg_alloc`).
    setmaxnreg_inc => "setmaxnreg.inc.sync.aligned.u32";
}

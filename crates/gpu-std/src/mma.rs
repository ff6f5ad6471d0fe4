//! Registers in, registers out: a warp's 32 lanes hold a matrix between
//! them, a few elements each, and one instruction multiplies two such
//! fragments on the tensor cores.
//!
//! The fragments' layouts are the PTX ISA's for `mma.m16n8k16` ("Matrix
//! Fragments for mma.m16n8k16 with floating point type"). In each drawing
//! below a cell names the lane that holds the element and, after the dot,
//! which of the lane's values it is; `g` is `lane / 4` and `q` is
//! `lane % 4` (PTX's `groupID` and `threadID_in_group`).
//!
//! ```text
//! A, 16×16 (rows r, columns k)       B, 16×8 (rows k, columns n)
//!            k: 2q, 2q+1   2q+8, 2q+9            n: g
//! r: g        a.0          a.2           k: 2q, 2q+1      b.0
//! r: g+8      a.1          a.3           k: 2q+8, 2q+9    b.1
//!
//! C and D, 16×8 (rows r, columns n)
//!            n: 2q   2q+1
//! r: g        c.0    c.1
//! r: g+8      c.2    c.3
//! ```
//!
//! Each `a.i` and `b.i` is a [`Pair`](crate::mma::Pair): two 16-bit elements along k in one
//! 32-bit register, the lower k in the low half. `ldmatrix` loads A's
//! fragment from a row-major tile, and B's from a row-major tile
//! transposed on the way (`.trans`), without any lane computing where
//! another's elements are.
//!
//! `mma.sync` and `ldmatrix` are `.sync.aligned`: all 32 lanes of the warp
//! execute the same instruction together. The emulator computes both from
//! every lane's registers by the layouts above (a fragment filled in
//! another layout gives the wrong product there, as on the GPU) and
//! reports a warp that does not arrive whole.

use core::marker::PhantomData;

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::{self as emulator, MmaInput, WarpOp};

use super::scalar::{Scalar, bf16, f16};
use super::shared::SharedArray;

/// The 16-bit types the tensor cores multiply, accumulating in f32.
pub trait Half: Scalar + sealed::Sealed {
    /// The type's bits.
    fn to_bits(self) -> u16;
    /// The element of these bits.
    fn from_bits(bits: u16) -> Self;
    /// Whether it is `bf16` (else `f16`): one `mma` instruction each.
    #[doc(hidden)]
    const BF16: bool;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for super::f16 {}
}

/// `Half` for each type, by `half`'s own bit conversions.
macro_rules! halves {
    ($($type:ident, $bf16:literal;)*) => {$(
        impl Half for $type {
            fn to_bits(self) -> u16 {
                $type::to_bits(self)
            }
            fn from_bits(bits: u16) -> Self {
                $type::from_bits(bits)
            }
            const BF16: bool = $bf16;
        }
    )*};
}

halves! {
    bf16, true;
    f16, false;
}

/// Two 16-bit elements in one 32-bit register, the first in the low half:
/// CUDA's `__nv_bfloat162` and `__half2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Pair<T> {
    bits: u32,
    element: PhantomData<T>,
}

impl<T: Half> Pair<T> {
    /// `first` in the low half, `second` in the high: one `PRMT` of the
    /// two. (Written as a shift and an or, LLVM moves both into the branch
    /// that loads a guarded `second`, and ptxas then waits for that load
    /// before it issues the next.)
    #[inline(always)]
    pub fn new(first: T, second: T) -> Self {
        let (first, second) = (u32::from(first.to_bits()), u32::from(second.to_bits()));
        Self::from_bits(super::bits::byte_perm(first, second, 0x5410))
    }

    /// The pair of the register `bits`.
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> Self {
        Self {
            bits,
            element: PhantomData,
        }
    }

    /// The register.
    #[inline(always)]
    pub const fn to_bits(self) -> u32 {
        self.bits
    }

    /// The element in the low half, then the one in the high.
    #[inline(always)]
    pub fn elements(self) -> (T, T) {
        (
            T::from_bits(self.bits as u16),
            T::from_bits((self.bits >> 16) as u16),
        )
    }
}

/// A warp's 16×16 A operand: four [`Pair`]s a lane, `a.0` to `a.3` in
/// the module's drawing.
#[derive(Clone, Copy, Debug)]
pub struct FragmentA<T>(pub [Pair<T>; 4]);

/// A warp's 16×8 B operand: two [`Pair`]s a lane, `b.0` and `b.1`.
#[derive(Clone, Copy, Debug)]
pub struct FragmentB<T>(pub [Pair<T>; 2]);

impl<T: Half> FragmentA<T> {
    /// All zeros.
    pub const ZERO: Self = Self([Pair::from_bits(0); 4]);
}

impl<T: Half> FragmentB<T> {
    /// All zeros.
    pub const ZERO: Self = Self([Pair::from_bits(0); 2]);
}

/// A warp's 16×8 f32 accumulator: four values a lane, `c.0` to `c.3`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accumulator(pub [f32; 4]);

impl Accumulator {
    /// All zeros.
    pub const ZERO: Self = Self([0.0; 4]);
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32`:
/// D = A·B + C for the warp's 16×16 A, 16×8 B and 16×8 C, on the tensor
/// cores (`HMMA.16816.F32.BF16`). 4096 multiply-adds in one instruction
/// of the warp.
///
/// All 32 lanes of the warp call it together, each with its own
/// fragments; the warp must not have diverged.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn mma_sync<T: Half>(a: FragmentA<T>, b: FragmentB<T>, c: Accumulator) -> Accumulator {
    let [a0, a1, a2, a3] = a.0.map(Pair::to_bits);
    let [b0, b1] = b.0.map(Pair::to_bits);
    let [c0, c1, c2, c3] = c.0;
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    {
        let (mut d0, mut d1, mut d2, mut d3) = (c0, c1, c2, c3);
        macro_rules! mma {
            ($type:literal) => {
                // SAFETY: the instruction reads and writes registers only;
                // a diverged warp is undefined behaviour of the kernel's
                // making, which the emulator reports.
                unsafe {
                    core::arch::asm!(
                        concat!(
                            "mma.sync.aligned.m16n8k16.row.col.f32.", $type, ".", $type,
                            ".f32 {{{0}, {1}, {2}, {3}}}, {{{4}, {5}, {6}, {7}}}, \
                             {{{8}, {9}}}, {{{0}, {1}, {2}, {3}}};"
                        ),
                        inout(reg32) d0, inout(reg32) d1, inout(reg32) d2, inout(reg32) d3,
                        in(reg32) a0, in(reg32) a1, in(reg32) a2, in(reg32) a3,
                        in(reg32) b0, in(reg32) b1,
                        options(pure, nomem, nostack),
                    );
                }
            };
        }
        if T::BF16 {
            mma!("bf16");
        } else {
            mma!("f16");
        }
        Accumulator([d0, d1, d2, d3])
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    {
        let _ = (a0, a1, a2, a3, b0, b1);
        super::below_sm80();
        c
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let input = if T::BF16 {
            MmaInput::Bf16
        } else {
            MmaInput::F16
        };
        let [c0, c1, c2, c3] = [c0, c1, c2, c3].map(f32::to_bits);
        let registers = [a0, a1, a2, a3, b0, b1, c0, c1, c2, c3];
        let d = emulator::warp_matrix_call(
            WarpOp::Mma(input),
            registers,
            core::panic::Location::caller(),
        );
        Accumulator(d.map(f32::from_bits))
    }
}

/// `ldmatrix.sync.aligned.m8n8.x{N}[.trans].shared.b16`: N 8×8 matrices
/// of 16-bit elements from shared memory, a register of each in every
/// lane (`LDSM`). Lane `8·m + r` names row r of matrix m: the 16 bytes
/// from element `row` of `tile` on, on a 16-byte boundary; the other
/// lanes' `row` is not read. Lane l gets, of each matrix, row `l / 4`'s
/// elements `2·(l % 4)` and the next; transposed, column `l / 4`'s at
/// rows `2·(l % 4)` and the next.
///
/// The hardware reads a matrix's eight rows in one pass through the
/// banks: eight rows that fall in the same four banks (rows 64 or 128
/// bytes apart, the row of an unpadded tile) take eight passes, the bank
/// conflict a padded or swizzled tile avoids.
///
/// # Safety
/// All 32 lanes call it together. Each row read lies inside the
/// launch-sized allocation, on a 16-byte boundary, and was written by
/// this block with a barrier between another thread's write and this
/// read. The emulator checks all of it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ldmatrix<T: Half, const N: usize>(
    tile: SharedArray<T>,
    row: u32,
    trans: bool,
) -> [Pair<T>; N] {
    const {
        assert!(
            N == 1 || N == 2 || N == 4,
            "ldmatrix loads 1, 2 or 4 matrices"
        )
    };
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    {
        let address = tile.shared_address(row);
        let mut r = [0u32; 4];
        macro_rules! ldmatrix {
            ($shape:literal, $operands:literal, $($register:expr),+) => {
                // SAFETY: by this function's contract.
                unsafe {
                    if trans {
                        core::arch::asm!(
                            concat!("ldmatrix.sync.aligned.m8n8.", $shape,
                                ".trans.shared.b16 ", $operands, ", [{}];"),
                            $(out(reg32) $register,)+ in(reg32) address,
                            options(readonly, nostack),
                        );
                    } else {
                        core::arch::asm!(
                            concat!("ldmatrix.sync.aligned.m8n8.", $shape,
                                ".shared.b16 ", $operands, ", [{}];"),
                            $(out(reg32) $register,)+ in(reg32) address,
                            options(readonly, nostack),
                        );
                    }
                }
            };
        }
        match N {
            1 => ldmatrix!("x1", "{{{}}}", r[0]),
            2 => ldmatrix!("x2", "{{{}, {}}}", r[0], r[1]),
            _ => ldmatrix!("x4", "{{{}, {}, {}, {}}}", r[0], r[1], r[2], r[3]),
        }
        core::array::from_fn(|m| Pair::from_bits(r[m]))
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    {
        let _ = (tile, row, trans);
        super::below_sm80();
        [Pair::from_bits(0); N]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let site = core::panic::Location::caller();
        let lane = emulator::lane_id();
        let mut registers = [0; 10];
        if lane < 8 * N as u32 {
            let address = tile.address(row).cast::<u8>();
            emulator::shared_access(address, 16, emulator::AccessKind::Read, site);
            // SAFETY: checked inside the allocation just now; the host's
            // memory is only 8-byte aligned, hence unaligned.
            let bytes = unsafe { address.cast::<[u8; 16]>().read_unaligned() };
            for (word, chunk) in registers.iter_mut().zip(bytes.chunks_exact(4)) {
                *word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            }
        }
        let op = WarpOp::LdMatrix {
            matrices: N as u32,
            trans,
        };
        let fragment = emulator::warp_matrix_call(op, registers, site);
        core::array::from_fn(|m| Pair::from_bits(fragment[m]))
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.prmt"]
    fn prmt(x: u32, y: u32, selector: u32) -> u32;
    #[link_name = "llvm.nvvm.mulhi.ui"]
    fn mulhi(x: u32, y: u32) -> u32;
}

/// `__byte_perm(x, y, selector)`: four bytes picked from the eight of
/// `x` (bytes 0 to 3) and `y` (bytes 4 to 7), byte `n` of the result
/// the one that nibble `n` of `selector` names (`PRMT`, one
/// instruction). Moves bytes between 8- and 16-bit lanes of a register:
/// `byte_perm(x, 0, 0x4140)` spreads bytes 0 and 1 of `x` into the two
/// 16-bit halves. Each nibble must be at most 7 (the hardware's eighth
/// bit asks for a sign instead): the emulator checks it.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn byte_perm(x: u32, y: u32, selector: u32) -> u32 {
    // SAFETY: `prmt` is defined for every operand.
    unsafe { prmt(x, y, selector) }
}

/// `__umulhi(x, y)`: the high 32 bits of the 64-bit product of `x`
/// and `y` (`IMAD.HI.U32`, one instruction). Written out, LLVM keeps
/// a 32-bit operand it cannot see is one in a 64-bit register and
/// multiplies all 64 bits (three instructions, two more registers).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn umulhi(x: u32, y: u32) -> u32 {
    // SAFETY: `mulhi` is defined for every operand.
    unsafe { mulhi(x, y) }
}

/// `__umulhi`, emulated.
#[cfg(not(target_arch = "nvptx64"))]
pub fn umulhi(x: u32, y: u32) -> u32 {
    ((u64::from(x) * u64::from(y)) >> 32) as u32
}

/// `__byte_perm`, emulated.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
pub fn byte_perm(x: u32, y: u32, selector: u32) -> u32 {
    assert!(
        selector & !0x7777 == 0,
        "byte_perm's selector {selector:#x} names a byte past 7"
    );
    let bytes = (u64::from(y) << 32 | u64::from(x)).to_le_bytes();
    let pick = |n: u32| u32::from(bytes[(selector >> (4 * n) & 7) as usize]) << (8 * n);
    pick(0) | pick(1) | pick(2) | pick(3)
}

/// `value` itself, made again each time this runs, so that LLVM hoists
/// neither it nor anything computed from it out of the loop it is in.
///
/// LLVM moves every computation whose inputs do not change in a loop
/// out of it, however many: each then holds a register along the whole
/// loop. Where sixteen such values crowd out what the loop needs, it is
/// cheaper to compute them again where they are used, as nvcc's
/// rematerialisation does and LLVM's NVPTX backend does not. One `mov`,
/// which ptxas removes.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn per_iteration(value: u64) -> u64 {
    let made: u64;
    // SAFETY: a register copy. Not `pure`, so that LLVM neither hoists
    // nor merges it; `nomem`, so that memory accesses still move
    // freely around it.
    unsafe {
        core::arch::asm!(
            "mov.b64 {}, {};",
            out(reg64) made,
            in(reg64) value,
            options(nomem, nostack, preserves_flags),
        );
    }
    made
}

/// [`per_iteration`] on the host: `value`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn per_iteration(value: u64) -> u64 {
    value
}

//! The PTX of a kernel crate as text: the build a GPU runs, the entry
//! points it defines, and a kernel's register cap written into it.

/// A kernel crate's PTX, as `gpu-builder` compiles it: one build for every
/// GPU from Turing (compute capability 7.5) on, one for Ampere (8.0) on,
/// where `gpu-std`'s asynchronous copies are `cp.async` instead of a load
/// and a store. [`include_ptx!`](crate::include_ptx) embeds both.
#[derive(Clone, Copy, Debug)]
pub struct Ptx {
    /// The build for `sm_75`.
    pub sm75: &'static str,
    /// The build for `sm_80`.
    pub sm80: &'static str,
}

impl Ptx {
    /// The build for a GPU of compute capability `major`.`minor`: the
    /// newest it can run.
    pub fn for_capability(&self, (major, minor): (i32, i32)) -> &'static str {
        if (major, minor) >= (8, 0) {
            self.sm80
        } else {
            self.sm75
        }
    }
}

/// Every entry point `ptx` defines, in the order it defines them.
pub fn entry_points(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines()
        .filter_map(|line| line.strip_prefix(".visible .entry "))
        .map(|rest| rest.trim_end_matches('('))
}

/// `ptx` with kernel `entry` compiled under a cap of `registers` registers
/// a thread: the `.maxnreg` directive on its entry, as CUDA C++'s
/// `__maxnreg__` or nvcc's `-maxrregcount` asks for; `None` where `ptx`
/// has no such entry.
pub fn with_register_cap(ptx: &str, entry: &str, registers: u32) -> Option<String> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    let body = start + ptx[start..].find("\n{")?;
    Some(format!(
        "{}\n.maxnreg {registers}{}",
        &ptx[..body],
        &ptx[body..]
    ))
}

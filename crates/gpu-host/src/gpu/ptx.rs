//! The PTX of a kernel crate as text: the build a GPU runs, the entry
//! points it defines, and a kernel's register cap written into it.

/// A kernel crate's PTX, as `gpu-builder` compiles it: one build for every
/// GPU from Turing (compute capability 7.5) on, one for Ampere (8.0) on,
/// where `gpu-std`'s asynchronous copies are `cp.async` instead of a load
/// and a store, one for Hopper (9.0) on, which has bulk copies, and
/// Hopper's arch-specific one (`sm_90a`), which alone has `wgmma` and
/// `setmaxnreg` and runs on 9.0 only. [`include_ptx!`](crate::include_ptx)
/// embeds all four.
#[derive(Clone, Copy, Debug)]
pub struct Ptx {
    /// The build for `sm_75`.
    pub sm75: &'static str,
    /// The build for `sm_80`.
    pub sm80: &'static str,
    /// The build for `sm_90`.
    pub sm90: &'static str,
    /// The build for `sm_90a`.
    pub sm90a: &'static str,
}

impl Ptx {
    /// The build for a GPU of compute capability `major`.`minor`: the
    /// newest it can run.
    pub fn for_capability(&self, (major, minor): (i32, i32)) -> &'static str {
        match (major, minor) {
            (9, 0) => self.sm90a,
            (9.., _) => self.sm90,
            (8, _) => self.sm80,
            _ => self.sm75,
        }
    }
}

/// The compute capability a PTX build is for, from its `.target sm_XY`
/// line (`sm_XYa` for an arch-specific build, [`arch_specific`]): what a
/// GPU must have to run what it holds; `None` for text without one.
pub fn target(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx
        .lines()
        .find_map(|line| line.strip_prefix(".target sm_"))?;
    let digits: String = line.chars().take_while(char::is_ascii_digit).collect();
    let number: u32 = digits.parse().ok()?;
    Some((number / 10, number % 10))
}

/// Whether a PTX build is arch-specific, its `.target` `sm_XYa`: it runs
/// on GPUs of exactly that compute capability, with the instructions only
/// they have (`wgmma`, `setmaxnreg` on 9.0).
pub fn arch_specific(ptx: &str) -> bool {
    ptx.lines()
        .find_map(|line| line.strip_prefix(".target sm_"))
        .is_some_and(|line| {
            let version = line.split([',', ' ']).next().unwrap_or_default();
            version.ends_with('a')
        })
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

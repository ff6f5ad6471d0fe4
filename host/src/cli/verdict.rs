//! How a run ended, when nothing stopped it, and the exit status that says
//! so.

/// How a run ended, when nothing stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every kernel was correct where it ran.
    Correct,
    /// The kernels were listed.
    Listed,
    /// The benchmark ran to the end.
    Benchmarked,
    /// The blurred picture was written.
    Blurred,
    /// Some kernel was wrong.
    Wrong,
    /// There was no GPU to run on; every kernel was correct on the emulator.
    EmulatedOnly,
}

impl Verdict {
    /// The process exit status this verdict stands for.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Correct | Self::Benchmarked | Self::Listed | Self::Blurred => 0,
            Self::Wrong => 1,
            Self::EmulatedOnly => 3,
        }
    }
}

//! What the emulator finds wrong with a launch or one of its threads
//! ([`Fault`], grouped as docs/emulator.md groups its checks), and the
//! message each one prints.

mod kinds;
mod message;
mod parts;
mod warpgroup;

pub use kinds::Fault;
pub use parts::{LaneProblem, SharedPlace, Waiter};
pub use warpgroup::{
    OtherWarp, WarpgroupDivergent, WgmmaMisaligned, WgmmaOutOfBounds, WgmmaUnfenced,
};

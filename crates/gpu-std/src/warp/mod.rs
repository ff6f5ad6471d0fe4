//! Every lane named in the mask of a `_sync` operation must reach that same
//! call, the caller among them: otherwise the result is undefined, or the
//! warp hangs. The emulator checks that and reports a mask that names a
//! lane that is not there, has returned, or waits elsewhere.

mod lanes;
mod reduce;
mod shuffle;
mod vote;

pub use lanes::{ALL_LANES, SIZE, Shuffle};
pub use reduce::{
    Reduce, reduce_add_sync, reduce_and_sync, reduce_max_sync, reduce_min_sync, reduce_or_sync,
    reduce_xor_sync,
};
pub use shuffle::{shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync};
pub use vote::{activemask, all_sync, any_sync, ballot_sync, elect_sync, match_any_sync, syncwarp};

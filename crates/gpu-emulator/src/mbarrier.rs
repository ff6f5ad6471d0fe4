//! Shared-memory barriers (`mbarrier`) and the bulk copies that complete
//! on them, with CUDA's semantics.
//!
//! A barrier in shared memory counts down two things each phase: the
//! arrivals it was initialised to expect, and the bytes of transactions
//! (bulk copies) that threads said to expect (`arrive.expect_tx`). When
//! both reach zero the phase completes, and a thread waiting on the
//! phase's parity goes on. A bulk copy's bytes are read from global memory
//! when it is issued and stay in flight until the phase it completes on
//! does: touching them before is a diagnostic.
//!
//! The emulator lets a phase complete lazily, at the first wait that finds
//! its arrivals all made and its bytes all copied; the copies land then.
//! Their bytes are the waiters' to read in the barrier interval of the
//! landing; a thread that did not wait may read them only after a
//! `sync_threads` (which orders it after a thread that did). A wait that
//! can never succeed, because every other thread waits too, is a
//! diagnostic instead of a hang.
//!
//! A phase also orders threads, as CUDA's release and acquire do: what a
//! thread did before its arrival is ordered before what a thread that
//! waited on the phase does after the wait. Each thread counts its
//! arrivals; a phase keeps the count of each thread that arrived in it,
//! and a wait hands the waiter the counts of the phase it observed, and
//! the phases each arriving thread had seen complete. An access a thread
//! made with `n` arrivals behind it is then ordered before a waiter's
//! access once the waiter knows of its `n + 1`-th.

use super::{Copy, Dim3, Fault};

/// The most arrivals a barrier can expect in a phase (PTX's
/// `mbarrier.init` count is below 2²⁰).
pub const MAX_ARRIVALS: u32 = (1 << 20) - 1;

/// One barrier's state.
struct Barrier {
    /// Its byte offset in shared memory.
    offset: u32,
    /// Arrivals each phase expects.
    count: u32,
    /// Arrivals the current phase still waits for.
    pending: u32,
    /// Bytes the current phase still waits for: expected by arrivals, less
    /// those the copies completing on it bring.
    tx: i64,
    /// Phases completed.
    completed: u32,
    /// The current phase's copies, to land when it completes.
    copies: Vec<Copy>,
    /// Each arrival in the current phase, and those of the phase
    /// completed last.
    arrived: Vec<Arrival>,
    arrived_last: Vec<Arrival>,
}

/// One thread's arrival, with what a waiter on its phase learns of it.
#[derive(Clone)]
struct Arrival {
    /// The thread, by linear index.
    thread: u32,
    /// Its arrivals so far, this one included.
    arrivals: u32,
    /// The phases it had seen complete then, by barrier offset: what its
    /// waits ordered before the arrival is ordered before the waiter too
    /// (a bulk copy's landing, say).
    seen: Vec<(u32, u32)>,
}

/// What one thread has done with the block's barriers and learnt from
/// them.
#[derive(Clone, Default)]
struct ThreadState {
    /// Its arrivals so far.
    arrivals: u32,
    /// `(barrier offset, phases completed)` that it has seen, by a wait of
    /// its own or from a thread that arrived at a phase it waited on.
    observed: Vec<(u32, u32)>,
    /// The most arrivals of each other thread, by linear index, that a
    /// phase it waited on has told it of.
    known: Vec<u32>,
}

/// The barriers of one block, and what its threads have seen of them.
#[derive(Default)]
pub(super) struct Barriers {
    barriers: Vec<Barrier>,
    /// Each thread's, by linear index; none until it uses a barrier.
    threads: Vec<ThreadState>,
    /// Grows with every change to a barrier: a waiting thread can only
    /// succeed after one.
    pub generation: u64,
}

/// What a barrier still waits for, for a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outstanding {
    /// Arrivals each phase expects.
    pub count: u32,
    /// Arrivals the phase still waits for.
    pub pending: u32,
    /// Bytes it still waits for (negative: more than were expected).
    pub tx: i64,
    /// Phases the barrier has completed.
    pub completed: u32,
}

impl Barriers {
    /// The barrier at `offset`, which `thread` uses: an error where none
    /// was initialised there.
    fn initialised(&mut self, thread: Dim3, offset: u32) -> Result<&mut Barrier, Fault> {
        self.barriers
            .iter_mut()
            .find(|barrier| barrier.offset == offset)
            .ok_or(Fault::MbarrierUninitialized { thread, offset })
    }

    /// `mbarrier.init` at `offset` for `count` arrivals a phase.
    pub fn init(&mut self, thread: Dim3, offset: u32, count: u32) -> Result<(), Fault> {
        if count == 0 || count > MAX_ARRIVALS {
            return Err(Fault::MbarrierCount {
                thread,
                offset,
                count,
            });
        }
        self.barriers.retain(|barrier| barrier.offset != offset);
        for state in &mut self.threads {
            state.observed.retain(|&(known, _)| known != offset);
        }
        self.barriers.push(Barrier {
            offset,
            count,
            pending: count,
            tx: 0,
            completed: 0,
            copies: Vec::new(),
            arrived: Vec::new(),
            arrived_last: Vec::new(),
        });
        self.generation += 1;
        Ok(())
    }

    /// One arrival of thread `me` at the barrier at `offset`, expecting
    /// `bytes` more of transactions in the phase.
    pub fn arrive(&mut self, me: u32, thread: Dim3, offset: u32, bytes: u32) -> Result<(), Fault> {
        let state = self.state(me);
        state.arrivals += 1;
        let (arrivals, seen) = (state.arrivals, state.observed.clone());
        let barrier = self.initialised(thread, offset)?;
        if barrier.pending == 0 {
            return Err(Fault::MbarrierOverArrived {
                thread,
                offset,
                count: barrier.count,
            });
        }
        barrier.pending -= 1;
        barrier.tx += i64::from(bytes);
        barrier.arrived.push(Arrival {
            thread: me,
            arrivals,
            seen,
        });
        self.generation += 1;
        Ok(())
    }

    /// A bulk copy completing on the barrier at `offset`.
    pub fn issue(&mut self, thread: Dim3, offset: u32, copy: Copy) -> Result<(), Fault> {
        let barrier = self.initialised(thread, offset)?;
        barrier.tx -= copy.bytes.len() as i64;
        barrier.copies.push(copy);
        self.generation += 1;
        Ok(())
    }

    /// Whether the phase of `parity` of the barrier at `offset` has
    /// completed for thread `me`, completing it now if it can; the copies
    /// to land if it completed now, and the phases completed.
    pub fn try_wait(
        &mut self,
        me: u32,
        thread: Dim3,
        offset: u32,
        parity: u32,
    ) -> Result<Option<(Vec<Copy>, u32)>, Fault> {
        let barrier = self.initialised(thread, offset)?;
        let mut landing = None;
        if barrier.completed % 2 == parity % 2 {
            if barrier.pending > 0 || barrier.tx != 0 {
                return Ok(None);
            }
            landing = Some(std::mem::take(&mut barrier.copies));
            barrier.completed += 1;
            barrier.pending = barrier.count;
            barrier.arrived_last = std::mem::take(&mut barrier.arrived);
        }
        let completed = barrier.completed;
        let told = barrier.arrived_last.clone();
        if landing.is_some() {
            self.generation += 1;
        }
        self.observe(me, offset, completed);
        self.learn(me, &told);
        Ok(Some((landing.unwrap_or_default(), completed)))
    }

    /// Thread `me`'s state, made on its first use.
    fn state(&mut self, me: u32) -> &mut ThreadState {
        let me = me as usize;
        if self.threads.len() <= me {
            self.threads.resize(me + 1, ThreadState::default());
        }
        &mut self.threads[me]
    }

    /// Thread `me` has seen `completed` phases of the barrier at `offset`
    /// complete, if no more before.
    fn observe(&mut self, me: u32, offset: u32, completed: u32) {
        let observed = &mut self.state(me).observed;
        match observed.iter_mut().find(|(known, _)| *known == offset) {
            Some((_, phases)) => *phases = (*phases).max(completed),
            None => observed.push((offset, completed)),
        }
    }

    /// Thread `me` learns of the arrivals `told`: their counts, and the
    /// phases their threads had seen complete.
    fn learn(&mut self, me: u32, told: &[Arrival]) {
        for arrival in told {
            for &(offset, completed) in &arrival.seen {
                self.observe(me, offset, completed);
            }
            let known = &mut self.state(me).known;
            let thread = arrival.thread as usize;
            if known.len() <= thread {
                known.resize(thread + 1, 0);
            }
            known[thread] = known[thread].max(arrival.arrivals);
        }
    }

    /// Thread `me`'s arrivals so far.
    pub fn arrivals(&self, me: u32) -> u32 {
        self.threads
            .get(me as usize)
            .map_or(0, |state| state.arrivals)
    }

    /// Whether an access of thread `earlier`, made with `then` arrivals
    /// behind it, is ordered before thread `me`'s accesses from now on:
    /// `me` waited on a phase that `earlier` arrived at after it.
    pub fn ordered(&self, me: u32, earlier: u32, then: u32) -> bool {
        self.threads
            .get(me as usize)
            .and_then(|state| state.known.get(earlier as usize))
            .is_some_and(|&arrivals| arrivals > then)
    }

    /// Phases of the barrier at `offset` thread `me` has seen complete.
    pub fn observed(&self, me: u32, offset: u32) -> u32 {
        self.threads.get(me as usize).map_or(0, |state| {
            state
                .observed
                .iter()
                .find(|&&(known, _)| known == offset)
                .map_or(0, |&(_, completed)| completed)
        })
    }

    /// What the barrier at `offset` still waits for.
    pub fn outstanding(&self, offset: u32) -> Option<Outstanding> {
        let barrier = self.barriers.iter().find(|b| b.offset == offset)?;
        Some(Outstanding {
            count: barrier.count,
            pending: barrier.pending,
            tx: barrier.tx,
            completed: barrier.completed,
        })
    }
}

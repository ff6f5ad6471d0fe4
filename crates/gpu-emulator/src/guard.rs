//! A stack overflow in an emulated thread, stopped at the guard page below
//! its stack instead of ending the process: a SIGSEGV handler that finds the
//! fault in the running thread's guard page makes the thread return through
//! `corosensei`'s trap handler, on a stack reset for the purpose, into a
//! function that reports the overflow. Any other fault goes to the handler
//! that was there before.
//!
//! Linux on x86-64 only, where the handler knows the registers to set;
//! elsewhere an overflow still ends the process.

use std::ops::Range;

use super::Thread;

/// Runs `resume`, which resumes `thread`, whose stack's guard page is
/// `guard`, so that an overflow of that stack calls `overflowed` on the
/// thread instead of crashing.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(super) fn watch<R>(
    thread: &mut Thread,
    guard: Range<usize>,
    overflowed: fn(),
    resume: impl FnOnce(&mut Thread) -> R,
) -> R {
    linux::install();
    linux::RUNNING.set(Some(linux::Running {
        trap: thread.trap_handler(),
        guard,
        overflowed,
    }));
    let result = resume(thread);
    linux::RUNNING.set(None);
    result
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub(super) fn watch<R>(
    thread: &mut Thread,
    _guard: Range<usize>,
    _overflowed: fn(),
    resume: impl FnOnce(&mut Thread) -> R,
) -> R {
    resume(thread)
}

/// The guard page of a stack whose mapping starts at `limit`, the lowest
/// address of the stack with its guard page included.
pub(super) fn guard_page(limit: usize) -> Range<usize> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    limit..limit + page
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod linux {
    use std::cell::Cell;
    use std::mem::MaybeUninit;
    use std::ops::Range;
    use std::sync::OnceLock;

    use corosensei::trap::{CoroutineTrapHandler, TrapHandlerRegs};

    #[derive(Clone)]
    pub(super) struct Running {
        pub(super) trap: CoroutineTrapHandler<()>,
        pub(super) guard: Range<usize>,
        pub(super) overflowed: fn(),
    }

    thread_local! {
        /// The emulated thread running on this OS thread, while it runs.
        pub(super) static RUNNING: Cell<Option<Running>> = const { Cell::new(None) };
    }

    /// The SIGSEGV action before ours, for every fault that is not ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub(super) fn install() {
        PREVIOUS.get_or_init(|| {
            // SAFETY: a zeroed sigaction is a valid "no handler" value, and
            // the handler below is async-signal-safe in what it touches: a
            // thread-local cell and the interrupted context. SA_ONSTACK runs
            // it on the alternate stack the standard library gives every
            // thread it starts, since the faulting stack is full.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous = MaybeUninit::<libc::sigaction>::zeroed();
                libc::sigaction(libc::SIGSEGV, &action, previous.as_mut_ptr());
                previous.assume_init()
            }
        });
    }

    extern "C" fn handler(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo and ucontext to an
        // SA_SIGINFO handler.
        let (address, context) = unsafe {
            (
                (*info).si_addr() as usize,
                &mut *context.cast::<libc::ucontext_t>(),
            )
        };
        let registers = &mut context.uc_mcontext.gregs;
        let stack_pointer = registers[libc::REG_RSP as usize] as usize;
        let running = RUNNING.take();
        if let Some(running) = &running
            && running.guard.contains(&address)
            && running.trap.stack_ptr_in_bounds(stack_pointer)
        {
            // SAFETY: the fault is the running coroutine's own overflow, its
            // stack pointer is within it, and every register the returned
            // state names is set below. The coroutine is abandoned: the
            // function reports and unwinds to its parent.
            let TrapHandlerRegs {
                rip,
                rsp,
                rbp,
                rdi,
                rsi,
            } = unsafe { running.trap.setup_trap_handler(running.overflowed) };
            for (register, value) in [
                (libc::REG_RIP, rip),
                (libc::REG_RSP, rsp),
                (libc::REG_RBP, rbp),
                (libc::REG_RDI, rdi),
                (libc::REG_RSI, rsi),
            ] {
                registers[register as usize] = value as i64;
            }
            return;
        }
        RUNNING.set(running);
        let previous = PREVIOUS.get().expect("installed before any thread runs");
        // SAFETY: the previous action is the one the process had; restoring
        // a default or ignored one lets the fault happen again under it.
        unsafe {
            match previous.sa_sigaction {
                libc::SIG_DFL | libc::SIG_IGN => {
                    libc::sigaction(signal, previous, std::ptr::null_mut());
                }
                function if previous.sa_flags & libc::SA_SIGINFO != 0 => {
                    let function: extern "C" fn(
                        libc::c_int,
                        *mut libc::siginfo_t,
                        *mut libc::c_void,
                    ) = std::mem::transmute(function);
                    function(signal, info, (context as *mut libc::ucontext_t).cast());
                }
                function => {
                    let function: extern "C" fn(libc::c_int) = std::mem::transmute(function);
                    function(signal);
                }
            }
        }
    }
}

//! Every limit is checked before the work starts, with the real cost: the
//! emulator's memory counted with the shadow its race checks keep of each
//! byte, and its work with every launch a run makes.

use std::process::Command;

use clap::Parser;
use locality::cli::Cli;
use locality::error::Error;
use locality::families::blur::{Blur, BlurShape};
use locality::family::Target;
use locality::suite::{Plan, WorkLimit, host_bytes};

/// The most memory the process `child` held, in bytes, once it has ended.
fn peak_bytes(child: std::process::Child) -> f64 {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into the two locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    // Linux counts the peak in KiB.
    usage.ru_maxrss as f64 * 1024.0
}

#[test]
fn an_emulated_blurs_memory_is_counted_with_its_race_checks() {
    let (width, height) = (1000, 1000);
    let child = Command::new(env!("CARGO_BIN_EXE_locality"))
        .args(["blur", "--emulate", "--size", &format!("{width}x{height}")])
        .args(["-o", "/dev/null"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let peak = peak_bytes(child);
    let shape = BlurShape::new(width, height, 3, 3);
    let counted = host_bytes::<Blur>(shape, Target::Emulator);
    assert!(
        counted >= peak,
        "counted {counted:.3e} bytes, the blur took {peak:.3e}"
    );
    // Not so far over that a picture that fits is refused.
    assert!(counted < 1.5 * peak, "{counted:.3e} against {peak:.3e}");
}

/// The plan for the emulator that `args` ask for.
fn emulated_plan(args: &[&str]) -> Result<Plan, Error> {
    Cli::try_parse_from(["locality", "--emulate"].iter().chain(args))
        .unwrap()
        .plan(Target::Emulator)
}

#[test]
fn the_emulators_work_limit_counts_every_run() {
    let blur = ["--kernel", "blur_naive", "--blur", "2000"];
    let error = emulated_plan(&[&blur[..], &["--runs", "1000"]].concat()).unwrap_err();
    assert!(
        matches!(&error, Error::TooMuchWork { launches: 1001, limit, .. } if *limit == WorkLimit::EMULATED.ops),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("in its 1001 launches"),
        "{error}"
    );
    // One run of the same is within it.
    assert!(emulated_plan(&blur).is_ok());
}

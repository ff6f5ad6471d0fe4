//! `locality lessons`: the material's claims about memory, each run on the
//! GPU. A lesson sweeps one parameter of a lesson kernel (a stride, an
//! offset, a working set, FLOP per byte), verifies every element of every
//! launch against the CPU reference before timing it, and sets what the GPU
//! shows against the claim as the material states it, with a verdict.
//! Each lesson runs at its family's size for the GPU, the one the default
//! run uses.

mod access;
mod all_reduce;
mod arithmetic;
mod bulk;
mod distributed;
mod hints;
mod histogram;
mod host_memory;
mod l2;
mod lab;
mod latency;
mod on_chip;
mod peer;
mod persistence;
mod read_only;
mod ridge;
mod texture;
mod unified;
mod wgmma;

use std::io::Write;
use std::path::PathBuf;

use gpu_host::timing::Runs;
use rand::{SeedableRng, rngs::SmallRng};
use serde::{Deserialize, Serialize};

use crate::bench::ceilings::Hardware;
use crate::bench::plot::{self, LessonLine};
use crate::console::{self, say};
use crate::error::{Error, Result};
use crate::output::{self, Pending};

pub use lab::{Criterion, Judgement, Outcome, Point, Verdict};
use lab::{FETCHED_PER_USED, Lab};

/// A lesson: the claim, and the sweep that tests it.
pub struct Lesson {
    pub name: &'static str,
    pub title: &'static str,
    /// The claim as the material makes it.
    pub claim: &'static str,
    x_axis: &'static str,
    /// Whether x is plotted on a log axis; `None` for a lesson of a few
    /// labelled points, which gets no plot.
    log_x: Option<bool>,
    y_axis: &'static str,
    /// What the emulator counts at each point, where it counts something.
    counted: Option<&'static str>,
    run: fn(&mut Lab<'_>) -> Result<Outcome>,
}

/// Every lesson, in the material's order.
pub const LESSONS: &[Lesson] = &[
    Lesson {
        name: "coalescing",
        title: "Coalescing: a warp's scattered reads waste most of each transaction",
        claim: "Global memory serves a warp in 32-byte sectors of 128-byte lines: when the \
                threads of a warp read scattered (uncoalesced) addresses, most of the bytes \
                of each transaction are fetched for nothing.",
        x_axis: "stride s (elements of 4 bytes)",
        log_x: Some(true),
        y_axis: "effective bandwidth (GB/s of bytes used)",
        counted: Some(FETCHED_PER_USED),
        run: access::coalescing,
    },
    Lesson {
        name: "alignment",
        title: "Alignment: a warp's reads across a boundary take an extra transaction",
        claim: "A warp whose accesses straddle an alignment boundary needs an extra \
                transaction, so misaligned accesses lower the effective bandwidth.",
        x_axis: "offset o (elements of 4 bytes)",
        log_x: Some(false),
        y_axis: "effective bandwidth (GB/s of bytes used)",
        counted: Some(FETCHED_PER_USED),
        run: access::alignment,
    },
    Lesson {
        name: "width",
        title: "Access width and alignment: one load of a pair of floats, or two",
        claim: "Each thread's access moves 1 to 16 bytes; a struct of two floats aligned to 8 \
                bytes is loaded in one 8-byte access, while the same struct aligned to 4 takes \
                two, for 50% lower bus utilisation.",
        x_axis: "bytes per access of each thread",
        log_x: Some(true),
        y_axis: "effective bandwidth (GB/s of bytes used)",
        counted: Some(FETCHED_PER_USED),
        run: access::width,
    },
    Lesson {
        name: "constant",
        title: "Constant memory: one address broadcast to a warp, or 32 served in turn",
        claim: "Constant memory is cached and broadcasts one address to every thread of a \
                warp in a single read; when the threads of a warp read different addresses, \
                the reads are serialised.",
        x_axis: "kernel and spread",
        log_x: None,
        y_axis: "GFLOP/s (one multiply-add per coefficient read)",
        counted: Some("distinct addresses per warp-wide coefficient read"),
        run: on_chip::constant,
    },
    Lesson {
        name: "registers",
        title: "Registers and local memory: an array indexed at run time, and spills",
        claim: "An automatic array indexed at run time is placed in local memory, which is \
                as slow as global memory, and so are registers that spill.",
        x_axis: "kernel",
        log_x: None,
        y_axis: "GB/s of the arrays read",
        counted: None,
        run: on_chip::registers,
    },
    Lesson {
        name: "banks",
        title: "Bank conflicts: a warp's reads in one bank are served one after another",
        claim: "Shared memory is divided into 32 banks of 4-byte words; lanes of a warp that \
                read different words of one bank are served one after another (a bank \
                conflict), so a d-way conflict divides the shared-memory bandwidth by d.",
        x_axis: "stride (4-byte words) between the lanes' reads",
        log_x: Some(false),
        y_axis: "shared-memory read bandwidth (GB/s)",
        counted: Some("wavefronts per read"),
        run: on_chip::banks,
    },
    Lesson {
        name: "caches",
        title: "Caches: L1, L2 and device memory, each with its bandwidth",
        claim: "Reads are served by the per-SM L1 cache, the L2 cache shared by all SMs, or \
                device memory, each larger and slower than the one before: the bandwidth a \
                kernel gets depends on which level holds its working set.",
        x_axis: "working set (bytes)",
        log_x: Some(true),
        y_axis: "read bandwidth (GB/s)",
        counted: None,
        run: on_chip::caches,
    },
    Lesson {
        name: "readonly",
        title: "The read-only data cache: loads a kernel promises never to see written",
        claim: "Data that a kernel only reads can be loaded through the read-only data cache \
                (__ldg, or a const __restrict__ pointer), a cache of its own beside L1 with its \
                own bandwidth, which serves reads that neighbouring threads share without \
                staging them in shared memory.",
        x_axis: "stencil radius r (each element read 2r + 1 times)",
        log_x: Some(true),
        y_axis: "GB/s of the windows' reads",
        counted: None,
        run: read_only::read_only,
    },
    Lesson {
        name: "texture",
        title: "Texture memory: a cache for 2-D locality, with borders and interpolation in hardware",
        claim: "Texture memory is cached on chip for 2-D spatial locality: threads of a warp \
                reading texels near each other in two dimensions are served better than by \
                global loads, and the texture unit handles out-of-range coordinates (clamp, \
                border) and linear interpolation in hardware, at no cost to the kernel.",
        x_axis: "rotation of the picture (degrees; 0° reads rows, 90° columns)",
        log_x: Some(false),
        y_axis: "Gpixel/s",
        counted: None,
        run: texture::texture,
    },
    Lesson {
        name: "hints",
        title: "Cache hints: data used once, marked evict-first, leaves the L2 to reused data",
        claim: "Loads and stores of data used once can be marked evict-first (__ldcs, __stcs: \
                cache streaming), so that the L2 gives up their lines before those of data \
                the kernel reads again, which then stays cached.",
        x_axis: "reused set (MiB), beside a stream of 512 MiB read and 512 MiB written",
        log_x: Some(true),
        y_axis: "GB/s of the stream read and written",
        counted: None,
        run: hints::hints,
    },
    Lesson {
        name: "persistence",
        title: "L2 persistence: a carve-out of the L2 that keeps one buffer's lines",
        claim: "A part of the L2 can be set aside for persisting accesses, and an \
                access-policy window on a stream marks a buffer's accesses persisting, so \
                that its lines stay in the L2 across a kernel's passes and launches while \
                other data streams through.",
        x_axis: "reused set (MiB), beside a stream of 512 MiB read and 512 MiB written",
        log_x: Some(true),
        y_axis: "GB/s of the stream read and written",
        counted: None,
        run: persistence::persistence,
    },
    Lesson {
        name: "zero-copy",
        title: "Host memory read in place: a kernel's loads across the host link",
        claim: "A kernel can read page-locked host memory mapped into the GPU's address space \
                in place (zero-copy), each access crossing the host link: coalesced warps \
                use the link well, scattered warps waste it as they waste device memory, and \
                data read more than once is worth copying into device memory first.",
        x_axis: "stride s (elements of 4 bytes)",
        log_x: Some(true),
        y_axis: "read bandwidth (GB/s of the input's bytes used)",
        counted: None,
        run: host_memory::zero_copy,
    },
    Lesson {
        name: "unified",
        title: "Unified memory: pages faulted in by a kernel, or moved ahead of it",
        claim: "Managed (unified) memory moves to the GPU when a kernel first touches it, a \
                page fault at a time, which costs far more than moving the same pages ahead \
                of the kernel: a prefetch moves them at close to an explicit copy's speed.",
        x_axis: "input (MiB)",
        log_x: Some(true),
        y_axis: "GB/s of the input moved and read",
        counted: None,
        run: unified::unified,
    },
    Lesson {
        name: "peer",
        title: "Peer access: another GPU's memory, read in place over NVLink",
        claim: "With peer access a kernel reads another GPU's memory by its pointers, as its \
                own: the bytes come at the link's rate, a fraction of the GPU's own memory's, \
                and a kernel streaming them keeps the link as busy as the copy engines do, so \
                data read once need not be copied over first. (Needs two GPUs.)",
        x_axis: "input (MiB)",
        log_x: Some(true),
        y_axis: "GB/s of the input",
        counted: None,
        run: peer::peer,
    },
    Lesson {
        name: "latency",
        title: "Latency: each level further from the SM costs more time a dependent read",
        claim: "A read that must wait for the one before it costs the latency of wherever \
                its data lies: a few hundred nanoseconds in the L2, more in device memory, \
                and a microsecond or more across a link, to the host's memory over PCIe or \
                another GPU's over NVLink.",
        x_axis: "chain (MiB)",
        log_x: Some(true),
        y_axis: "ns a dependent read",
        counted: None,
        run: latency::latency,
    },
    Lesson {
        name: "all-reduce",
        title: "All-reduce: a one-shot kernel over NVLink, or NCCL",
        claim: "Across GPUs, a small all-reduce is bound by latency: one kernel a GPU that \
                reads the peer's data in place and sums beats NCCL's all-reduce, whose \
                protocol pays more fixed cost; a large one is bound by the link's bandwidth, \
                where NCCL, which moves each byte across the link once with few SMs, wins. \
                (Needs two GPUs and NCCL.)",
        x_axis: "bytes a GPU",
        log_x: Some(true),
        y_axis: "algorithm bandwidth (GB/s)",
        counted: None,
        run: all_reduce::all_reduce,
    },
    Lesson {
        name: "bulk",
        title: "Bulk copies: one thread stages a whole tile through the Tensor Memory Accelerator",
        claim: "On Hopper the Tensor Memory Accelerator copies a whole tile from global to \
                shared memory asynchronously: one thread issues one bulk copy (cp.async.bulk), \
                which completes on a shared-memory barrier every thread waits on, and the tile \
                arrives as fast as with every thread's own asynchronous copies, with almost \
                none of their instructions.",
        x_axis: "input (MiB), each 16 KiB tile staged in shared memory and written out reversed",
        log_x: Some(true),
        y_axis: "GB/s read and written",
        counted: Some("warp-level copy instructions a tile"),
        run: bulk::bulk,
    },
    Lesson {
        name: "bulk-tensor",
        title: "Tensor copies: the Tensor Memory Accelerator stages a transpose's tiles",
        claim: "On Hopper a tensor copy (cp.async.bulk.tensor) moves a whole 2-D tile of an \
                array into shared memory, described by a tensor map the host encodes, and \
                swizzles its rows so that reading a column meets no bank conflict: a kernel \
                that stages tiles, such as a transpose, gets them as fast as with every \
                thread's own asynchronous copies, from one instruction of one thread.",
        x_axis: "matrix (MiB), square, transposed through tiles of 128 × 32 in shared memory",
        log_x: Some(true),
        y_axis: "GB/s read and written",
        counted: Some("warp-level copy instructions a tile"),
        run: bulk::tensor,
    },
    Lesson {
        name: "distributed",
        title: "Distributed shared memory: a block reads its cluster neighbour's shared memory",
        claim: "On Hopper the blocks of a thread block cluster read each other's shared memory \
                directly (distributed shared memory), over a network between the SMs: slower \
                than a block's own shared memory, but faster than exchanging the data through \
                global memory, whose best case is a read that hits in the L2.",
        x_axis: "blocks a cluster (the neighbour is the next block in it)",
        log_x: Some(true),
        y_axis: "GB/s read, every block at once",
        counted: None,
        run: distributed::bandwidth,
    },
    Lesson {
        name: "distributed-latency",
        title: "Distributed shared memory's latency: between the SM's own and the L2's",
        claim: "A read of a cluster neighbour's shared memory goes to another SM and back: it \
                takes longer than a read of the block's own shared memory, and less long than \
                an L2 hit.",
        x_axis: "blocks a cluster (the neighbour is the next block in it)",
        log_x: Some(true),
        y_axis: "ns a dependent read",
        counted: None,
        run: distributed::latency,
    },
    Lesson {
        name: "histogram",
        title: "Privatisation: a histogram's bins copied into each block's shared memory",
        claim: "Atomic updates of the same bins by many threads contend; giving each block a \
                private copy of the bins in shared memory, updated with shared-memory atomics \
                and merged into the global bins once at the end, cuts the contention and the \
                global-memory traffic of the atomics.",
        x_axis: "kernel and bytes",
        log_x: None,
        y_axis: "GB/s of bytes counted",
        counted: Some("global atomics per KiB counted"),
        run: histogram::privatisation,
    },
    Lesson {
        name: "intensity",
        title: "Arithmetic intensity: below the ridge point memory bounds, above it compute",
        claim: "A kernel whose FLOP per byte is below the GPU's ridge point (12.5 FLOP/B on an \
                A100) is bound by memory bandwidth, above it by arithmetic throughput.",
        x_axis: "arithmetic intensity (FLOP per byte of global memory)",
        log_x: Some(true),
        y_axis: "GFLOP/s",
        counted: None,
        run: arithmetic::intensity,
    },
    Lesson {
        name: "tensor-ridge",
        title: "The tensor cores' ridge point: the reuse that frees the FP32 cores from memory \
                leaves them waiting on it",
        claim: "The tensor cores do about fifteen times the FP32 cores' arithmetic on the same \
                bytes (990 against 67 dense TFLOP/s on an H100), so their ridge point is about \
                fifteen times higher: a matmul with enough reuse to be compute-bound on the \
                FP32 cores is still memory-bound on the tensor cores.",
        x_axis: "arithmetic intensity (FLOP per byte a 4096×4096×k matmul must move, k from 16 \
                 to 4096)",
        log_x: Some(true),
        y_axis: "GFLOP/s",
        counted: None,
        run: ridge::tensor_ridge,
    },
    Lesson {
        name: "wgmma",
        title: "Hopper's tensor cores read shared memory themselves",
        claim: "On Hopper a warpgroup's wgmma reads A and B straight from shared memory through \
                matrix descriptors, where mma.sync needs each warp to load its fragments into \
                registers with ldmatrix first: the same staged tile is multiplied with no \
                shared-memory load instructions and no fragment registers, and faster; with A \
                still loaded into registers, B's loads alone are saved.",
        x_axis: "n (A, B and C n×n; a 128×128 tile of C a block, staged in shared memory)",
        log_x: Some(true),
        y_axis: "GFLOP/s",
        counted: Some("warp-level shared-memory loads a tile issues each 64 of k"),
        run: wgmma::wgmma,
    },
];

/// The names `locality lessons NAME` takes.
pub fn names() -> Vec<&'static str> {
    LESSONS.iter().map(|lesson| lesson.name).collect()
}

impl Lesson {
    /// Whether `--plots` draws it: a sweep, not a few labelled points.
    pub fn plotted(&self) -> bool {
        self.log_x.is_some()
    }
}

/// A lesson's entry in the JSON report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub name: String,
    pub title: String,
    pub claim: String,
    pub x_axis: String,
    pub y_axis: String,
    pub counted: Option<String>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What `--json` writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The GPU, and the second one where a two-GPU lesson ran.
    pub device: String,
    pub seed: u64,
    pub runs: usize,
    pub lessons: Vec<Entry>,
}

impl Report {
    /// One plot per lesson that sweeps, by file name: what `--plots` writes.
    pub fn plots(&self) -> Result<Vec<(String, String)>> {
        let mut plots = Vec::new();
        for entry in &self.lessons {
            let Some(lesson) = LESSONS.iter().find(|lesson| lesson.name == entry.name) else {
                continue;
            };
            if let Some(svg) = picture(lesson, &entry.outcome, &self.device).transpose()? {
                plots.push((format!("{}.svg", lesson.name), svg));
            }
        }
        Ok(plots)
    }
}

/// What `locality lessons` was asked for.
pub struct Request {
    /// One lesson by name, or all of them.
    pub lesson: Option<String>,
    pub json: Option<PathBuf>,
    pub plots: Option<PathBuf>,
    pub runs: Runs,
    pub seed: u64,
    pub device: usize,
    /// The two-GPU lessons' second GPU, where the user names one.
    pub peer: Option<usize>,
}

/// The lessons `request` names, each run on the GPU, printed, and written
/// to the JSON and the plots; whether every kernel was correct.
pub fn run(request: &Request) -> Result<bool> {
    let lessons: Vec<&Lesson> = LESSONS
        .iter()
        .filter(|lesson| {
            request
                .lesson
                .as_deref()
                .is_none_or(|name| name == lesson.name)
        })
        .collect();
    let gpu = crate::gpu::open(request.device)?;
    let json = request.json.as_deref().map(Pending::create).transpose()?;
    if let Some(dir) = &request.plots {
        std::fs::create_dir_all(dir).map_err(|source| Error::write(dir, source))?;
        // A probe proves now that the folder takes files.
        drop(Pending::create(&dir.join("lesson.svg"))?);
    }
    let mut lab = Lab {
        gpu: &gpu,
        device: request.device,
        peer: request.peer,
        peer_name: None,
        hardware: Hardware::read(&gpu),
        runs: request.runs,
        rng: SmallRng::seed_from_u64(request.seed),
    };
    say!(
        "{} · random inputs from seed {} · {} warm-up + {} timed runs, median reported; every \
         output verified against the CPU reference before it is timed",
        gpu.name(),
        request.seed,
        request.runs.warmup,
        request.runs.timed
    )?;
    let mut outcomes = Vec::new();
    for lesson in &lessons {
        let outcome = (lesson.run)(&mut lab)?;
        console::print(format_args!("\n{}", describe(lesson, &outcome)))?;
        outcomes.push(outcome);
    }
    let correct = outcomes
        .iter()
        .all(|outcome| outcome.verdict != Verdict::Wrong);
    let report = Report {
        device: match &lab.peer_name {
            Some(peer) => format!("{} with an {peer} as its peer", gpu.name()),
            None => gpu.name().to_string(),
        },
        seed: request.seed,
        runs: request.runs.timed,
        lessons: lessons
            .iter()
            .zip(outcomes)
            .map(|(lesson, outcome)| Entry {
                name: lesson.name.to_string(),
                title: lesson.title.to_string(),
                claim: lesson.claim.to_string(),
                x_axis: lesson.x_axis.to_string(),
                y_axis: lesson.y_axis.to_string(),
                counted: lesson.counted.map(str::to_string),
                outcome,
            })
            .collect(),
    };
    let mut written = Vec::new();
    if let Some(json) = json {
        written.push(json.path().to_path_buf());
        json.finish(|writer| {
            serde_json::to_writer_pretty(&mut *writer, &report)?;
            writeln!(writer)
        })?;
    }
    if let Some(dir) = &request.plots {
        for (name, svg) in report.plots()? {
            let path = dir.join(name);
            output::write(&path, svg.as_bytes())?;
            written.push(path);
        }
    }
    for path in written {
        say!("wrote {}", path.display())?;
    }
    Ok(correct)
}

/// A lesson's claim, its points, what they show and the verdict, as text.
fn describe(lesson: &Lesson, outcome: &Outcome) -> String {
    let mut text = format!(
        "{}\n  claim: {}\n\n  {:>10}  {:>10}  {:>14}  {:>16}  {:>3}\n",
        lesson.title,
        lesson.claim,
        "x",
        "median ms",
        "y",
        if lesson.counted.is_some() {
            "counted"
        } else {
            ""
        },
        "ok"
    );
    for point in &outcome.points {
        let fetched = point
            .counted
            .map_or_else(|| "-".to_string(), |ratio| format!("{ratio:.3}"));
        if let Some(label) = &point.label {
            text += &format!("  {:>10}: {label}\n", point.x);
        }
        text += &format!(
            "  {:>10}  {:>10.4}  {:>14.1}  {:>16}  {:>3}\n",
            point.x,
            point.ms,
            point.y,
            fetched,
            if point.correct { "yes" } else { "NO" }
        );
    }
    let counted = lesson.counted.map_or_else(String::new, |counted| {
        format!("; counted: {counted}, by the emulator")
    });
    text += &format!(
        "  (x: {}; y: {}{counted}; kernel {})\n\n  this GPU: {}\n  verdict: {}\n",
        lesson.x_axis,
        lesson.y_axis,
        outcome.kernel,
        outcome.finding,
        outcome.verdict.describe()
    );
    if let (Some(margin), Some(spread)) = (outcome.margin, outcome.spread) {
        let side = if margin >= 0.0 { "past" } else { "short of" };
        text += &format!(
            "  margin: {:.1}% {side} its threshold, against a run-to-run spread of {:.1}%{}\n",
            100.0 * margin.abs(),
            100.0 * spread,
            if outcome.within_spread() {
                " (within it: another run may not repeat this verdict)"
            } else {
                ""
            }
        );
    }
    text
}

/// A lesson's plot: its points, and its bound where it has one; `None`
/// for a lesson without one.
fn picture(lesson: &Lesson, outcome: &Outcome, device: &str) -> Option<Result<String>> {
    let log_x = lesson.log_x?;
    if outcome.points.is_empty() {
        return None;
    }
    // The sweep, a line for each kernel: the points a label does not set
    // apart.
    let mut lines: Vec<LessonLine> = Vec::new();
    for point in outcome.points.iter().filter(|point| point.label.is_none()) {
        let name = point.series.as_ref().unwrap_or(&outcome.kernel);
        match lines.iter_mut().find(|line| &line.name == name) {
            Some(line) => line.points.push((point.x, point.y)),
            None => lines.push(LessonLine {
                name: name.clone(),
                points: vec![(point.x, point.y)],
                dashed: false,
            }),
        }
    }
    if let Some(bound) = &outcome.bound {
        lines.push(LessonLine {
            name: "roofline from the sweep's ends".to_string(),
            points: bound.clone(),
            dashed: true,
        });
    }
    Some(plot::lesson(
        lesson.title,
        &format!("{device} · verdict: {}", outcome.verdict.describe()),
        (lesson.x_axis, log_x),
        lesson.y_axis,
        &lines,
    ))
}

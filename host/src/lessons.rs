//! `locality lessons`: the material's claims about memory, each run on the
//! GPU. A lesson sweeps one parameter of a lesson kernel (a stride, an
//! offset, a working set, FLOP per byte), verifies every element of every
//! launch against the CPU reference before timing it, and sets what the GPU
//! shows against the claim as the material states it, with a verdict.
//! Each lesson runs at its family's size for the GPU, the one the default
//! run uses.

use std::io::Write;
use std::path::PathBuf;

use gpu_emulator::traffic::Traffic;
use gpu_std::Kernel;
use rand::{SeedableRng, rngs::SmallRng};
use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::bench::ceilings::Hardware;
use crate::bench::plot::{self, LessonLine};
use crate::case::Case;
use crate::console::{self, say};
use crate::device::{Gpu, with_register_cap};
use crate::emulator::CountingEmulator;
use crate::error::{Error, Result};
use crate::families::access::{Access, AccessShape};
use crate::families::banks::{Banks, BanksShape};
use crate::families::caches::{Caches, CachesShape};
use crate::families::constant::{Constant, ConstantShape};
use crate::families::intensity::{Intensity, IntensityShape};
use crate::families::registers::{Registers, RegistersShape};
use crate::families::width::{Width, WidthShape};
use crate::family::Family;
use crate::output::{self, Pending};
use crate::timing::Runs;

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
        run: coalescing,
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
        run: alignment,
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
        run: width,
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
        run: constant,
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
        run: registers,
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
        run: banks,
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
        run: caches,
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
        run: intensity,
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

/// What a lesson's run says of its claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The GPU shows what the claim says.
    Confirmed,
    /// The traffic is as the claim says, but the caches hide its cost.
    Hidden,
    /// The GPU does not show what the claim says.
    NotShown,
    /// A kernel computed something wrong: the lesson proves nothing.
    Wrong,
}

impl Verdict {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Hidden => "true of the traffic, hidden in the time by the caches",
            Self::NotShown => "not shown by this GPU",
            Self::Wrong => "WRONG: a kernel's output did not match the CPU reference",
        }
    }
}

/// One measured point of a sweep.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Point {
    /// What the point is, where its x alone does not say.
    pub label: Option<String>,
    pub x: f64,
    /// The kernel's median time.
    pub ms: f64,
    /// The lesson's quantity: what its plot shows.
    pub y: f64,
    /// What the emulator counts for the same access pattern (the lesson's
    /// `counted`), where the lesson is about it.
    pub counted: Option<f64>,
    /// Whether every element of the output matched the reference.
    pub correct: bool,
}

/// A lesson's run: its points, what they show, and the verdict.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    pub kernel: String,
    pub points: Vec<Point>,
    /// A bound the points are set against (the roofline), where there is one.
    pub bound: Option<Vec<(f64, f64)>>,
    pub finding: String,
    pub verdict: Verdict,
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
}

/// Where the lessons run: the GPU, what it is, and where the inputs come
/// from.
pub struct Lab<'a> {
    gpu: &'a Gpu,
    device: usize,
    hardware: Hardware,
    runs: Runs,
    rng: SmallRng,
}

impl Lab<'_> {
    /// Verifies family `F`'s kernel on `shape` (fresh inputs, poisoned
    /// output, every element), then times it.
    fn measure<F: Family>(&mut self, shape: F::Shape) -> Result<(f64, bool)> {
        self.measure_on::<F>(self.gpu, &F::KERNELS[0], shape)
    }

    /// [`Lab::measure`] for `kernel` as `gpu` loaded it.
    fn measure_on<F: Family>(
        &mut self,
        gpu: &Gpu,
        kernel: &Kernel<F::Args, F::Problem>,
        shape: F::Shape,
    ) -> Result<(f64, bool)> {
        let mut case = Case::<Gpu, F>::new(gpu, shape, &mut self.rng)?;
        let correct = case.check(gpu, kernel)?.passed();
        let ms = gpu.median_ms(self.runs, || case.launch(gpu, kernel))?;
        Ok((ms, correct))
    }
}

/// What the access lessons count.
const FETCHED_PER_USED: &str = "bytes fetched per byte used";

/// The traffic of family `F`'s first kernel at `shape`, as the emulator
/// counts it.
fn traffic<F: Family>(shape: F::Shape) -> Result<Traffic> {
    kernel_traffic::<F>(&F::KERNELS[0], shape)
}

/// The traffic of `kernel` at `shape`, as the emulator counts it.
fn kernel_traffic<F: Family>(
    kernel: &Kernel<F::Args, F::Problem>,
    shape: F::Shape,
) -> Result<Traffic> {
    let counting = CountingEmulator::default();
    let mut rng = SmallRng::seed_from_u64(0);
    // Checked, not only launched: `prepare` sets what the kernel needs
    // (the constant array), and the count is of a correct run.
    let mut case = Case::<CountingEmulator, F>::new(&counting, shape, &mut rng)?;
    let comparison = case.check(&counting, kernel)?;
    if !comparison.passed() {
        return Err(Error::WrongOnEmulator {
            kernel: kernel.name,
            comparison: comparison.to_string(),
        });
    }
    Ok(counting
        .traffic(kernel.name)
        .expect("the counting emulator counts every launch"))
}

/// Bytes fetched per byte used by the global loads of family `F`'s kernel
/// at `shape`, as the emulator counts them.
fn fetched_per_used<F: Family>(shape: F::Shape) -> Result<f64> {
    let loads = traffic::<F>(shape)?.global_load;
    Ok(loads.bytes_fetched() as f64 / loads.bytes_used as f64)
}

/// The copy's elements in the emulator's count of its traffic.
const COUNTED_ELEMENTS: usize = 4096;

/// GB/s of the bytes a copy of `n` elements uses, read and written.
fn copy_rate(n: usize, ms: f64) -> f64 {
    8.0 * n as f64 / ms / 1e6
}

/// The copy at each stride, and the sectors the emulator counts for it.
fn coalescing(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for stride in [1, 2, 4, 8, 16, 32] {
        let shape = |n| AccessShape {
            n,
            stride,
            offset: 0,
        };
        let (ms, correct) = lab.measure::<Access>(shape(Access::SIZE.on_gpu[0]))?;
        points.push(Point {
            label: None,
            x: stride as f64,
            ms,
            y: copy_rate(Access::SIZE.on_gpu[0], ms),
            counted: Some(fetched_per_used::<Access>(shape(COUNTED_ELEMENTS))?),
            correct,
        });
    }
    let (first, last) = (&points[0], &points[points.len() - 1]);
    let ratio = last.y / first.y;
    let finding = format!(
        "stride 1: {:.0} GB/s, every byte fetched used; stride {}: {:.0} GB/s ({:.2}× stride 1), \
         the reads fetching {:.0} bytes per byte used (emulator's sector count).",
        first.y,
        last.x,
        last.y,
        ratio,
        last.counted.unwrap_or(f64::NAN),
    );
    let verdict = if ratio < 0.5 {
        Verdict::Confirmed
    } else {
        Verdict::NotShown
    };
    Ok(outcome(
        Access::KERNELS[0].name,
        points,
        None,
        finding,
        verdict,
    ))
}

/// The copy from each offset of a sector and a line and one past.
fn alignment(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for offset in 0..=32 {
        let shape = |n| AccessShape {
            n,
            stride: 1,
            offset,
        };
        let (ms, correct) = lab.measure::<Access>(shape(Access::SIZE.on_gpu[0]))?;
        points.push(Point {
            label: None,
            x: offset as f64,
            ms,
            y: copy_rate(Access::SIZE.on_gpu[0], ms),
            counted: Some(fetched_per_used::<Access>(shape(COUNTED_ELEMENTS))?),
            correct,
        });
    }
    let aligned_to = |sector: bool| {
        mean_y(&points, |point| {
            (point.x as usize).is_multiple_of(8) == sector
        })
    };
    let (aligned, misaligned) = (aligned_to(true), aligned_to(false));
    let worst = points
        .iter()
        .map(|point| point.y)
        .fold(f64::INFINITY, f64::min);
    let extra = points
        .iter()
        .map(|point| point.counted.unwrap_or(1.0))
        .fold(1.0, f64::max);
    let ratio = misaligned / aligned;
    let finding = format!(
        "offsets that are multiples of 8 (32 bytes): {aligned:.0} GB/s on average; the others: \
         {misaligned:.0} GB/s ({ratio:.3}×, worst {:.3}×), though their reads fetch {extra:.2} \
         bytes per byte used (emulator's sector count): the extra sector is the neighbouring \
         warp's, which L1 and L2 then serve.",
        worst / aligned,
    );
    let verdict = if ratio < 0.95 {
        Verdict::Confirmed
    } else {
        Verdict::Hidden
    };
    Ok(outcome(
        Access::KERNELS[0].name,
        points,
        None,
        finding,
        verdict,
    ))
}

/// Every width's copy, and the two pairs', with the bytes each fetches
/// per byte used as the emulator counts them.
fn width(lab: &mut Lab<'_>) -> Result<Outcome> {
    let shape = WidthShape {
        bytes: Width::SIZE.on_gpu[0],
    };
    let mut points = Vec::new();
    for kernel in Width::KERNELS {
        let (ms, correct) = lab.measure_on::<Width>(lab.gpu, kernel, shape)?;
        let loads = kernel_traffic::<Width>(kernel, WidthShape { bytes: 4096 })?.global_load;
        let pair = kernel.name.strip_prefix("copy_pairs_");
        let width = kernel.name.strip_prefix("copy_bytes_");
        points.push(Point {
            label: pair.map(|alignment| format!("a pair of f32, {}", alignment.replace('_', " "))),
            x: width.map_or(8.0, |bytes| bytes.parse().unwrap_or(f64::NAN)),
            ms,
            y: 2.0 * shape.bytes as f64 / ms / 1e6,
            counted: Some(loads.bytes_fetched() as f64 / loads.bytes_used as f64),
            correct,
        });
    }
    let (widths, pairs): (Vec<&Point>, Vec<&Point>) =
        points.iter().partition(|point| point.label.is_none());
    let listed: Vec<String> = widths
        .iter()
        .map(|point| format!("{} B {:.0} GB/s", point.x, point.y))
        .collect();
    let (align_4, align_8) = (pairs[0], pairs[1]);
    let finding = format!(
        "by bytes per access: {}. A pair of f32 aligned to 4 bytes: {:.0} GB/s, its two 4-byte \
         loads fetching {:.2} bytes per byte used; aligned to 8: {:.0} GB/s, one 8-byte load, \
         {:.2}: the aligned pair copies {:.2}× as fast.",
        listed.join(", "),
        align_4.y,
        align_4.counted.unwrap_or(f64::NAN),
        align_8.y,
        align_8.counted.unwrap_or(f64::NAN),
        align_8.y / align_4.y,
    );
    let verdict = if align_4.y < 0.95 * align_8.y {
        Verdict::Confirmed
    } else {
        Verdict::Hidden
    };
    Ok(outcome(
        "copy_bytes_{1,2,4,8,16}, copy_pairs_align_{4,8}",
        points,
        None,
        finding,
        verdict,
    ))
}

/// Both kernels with the warp's lanes on one coefficient and on 32.
fn constant(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for kernel in Constant::KERNELS {
        for spread in [0, 1] {
            let shape = ConstantShape {
                n: Constant::SIZE.on_gpu[0],
                spread,
            };
            let (ms, correct) = lab.measure_on::<Constant>(lab.gpu, kernel, shape)?;
            let traffic = kernel_traffic::<Constant>(kernel, ConstantShape { n: 256, spread })?;
            let addresses = match traffic.loads_by_buffer.get("coefficients") {
                Some(loads) => loads.bytes_used as f64 / 4.0 / loads.requests as f64,
                None => {
                    traffic.constant_load.addresses as f64 / traffic.constant_load.requests as f64
                }
            };
            let lanes = if spread == 0 {
                "one coefficient a warp"
            } else {
                "32 coefficients a warp"
            };
            points.push(Point {
                label: Some(format!("{}, {lanes}", kernel.name)),
                x: (points.len() + 1) as f64,
                ms,
                y: Constant::work(shape).ops / ms / 1e6,
                counted: Some(addresses),
                correct,
            });
        }
    }
    let rate = |index: usize| points[index].y;
    let finding = format!(
        "constant memory: {:.0} GFLOP/s with one coefficient a warp, {:.0} with 32 ({:.3}×); \
         global memory through L1: {:.0} and {:.0} ({:.3}×). The constant cache's broadcast is \
         {:.2}× L1's; its 32 addresses a read are served one after another.",
        rate(0),
        rate(1),
        rate(1) / rate(0),
        rate(2),
        rate(3),
        rate(3) / rate(2),
        rate(0) / rate(2),
    );
    let verdict = if rate(1) < rate(0) / 4.0 && rate(0) > 0.9 * rate(2) {
        Verdict::Confirmed
    } else {
        Verdict::NotShown
    };
    Ok(outcome(
        "coefficients_from_constant, coefficients_from_global",
        points,
        None,
        finding,
        verdict,
    ))
}

/// The register cap under which `array_in_registers` spills: half of
/// what it takes without one.
const REGISTER_CAP: u32 = 32;

/// The array in registers, in local memory, and in registers under a cap
/// that spills them, with what the driver gave each.
fn registers(lab: &mut Lab<'_>) -> Result<Outcome> {
    let shape = RegistersShape {
        n: Registers::SIZE.on_gpu[0],
        rotation: 5,
    };
    let [in_registers, in_local_memory] = [0, 1].map(|index| &Registers::KERNELS[index]);
    let capped_ptx = with_register_cap(lab.gpu.ptx()?, in_registers.name, REGISTER_CAP)
        .ok_or(Error::MissingKernel(in_registers.name))?;
    let capped = Gpu::with_ptx(lab.device, &capped_ptx)?;
    let runs = [
        (lab.gpu, in_registers, in_registers.name.to_string()),
        (lab.gpu, in_local_memory, in_local_memory.name.to_string()),
        (
            &capped,
            in_registers,
            format!("{} under .maxnreg {REGISTER_CAP}", in_registers.name),
        ),
    ];
    let (mut points, mut rows, mut local_bytes) = (Vec::new(), Vec::new(), Vec::new());
    for (index, (gpu, kernel, label)) in runs.into_iter().enumerate() {
        let (ms, correct) = lab.measure_on::<Registers>(gpu, kernel, shape)?;
        let resources = gpu.resources(&kernel.entries())?;
        rows.push(format!(
            "{label}: {} registers, {} bytes of local memory, {:.0} GB/s",
            resources.registers,
            resources.local_bytes,
            shape.bytes_read() / ms / 1e6
        ));
        points.push(Point {
            label: Some(format!(
                "{label} ({} registers, {} local bytes)",
                resources.registers, resources.local_bytes
            )),
            x: (index + 1) as f64,
            ms,
            y: shape.bytes_read() / ms / 1e6,
            counted: None,
            correct,
        });
        local_bytes.push(resources.local_bytes);
    }
    let slower = |point: &Point| point.ms / points[0].ms;
    let (local, spilled) = (slower(&points[1]), slower(&points[2]));
    let finding = format!(
        "{}. Against the registers: local memory {local:.2}× the time, spilled registers \
         {spilled:.2}×.",
        rows.join("; ")
    );
    let used_local = local_bytes[0] == 0 && local_bytes[1..].iter().all(|&bytes| bytes > 0);
    let verdict = match (used_local, local.min(spilled) > 1.1) {
        (true, true) => Verdict::Confirmed,
        (true, false) => Verdict::Hidden,
        (false, _) => Verdict::NotShown,
    };
    Ok(outcome(
        "array_in_registers, array_in_local_memory",
        points,
        None,
        finding,
        verdict,
    ))
}

/// The warps' reads at every stride from 1 to 32 words, and the
/// wavefronts the emulator counts for each.
fn banks(lab: &mut Lab<'_>) -> Result<Outcome> {
    let blocks = full_gpu_blocks(lab, kernels::banks::BLOCK);
    let mut points = Vec::new();
    for stride in 1..=32 {
        let shape = BanksShape {
            stride,
            blocks,
            rounds: Banks::SIZE.on_gpu[1],
        };
        let (ms, correct) = lab.measure::<Banks>(shape)?;
        let loads = traffic::<Banks>(BanksShape {
            blocks: 1,
            rounds: 32,
            ..shape
        })?
        .shared_load;
        points.push(Point {
            label: None,
            x: f64::from(stride),
            ms,
            y: shape.bytes_read() / ms / 1e6,
            counted: Some(loads.wavefronts as f64 / loads.requests as f64),
            correct,
        });
    }
    let degree_rate = |degree: u32| {
        mean_y(&points, |point| {
            let shape = BanksShape {
                stride: point.x as u32,
                blocks,
                rounds: Banks::SIZE.on_gpu[1],
            };
            shape.conflict_degree() == degree
        })
    };
    let degrees = [1, 2, 4, 8, 16, 32];
    let rates: Vec<f64> = degrees.iter().map(|&degree| degree_rate(degree)).collect();
    let listed: Vec<String> = degrees
        .iter()
        .zip(&rates)
        .map(|(degree, rate)| format!("{degree}-way {rate:.0} GB/s ({:.2}×)", rate / rates[0]))
        .collect();
    let finding = format!(
        "by conflict degree gcd(stride, 32), averaged over its strides: {}.",
        listed.join(", ")
    );
    let falling = rates.windows(2).all(|pair| pair[1] < pair[0] * 1.05);
    let verdict = if falling && rates[5] < rates[0] / 8.0 {
        Verdict::Confirmed
    } else {
        Verdict::NotShown
    };
    Ok(outcome(
        Banks::KERNELS[0].name,
        points,
        None,
        finding,
        verdict,
    ))
}

/// Blocks of `block` threads that fill every SM of the GPU once.
fn full_gpu_blocks(lab: &Lab<'_>, block: u32) -> usize {
    let sms = lab.hardware.multiprocessors.unwrap_or(1) as usize;
    sms * THREADS_PER_SM / block as usize
}

/// Bytes the cache lesson reads per launch: enough to time from L1.
const CACHE_BYTES_READ: usize = 1 << 30;
/// Threads an SM holds at once on every GPU since Volta, and so blocks of
/// the cache kernel per SM that fill it.
const THREADS_PER_SM: usize = 2048;

/// The working set from 16 KiB to four times the L2, doubling.
fn caches(lab: &mut Lab<'_>) -> Result<Outcome> {
    let blocks = full_gpu_blocks(lab, kernels::caches::BLOCK);
    let chunk_bytes = 4 * kernels::caches::CHUNK as usize;
    let chunks = (CACHE_BYTES_READ / (blocks * chunk_bytes)).max(1);
    let l2 = lab.hardware.l2_bytes.unwrap_or(64 << 20);
    let mut points = Vec::new();
    let mut set_bytes = 16 << 10;
    while set_bytes <= 4 * l2.next_power_of_two() {
        let shape = CachesShape {
            set: set_bytes / 4,
            blocks,
            chunks,
        };
        let (ms, correct) = lab.measure::<Caches>(shape)?;
        points.push(Point {
            label: None,
            x: set_bytes as f64,
            ms,
            y: shape.bytes_read() / ms / 1e6,
            counted: None,
            correct,
        });
        set_bytes *= 2;
    }
    let plateau =
        |range: std::ops::RangeInclusive<f64>| mean_y(&points, |point| range.contains(&point.x));
    let l2 = l2 as f64;
    let l1_rate = plateau(0.0..=(64 << 10) as f64);
    let l2_rate = plateau((4 << 20) as f64..=l2 / 4.0);
    let memory_rate = plateau(2.0 * l2..=f64::INFINITY);
    let finding = format!(
        "sets up to 64 KiB: {l1_rate:.0} GB/s (L1); 4 MiB to a quarter of the L2 ({:.0} MiB): \
         {l2_rate:.0} GB/s (L2, {:.1}× below L1); twice the L2 and more: {memory_rate:.0} GB/s \
         (device memory, {:.1}× below L2).",
        l2 / 4.0 / f64::from(1 << 20),
        l1_rate / l2_rate,
        l2_rate / memory_rate,
    );
    let verdict = if l1_rate > 1.5 * l2_rate && l2_rate > 1.5 * memory_rate {
        Verdict::Confirmed
    } else {
        Verdict::NotShown
    };
    Ok(outcome(
        Caches::KERNELS[0].name,
        points,
        None,
        finding,
        verdict,
    ))
}

/// FMAs per element from 1 to 2048, doubling: 0.25 to 512 FLOP/B.
fn intensity(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    let mut fmas = 1;
    while fmas <= 2048 {
        let shape = IntensityShape {
            n: Intensity::SIZE.on_gpu[0],
            fmas,
        };
        let (ms, correct) = lab.measure::<Intensity>(shape)?;
        points.push(Point {
            label: None,
            x: shape.intensity(),
            ms,
            y: Intensity::work(shape).ops / ms / 1e6,
            counted: None,
            correct,
        });
        fmas *= 2;
    }
    // The two ceilings, each from the sweep's own end: bandwidth where the
    // FMAs cost nothing, FLOP/s where the bytes cost nothing.
    let bandwidth = points[0].y / points[0].x;
    let flops = points.iter().map(|point| point.y).fold(0.0, f64::max);
    let ridge = flops / bandwidth;
    let (low, high) = (points[0].x, points[points.len() - 1].x);
    let bound = vec![(low, bandwidth * low), (ridge, flops), (high, flops)];
    let below: Vec<&Point> = points.iter().filter(|p| p.x <= ridge / 4.0).collect();
    let flat = below.iter().map(|p| p.ms).fold(0.0, f64::max)
        / below.iter().map(|p| p.ms).fold(f64::INFINITY, f64::min);
    let finding = format!(
        "{:.0} GB/s at the lowest intensity and {:.0} GFLOP/s at the highest: the ridge point of \
         this GPU, as the kernel measures it, is {ridge:.1} FLOP/B. Up to a quarter of it the \
         time stays within {:.0}% of the fastest: the FMAs are free; above it the time grows \
         with them.",
        bandwidth * 1.0,
        flops,
        (flat - 1.0) * 100.0,
    );
    let verdict = if flat < 1.2 && !below.is_empty() {
        Verdict::Confirmed
    } else {
        Verdict::NotShown
    };
    Ok(outcome(
        Intensity::KERNELS[0].name,
        points,
        Some(bound),
        finding,
        verdict,
    ))
}

/// The mean y of the points `keep` keeps; NaN where it keeps none.
fn mean_y(points: &[Point], keep: impl Fn(&Point) -> bool) -> f64 {
    let rates: Vec<f64> = points
        .iter()
        .filter(|point| keep(point))
        .map(|point| point.y)
        .collect();
    rates.iter().sum::<f64>() / rates.len() as f64
}

/// The outcome, WRONG whatever the timings when any output was.
fn outcome(
    kernel: &'static str,
    points: Vec<Point>,
    bound: Option<Vec<(f64, f64)>>,
    finding: String,
    verdict: Verdict,
) -> Outcome {
    let verdict = if points.iter().all(|point| point.correct) {
        verdict
    } else {
        Verdict::Wrong
    };
    Outcome {
        kernel: kernel.to_string(),
        points,
        bound,
        finding,
        verdict,
    }
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
    let gpu = Gpu::new(request.device)?;
    let json = request.json.as_deref().map(Pending::create).transpose()?;
    if let Some(dir) = &request.plots {
        std::fs::create_dir_all(dir).map_err(|source| Error::write(dir, source))?;
        // A probe proves now that the folder takes files.
        drop(Pending::create(&dir.join("lesson.svg"))?);
    }
    let mut lab = Lab {
        gpu: &gpu,
        device: request.device,
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
        device: gpu.name().to_string(),
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
    text
}

/// A lesson's plot: its points, and its bound where it has one; `None`
/// for a lesson without one.
fn picture(lesson: &Lesson, outcome: &Outcome, device: &str) -> Option<Result<String>> {
    let log_x = lesson.log_x?;
    // The sweep: the points a label does not set apart.
    let mut lines = vec![LessonLine {
        name: outcome.kernel.clone(),
        points: outcome
            .points
            .iter()
            .filter(|point| point.label.is_none())
            .map(|point| (point.x, point.y))
            .collect(),
        dashed: false,
    }];
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

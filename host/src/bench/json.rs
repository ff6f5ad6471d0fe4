//! The report of `locality bench`, which `--json FILE` writes as is and from
//! which the table and the plots are drawn. `docs/bench.md` documents the
//! same schema for readers of the file.
//!
//! Units: times in milliseconds; throughputs in G per second (10⁹); bytes
//! in bytes. A `null` is a number that could not be known on this device
//! (an attribute the driver does not report, cuBLAS missing) or that does
//! not apply (the intensity of a copy).

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::roofline::{Nearer, Roof, streaming_gbytes};
use gpu_host::gpu::Resources;

use crate::families::{self, Visitor, caches};
pub use crate::family::{Bound, Op};
use crate::family::{Family, Parameter, Reread, Shape, Source, Work};
pub use crate::suite::Copies;

/// The whole report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Changes when a field changes meaning or goes away.
    pub schema_version: u32,
    pub device: Device,
    pub ceilings: Ceilings,
    /// The earlier run whose ceilings this one took (`bench --ceilings`),
    /// as given; absent where they were measured in this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceilings_from: Option<String>,
    pub roofline: Roofline,
    pub runs: Runs,
    /// Every family timed, in teaching order.
    pub families: Vec<FamilySummary>,
    /// Every kernel timed, in teaching order, with what the driver gave it.
    pub kernels: Vec<KernelSummary>,
    /// One entry per (kernel or baseline, size), grouped by family, then by
    /// kernel, then in the order of the sizes given.
    pub results: Vec<Row>,
    /// Each family's problems copied to the GPU and back, and solved on the
    /// CPU, size by size.
    pub trips: Vec<Trip>,
}

/// One problem's copies to the GPU and back, and the CPU baseline on it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trip {
    pub family: String,
    /// The kernels this problem is theirs (gemv's f32 and f64 kernels share
    /// a family but not their problems).
    pub kernels: Vec<String>,
    pub size: Size,
    /// The inputs, host to GPU.
    pub to_gpu: Copies,
    /// The outputs, GPU to host.
    pub from_gpu: Copies,
    /// What the CPU baseline is.
    pub cpu: String,
    pub cpu_threads: usize,
    /// Its median wall-clock time on the same inputs.
    pub cpu_ms: f64,
}

/// A family, and how its plot shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilySummary {
    pub name: String,
    /// The ceiling its kernels are meant to approach: its plot shows FLOP/s
    /// against the compute ceiling, or bytes/s against the copy bandwidth.
    pub bound: Bound,
    /// The plot's x axis when every size is a square or a cube.
    pub square_axis: String,
}

/// A kernel: its family, its lesson, and its resources on this GPU.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelSummary {
    pub family: String,
    pub name: String,
    pub lesson: String,
    /// What its declaration asks of ptxas, and its twin's
    /// `__launch_bounds__` too.
    pub launch_bounds: LaunchBounds,
    pub resources: Resources,
    /// Its CUDA C++ twin's, compiled by NVRTC; null without twins.
    pub twin_resources: Option<Resources>,
}

/// A kernel's `#[launch_bounds]`: the most threads a block has, and the
/// fewest blocks an SM must hold (null where the kernel leaves that to
/// ptxas).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: Option<u32>,
}

impl From<gpu_std::LaunchBounds> for LaunchBounds {
    fn from(bounds: gpu_std::LaunchBounds) -> Self {
        Self {
            max_threads: bounds.max_threads,
            min_blocks: bounds.min_blocks,
        }
    }
}

/// The GPU, as the driver describes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    /// "major.minor", e.g. "9.0".
    pub compute_capability: Option<String>,
    pub multiprocessors: Option<u32>,
    pub l2_bytes: Option<usize>,
    pub memory_bytes: usize,
}

/// The limits measured in this run, and the theoretical ones beside them.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Ceilings {
    /// A device-to-device copy: bytes read plus bytes written, per second.
    pub copy_gbytes_per_s: f64,
    /// The size of the copied buffer.
    pub copy_bytes: usize,
    /// cuBLAS SGEMM (FP32, TF32 off) at `sgemm_n`³; null without cuBLAS.
    pub sgemm_gflops: Option<f64>,
    pub sgemm_n: Option<usize>,
    /// The tensor cores: cuBLAS's gemm of bf16 A and B into f32 C, f32
    /// accumulation, at `tensor_n`³; null without cuBLAS, or in a report
    /// from before the tensor-core family.
    #[serde(default)]
    pub tensor_gflops: Option<f64>,
    #[serde(default)]
    pub tensor_n: Option<usize>,
    /// 2 × memory clock × bus width, from the device's attributes.
    pub theoretical_gbytes_per_s: Option<f64>,
    /// SMs × FP32 lanes per SM × 2 FLOP (an FMA) × SM clock.
    pub theoretical_fp32_gflops: Option<f64>,
    /// The L2: the cache lesson's kernel reading a set the L2 holds, at
    /// every full GPU's warps, the best of the sets from 4 MiB to a
    /// quarter of the L2 (`l2_set_bytes` the best one's); null where not
    /// measured.
    #[serde(default)]
    pub l2_gbytes_per_s: Option<f64>,
    #[serde(default)]
    pub l2_set_bytes: Option<usize>,
    /// Shared memory (and L1, the same memory): the bank-conflict lesson's
    /// kernel reading without conflicts, at every full GPU's warps.
    #[serde(default)]
    pub shared_gbytes_per_s: Option<f64>,
    /// SMs × 32 banks × 4 bytes × SM clock.
    #[serde(default)]
    pub theoretical_shared_gbytes_per_s: Option<f64>,
    /// Reads alone from the DRAM: the cache lesson's kernel reading a set
    /// of `reads_set_bytes`, far more than the L2, at every full GPU's
    /// warps; null where not measured.
    #[serde(default)]
    pub reads_gbytes_per_s: Option<f64>,
    #[serde(default)]
    pub reads_set_bytes: Option<usize>,
    /// The host's link: a pinned host-to-device copy of [`LINK_BYTES`],
    /// bytes a second; null where not measured.
    ///
    /// [`LINK_BYTES`]: super::ceilings::LINK_BYTES
    #[serde(default)]
    pub host_link_gbytes_per_s: Option<f64>,
    /// The link to another GPU of the host (NVLink where they have it):
    /// a copy of as many bytes from its memory (`cuMemcpyPeer`), bytes a
    /// second; null on a host of one GPU, or where the GPUs are no peers.
    #[serde(default)]
    pub peer_gbytes_per_s: Option<f64>,
    /// The GPU copied from.
    #[serde(default)]
    pub peer_device: Option<usize>,
}

/// The level of the memory hierarchy that a kernel's rereads are held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Shared memory, or L1: one memory on the SM, whose bandwidth is
    /// shared memory's.
    OnChip,
    L2,
    Dram,
}

impl Level {
    /// Where a kernel's rereads come from: shared memory's from shared
    /// memory; a working set's by the cache lesson's plateaus: from the SM
    /// below the L2's (past 64 KiB L1 serves a set less and less, but, at
    /// the lesson's shapes, faster than the L2 alone), from the L2 up to
    /// twice its size (past its size it still serves part of the set), and
    /// from the DRAM beyond.
    pub fn holding(source: Source, l2_bytes: Option<usize>) -> Self {
        let l2 = l2_bytes.unwrap_or(caches::UNKNOWN_L2_BYTES) as f64;
        match source {
            Source::Shared => Self::OnChip,
            Source::WorkingSet(set) if set < caches::L2_SETS_FROM as f64 => Self::OnChip,
            Source::WorkingSet(set) if set <= 2.0 * l2 => Self::L2,
            Source::WorkingSet(_) => Self::Dram,
        }
    }
}

/// `reread` held to the level that holds it, at that level's bandwidth as
/// `bandwidth_of` knows it: the level, and the hierarchical roofline's
/// term where the bandwidth is known.
pub fn held(
    reread: Reread,
    l2_bytes: Option<usize>,
    bandwidth_of: impl Fn(Level) -> Option<f64>,
) -> (Level, Option<Nearer>) {
    let level = Level::holding(reread.from, l2_bytes);
    let nearer = bandwidth_of(level).map(|bandwidth_gbytes| Nearer {
        bytes: reread.bytes,
        bandwidth_gbytes,
    });
    (level, nearer)
}

/// The roofline every result is measured against.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Roofline {
    /// The compute ceiling: `sgemm_gflops` when measured, else the
    /// theoretical FP32 peak; null when neither is known, and then only
    /// memory bounds.
    pub compute_gops_per_s: Option<f64>,
    pub compute_source: Option<ComputeSource>,
    /// The tensor-core families' compute ceiling: `tensor_gflops`; null
    /// when not measured, and then they are held to memory only.
    #[serde(default)]
    pub tensor_gops_per_s: Option<f64>,
    /// The memory slope: the measured copy bandwidth.
    pub bandwidth_gbytes_per_s: f64,
    /// The slopes rereads are held to, where measured: the L2's and shared
    /// memory's.
    #[serde(default)]
    pub l2_gbytes_per_s: Option<f64>,
    #[serde(default)]
    pub on_chip_gbytes_per_s: Option<f64>,
    /// Reads alone from the DRAM, where measured: work that reads more
    /// than it writes is held to a slope between the copy's and this.
    #[serde(default)]
    pub reads_gbytes_per_s: Option<f64>,
}

impl Roofline {
    /// The compute ceiling is cuBLAS SGEMM's throughput when measured: what
    /// FP32 code can really reach, which the theoretical peak (every lane
    /// issuing an FMA every clock, at the boost clock) is not.
    pub fn from_ceilings(ceilings: &Ceilings) -> Self {
        let (compute, source) = match (ceilings.sgemm_gflops, ceilings.theoretical_fp32_gflops) {
            (Some(sgemm), _) => (Some(sgemm), Some(ComputeSource::CublasSgemm)),
            (None, Some(peak)) => (Some(peak), Some(ComputeSource::TheoreticalFp32)),
            (None, None) => (None, None),
        };
        Self {
            compute_gops_per_s: compute,
            compute_source: source,
            tensor_gops_per_s: ceilings.tensor_gflops,
            bandwidth_gbytes_per_s: ceilings.copy_gbytes_per_s,
            l2_gbytes_per_s: ceilings.l2_gbytes_per_s,
            on_chip_gbytes_per_s: ceilings.shared_gbytes_per_s,
            reads_gbytes_per_s: ceilings.reads_gbytes_per_s,
        }
    }

    /// The bandwidth of `level`, where measured.
    pub fn bandwidth_of(&self, level: Level) -> Option<f64> {
        match level {
            Level::OnChip => self.on_chip_gbytes_per_s,
            Level::L2 => self.l2_gbytes_per_s,
            // Rereads are reads.
            Level::Dram => Some(self.dram_gbytes_per_s(1.0, 0.0)),
        }
    }

    /// The FP32 roof: the compute ceiling over the memory slope.
    pub fn roof(&self) -> Roof {
        Roof {
            compute_gops: self.compute_gops_per_s.unwrap_or(f64::INFINITY),
            bandwidth_gbytes: self.bandwidth_gbytes_per_s,
        }
    }

    /// The roof a family bound as `bound` is held to: the tensor cores'
    /// ceiling for the tensor-core families, the FP32 one for the rest.
    pub fn roof_for(&self, bound: Bound) -> Roof {
        match bound {
            Bound::Tensor => Roof {
                compute_gops: self.tensor_gops_per_s.unwrap_or(f64::INFINITY),
                ..self.roof()
            },
            Bound::Compute | Bound::Memory => self.roof(),
        }
    }

    /// The DRAM slope of work reading `read` bytes and writing `written`:
    /// reads alone stream faster than a copy.
    fn dram_gbytes_per_s(&self, read: f64, written: f64) -> f64 {
        streaming_gbytes(
            self.bandwidth_gbytes_per_s,
            self.reads_gbytes_per_s,
            read,
            written,
        )
    }

    /// [`Roofline::roof_for`] with the DRAM slope of `work`'s own mix of
    /// reads and writes.
    pub fn roof_moving(&self, bound: Bound, work: &Work) -> Roof {
        Roof {
            bandwidth_gbytes: self
                .dram_gbytes_per_s(work.bytes - work.output_bytes, work.output_bytes),
            ..self.roof_for(bound)
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeSource {
    CublasSgemm,
    TheoreticalFp32,
}

/// How each result was timed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Runs {
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs, each between two CUDA events; the median is reported.
    pub timed: usize,
    /// Copies of the inputs are rotated run by run until together they span
    /// this many bytes, so that each run reads inputs that are not in L2;
    /// null when the L2 size is unknown and nothing is rotated.
    pub rotation_bytes: Option<usize>,
    /// The seed of every random input: `--seed` replays them.
    pub seed: u64,
}

/// One kernel or baseline at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub family: String,
    /// The entry point, or the baseline's name (`cublas_sgemm`,
    /// `cublas_{s,d}gemv_{row,col}_major`, `device_copy`).
    pub kernel: String,
    pub role: Role,
    pub size: Size,
    pub median_ms: f64,
    /// What `ops` counts.
    pub op: Op,
    /// Operations per run: 2mnk for matmul, 2mn + 3m for gemv, 4 adds per
    /// output sample for blur (a running-sum blur's, whatever the radius),
    /// 0 for a copy.
    pub ops: f64,
    pub gops_per_s: Option<f64>,
    /// The fewest bytes the work must move: each input read once, each
    /// output written once (y read and written for gemv).
    pub bytes: f64,
    pub gbytes_per_s: f64,
    /// `ops / bytes`; null for a copy.
    pub intensity: Option<f64>,
    /// `min(compute ceiling, intensity × bandwidth)`; null for a copy.
    pub roofline_bound_gops_per_s: Option<f64>,
    /// The shortest time the roofline allows over the measured time: for
    /// work with operations, `gops_per_s / roofline_bound_gops_per_s`; for a
    /// copy, the fraction of the copy bandwidth; for a kernel that reads
    /// again from nearer the SMs, the longest of that and its rereads at
    /// their level's bandwidth (the hierarchical roofline).
    pub roofline_fraction: f64,
    /// The level a kernel's rereads are held to, for a kernel whose lesson
    /// is a level nearer the SMs than the DRAM (the caches', the banks').
    #[serde(default)]
    pub reread_level: Option<Level>,
    /// Those rereads' bytes per second.
    #[serde(default)]
    pub reread_gbytes_per_s: Option<f64>,
    /// What the kernel is compared with; null for a baseline itself, or
    /// when cuBLAS is missing.
    pub baseline: Option<String>,
    /// Baseline time / kernel time at the same size: above 1 the kernel is
    /// faster than its baseline.
    pub ratio_to_baseline: Option<f64>,
    /// The median of the kernel's CUDA C++ twin in the same run; null for a
    /// baseline, or where the twin did not run.
    pub twin_median_ms: Option<f64>,
    /// Twin time / kernel time: above 1 the Rust kernel is faster than its
    /// CUDA C++ twin.
    pub vs_cuda_cpp: Option<f64>,
    /// Copy in from pinned memory, kernel, copy out; null for a baseline.
    pub end_to_end_ms: Option<f64>,
    /// CPU baseline time / kernel time; null for a baseline.
    pub vs_cpu: Option<f64>,
    /// CPU baseline time / end-to-end time; null for a baseline.
    pub vs_cpu_end_to_end: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// One of this project's kernels.
    Kernel,
    /// What a user would run instead.
    Baseline,
}

/// A size, with its dimensions named as the family names them (matmul
/// `m`, `n`, `k`; gemv `m`, `n`; blur `width`, `height`, `channels`,
/// `radius`).
#[derive(Clone, Debug, PartialEq)]
pub struct Size {
    fields: serde_json::Value,
    label: String,
    short: String,
    side: f64,
    parameter: Option<Parameter>,
}

impl Size {
    pub fn of<S: Shape>(shape: &S) -> Self {
        Self {
            fields: serde_json::to_value(shape).expect("a shape serializes"),
            label: shape.to_string(),
            short: shape.short(),
            side: shape.side(),
            parameter: shape.parameter(),
        }
    }

    /// The shape it is, where it is an `S`.
    pub fn shape<S: serde::de::DeserializeOwned>(&self) -> Option<S> {
        serde_json::from_value(self.fields.clone()).ok()
    }

    /// The shape's parameter besides its size, if its family has one.
    pub fn parameter(&self) -> Option<&Parameter> {
        self.parameter.as_ref()
    }

    /// One number for the x axis of a plot: the side of the square or cube
    /// of the same volume.
    pub fn side(&self) -> f64 {
        self.side
    }

    /// As the tables write it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The shortest label: `n` for a square or cube, the dimensions
    /// otherwise.
    pub fn short(&self) -> &str {
        &self.short
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.fields.serialize(serializer)
    }
}

/// A size read back from a report: the shape of the family whose
/// dimensions it names (no two families' shapes have the same names).
impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Parse(serde_json::Value, Option<Size>);
        impl Visitor for Parse {
            fn visit<F: Family>(&mut self) -> crate::error::Result<()> {
                if self.1.is_none()
                    && let Ok(shape) = serde_json::from_value::<F::Shape>(self.0.clone())
                {
                    self.1 = Some(Size::of(&shape));
                }
                Ok(())
            }
        }
        let mut parse = Parse(serde_json::Value::deserialize(deserializer)?, None);
        families::visit(&mut parse).expect("parsing a size cannot fail");
        let Parse(fields, size) = parse;
        size.ok_or_else(|| D::Error::custom(format!("{fields} is no family's size")))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::blur::BlurShape;
    use crate::families::gemv::GemvShape;
    use crate::families::matmul::MatmulShape;

    #[test]
    fn sizes_serialize_with_named_dimensions() {
        let size = Size::of(&BlurShape::new(64, 32, 3, 2));
        assert_eq!(
            serde_json::to_string(&size).unwrap(),
            r#"{"width":64,"height":32,"channels":3,"radius":2}"#
        );
        assert_eq!(size.to_string(), "64×32×3 r=2");
        assert_eq!(size.short(), "64×32");
        let gemv = Size::of(&GemvShape::new(8, 8));
        assert_eq!(serde_json::to_string(&gemv).unwrap(), r#"{"m":8,"n":8}"#);
        assert_eq!(gemv.short(), "8");
        assert_eq!(Size::of(&MatmulShape::new(8, 8, 8)).side(), 8.0);
        assert_eq!(
            serde_json::to_string(&(Op::IntAdd, Role::Baseline, Bound::Memory)).unwrap(),
            r#"["int_add","baseline","memory"]"#
        );
    }

    #[test]
    fn the_tensor_core_families_are_held_to_the_tensor_ceiling() {
        let old = r#"{"copy_gbytes_per_s": 3000.0, "copy_bytes": 1024, "sgemm_gflops": 50000.0,
            "sgemm_n": 8192, "theoretical_gbytes_per_s": null, "theoretical_fp32_gflops": null}"#;
        let ceilings: Ceilings = serde_json::from_str(old).unwrap();
        assert_eq!(
            ceilings.tensor_gflops, None,
            "a report from before the tensor ceiling"
        );
        let roofline = Roofline::from_ceilings(&Ceilings {
            tensor_gflops: Some(740_000.0),
            tensor_n: Some(8192),
            ..ceilings
        });
        assert_eq!(roofline.roof_for(Bound::Compute).compute_gops, 50_000.0);
        assert_eq!(roofline.roof_for(Bound::Tensor).compute_gops, 740_000.0);
        assert_eq!(roofline.roof_for(Bound::Tensor).bandwidth_gbytes, 3000.0);
        let unmeasured = Roofline::from_ceilings(&ceilings);
        assert_eq!(
            unmeasured.roof_for(Bound::Tensor).compute_gops,
            f64::INFINITY
        );
        // Reads alone unmeasured: every mix at the copy's slope.
        assert_eq!(ceilings.reads_gbytes_per_s, None);
        let gemv = Work::new(Op::Flop, 2e6, 4e6, 4e3);
        assert_eq!(
            unmeasured
                .roof_moving(Bound::Memory, &gemv)
                .bandwidth_gbytes,
            3000.0
        );
        // Measured, a gemv's reads at nearly theirs, a copy's mix at the copy's.
        let reading = Roofline::from_ceilings(&Ceilings {
            reads_gbytes_per_s: Some(3300.0),
            ..ceilings
        });
        let slope = reading.roof_moving(Bound::Memory, &gemv).bandwidth_gbytes;
        assert!(slope > 3299.0 && slope < 3300.0, "{slope}");
        let copy = Work::new(Op::None, 0.0, 4e6, 4e6);
        let copy_slope = reading.roof_moving(Bound::Memory, &copy).bandwidth_gbytes;
        assert!((copy_slope - 3000.0).abs() < 1e-9, "{copy_slope}");
        assert_eq!(reading.bandwidth_of(Level::Dram), Some(3300.0));
        assert_eq!(
            reading.roof_moving(Bound::Tensor, &gemv).compute_gops,
            f64::INFINITY
        );
    }
}

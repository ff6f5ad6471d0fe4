//! The limits every kernel is held against: measured on the device in the
//! same run (a device-to-device copy, cuBLAS SGEMM, cuBLAS's bf16 gemm on
//! the tensor cores where the GPU has them, and the links beyond the GPU:
//! the host's and another GPU's), and the theoretical peaks that the
//! device's attributes imply, shown beside them.

use cudarc::driver::sys::CUdevice_attribute as Attribute;
use rand::Rng;
use rand::distr::Uniform;
use rand::rngs::SmallRng;

use super::json::{Bound, Ceilings, Device, Level, held};
use super::roofline::{Nearer, Roof, per_second_g};
use gpu_host::Gpu;
use gpu_host::backend::{Backend, Transfer};
use gpu_host::timing::{Runs, gpu_median_ms};
use half::bf16;

use crate::blas::Blas;
use crate::case::Case;
use crate::error::{Error, Result};
use crate::families::banks::{Banks, BanksShape};
use crate::families::caches::{self, Caches, CachesShape};
use crate::family::{Family, Reread};
use crate::verify::{random_vec, uniform_floats};

/// The copy moves at most this many bytes each way: far more than any L2,
/// small enough to fit beside the rest of a run.
const COPY_BYTES: usize = 1 << 30;
/// The SGEMM and tensor-core ceilings' matrix side: large enough for
/// cuBLAS to reach its peak on every current GPU.
const SGEMM_N: usize = 8192;
/// The links' copies move this many bytes: long enough that the copy's
/// start costs nothing beside it.
pub const LINK_BYTES: usize = 1 << 28;

/// What the driver says about the GPU; `None` wherever an attribute fails or
/// reads 0, which newer drivers do for some of them.
#[derive(Clone, Copy, Debug)]
pub struct Hardware {
    pub compute_capability: Option<(u32, u32)>,
    pub multiprocessors: Option<u32>,
    /// The SM clock (its boost clock), kHz.
    pub sm_clock_khz: Option<u32>,
    pub memory_clock_khz: Option<u32>,
    pub bus_width_bits: Option<u32>,
    pub l2_bytes: Option<usize>,
}

impl Hardware {
    pub fn read(gpu: &Gpu) -> Self {
        let any = |attribute| {
            gpu.attribute(attribute)
                .ok()
                .and_then(|value| u32::try_from(value).ok())
        };
        let read = |attribute| any(attribute).filter(|&value| value > 0);
        let major = read(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        let minor = any(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        Self {
            compute_capability: major.zip(minor),
            multiprocessors: read(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            sm_clock_khz: read(Attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            memory_clock_khz: read(Attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
            bus_width_bits: read(Attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
            l2_bytes: read(Attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).map(|v| v as usize),
        }
    }

    /// Peak DRAM bandwidth in GB/s: two transfers per memory clock (double
    /// data rate, as the driver reports the clock) across the whole bus.
    pub fn peak_bandwidth_gbytes(&self) -> Option<f64> {
        let (clock, width) = (self.memory_clock_khz?, self.bus_width_bits?);
        Some(2.0 * f64::from(clock) * 1e3 * f64::from(width) / 8.0 / 1e9)
    }

    /// Peak FP32 throughput in GFLOP/s: one fused multiply-add (2 FLOP) per
    /// FP32 lane per SM clock.
    pub fn peak_fp32_gflops(&self) -> Option<f64> {
        let lanes = fp32_lanes_per_sm(self.compute_capability?)?;
        let (sms, clock) = (self.multiprocessors?, self.sm_clock_khz?);
        Some(f64::from(sms) * f64::from(lanes) * 2.0 * f64::from(clock) * 1e3 / 1e9)
    }

    /// Peak dense bf16 throughput of the tensor cores with f32
    /// accumulation, in GFLOP/s: their FLOP per SM clock at the SM clock.
    /// (NVIDIA's data sheet quotes an H100 SXM's at 1.83 GHz, 989.4
    /// TFLOP/s; the driver reports a 1.98 GHz boost clock.)
    pub fn peak_tensor_gflops(&self) -> Option<f64> {
        let flops = tensor_flops_per_sm_clock(self.compute_capability?)?;
        let (sms, clock) = (self.multiprocessors?, self.sm_clock_khz?);
        Some(f64::from(sms) * f64::from(flops) * f64::from(clock) * 1e3 / 1e9)
    }

    /// Peak shared-memory bandwidth in GB/s: 32 banks of 4 bytes each per
    /// SM clock, on every SM.
    pub fn peak_shared_gbytes(&self) -> Option<f64> {
        let (sms, clock) = (self.multiprocessors?, self.sm_clock_khz?);
        Some(f64::from(sms) * 128.0 * f64::from(clock) * 1e3 / 1e9)
    }

    /// The roofline of the theoretical peaks, where the bandwidth is known:
    /// the yardstick of a run that measures no ceiling.
    pub fn peak(&self) -> Option<Peaks> {
        let fp32 = Roof {
            compute_gops: self.peak_fp32_gflops().unwrap_or(f64::INFINITY),
            bandwidth_gbytes: self.peak_bandwidth_gbytes()?,
        };
        Some(Peaks {
            fp32,
            tensor: self.peak_tensor_gflops(),
            shared: self.peak_shared_gbytes(),
            l2_bytes: self.l2_bytes,
        })
    }

    /// The device's description in the report.
    pub fn describe(&self, gpu: &Gpu) -> Result<Device> {
        Ok(Device {
            name: gpu.name().to_string(),
            compute_capability: self
                .compute_capability
                .map(|(major, minor)| format!("{major}.{minor}")),
            multiprocessors: self.multiprocessors,
            l2_bytes: self.l2_bytes,
            memory_bytes: gpu.total_bytes()?,
        })
    }
}

/// FP32 lanes (CUDA cores) per SM, from the CUDA C++ Programming Guide's
/// table of arithmetic throughput; `None` for an architecture it predates.
fn fp32_lanes_per_sm((major, minor): (u32, u32)) -> Option<u32> {
    match (major, minor) {
        (7, _) | (8, 0) => Some(64),
        // 11.x is Blackwell too (Thor, renumbered from 10.1 in CUDA 13).
        (8, 6..=9) | (9, 0) | (10..=12, _) => Some(128),
        _ => None,
    }
}

/// Dense bf16 FLOP a tensor-core SM does each clock with f32 accumulation,
/// on the data-center GPUs whose figures NVIDIA publishes.
fn tensor_flops_per_sm_clock((major, minor): (u32, u32)) -> Option<u32> {
    match (major, minor) {
        (8, 0) => Some(2048),
        (9, 0) => Some(4096),
        _ => None,
    }
}

/// The theoretical peaks a run without measured ceilings is held to: the
/// FP32 roof, and the tensor cores' compute peak where it is known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peaks {
    pub fp32: Roof,
    pub tensor: Option<f64>,
    /// Shared memory's bandwidth, GB/s.
    pub shared: Option<f64>,
    /// The L2's size, which tells which level holds a working set.
    pub l2_bytes: Option<usize>,
}

impl Peaks {
    /// The roof of a family bound as `bound`: the tensor-core families'
    /// compute peak is the tensor cores' (none where unknown, so that no
    /// FP32 peak stands in for it).
    pub fn roof_for(&self, bound: Bound) -> Roof {
        match bound {
            Bound::Tensor => Roof {
                compute_gops: self.tensor.unwrap_or(f64::INFINITY),
                ..self.fp32
            },
            Bound::Compute | Bound::Memory => self.fp32,
        }
    }

    /// Rereads held to their level's peak, where it has one: the L2 has
    /// none the driver tells.
    pub fn nearer(&self, reread: Option<Reread>) -> Option<Nearer> {
        let bandwidth_of = |level| match level {
            Level::OnChip => self.shared,
            Level::L2 => None,
            Level::Dram => Some(self.fp32.bandwidth_gbytes),
        };
        held(reread?, self.l2_bytes, bandwidth_of).1
    }
}

/// The ceilings a run measures beyond the copy and the reads alone,
/// which every run measures; a run that takes them from an earlier one
/// (`bench --ceilings`) needs that run to have them too.
#[derive(Clone, Copy, Debug)]
pub struct Needed {
    /// The L2's and shared memory's: a kernel of the run reads again from
    /// them.
    pub levels: bool,
    /// SGEMM: cuBLAS is there.
    pub sgemm: bool,
    /// The tensor cores' bf16 gemm: cuBLAS is there, and the GPU has
    /// tensor cores that compute in bf16 (compute capability 8.0 on).
    pub tensor: bool,
}

impl Needed {
    pub fn of(hardware: &Hardware, blas: bool, levels: bool) -> Self {
        let tensor_cores = hardware.compute_capability.is_some_and(|cc| cc >= (8, 0));
        Self {
            levels,
            sgemm: blas,
            tensor: blas && tensor_cores,
        }
    }
}

/// Measures the ceilings: the copy and the reads alone always, and those
/// `needed` names.
pub fn measure(
    gpu: &Gpu,
    hardware: &Hardware,
    blas: Option<&Blas>,
    runs: Runs,
    needed: Needed,
    rng: &mut SmallRng,
) -> Result<Ceilings> {
    let (copy_bytes, copy_gbytes_per_s) = copy_bandwidth(gpu, runs, rng)?;
    let sms = hardware.multiprocessors.unwrap_or(1);
    let (l2, shared_gbytes_per_s) = if needed.levels {
        (
            l2_bandwidth(gpu, sms, hardware.l2_bytes, runs, rng)?,
            Some(shared_bandwidth(gpu, sms, runs, rng)?),
        )
    } else {
        (None, None)
    };
    let reads = reads_bandwidth(gpu, sms, (copy_bytes, hardware.l2_bytes), runs, rng)?;
    let sgemm_gflops = blas
        .filter(|_| needed.sgemm)
        .map(|blas| sgemm_throughput(gpu, blas, runs, rng))
        .transpose()?;
    let tensor_gflops = blas
        .filter(|_| needed.tensor)
        .map(|blas| tensor_throughput(gpu, blas, runs, rng))
        .transpose()?;
    let host_link = gpu.transfer_ms(LINK_BYTES, HOST_TO_DEVICE, runs)?;
    let peer = peer_bandwidth(gpu, runs)?;
    Ok(Ceilings {
        host_link_gbytes_per_s: host_link.map(|ms| per_second_g(LINK_BYTES as f64, ms)),
        peer_gbytes_per_s: peer.map(|(_, rate)| rate),
        peer_device: peer.map(|(device, _)| device),
        copy_gbytes_per_s,
        copy_bytes,
        sgemm_gflops,
        sgemm_n: sgemm_gflops.map(|_| SGEMM_N),
        tensor_gflops,
        tensor_n: tensor_gflops.map(|_| SGEMM_N),
        theoretical_gbytes_per_s: hardware.peak_bandwidth_gbytes(),
        theoretical_fp32_gflops: hardware.peak_fp32_gflops(),
        l2_gbytes_per_s: l2.map(|(_, rate)| rate),
        l2_set_bytes: l2.map(|(set, _)| set),
        shared_gbytes_per_s,
        theoretical_shared_gbytes_per_s: hardware.peak_shared_gbytes(),
        reads_gbytes_per_s: reads.map(|(_, rate)| rate),
        reads_set_bytes: reads.map(|(set, _)| set),
    })
}

/// The set reads alone are measured at: the largest power of two the
/// copy's buffer holds, where that is more than twice the L2 (the cache
/// lesson's last L2 plateau), so that it streams from the DRAM.
fn reads_set(copy_bytes: usize, l2_bytes: Option<usize>) -> Option<usize> {
    let set = 1usize << copy_bytes.checked_ilog2()?;
    (set > 2 * l2_bytes.unwrap_or(caches::UNKNOWN_L2_BYTES)).then_some(set)
}

/// Reads alone from the DRAM: the cache lesson's kernel at [`reads_set`],
/// checked; the set and its GB/s, where there is such a set.
fn reads_bandwidth(
    gpu: &Gpu,
    sms: u32,
    (copy_bytes, l2_bytes): (usize, Option<usize>),
    runs: Runs,
    rng: &mut SmallRng,
) -> Result<Option<(usize, f64)>> {
    let Some(set) = reads_set(copy_bytes, l2_bytes) else {
        return Ok(None);
    };
    let shape = CachesShape::filling(sms, set);
    let ms = checked_median_ms::<Caches>(gpu, shape, runs, rng)?;
    Ok(Some((set, per_second_g(shape.bytes_read(), ms))))
}

/// The L2's read bandwidth: the cache lesson's kernel at every set of its
/// L2 plateau, from [`caches::L2_SETS_FROM`] to a quarter of the L2,
/// doubling, each checked; the fastest set and its GB/s. `None` where the
/// L2 is too small for a set of the plateau.
fn l2_bandwidth(
    gpu: &Gpu,
    sms: u32,
    l2_bytes: Option<usize>,
    runs: Runs,
    rng: &mut SmallRng,
) -> Result<Option<(usize, f64)>> {
    let l2 = l2_bytes.unwrap_or(caches::UNKNOWN_L2_BYTES);
    let mut best: Option<(usize, f64)> = None;
    let mut set = caches::L2_SETS_FROM;
    while set <= l2 / 4 {
        let shape = CachesShape::filling(sms, set);
        let ms = checked_median_ms::<Caches>(gpu, shape, runs, rng)?;
        let rate = per_second_g(shape.bytes_read(), ms);
        if best.is_none_or(|(_, fastest)| rate > fastest) {
            best = Some((set, rate));
        }
        set *= 2;
    }
    Ok(best)
}

/// Shared memory's bandwidth: the bank lesson's kernel reading without
/// conflicts, checked.
fn shared_bandwidth(gpu: &Gpu, sms: u32, runs: Runs, rng: &mut SmallRng) -> Result<f64> {
    let shape = BanksShape::filling(sms, 1);
    let ms = checked_median_ms::<Banks>(gpu, shape, runs, rng)?;
    Ok(per_second_g(shape.bytes_read(), ms))
}

/// The median time of `F`'s first kernel at `shape`, once its output
/// matched the reference: a ceiling from a wrong kernel would be no
/// ceiling.
fn checked_median_ms<F: Family>(
    gpu: &Gpu,
    shape: F::Shape,
    runs: Runs,
    rng: &mut SmallRng,
) -> Result<f64> {
    let kernel = &F::KERNELS[0];
    let mut case = Case::<Gpu, F>::new(gpu, shape, rng)?;
    let comparison = case.check(gpu, kernel)?;
    if !comparison.passed() {
        return Err(Error::WrongCeiling {
            kernel: kernel.name,
            comparison: comparison.to_string(),
        });
    }
    gpu_median_ms(gpu.stream(), runs, || case.launch(gpu, kernel))
}

/// A copy from pinned host memory to the device: the host link's way in.
const HOST_TO_DEVICE: Transfer = Transfer {
    to_device: true,
    pinned: true,
};

/// The first other GPU of the host that `gpu` reaches as a peer, and the
/// bytes a second a copy of [`LINK_BYTES`] from its memory moves
/// (`cuMemcpyPeer`); `None` where there is none.
fn peer_bandwidth(gpu: &Gpu, runs: Runs) -> Result<Option<(usize, f64)>> {
    let others = (0..gpu_host::gpu::device_count()?).filter(|&other| other != gpu.ordinal());
    for other in others {
        let peer = Gpu::new(other, &crate::gpu::PTX)?;
        if !gpu.can_access_peer(&peer)? {
            continue;
        }
        gpu.enable_peer_access(&peer)?;
        let source = peer.alloc::<u8>("the peer copy's source", LINK_BYTES)?;
        let mut destination = gpu.alloc::<u8>("the peer copy's destination", LINK_BYTES)?;
        let ms = gpu_median_ms(gpu.stream(), runs, || {
            Ok::<_, Error>(gpu.copy_from_peer(&peer, &source, &mut destination)?)
        })?;
        return Ok(Some((other, per_second_g(LINK_BYTES as f64, ms))));
    }
    Ok(None)
}

/// The bytes a device-to-device copy moves per second, counting each byte
/// read and each byte written; returns the buffer size too. The buffer is
/// at most a quarter of the free memory.
fn copy_bandwidth(gpu: &Gpu, runs: Runs, rng: &mut impl Rng) -> Result<(usize, f64)> {
    let bytes = COPY_BYTES.min(gpu.free_bytes()? / 4);
    let data = random_vec(
        bytes,
        Uniform::new_inclusive(0u8, 255).expect("a valid range"),
        rng.random(),
    );
    let source = gpu.upload("the copy's source", &data)?;
    let mut destination = gpu.alloc::<u8>("the copy's destination", bytes)?;
    let ms = gpu_median_ms(gpu.stream(), runs, || gpu.copy(&source, &mut destination))?;
    Ok((bytes, per_second_g(2.0 * bytes as f64, ms)))
}

/// cuBLAS SGEMM's FLOP per second at `SGEMM_N`³, in GFLOP/s.
fn sgemm_throughput(gpu: &Gpu, blas: &Blas, runs: Runs, rng: &mut impl Rng) -> Result<f64> {
    let len = SGEMM_N * SGEMM_N;
    let a = gpu.upload("the SGEMM ceiling's A", &uniform_floats::<f32>(len, rng))?;
    let b = gpu.upload("the SGEMM ceiling's B", &uniform_floats::<f32>(len, rng))?;
    let mut c = gpu.alloc::<f32>("the SGEMM ceiling's C", len)?;
    // SAFETY: A, B and C are each SGEMM_N² elements.
    let sgemm = || unsafe { blas.sgemm([SGEMM_N; 3], &a, &b, &mut c) };
    let ms = gpu_median_ms(gpu.stream(), runs, sgemm)?;
    Ok(per_second_g(2.0 * (SGEMM_N as f64).powi(3), ms))
}

/// cuBLAS's bf16 gemm (f32 accumulation and C) at `SGEMM_N`³, in
/// GFLOP/s: what the tensor cores reach.
fn tensor_throughput(gpu: &Gpu, blas: &Blas, runs: Runs, rng: &mut impl Rng) -> Result<f64> {
    let len = SGEMM_N * SGEMM_N;
    let bf16s = |rng: &mut _| -> Vec<bf16> {
        uniform_floats::<f32>(len, rng)
            .into_iter()
            .map(bf16::from_f32)
            .collect()
    };
    let a = gpu.upload("the tensor ceiling's A", &bf16s(rng))?;
    let b = gpu.upload("the tensor ceiling's B", &bf16s(rng))?;
    let mut c = gpu.alloc::<f32>("the tensor ceiling's C", len)?;
    // SAFETY: A, B and C are each SGEMM_N² elements.
    let gemm = || unsafe { blas.gemm_bf16([SGEMM_N; 3], &a, &b, &mut c) };
    let ms = gpu_median_ms(gpu.stream(), runs, gemm)?;
    Ok(per_second_g(2.0 * (SGEMM_N as f64).powi(3), ms))
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::*;
    use crate::family::Source;

    /// An H100 SXM as its driver describes it.
    const H100: Hardware = Hardware {
        compute_capability: Some((9, 0)),
        multiprocessors: Some(132),
        sm_clock_khz: Some(1_980_000),
        memory_clock_khz: Some(2_619_000),
        bus_width_bits: Some(5120),
        l2_bytes: Some(50 << 20),
    };

    #[test]
    fn the_peaks_of_an_h100_match_its_data_sheet() {
        // 3.35 TB/s and 67 TFLOP/s FP32 on the data sheet.
        assert_relative_eq!(H100.peak_bandwidth_gbytes().unwrap(), 3352.32);
        assert_relative_eq!(H100.peak_fp32_gflops().unwrap(), 66_908.16);
        // 4096 FLOP a clock an SM: the data sheet's 989.4 TFLOP/s at 1.83
        // GHz, here at the driver's 1.98.
        assert_relative_eq!(H100.peak_tensor_gflops().unwrap(), 1_070_530.56);
        let peaks = H100.peak().unwrap();
        assert_eq!(peaks.roof_for(Bound::Tensor).compute_gops, 1_070_530.56);
        assert_eq!(peaks.roof_for(Bound::Compute).compute_gops, 66_908.16);
        // 128 bytes a clock an SM: 33.5 TB/s.
        assert_relative_eq!(H100.peak_shared_gbytes().unwrap(), 33_454.08);
        // Rereads at their level's peak: shared memory's, none for the
        // L2 (the driver tells no such peak), the DRAM's.
        let nearer = |from| peaks.nearer(Some(Reread { bytes: 1e9, from }));
        let at = |from| nearer(from).map(|nearer: Nearer| nearer.bandwidth_gbytes);
        assert_eq!(at(Source::Shared), Some(33_454.08));
        assert_eq!(at(Source::WorkingSet(f64::from(64 << 10))), Some(33_454.08));
        assert_eq!(at(Source::WorkingSet(f64::from(64 << 20))), None);
        assert_eq!(at(Source::WorkingSet(f64::from(1 << 30))), Some(3352.32));
        assert_eq!(nearer(Source::Shared).unwrap().bytes, 1e9);
        assert_eq!(peaks.nearer(None), None);
    }

    #[test]
    fn reads_alone_stream_a_set_of_more_than_twice_the_l2() {
        // The whole 1 GiB copy buffer past an H100's or an H200's L2.
        assert_eq!(reads_set(1 << 30, Some(50 << 20)), Some(1 << 30));
        // A buffer cut to a quarter of the free memory: its power of two.
        assert_eq!(reads_set(300 << 20, Some(50 << 20)), Some(256 << 20));
        // Twice the L2 is still the L2's plateau; an unknown L2 is 64 MiB.
        assert_eq!(reads_set(128 << 20, Some(64 << 20)), None);
        assert_eq!(reads_set(128 << 20, None), None);
        assert_eq!(reads_set(256 << 20, None), Some(256 << 20));
        assert_eq!(reads_set(0, Some(50 << 20)), None);
    }

    #[test]
    fn a_run_measures_the_tensor_cores_only_with_cublas_on_a_gpu_that_has_them() {
        let needed = Needed::of(&H100, true, false);
        assert!(
            needed.sgemm && needed.tensor && !needed.levels,
            "{needed:?}"
        );
        assert!(Needed::of(&H100, false, true).levels);
        let without_cublas = Needed::of(&H100, false, false);
        assert!(!without_cublas.sgemm && !without_cublas.tensor);
        for (cc, tensor) in [((7, 5), false), ((8, 0), true), ((9, 0), true)] {
            let gpu = Hardware {
                compute_capability: Some(cc),
                ..H100
            };
            assert_eq!(Needed::of(&gpu, true, false).tensor, tensor, "{cc:?}");
        }
        let unknown = Hardware {
            compute_capability: None,
            ..H100
        };
        assert!(!Needed::of(&unknown, true, false).tensor);
    }

    #[test]
    fn an_unknown_attribute_or_architecture_gives_no_peak() {
        let unknown = Hardware {
            memory_clock_khz: None,
            compute_capability: Some((6, 1)),
            ..H100
        };
        assert_eq!(unknown.peak_bandwidth_gbytes(), None);
        assert_eq!(unknown.peak_fp32_gflops(), None);
        assert_eq!(unknown.peak_tensor_gflops(), None);
        assert_eq!(tensor_flops_per_sm_clock((8, 9)), None);
        assert_eq!(fp32_lanes_per_sm((8, 0)), Some(64));
        assert_eq!(fp32_lanes_per_sm((8, 9)), Some(128));
        assert_eq!(fp32_lanes_per_sm((12, 0)), Some(128));
    }
}

//! The lessons of the memories on the chip: constant memory, registers and
//! local memory, shared-memory banks, the caches.

use gpu_host::Error as HostError;
use gpu_host::Gpu;
use gpu_host::gpu::with_register_cap;

use crate::error::Result;
use crate::families::banks::{Banks, BanksShape};
use crate::families::caches::{Caches, CachesShape, L1_SETS_UP_TO, L2_SETS_FROM, UNKNOWN_L2_BYTES};
use crate::families::constant::{Constant, ConstantShape};
use crate::families::registers::{Registers, RegistersShape};
use crate::family::{Declaration, Family};

use super::lab::{
    Criterion, Judgement, Lab, Outcome, Point, Verdict, kernel_traffic, listed, mean_y, outcome,
    traffic,
};

/// Both kernels with the warp's lanes on one coefficient and on 32.
pub(super) fn constant(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for kernel in Constant::KERNELS {
        for spread in [0, 1] {
            let shape = ConstantShape {
                n: Constant::SIZE.on_gpu[0],
                spread,
            };
            let (timing, correct) = lab.measure_on::<Constant>(lab.gpu, kernel, shape)?;
            let ms = timing.median_ms;
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
            points.push(
                Point::timed(
                    (points.len() + 1) as f64,
                    timing,
                    Constant::work(shape).ops / ms / 1e6,
                    correct,
                )
                .labelled(format!("{}, {lanes}", kernel.name))
                .counting(addresses),
            );
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
    let serialised = Criterion::below(rate(1) / rate(0), 0.25);
    let broadcast = Criterion::above(rate(0) / rate(2), 0.9);
    let verdict = Verdict::confirmed_if(serialised.and(broadcast), Verdict::NotShown);
    Ok(outcome(
        "coefficients_from_constant, coefficients_from_global",
        points,
        (finding, verdict),
    ))
}

/// The register cap under which `array_in_registers` spills: half of
/// what it takes without one.
pub(super) const REGISTER_CAP: u32 = 32;

/// The array in registers, in local memory, and in registers under a cap
/// that spills them, with what the driver gave each.
pub(super) fn registers(lab: &mut Lab<'_>) -> Result<Outcome> {
    let shape = RegistersShape {
        n: Registers::SIZE.on_gpu[0],
        rotation: 5,
    };
    let [in_registers, in_local_memory] = [0, 1].map(|index| &Registers::KERNELS[index]);
    let capped_ptx = with_register_cap(lab.gpu.ptx(), in_registers.name, REGISTER_CAP)
        .ok_or(HostError::MissingKernel(in_registers.name))?;
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
        let (timing, correct) = lab.measure_on::<Registers>(gpu, kernel, shape)?;
        let ms = timing.median_ms;
        let resources = gpu.resources(&kernel.entries())?;
        rows.push(format!(
            "{label}: {} registers, {} bytes of local memory, {:.0} GB/s",
            resources.registers,
            resources.local_bytes,
            shape.bytes_read() / ms / 1e6
        ));
        points.push(
            Point::timed(
                (index + 1) as f64,
                timing,
                shape.bytes_read() / ms / 1e6,
                correct,
            )
            .labelled(format!(
                "{label} ({} registers, {} local bytes)",
                resources.registers, resources.local_bytes
            )),
        );
        local_bytes.push(resources.local_bytes);
    }
    let ([local, spilled], verdict) = judge_registers(&points, &local_bytes);
    let finding = format!(
        "{}. Against the registers: local memory {local:.2}× the time, spilled registers \
         {spilled:.2}×.",
        rows.join("; ")
    );
    Ok(outcome(
        "array_in_registers, array_in_local_memory",
        points,
        (finding, verdict),
    ))
}

/// The time of local memory and of spilled registers against registers'
/// (points 1 and 2 over point 0), and the verdict they and the driver's
/// local bytes of each give.
fn judge_registers(points: &[Point], local_bytes: &[u32]) -> ([f64; 2], Judgement) {
    let slower = |point: &Point| point.ms / points[0].ms;
    let (local, spilled) = (slower(&points[1]), slower(&points[2]));
    let used_local = local_bytes[0] == 0 && local_bytes[1..].iter().all(|&bytes| bytes > 0);
    let otherwise = if used_local {
        Verdict::Hidden
    } else {
        Verdict::NotShown
    };
    let slower = Criterion::above(local.min(spilled), 1.1);
    let judgement = Verdict::confirmed_if(Criterion::exact(used_local).and(slower), otherwise);
    ([local, spilled], judgement)
}

/// The warps' reads at every stride from 1 to 32 words, and the
/// wavefronts the emulator counts for each.
pub(super) fn banks(lab: &mut Lab<'_>) -> Result<Outcome> {
    let sms = lab.hardware.multiprocessors.unwrap_or(1);
    let mut points = Vec::new();
    for stride in 1..=32 {
        let shape = BanksShape::filling(sms, stride);
        let (timing, correct) = lab.measure::<Banks>(shape)?;
        let ms = timing.median_ms;
        let loads = traffic::<Banks>(BanksShape {
            blocks: 1,
            rounds: 32,
            ..shape
        })?
        .shared_load;
        points.push(
            Point::timed(
                f64::from(stride),
                timing,
                shape.bytes_read() / ms / 1e6,
                correct,
            )
            .counting(loads.wavefronts as f64 / loads.requests as f64),
        );
    }
    let degree_rate = |degree: u32| {
        mean_y(&points, |point| {
            BanksShape::filling(sms, point.x as u32).conflict_degree() == degree
        })
    };
    let degrees = [1, 2, 4, 8, 16, 32];
    let rates: Vec<f64> = degrees.iter().map(|&degree| degree_rate(degree)).collect();
    let by_degree = listed(degrees.iter().zip(&rates), |(degree, rate)| {
        format!("{degree}-way {rate:.0} GB/s ({:.2}×)", rate / rates[0])
    });
    let finding =
        format!("by conflict degree gcd(stride, 32), averaged over its strides: {by_degree}.");
    let falling = Criterion::all(
        rates
            .windows(2)
            .map(|pair| Criterion::below(pair[1] / pair[0], 1.05)),
    );
    let serialised = Criterion::below(rates[5] / rates[0], 1.0 / 8.0);
    let verdict = Verdict::confirmed_if(falling.and(serialised), Verdict::NotShown);
    Ok(outcome(Banks::KERNELS[0].name, points, (finding, verdict)))
}

/// The working set from 16 KiB to four times the L2, doubling.
pub(super) fn caches(lab: &mut Lab<'_>) -> Result<Outcome> {
    let sms = lab.hardware.multiprocessors.unwrap_or(1);
    let l2 = lab.hardware.l2_bytes.unwrap_or(UNKNOWN_L2_BYTES);
    let mut points = Vec::new();
    let mut set_bytes = 16 << 10;
    while set_bytes <= 4 * l2.next_power_of_two() {
        let shape = CachesShape::filling(sms, set_bytes);
        let (timing, correct) = lab.measure::<Caches>(shape)?;
        points.push(Point::timed(
            set_bytes as f64,
            timing,
            shape.bytes_read() / timing.median_ms / 1e6,
            correct,
        ));
        set_bytes *= 2;
    }
    let plateau =
        |range: std::ops::RangeInclusive<f64>| mean_y(&points, |point| range.contains(&point.x));
    let l2 = l2 as f64;
    let l1_rate = plateau(0.0..=L1_SETS_UP_TO as f64);
    let l2_rate = plateau(L2_SETS_FROM as f64..=l2 / 4.0);
    let memory_rate = plateau(2.0 * l2..=f64::INFINITY);
    let finding = format!(
        "sets up to 64 KiB: {l1_rate:.0} GB/s (L1); 4 MiB to a quarter of the L2 ({:.0} MiB): \
         {l2_rate:.0} GB/s (L2, {:.1}× below L1); twice the L2 and more: {memory_rate:.0} GB/s \
         (device memory, {:.1}× below L2).",
        l2 / 4.0 / f64::from(1 << 20),
        l1_rate / l2_rate,
        l2_rate / memory_rate,
    );
    let levels =
        Criterion::above(l1_rate / l2_rate, 1.5).and(Criterion::above(l2_rate / memory_rate, 1.5));
    let verdict = Verdict::confirmed_if(levels, Verdict::NotShown);
    Ok(outcome(Caches::KERNELS[0].name, points, (finding, verdict)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(ms: &[f64]) -> Vec<Point> {
        ms.iter()
            .map(|&ms| Point::new(0.0, ms, 0.0, true))
            .collect()
    }

    #[test]
    fn the_register_lesson_sets_each_kernel_against_the_registers() {
        let points = timed(&[2.0, 5.0, 7.0]);
        let (slower, judgement) = judge_registers(&points, &[0, 256, 280]);
        assert_eq!(slower, [2.5, 3.5]);
        // 2.5× against the 1.1× it must pass.
        assert_eq!(judgement, Verdict::Confirmed);
        assert!((judgement.margin - (2.5 / 1.1 - 1.0)).abs() < 1e-12);
        let points = timed(&[2.0, 2.1, 2.1]);
        let judgement = judge_registers(&points, &[0, 256, 280]).1;
        assert_eq!(judgement, Verdict::Hidden);
        assert!(judgement.margin < 0.0);
        let judgement = judge_registers(&points, &[0, 0, 280]).1;
        assert_eq!(judgement, Verdict::NotShown);
        assert_eq!(judgement.margin, f64::NEG_INFINITY);
    }
}

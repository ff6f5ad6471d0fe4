//! `bench --ceilings FILE`: the ceilings of an earlier run on the same
//! GPU, taken instead of measured, for a run that times a few kernels and
//! would otherwise spend most of its time on the ceilings. Each kernel's
//! ratios to its baseline and its twin are still measured in the run
//! itself; only the roofline's limits come from the earlier one.

use std::path::Path;

use super::ceilings::Needed;
use super::json::{Ceilings, Device, Report};
use crate::error::{Error, Result};

/// The report at `path`, read and parsed before the GPU is opened.
pub fn read(path: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|error| Error::NotABenchRun {
        path: path.to_path_buf(),
        why: error.to_string(),
    })
}

/// `earlier`'s ceilings, where it ran on a GPU like `device` (the same
/// name, compute capability and SM count) and has every ceiling this run
/// would measure (`needed`).
pub fn ceilings(
    earlier: &Report,
    path: &Path,
    device: &Device,
    needed: Needed,
) -> Result<Ceilings> {
    let like = |d: &Device| {
        (
            d.name.clone(),
            d.compute_capability.clone(),
            d.multiprocessors,
        )
    };
    if like(&earlier.device) != like(device) {
        return Err(Error::CeilingsElsewhere {
            path: path.to_path_buf(),
            there: describe(&earlier.device),
            here: describe(device),
        });
    }
    let ceilings = &earlier.ceilings;
    let missing = [
        (
            needed.levels && ceilings.l2_gbytes_per_s.is_none(),
            "the L2's read bandwidth",
        ),
        (
            needed.levels && ceilings.shared_gbytes_per_s.is_none(),
            "shared memory's read bandwidth",
        ),
        (
            needed.sgemm && ceilings.sgemm_gflops.is_none(),
            "cuBLAS SGEMM's rate",
        ),
        (
            needed.tensor && ceilings.tensor_gflops.is_none(),
            "cuBLAS's bf16 gemm rate",
        ),
    ];
    if let Some(&(_, which)) = missing.iter().find(|(missing, _)| *missing) {
        return Err(Error::CeilingMissing {
            path: path.to_path_buf(),
            which,
        });
    }
    Ok(*ceilings)
}

fn describe(device: &Device) -> String {
    let na = |value: Option<String>| value.unwrap_or_else(|| "?".to_string());
    format!(
        "{} (compute capability {}, {} SMs)",
        device.name,
        na(device.compute_capability.clone()),
        na(device.multiprocessors.map(|sms| sms.to_string()))
    )
}

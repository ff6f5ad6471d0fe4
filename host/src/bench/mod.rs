//! `locality bench`: every kernel over a sweep of sizes, against the
//! hardware's limits measured in the same run and against what a user would
//! run instead, placed on a roofline.

mod baselines;
mod ceilings;
mod inputs;
pub mod json;
pub mod plot;
pub mod roofline;
mod table;

use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use cudarc::cublas::CudaBlas;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{SeedableRng, rngs::SmallRng};

use self::baselines::{Blas, DEVICE_COPY, SGEMM, device_copy};
use self::ceilings::Hardware;
use self::json::{Family, Op, Report, Role, Row, Size};
use self::roofline::{Roof, intensity, per_second_g, ratio_to_baseline};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::kernels;
use crate::kernels::blur::{Blur, ImageShape, blur};
use crate::kernels::gemv::{Element, Gemv, GemvShape, Layout, gemv};
use crate::kernels::matmul::{Matmul, MatmulShape, matmul};
use crate::suite::{GEMV_ALPHA, GEMV_BETA};
use crate::timing::{Runs, median_ms};

/// What to measure, and where to write it.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Entry points to time, in teaching order; their baselines come along.
    pub kernels: Vec<&'static str>,
    pub matmul: Vec<MatmulShape>,
    pub gemv: Vec<GemvShape>,
    pub images: Vec<ImageShape>,
    pub radius: u32,
    pub runs: Runs,
    pub json: Option<PathBuf>,
    pub plots: Option<PathBuf>,
    pub device: usize,
}

impl Plan {
    fn matmuls(&self) -> Vec<Matmul> {
        Matmul::ALL
            .into_iter()
            .filter(|k| self.kernels.contains(&k.entry_point()))
            .collect()
    }

    fn gemvs<T: Element>(&self) -> Vec<Gemv> {
        Gemv::ALL
            .into_iter()
            .filter(|k| self.kernels.contains(&k.entry_point::<T>()))
            .collect()
    }

    fn blurs(&self) -> Vec<Blur> {
        Blur::ALL
            .into_iter()
            .filter(|k| self.kernels.contains(&k.entry_point()))
            .collect()
    }

    /// Checks every size against every selected kernel, without a GPU.
    pub fn validate(&self) -> Result<()> {
        for kernel in self.matmuls() {
            for &shape in &self.matmul {
                kernel.launch_config(shape)?;
            }
        }
        for &shape in &self.gemv {
            for kernel in self.gemvs::<f32>() {
                kernel.launch_config::<f32>(shape)?;
            }
            for kernel in self.gemvs::<f64>() {
                kernel.launch_config::<f64>(shape)?;
            }
        }
        for kernel in self.blurs() {
            for &image in &self.images {
                kernel.launch_config(image, self.radius)?;
            }
        }
        Ok(())
    }

    /// How many medians the sweep takes, for the progress bar.
    fn measurements(&self, with_blas: bool) -> usize {
        let blas = usize::from(with_blas);
        let layouts = |kernels: &[Gemv]| {
            [Layout::RowMajor, Layout::ColMajor]
                .into_iter()
                .filter(|&layout| kernels.iter().any(|k| k.layout() == layout))
                .count()
        };
        let (gemv32, gemv64) = (self.gemvs::<f32>(), self.gemvs::<f64>());
        let gemv = gemv32.len() + gemv64.len() + blas * (layouts(&gemv32) + layouts(&gemv64));
        let matmul = self.matmuls().len();
        let blur = self.blurs().len();
        self.matmul.len() * (matmul + blas * usize::from(matmul > 0))
            + self.gemv.len() * gemv
            + self.images.len() * (blur + usize::from(blur > 0))
    }

    fn describe(&self) -> String {
        let list = |sizes: Vec<String>| match sizes.as_slice() {
            [] => "-".to_string(),
            sizes => sizes.join(", "),
        };
        let mut families = Vec::new();
        if !self.matmuls().is_empty() {
            families.push(format!(
                "matmul {}",
                list(
                    self.matmul
                        .iter()
                        .map(|&s| Size::matmul(s).short())
                        .collect()
                )
            ));
        }
        if !(self.gemvs::<f32>().is_empty() && self.gemvs::<f64>().is_empty()) {
            families.push(format!(
                "gemv {}",
                list(self.gemv.iter().map(|&s| Size::gemv(s).short()).collect())
            ));
        }
        if !self.blurs().is_empty() {
            let channels = self.images.first().map_or(0, |image| image.channels);
            families.push(format!(
                "blur {} ({channels} channels, r={})",
                list(
                    self.images
                        .iter()
                        .map(|&s| Size::image(s, self.radius).short())
                        .collect()
                ),
                self.radius
            ));
        }
        format!(
            "plan: {} · {} kernels · {} warm-up + {} timed runs each, median reported",
            families.join(" · "),
            self.kernels.len(),
            self.runs.warmup,
            self.runs.timed
        )
    }
}

/// Where the report goes, opened before the sweep so that a bad path fails
/// at once rather than after it.
struct Outputs {
    json: Option<(PathBuf, File)>,
    plots: Option<PathBuf>,
}

impl Outputs {
    fn open(plan: &Plan) -> Result<Self> {
        let json = plan
            .json
            .as_ref()
            .map(|path| {
                File::create(path)
                    .map(|file| (path.clone(), file))
                    .map_err(|source| write_error(path, source))
            })
            .transpose()?;
        if let Some(dir) = &plan.plots {
            fs::create_dir_all(dir).map_err(|source| write_error(dir, source))?;
        }
        Ok(Self {
            json,
            plots: plan.plots.clone(),
        })
    }

    fn write(self, report: &Report) -> Result<()> {
        if let Some((path, file)) = self.json {
            let mut writer = BufWriter::new(file);
            serde_json::to_writer_pretty(&mut writer, report)
                .map_err(std::io::Error::from)
                .and_then(|()| writeln!(writer))
                .and_then(|()| writer.flush())
                .map_err(|source| write_error(&path, source))?;
            println!("wrote {}", path.display());
        }
        if let Some(dir) = self.plots {
            for (name, svg) in plot::all(report) {
                let path = dir.join(name);
                fs::write(&path, svg).map_err(|source| write_error(&path, source))?;
                println!("wrote {}", path.display());
            }
        }
        Ok(())
    }
}

fn write_error(path: &Path, source: std::io::Error) -> Error {
    Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Runs the sweep, prints the table, writes the JSON and the plots.
pub fn run(plan: &Plan) -> Result<()> {
    plan.validate()?;
    let gpu = Gpu::new(plan.device)?;
    let outputs = Outputs::open(plan)?;
    let hardware = Hardware::read(&gpu);
    let device = hardware.describe(&gpu)?;
    let na = |value: Option<String>| value.unwrap_or_else(|| "n/a".to_string());
    println!(
        "{} · compute capability {} · {} SMs · L2 {}",
        device.name,
        na(device.compute_capability.clone()),
        na(device.multiprocessors.map(|sms| sms.to_string())),
        na(device.l2_bytes.map(|bytes| format!("{} MiB", bytes >> 20))),
    );
    let blas = open_blas(&gpu);
    println!("{}", plan.describe());
    let rotation_bytes = hardware.l2_bytes.map(|l2| inputs::L2_MULTIPLE * l2);
    match rotation_bytes {
        Some(bytes) => println!(
            "inputs rotated through copies that span {} MiB ({}× L2), so that no run finds them in L2",
            bytes >> 20,
            inputs::L2_MULTIPLE
        ),
        None => println!("L2 size unknown: inputs not rotated, small sizes may run from L2"),
    }

    let mut rng = SmallRng::seed_from_u64(rand::random());
    println!("measuring the ceilings…");
    let ceilings = ceilings::measure(&gpu, &hardware, blas.as_ref(), plan.runs, &mut rng)?;
    let roofline = json::Roofline::from_ceilings(&ceilings);
    print!("{}", table::ceilings(&ceilings, &roofline));

    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(plan.measurements(blas.is_some()) as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
                .expect("a valid template"),
        )
    } else {
        ProgressBar::hidden()
    };
    let mut sweep = Sweep {
        gpu: &gpu,
        blas: blas.as_ref(),
        runs: plan.runs,
        l2_bytes: hardware.l2_bytes,
        bar: &bar,
        rng,
    };
    let mut measured = sweep.matmul(&plan.matmul, &plan.matmuls())?;
    measured.extend(sweep.gemv::<f32>(&plan.gemv, &plan.gemvs::<f32>())?);
    measured.extend(sweep.gemv::<f64>(&plan.gemv, &plan.gemvs::<f64>())?);
    measured.extend(sweep.blur(&plan.images, plan.radius, &plan.blurs())?);
    bar.finish_and_clear();

    let report = Report {
        schema_version: 1,
        device,
        ceilings,
        roofline,
        runs: json::Runs {
            warmup: plan.runs.warmup,
            timed: plan.runs.timed,
            rotation_bytes,
        },
        results: rows(&measured, roofline.roof()),
    };
    print!("{}", table::results(&report.results));
    outputs.write(&report)
}

/// cuBLAS, or `None` after saying why it cannot be had.
fn open_blas(gpu: &Gpu) -> Option<Blas> {
    Blas::open(gpu)
        .inspect_err(|error| {
            println!(
                "cuBLAS unavailable ({error}): no cuBLAS baselines, and the roofline's \
                 compute ceiling is the theoretical FP32 peak"
            );
        })
        .ok()
}

/// One median, before it is set against the roofline and its baseline.
struct Measurement {
    family: Family,
    kernel: &'static str,
    role: Role,
    size: Size,
    median_ms: f64,
    op: Op,
    ops: f64,
    bytes: f64,
    baseline: Option<&'static str>,
}

/// The report's rows: grouped by family, kernels before baselines, each in
/// teaching order, sizes in the order given.
fn rows(measured: &[Measurement], roof: Roof) -> Vec<Row> {
    let order = |name: &str| {
        kernels::entry_points()
            .chain(baselines::NAMES)
            .position(|known| known == name)
    };
    let mut rows: Vec<Row> = measured
        .iter()
        .map(|m| {
            let baseline_ms = m.baseline.and_then(|baseline| {
                measured
                    .iter()
                    .find(|b| b.kernel == baseline && b.size == m.size)
                    .map(|b| b.median_ms)
            });
            let intensity = intensity(m.ops, m.bytes);
            Row {
                family: m.family,
                kernel: m.kernel,
                role: m.role,
                size: m.size,
                median_ms: m.median_ms,
                op: m.op,
                ops: m.ops,
                gops_per_s: (m.ops > 0.0).then(|| per_second_g(m.ops, m.median_ms)),
                bytes: m.bytes,
                gbytes_per_s: per_second_g(m.bytes, m.median_ms),
                intensity,
                roofline_bound_gops_per_s: intensity.map(|i| roof.bound(i)),
                roofline_fraction: roof.fraction(m.ops, m.bytes, m.median_ms),
                baseline: baseline_ms.and(m.baseline),
                ratio_to_baseline: baseline_ms.map(|b| ratio_to_baseline(b, m.median_ms)),
            }
        })
        .collect();
    rows.sort_by_key(|row| (row.family, row.role, order(row.kernel)));
    rows
}

/// The sweep's state: the GPU, cuBLAS when loaded, how to time, where the
/// inputs come from.
struct Sweep<'a> {
    gpu: &'a Gpu,
    blas: Option<&'a Blas>,
    runs: Runs,
    l2_bytes: Option<usize>,
    bar: &'a ProgressBar,
    rng: SmallRng,
}

impl Sweep<'_> {
    /// The median time of `launch`, shown on the progress bar meanwhile.
    fn time(&self, name: &str, size: Size, launch: impl FnMut() -> Result<()>) -> Result<f64> {
        self.bar.set_message(format!("{name} {size}"));
        let ms = median_ms(self.gpu, self.runs, launch)?;
        self.bar.inc(1);
        Ok(ms)
    }

    fn matmul(&mut self, shapes: &[MatmulShape], kernels: &[Matmul]) -> Result<Vec<Measurement>> {
        let mut measured = Vec::new();
        if kernels.is_empty() {
            return Ok(measured);
        }
        let gpu = self.gpu;
        for &shape in shapes {
            let mut sets = inputs::matmul(gpu, shape, self.l2_bytes, &mut self.rng)?;
            let size = Size::matmul(shape);
            let measurement = |kernel, role, median_ms, baseline| Measurement {
                family: Family::Matmul,
                kernel,
                role,
                size,
                median_ms,
                op: Op::Flop,
                ops: shape.flops(),
                bytes: shape.min_bytes(),
                baseline,
            };
            for &kernel in kernels {
                let ms = self.time(kernel.entry_point(), size, || {
                    let set = sets.next();
                    matmul(gpu, kernel, shape, &set.a, &set.b, &mut set.c)
                })?;
                let baseline = self.blas.map(|_| SGEMM);
                measured.push(measurement(
                    kernel.entry_point(),
                    Role::Kernel,
                    ms,
                    baseline,
                ));
            }
            if let Some(blas) = self.blas {
                let ms = self.time(SGEMM, size, || {
                    let set = sets.next();
                    blas.sgemm(shape, &set.a, &set.b, &mut set.c)
                })?;
                measured.push(measurement(SGEMM, Role::Baseline, ms, None));
            }
        }
        Ok(measured)
    }

    fn gemv<T: Element>(
        &mut self,
        shapes: &[GemvShape],
        kernels: &[Gemv],
    ) -> Result<Vec<Measurement>>
    where
        CudaBlas: cudarc::cublas::Gemv<T>,
    {
        let mut measured = Vec::new();
        if kernels.is_empty() {
            return Ok(measured);
        }
        let gpu = self.gpu;
        let (alpha, beta) = (T::from_f64(GEMV_ALPHA), T::from_f64(GEMV_BETA));
        for &shape in shapes {
            let mut sets = inputs::gemv::<T>(gpu, shape, self.l2_bytes, &mut self.rng)?;
            let size = Size::gemv(shape);
            let measurement = |kernel, role, median_ms, baseline| Measurement {
                family: Family::Gemv,
                kernel,
                role,
                size,
                median_ms,
                op: Op::Flop,
                ops: shape.flops(),
                bytes: shape.min_bytes::<T>(),
                baseline,
            };
            for &kernel in kernels {
                let ms = self.time(kernel.entry_point::<T>(), size, || {
                    let set = sets.next();
                    gemv(gpu, kernel, shape, alpha, &set.a, &set.x, beta, &mut set.y)
                })?;
                let baseline = self
                    .blas
                    .map(|_| baselines::gemv_name::<T>(kernel.layout()));
                measured.push(measurement(
                    kernel.entry_point::<T>(),
                    Role::Kernel,
                    ms,
                    baseline,
                ));
            }
            let Some(blas) = self.blas else { continue };
            for layout in [Layout::RowMajor, Layout::ColMajor] {
                if !kernels.iter().any(|k| k.layout() == layout) {
                    continue;
                }
                let name = baselines::gemv_name::<T>(layout);
                let ms = self.time(name, size, || {
                    let set = sets.next();
                    blas.gemv(layout, shape, alpha, &set.a, &set.x, beta, &mut set.y)
                })?;
                measured.push(measurement(name, Role::Baseline, ms, None));
            }
        }
        Ok(measured)
    }

    fn blur(
        &mut self,
        images: &[ImageShape],
        radius: u32,
        kernels: &[Blur],
    ) -> Result<Vec<Measurement>> {
        let mut measured = Vec::new();
        if kernels.is_empty() {
            return Ok(measured);
        }
        let gpu = self.gpu;
        let window = f64::from(2 * radius + 1).powi(2);
        for &image in images {
            let mut sets = inputs::blur(gpu, image, self.l2_bytes, &mut self.rng)?;
            let size = Size::image(image, radius);
            let samples = (image.width * image.height * image.channels) as f64;
            let measurement = |kernel, role, median_ms, op, baseline| Measurement {
                family: Family::Blur,
                kernel,
                role,
                size,
                median_ms,
                op,
                ops: if op == Op::IntAdd {
                    window * samples
                } else {
                    0.0
                },
                bytes: image.min_bytes(),
                baseline,
            };
            for &kernel in kernels {
                let ms = self.time(kernel.entry_point(), size, || {
                    let set = sets.next();
                    blur(gpu, kernel, image, radius, &set.input, &mut set.output)
                })?;
                let entry = kernel.entry_point();
                measured.push(measurement(
                    entry,
                    Role::Kernel,
                    ms,
                    Op::IntAdd,
                    Some(DEVICE_COPY),
                ));
            }
            let ms = self.time(DEVICE_COPY, size, || {
                let set = sets.next();
                device_copy(gpu, &set.input, &mut set.output)
            })?;
            measured.push(measurement(DEVICE_COPY, Role::Baseline, ms, Op::None, None));
        }
        Ok(measured)
    }
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::json::{Ceilings, ComputeSource, Device, Roofline, Runs};
    use super::*;

    /// Made-up numbers shaped like an H100's, not a measurement: enough to
    /// exercise the report, the table and every plot without a GPU.
    fn sample_report() -> Report {
        let ceilings = Ceilings {
            copy_gbytes_per_s: 2_950.0,
            copy_bytes: 1 << 30,
            sgemm_gflops: Some(51_000.0),
            sgemm_n: Some(8192),
            theoretical_gbytes_per_s: Some(3_352.32),
            theoretical_fp32_gflops: Some(66_908.16),
        };
        let roofline = Roofline::from_ceilings(&ceilings);
        let mut measured = Vec::new();
        let mut push = |family, kernel, role, size, op, ops: f64, bytes: f64, rate, baseline| {
            // `rate` is Gop/s for matmul, GB/s otherwise.
            let per_ms = if family == Family::Matmul { ops } else { bytes };
            measured.push(Measurement {
                family,
                kernel,
                role,
                size,
                median_ms: per_ms / rate / 1e6,
                op,
                ops,
                bytes,
                baseline,
            });
        };
        let saturate = |peak: f64, n: f64, half: f64| peak * n / (n + half);
        for n in [512, 1024, 2048, 4096, 8192] {
            let shape = MatmulShape::new(n, n, n);
            let size = Size::matmul(shape);
            let x = n as f64;
            for (kernel, role, peak, baseline) in [
                ("matmul_naive", Role::Kernel, 4_800.0, Some(SGEMM)),
                ("matmul_tiled_16", Role::Kernel, 8_100.0, Some(SGEMM)),
                ("matmul_tiled_32", Role::Kernel, 8_400.0, Some(SGEMM)),
                (SGEMM, Role::Baseline, 50_000.0, None),
            ] {
                let rate = saturate(peak, x, 600.0);
                push(
                    Family::Matmul,
                    kernel,
                    role,
                    size,
                    Op::Flop,
                    shape.flops(),
                    shape.min_bytes(),
                    rate,
                    baseline,
                );
            }
        }
        for n in [1024, 2048, 4096, 8192, 16384] {
            let shape = GemvShape::new(n, n);
            let size = Size::gemv(shape);
            let x = n as f64;
            for (kernel, role, peak, bytes, baseline) in [
                (
                    "gemv_row_major_f32",
                    Role::Kernel,
                    740.0,
                    shape.min_bytes::<f32>(),
                    Some("cublas_sgemv_row_major"),
                ),
                (
                    "gemv_row_major_f64",
                    Role::Kernel,
                    1_060.0,
                    shape.min_bytes::<f64>(),
                    Some("cublas_dgemv_row_major"),
                ),
                (
                    "gemv_col_major_f32",
                    Role::Kernel,
                    870.0,
                    shape.min_bytes::<f32>(),
                    Some("cublas_sgemv_col_major"),
                ),
                (
                    "gemv_col_major_f64",
                    Role::Kernel,
                    960.0,
                    shape.min_bytes::<f64>(),
                    Some("cublas_dgemv_col_major"),
                ),
                (
                    "gemv_col_major_shared_x_f32",
                    Role::Kernel,
                    490.0,
                    shape.min_bytes::<f32>(),
                    Some("cublas_sgemv_col_major"),
                ),
                (
                    "gemv_col_major_shared_x_f64",
                    Role::Kernel,
                    560.0,
                    shape.min_bytes::<f64>(),
                    Some("cublas_dgemv_col_major"),
                ),
                (
                    "cublas_sgemv_row_major",
                    Role::Baseline,
                    2_800.0,
                    shape.min_bytes::<f32>(),
                    None,
                ),
                (
                    "cublas_dgemv_row_major",
                    Role::Baseline,
                    2_850.0,
                    shape.min_bytes::<f64>(),
                    None,
                ),
                (
                    "cublas_sgemv_col_major",
                    Role::Baseline,
                    2_700.0,
                    shape.min_bytes::<f32>(),
                    None,
                ),
                (
                    "cublas_dgemv_col_major",
                    Role::Baseline,
                    2_750.0,
                    shape.min_bytes::<f64>(),
                    None,
                ),
            ] {
                let rate = saturate(peak, x, 2_000.0);
                push(
                    Family::Gemv,
                    kernel,
                    role,
                    size,
                    Op::Flop,
                    shape.flops(),
                    bytes,
                    rate,
                    baseline,
                );
            }
        }
        for n in [1024, 2048, 4096, 8192] {
            let image = ImageShape::new(n, n, 3);
            let size = Size::image(image, 3);
            let ops = 49.0 * (3 * n * n) as f64;
            for (kernel, role, op, ops, peak, baseline) in [
                (
                    "blur_naive",
                    Role::Kernel,
                    Op::IntAdd,
                    ops,
                    48.0,
                    Some(DEVICE_COPY),
                ),
                (
                    "blur_tiled",
                    Role::Kernel,
                    Op::IntAdd,
                    ops,
                    45.5,
                    Some(DEVICE_COPY),
                ),
                (DEVICE_COPY, Role::Baseline, Op::None, 0.0, 2_900.0, None),
            ] {
                let rate = saturate(peak, n as f64, 1_000.0);
                push(
                    Family::Blur,
                    kernel,
                    role,
                    size,
                    op,
                    ops,
                    image.min_bytes(),
                    rate,
                    baseline,
                );
            }
        }
        Report {
            schema_version: 1,
            device: Device {
                name: "NVIDIA H100 80GB HBM3 (sample numbers)".to_string(),
                compute_capability: Some("9.0".to_string()),
                multiprocessors: Some(132),
                l2_bytes: Some(50 << 20),
                memory_bytes: 80 << 30,
            },
            ceilings,
            roofline,
            runs: Runs {
                warmup: 3,
                timed: 20,
                rotation_bytes: Some(200 << 20),
            },
            results: rows(&measured, roofline.roof()),
        }
    }

    #[test]
    fn rows_carry_their_baseline_and_come_grouped_in_teaching_order() {
        let report = sample_report();
        let kernels: Vec<&str> = report.results.iter().map(|r| r.kernel).collect();
        assert_eq!(
            &kernels[..6],
            ["matmul_naive"; 5]
                .iter()
                .chain(["matmul_tiled_16"].iter())
                .copied()
                .collect::<Vec<_>>()
        );
        let naive = &report.results[4];
        let sgemm = report
            .results
            .iter()
            .find(|r| r.kernel == SGEMM && r.size == naive.size)
            .unwrap();
        assert_eq!(naive.baseline, Some(SGEMM));
        assert_relative_eq!(
            naive.ratio_to_baseline.unwrap(),
            sgemm.median_ms / naive.median_ms
        );
        assert_eq!(sgemm.ratio_to_baseline, None);
        let copy = report.results.last().unwrap();
        assert_eq!(
            (copy.kernel, copy.intensity, copy.gops_per_s),
            (DEVICE_COPY, None, None)
        );
        assert!(table::results(&report.results).lines().count() > report.results.len());
    }

    #[test]
    fn plots_survive_one_size_and_unknown_ceilings() {
        let mut report = sample_report();
        report
            .results
            .retain(|row| row.role == Role::Kernel && row.size.side() == 1024.0);
        report.ceilings.sgemm_gflops = None;
        assert_eq!(
            Roofline::from_ceilings(&report.ceilings).compute_source,
            Some(ComputeSource::TheoreticalFp32)
        );
        report.ceilings.theoretical_gbytes_per_s = None;
        report.ceilings.theoretical_fp32_gflops = None;
        report.roofline.compute_gops_per_s = None;
        report.roofline.compute_source = None;
        for (name, svg) in plot::all(&report) {
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{name}");
        }
    }

    /// Renders the plots of the sample report and writes them to the
    /// temporary directory, for a look without a GPU.
    #[test]
    fn the_sample_report_renders_every_plot() {
        let report = sample_report();
        let plots = plot::all(&report);
        let names: Vec<&str> = plots.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            ["roofline.svg", "matmul.svg", "gemv.svg", "blur.svg"]
        );
        for (name, svg) in plots {
            assert!(
                svg.starts_with("<svg") && svg.ends_with("</svg>\n"),
                "{name}"
            );
            assert_eq!(
                svg.matches("<g").count(),
                svg.matches("</g>").count(),
                "{name}"
            );
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{name}");
        }
    }
}

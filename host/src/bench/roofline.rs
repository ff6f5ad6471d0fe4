//! The roofline model's arithmetic, kept free of the GPU so that it can be
//! checked on fixed numbers.
//!
//! A kernel that does `ops` operations and must move `bytes` bytes can run no
//! faster than the slower of its two limits: `ops / compute` and
//! `bytes / bandwidth`. Equivalently its throughput is bounded by
//! `min(compute, intensity × bandwidth)`, with `intensity = ops / bytes`.

/// Giga-somethings per second from a count and a time in milliseconds.
pub fn per_second_g(count: f64, ms: f64) -> f64 {
    count / ms / 1e6
}

/// Operations per byte of the fewest bytes a kernel must move; `None` for
/// work that does no operations (a copy).
pub fn intensity(ops: f64, bytes: f64) -> Option<f64> {
    (ops > 0.0).then(|| ops / bytes)
}

/// How much faster the kernel is than its baseline: `baseline / kernel`
/// time, so above 1 means the kernel wins.
pub fn ratio_to_baseline(baseline_ms: f64, kernel_ms: f64) -> f64 {
    baseline_ms / kernel_ms
}

/// The two ceilings of the roofline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Roof {
    /// Operations per second the arithmetic sustains, in G/s; infinite when
    /// the GPU's compute peak is unknown, so that only memory bounds.
    pub compute_gops: f64,
    /// Bytes per second memory sustains, in GB/s.
    pub bandwidth_gbytes: f64,
}

impl Roof {
    /// The highest throughput, in Gop/s, a kernel of this intensity can reach.
    pub fn bound(self, intensity: f64) -> f64 {
        self.compute_gops.min(intensity * self.bandwidth_gbytes)
    }

    /// The intensity where the memory slope meets the compute ceiling.
    pub fn ridge(self) -> f64 {
        self.compute_gops / self.bandwidth_gbytes
    }

    /// The shortest time, in ms, in which `ops` and `bytes` fit under both
    /// ceilings.
    pub fn min_ms(self, ops: f64, bytes: f64) -> f64 {
        (ops / self.compute_gops).max(bytes / self.bandwidth_gbytes) / 1e6
    }

    /// The fraction of the roofline reached: the shortest possible time over
    /// the measured one. For work with operations this is exactly
    /// achieved / bound; for a copy it is the fraction of the bandwidth.
    pub fn fraction(self, ops: f64, bytes: f64, ms: f64) -> f64 {
        self.min_ms(ops, bytes) / ms
    }

    /// [`Roof::fraction`] of work that also reads bytes again from a level
    /// nearer the SMs: the hierarchical roofline's shortest time is the
    /// longest that any one level allows.
    pub fn fraction_rereading(self, ops: f64, bytes: f64, nearer: Option<Nearer>, ms: f64) -> f64 {
        let nearer_ms = nearer.map_or(0.0, |nearer| nearer.bytes / nearer.bandwidth_gbytes / 1e6);
        self.min_ms(ops, bytes).max(nearer_ms) / ms
    }
}

/// The DRAM bandwidth, in GB/s, of work that reads `read` bytes and
/// writes `written`: a stream of reads alone moves `reads_alone` GB/s, and
/// each written byte costs what makes a copy's equal reads and writes take
/// exactly the copy's time. A copy is held to the copy's bandwidth, work
/// that only reads to the reads'; none to less than the copy's.
pub fn streaming_gbytes(copy: f64, reads_alone: Option<f64>, read: f64, written: f64) -> f64 {
    let Some(reads) = reads_alone.filter(|&reads| reads > copy) else {
        return copy;
    };
    let per_written = 2.0 / copy - 1.0 / reads;
    ((read + written) / (read / reads + written * per_written)).max(copy)
}

/// Bytes read again from a level of the memory nearer the SMs than the
/// DRAM, and that level's bandwidth in GB/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearer {
    pub bytes: f64,
    pub bandwidth_gbytes: f64,
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::*;

    const ROOF: Roof = Roof {
        compute_gops: 50_000.0,
        bandwidth_gbytes: 3_000.0,
    };

    #[test]
    fn a_memory_bound_kernel_is_held_to_intensity_times_bandwidth() {
        // 1 GFLOP over 4 GB in 2 ms: 500 GFLOP/s at 0.25 FLOP/B.
        let (ops, bytes, ms) = (1e9, 4e9, 2.0);
        assert_relative_eq!(per_second_g(ops, ms), 500.0);
        assert_relative_eq!(per_second_g(bytes, ms), 2_000.0);
        let intensity = intensity(ops, bytes).unwrap();
        assert_relative_eq!(intensity, 0.25);
        assert_relative_eq!(ROOF.bound(intensity), 750.0);
        assert_relative_eq!(ROOF.min_ms(ops, bytes), 4.0 / 3.0);
        assert_relative_eq!(ROOF.fraction(ops, bytes, ms), 500.0 / 750.0);
    }

    #[test]
    fn a_compute_bound_kernel_is_held_to_the_compute_ceiling() {
        // 2·4096³ FLOP over 3·4096²·4 B in 16 ms.
        let n = 4096.0_f64;
        let (ops, bytes, ms) = (2.0 * n.powi(3), 12.0 * n * n, 16.0);
        let intensity = intensity(ops, bytes).unwrap();
        assert_relative_eq!(intensity, n / 6.0);
        assert_relative_eq!(ROOF.ridge(), 50.0 / 3.0);
        assert_relative_eq!(ROOF.bound(intensity), 50_000.0);
        let achieved = per_second_g(ops, ms);
        assert_relative_eq!(ROOF.fraction(ops, bytes, ms), achieved / 50_000.0);
    }

    #[test]
    fn a_copy_is_held_to_the_bandwidth_alone() {
        assert_eq!(intensity(0.0, 3e9), None);
        assert_relative_eq!(ROOF.fraction(0.0, 3e9, 1.25), 0.8);
    }

    #[test]
    fn without_a_compute_peak_only_memory_bounds() {
        let roof = Roof {
            compute_gops: f64::INFINITY,
            ..ROOF
        };
        assert_relative_eq!(roof.bound(1000.0), 3_000_000.0);
        assert_relative_eq!(roof.fraction(1e12, 1e9, 1.0), 1.0 / 3.0);
    }

    #[test]
    fn rereads_are_held_to_their_own_level() {
        // 1 GB read again at 10 TB/s takes 0.1 ms, longer than the 30 MB
        // from the DRAM (0.01 ms): a kernel taking 0.2 ms is at half.
        let nearer = Nearer {
            bytes: 1e9,
            bandwidth_gbytes: 10_000.0,
        };
        assert_relative_eq!(ROOF.fraction_rereading(0.0, 3e7, Some(nearer), 0.2), 0.5);
        // Where the DRAM's bytes take longer, they bound.
        assert_relative_eq!(ROOF.fraction_rereading(0.0, 6e8, Some(nearer), 0.4), 0.5);
        assert_relative_eq!(ROOF.fraction_rereading(0.0, 3e8, None, 0.2), 0.5);
    }

    #[test]
    fn reads_alone_stream_at_their_own_bandwidth_and_a_copy_at_the_copys() {
        let reads = Some(4_500.0);
        // A copy, reads and writes alike: the copy's bandwidth.
        assert_relative_eq!(streaming_gbytes(4_000.0, reads, 1e9, 1e9), 4_000.0);
        // Reads alone: theirs; writes alone: the copy's, not below it.
        assert_relative_eq!(streaming_gbytes(4_000.0, reads, 1e9, 0.0), 4_500.0);
        assert_relative_eq!(streaming_gbytes(4_000.0, reads, 0.0, 1e9), 4_000.0);
        assert_relative_eq!(streaming_gbytes(4_000.0, reads, 1e9, 2e9), 4_000.0);
        // A gemv's mix, mostly reads: between the two.
        let gemv = streaming_gbytes(4_000.0, reads, 1e9, 1e6);
        assert!(gemv > 4_490.0 && gemv < 4_500.0, "{gemv}");
        // Unmeasured, or slower than the copy: the copy's, whatever the mix.
        assert_relative_eq!(streaming_gbytes(4_000.0, None, 1e9, 0.0), 4_000.0);
        assert_relative_eq!(streaming_gbytes(4_000.0, Some(3_000.0), 1e9, 0.0), 4_000.0);
    }

    #[test]
    fn the_ratio_is_above_one_when_the_kernel_beats_its_baseline() {
        assert_relative_eq!(ratio_to_baseline(1.5, 2.0), 0.75);
        assert_relative_eq!(ratio_to_baseline(3.0, 1.5), 2.0);
    }
}

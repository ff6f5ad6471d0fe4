//! The material's claims about memory traffic, asserted from the emulator's
//! counts on the kernels themselves, without a GPU: a kernel change that
//! breaks a claim fails here. Each kernel is also checked against the
//! reference on the same run, so the counts are those of a correct kernel.

use gpu_emulator::traffic::Traffic;
use gpu_std::Placement;
use kernels::{access, pair_sum};
use locality::Backend;
use locality::case::Case;
use locality::families::access::Access;
use locality::families::banks::Banks;
use locality::families::blur::{Blur, BlurShape};
use locality::families::bulk::{Bulk, BulkShape};
use locality::families::caches::Caches;
use locality::families::chase::Chase;
use locality::families::constant::{Constant, ConstantShape};
use locality::families::distributed::{Distributed, DistributedShape};
use locality::families::gemv::{Gemv, GemvShape};
use locality::families::histogram::{Bytes, Histogram, HistogramShape};
use locality::families::intensity::Intensity;
use locality::families::l2::{L2, L2Shape};
use locality::families::matmul::{Matmul, MatmulShape};
use locality::families::matmul_bf16::MatmulBf16;
use locality::families::pair_sum::{PairSum, PairSumShape};
use locality::families::readonly::ReadOnly;
use locality::families::registers::Registers;
use locality::families::tensor::Tensor;
use locality::families::texture::{Modes, TextureFamily, TextureShape};
use locality::families::transpose::{Transpose, TransposeShape};
use locality::families::width::{Width, WidthShape};
use locality::family::Family;
use locality::{CountingEmulator, Emulator};
use locality_tests::{kernel, seed};
use rand::{SeedableRng, rngs::SmallRng};

/// The traffic of one correct launch of `F`'s kernel `name` at `shape`.
fn traffic<F: Family>(name: &str, shape: F::Shape) -> Traffic {
    let backend = CountingEmulator::default();
    let kernel = kernel::<F>(name);
    let mut rng = SmallRng::seed_from_u64(seed());
    let mut case = Case::<_, F>::new(&backend, shape, &mut rng).unwrap();
    let comparison = case.check(&backend, kernel).unwrap();
    assert!(comparison.passed(), "{name}: {comparison}");
    backend.traffic(name).unwrap()
}

#[test]
fn the_traffic_is_counted_by_where_each_buffer_lives() {
    // A coalesced copy of 4096 f32 from mapped host memory into managed
    // memory: 128 warps, each one request of four sectors each way, every
    // one of them over the host's link or to a managed page.
    let backend = CountingEmulator::default();
    let n = 4096;
    let values = vec![1.0f32; n as usize];
    let input = backend
        .upload_in("input", &values, Placement::MappedHost)
        .unwrap();
    let mut output = backend
        .alloc_in::<f32>("output", n as usize, Placement::Managed)
        .unwrap();
    let copy = kernel::<Access>("copy_strided");
    // SAFETY: both buffers hold the n elements a stride-1 copy reads and
    // writes.
    unsafe { backend.launch(copy, &access::Problem { n }, (&input, &mut output, n, 1, 0)) }
        .unwrap();
    let traffic = backend.traffic("copy_strided").unwrap();
    let warps = u64::from(n / 32);
    let mapped = traffic.by_placement[&Placement::MappedHost];
    let managed = traffic.by_placement[&Placement::Managed];
    assert_eq!(
        (mapped.load.requests, mapped.load.sectors),
        (warps, 4 * warps)
    );
    assert_eq!(
        (managed.store.requests, managed.store.sectors),
        (warps, 4 * warps)
    );
    assert_eq!(mapped.load, traffic.global_load);
    assert_eq!(managed.store, traffic.global_store);
    assert_eq!((mapped.store.requests, managed.load.requests), (0, 0));
    assert!(!traffic.by_placement.contains_key(&Placement::Device));
}

#[test]
fn a_peer_gpus_buffer_is_counted_as_the_peers() {
    // The one-shot all-reduce's sum of 4096 f32 on emulated GPU 0, the
    // second vector GPU 1's: 32 warps a vector, each one 16-byte request
    // of 16 sectors, the peer's apart from the GPU's own.
    let first = CountingEmulator::default();
    let second = CountingEmulator::counting(Emulator::default().on_device(1).unwrap());
    first.enable_peer_access(&second).unwrap();
    let n = 4096;
    let values = vec![1.0f32; n as usize];
    let mine = first.upload("mine", &values).unwrap();
    let theirs = second.upload("theirs", &values).unwrap();
    let mut sum = first.alloc::<f32>("sum", n as usize).unwrap();
    let sum_pair = kernel::<PairSum>("sum_pair");
    // SAFETY: the three vectors hold n elements; GPU 0 reaches GPU 1's.
    unsafe {
        first.launch(
            sum_pair,
            &pair_sum::Problem { n },
            (&mine, &theirs, &mut sum, n),
        )
    }
    .unwrap();
    let traffic = first.traffic("sum_pair").unwrap();
    let warps = u64::from(n / 4 / 32);
    let (own, peer) = (
        traffic.by_placement[&Placement::Device],
        traffic.by_placement[&Placement::Peer],
    );
    assert_eq!((peer.load.requests, peer.load.sectors), (warps, 16 * warps));
    assert_eq!((own.load.requests, own.load.sectors), (warps, 16 * warps));
    assert_eq!((peer.store.requests, own.store.requests), (0, warps));
}

#[test]
fn tiling_divides_the_global_load_requests_by_the_tile_width() {
    // Sides that are multiples of both tiles: every warp's lanes are all in
    // bounds, so the naive kernel issues 2k load requests per warp and a
    // tiled one 2 per phase, k/TILE phases: exactly TILE times fewer.
    let shape = MatmulShape::new(64, 64, 64);
    let naive = traffic::<Matmul>("matmul_naive", shape)
        .global_load
        .requests;
    assert_eq!(naive, 64 * 64 / 32 * 2 * 64);
    for (name, tile) in [("matmul_tiled_16", 16), ("matmul_tiled_32", 32)] {
        let tiled = traffic::<Matmul>(name, shape);
        assert_eq!(tiled.global_load.requests * tile, naive, "{name}");
        assert_eq!(tiled.shared_load.bank_conflicts, 0, "{name}");
        assert_eq!(tiled.shared_store.bank_conflicts, 0, "{name}");
    }
}

#[test]
fn a_warp_reads_column_major_a_in_4_sectors_and_row_major_a_in_32() {
    let shape = GemvShape::new(256, 64);
    let sectors_per_request = |name| {
        let traffic = traffic::<Gemv<f32>>(name, shape);
        let a = traffic.loads_by_buffer["a"];
        a.sectors as f64 / a.requests as f64
    };
    assert_eq!(sectors_per_request("gemv_col_major_f32"), 4.0);
    assert_eq!(sectors_per_request("gemv_row_major_f32"), 32.0);
    // In f64 a coalesced warp reads 256 bytes: 8 sectors.
    let f64_col = traffic::<Gemv<f64>>("gemv_col_major_f64", shape).loads_by_buffer["a"];
    assert_eq!(f64_col.sectors, 8 * f64_col.requests);
    // x is one element for the whole warp: one sector per request.
    let x = traffic::<Gemv<f32>>("gemv_col_major_f32", shape).loads_by_buffer["x"];
    assert_eq!(x.sectors, x.requests);
}

#[test]
fn staging_x_in_shared_memory_moves_its_loads_out_of_the_loop() {
    let shape = GemvShape::new(256, 256);
    let plain = traffic::<Gemv<f32>>("gemv_col_major_f32", shape);
    let staged = traffic::<Gemv<f32>>("gemv_col_major_shared_x_f32", shape);
    // Every warp loads x[j] for each of the n columns; staged, each of the
    // 4 warps of a block loads its part of each 128-wide window once.
    assert_eq!(plain.loads_by_buffer["x"].requests, 256 / 32 * 256);
    assert_eq!(staged.loads_by_buffer["x"].requests, 256 / 32 * 256 / 128);
    // Every lane reads the same window element: a broadcast, no conflict.
    assert_eq!(staged.shared_load.bank_conflicts, 0);
}

#[test]
fn the_ladder_reads_a_in_whole_sectors_and_16_byte_loads_move_four_times_the_bytes() {
    // 128 columns: every lane of a row's warp has a whole vector of A.
    let shape = GemvShape::new(256, 128);
    let a_loads = |name: &str| {
        let traffic = if name.ends_with("f32") {
            traffic::<Gemv<f32>>(name, shape)
        } else {
            traffic::<Gemv<f64>>(name, shape)
        };
        assert_eq!(traffic.shared_load.bank_conflicts, 0, "{name}");
        assert_eq!(traffic.shared_store.bank_conflicts, 0, "{name}");
        traffic.loads_by_buffer["a"]
    };
    for (name, sectors_per_request) in [
        ("gemv_row_major_warp_f32", 4),
        ("gemv_row_major_vector_f32", 16),
        ("gemv_col_major_split_f32", 4),
        ("gemv_col_major_vector_f32", 16),
        ("gemv_row_major_warp_f64", 8),
        ("gemv_row_major_vector_f64", 16),
        ("gemv_col_major_split_f64", 8),
        ("gemv_col_major_vector_f64", 16),
    ] {
        let a = a_loads(name);
        // Every byte fetched is used, and A is read once.
        assert_eq!(a.sectors, sectors_per_request * a.requests, "{name}");
        assert_eq!(a.bytes_used, a.bytes_fetched(), "{name}");
        let element = if name.ends_with("f32") { 4 } else { 8 };
        assert_eq!(a.bytes_used, 256 * 128 * element, "{name}");
    }
    for (scalar, vector) in [
        ("gemv_row_major_warp_f32", "gemv_row_major_vector_f32"),
        ("gemv_col_major_split_f32", "gemv_col_major_vector_f32"),
    ] {
        assert_eq!(a_loads(scalar).requests, 4 * a_loads(vector).requests);
    }
}

#[test]
fn the_tiled_blur_issues_far_fewer_global_loads_than_the_naive_one() {
    let shape = BlurShape::new(64, 64, 1, 3);
    let naive = traffic::<Blur>("blur_naive", shape).global_load.requests;
    let tiled = traffic::<Blur>("blur_tiled", shape);
    // Naive: a warp's lanes read their 7×7 windows, one request per window
    // element (fewer where the image's border clips every lane's window):
    // at most 49 per warp. Tiled: a block's 256 threads load its 22×22
    // tile in two passes, at most 2 requests per warp (fewer where a pass's
    // pixels lie outside the image).
    let warps = 64 * 64 / 32;
    assert!(naive <= 49 * warps && naive > 40 * warps, "{naive}");
    assert!(tiled.global_load.requests <= 2 * warps, "{tiled:?}");
    assert!(
        naive > 20 * tiled.global_load.requests,
        "{naive} against {tiled:?}"
    );
}

#[test]
fn the_tile_coalesces_the_transposes_stores_and_its_padding_ends_the_bank_conflicts() {
    let shape = TransposeShape::new(64, 64);
    let (naive, tiled, padded) = (
        traffic::<Transpose>("transpose_naive", shape),
        traffic::<Transpose>("transpose_tiled", shape),
        traffic::<Transpose>("transpose_padded", shape),
    );
    // Every warp reads 32 neighbours of a row: 4 sectors. Naive, it writes
    // them down a column of the output, a sector each; through the tile,
    // along a row, 4 sectors like the read.
    for (name, traffic, store_sectors) in [
        ("transpose_naive", &naive, 32),
        ("transpose_tiled", &tiled, 4),
        ("transpose_padded", &padded, 4),
    ] {
        let (load, store) = (traffic.global_load, traffic.global_store);
        assert_eq!(load.requests, 64 * 64 / 32, "{name}");
        assert_eq!(load.sectors, 4 * load.requests, "{name}");
        assert_eq!(store.requests, 64 * 64 / 32, "{name}");
        assert_eq!(store.sectors, store_sectors * store.requests, "{name}");
        assert_eq!(traffic.shared_store.bank_conflicts, 0, "{name}");
    }
    // A column of the 32-word-wide tile is in one bank: 32 wavefronts a
    // read; one word of padding a row puts it in 32 banks: one.
    let (tiled, padded) = (tiled.shared_load, padded.shared_load);
    assert_eq!(tiled.wavefronts, 32 * tiled.requests);
    assert_eq!(tiled.bank_conflicts, 31 * tiled.requests);
    assert_eq!(padded.wavefronts, padded.requests);
    assert_eq!(padded.bank_conflicts, 0);
}

/// The lesson kernels' shapes in docs/traffic.md's table.
const L2_SHAPE: L2Shape = L2Shape {
    n: 4096,
    m: 1000,
    carve_out: 0,
};
const BULK_SHAPE: BulkShape = BulkShape { n: 4096 };
const DISTRIBUTED_SHAPE: DistributedShape = DistributedShape {
    blocks: 2,
    cluster: 2,
    rounds: 1,
};
const HISTOGRAM_SHAPE: HistogramShape = HistogramShape {
    bytes: 65536,
    from: Bytes::Uniform,
};
const TEXTURE_SHAPE: TextureShape = TextureShape {
    width: 64,
    height: 64,
    degrees: 30,
    modes: Modes::BorderLinear,
};

/// The emulated counts of docs/traffic.md's table, in its column order, for
/// the kernel `name` of the row.
fn documented_counts(name: &str) -> [u64; 7] {
    let traffic = match name {
        _ if name.starts_with("matmul") => traffic::<Matmul>(name, MatmulShape::new(64, 64, 64)),
        _ if name.starts_with("mma") => {
            traffic::<MatmulBf16>(name, MatmulShape::new(256, 256, 256))
        }
        _ if name.ends_with("f32") => traffic::<Gemv<f32>>(name, GemvShape::new(256, 64)),
        _ if name.ends_with("f64") => traffic::<Gemv<f64>>(name, GemvShape::new(256, 64)),
        // Compiled for radii up to 2 at one channel.
        "blur_in_flight" => traffic::<Blur>(name, BlurShape::new(64, 64, 1, 2)),
        _ if name.starts_with("blur") => traffic::<Blur>(name, BlurShape::new(64, 64, 1, 3)),
        "transpose_loads" | "transpose_async" | "transpose_tensor" => {
            traffic::<Tensor>(name, TransposeShape::new(128, 32))
        }
        _ if name.starts_with("transpose") => {
            traffic::<Transpose>(name, TransposeShape::new(64, 64))
        }
        "copy_strided" => traffic::<Access>(name, (4096, 2, 1).into()),
        _ if name.starts_with("copy_bytes") || name.starts_with("copy_pairs") => {
            traffic::<Width>(name, WidthShape::from((4096,)))
        }
        _ if name.starts_with("coefficients") => {
            traffic::<Constant>(name, ConstantShape::from((256, 1)))
        }
        "array_in_registers" | "array_in_local_memory" => {
            traffic::<Registers>(name, (256, 5).into())
        }
        "bank_conflicts" => traffic::<Banks>(name, (1, 4, 2).into()),
        "read_working_set" => traffic::<Caches>(name, (4096, 4, 4).into()),
        _ if name.starts_with("stencil") => traffic::<ReadOnly>(name, (4096, 2).into()),
        _ if name.starts_with("rotate") => traffic::<TextureFamily>(name, TEXTURE_SHAPE),
        _ if name.starts_with("reuse") => traffic::<L2>(name, L2_SHAPE),
        _ if name.starts_with("reverse") => traffic::<Bulk>(name, BULK_SHAPE),
        "chase" => traffic::<Chase>(name, (4096, 100, 0).into()),
        "sum_pair" => traffic::<PairSum>(name, PairSumShape { n: 4096 }),
        _ if name.starts_with("sum") || name.starts_with("chase") => {
            traffic::<Distributed>(name, DISTRIBUTED_SHAPE)
        }
        _ if name.starts_with("histogram") => traffic::<Histogram>(name, HISTOGRAM_SHAPE),
        _ => traffic::<Intensity>(name, (4096, 8).into()),
    };
    [
        traffic.global_load.requests,
        traffic.global_load.sectors,
        traffic.global_store.requests,
        traffic.global_store.sectors,
        traffic.shared_load.wavefronts,
        traffic.shared_store.wavefronts,
        traffic.shared_load.bank_conflicts + traffic.shared_store.bank_conflicts,
    ]
}

#[test]
fn the_documented_counts_are_the_emulators() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/traffic.md"))
        .unwrap();
    let mut kernels = Vec::new();
    for line in doc.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0].trim_matches('`');
        // A cell is "n" (emulated and measured alike) or "emulated / measured".
        let documented: Vec<u64> = cells[2..]
            .iter()
            .map(|cell| cell.split(" / ").next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(documented, documented_counts(name), "{name}");
        kernels.push(name.to_string());
    }
    let every: Vec<String> = locality::families::kernels()
        .iter()
        .map(|kernel| kernel.name.to_string())
        .collect();
    assert_eq!(
        kernels, every,
        "docs/traffic.md lists every kernel, in order"
    );
}

#[test]
fn a_warps_texture_fetches_are_a_request_a_quad_reading_each_texel_once() {
    // At 0° every pixel samples its own texel's centre, and its fetch reads
    // the 2 × 2 texels right of and below it, those outside the picture
    // left out: a warp's 32 read 33 columns of two rows, the right
    // column outside for the second warp of each row, the lower row
    // outside for the last row.
    let shape = TextureShape {
        degrees: 0,
        ..TEXTURE_SHAPE
    };
    let fetched = traffic::<TextureFamily>("rotate_texture", shape).texture_load;
    // 8 quads of 4 lanes a warp, as Nsight Compute counts on the H100.
    assert_eq!(fetched.requests, 64 * 64 / 32 * 8);
    assert_eq!(fetched.texels, 63 * (33 * 2 + 32 * 2) + (33 + 32));
    let global = traffic::<TextureFamily>("rotate_global", shape);
    assert_eq!(global.texture_load.requests, 0);
}

#[test]
fn one_bulk_copy_stages_a_tile_that_takes_the_threads_32_or_128_instructions() {
    // A tile of 4096 floats, 8 warps: 16 loads a warp through registers, 4
    // 16-byte copies a warp, or one bulk copy for the block, which the
    // Tensor Memory Accelerator makes outside the load/store path.
    let [loads, copies, bulk] = ["reverse_loads", "reverse_async", "reverse_bulk"]
        .map(|name| traffic::<Bulk>(name, BULK_SHAPE));
    assert_eq!(loads.global_load.requests, 128);
    assert_eq!(copies.global_load.requests, 32);
    assert_eq!((bulk.global_load.requests, bulk.bulk_load.requests), (0, 1));
    // The same 16 KiB every way: 512 sectors.
    for staged in [loads.global_load, copies.global_load, bulk.bulk_load] {
        assert_eq!((staged.sectors, staged.bytes_used), (512, 16384));
    }
    // Only the threads' own stores pass through the shared-memory pipe.
    assert_eq!(loads.shared_store.wavefronts, 128);
    assert_eq!(bulk.shared_store.wavefronts, 0);
}

#[test]
fn one_tensor_copy_stages_a_transposes_tile_of_128_rows_without_bank_conflicts() {
    // A tile of 128 rows of 32 floats, 8 warps: four 16-byte loads or
    // copies a warp, or one tensor copy for the block, however far apart
    // its rows lie in the input (here 8 rows wider than the tile).
    let shape = TransposeShape::new(128, 64);
    let [loads, copies, tensor] = ["transpose_loads", "transpose_async", "transpose_tensor"]
        .map(|name| traffic::<Tensor>(name, shape));
    assert_eq!(loads.global_load.requests, 2 * 32);
    assert_eq!(copies.global_load.requests, 2 * 32);
    assert_eq!(
        (tensor.global_load.requests, tensor.bulk_load.requests),
        (0, 2)
    );
    for staged in [loads.global_load, copies.global_load, tensor.bulk_load] {
        assert_eq!((staged.sectors, staged.bytes_used), (2 * 512, 2 * 16384));
    }
    // The swizzled tile's column reads meet 32 banks.
    for transpose in [loads, copies, tensor] {
        assert_eq!(transpose.shared_load.wavefronts, 2 * 128);
        assert_eq!(transpose.shared_load.bank_conflicts, 0);
        assert_eq!(transpose.shared_store.bank_conflicts, 0);
    }
}

#[test]
fn constant_memory_serves_a_warp_one_address_at_a_time() {
    for (spread, addresses) in [(0, 1), (1, 32), (8, 32), (32, 8)] {
        let shape = ConstantShape { n: 64, spread };
        let constant = traffic::<Constant>("coefficients_from_constant", shape).constant_load;
        // Two warps, 256 coefficients each.
        assert_eq!(constant.requests, 2 * 256, "spread {spread}");
        assert_eq!(constant.addresses, addresses * 2 * 256, "spread {spread}");
    }
}

#[test]
fn a_neighbours_tile_is_read_through_distributed_shared_memory_without_bank_conflicts() {
    // 2 blocks of 8 warps, 16 reads a warp a pass: 256 warp-level reads,
    // each of 32 consecutive words, one wavefront.
    for (name, own, distributed) in [
        ("sum_own", 256, 0),
        ("sum_neighbour", 0, 256),
        ("chase_own", 256, 0),
        ("chase_neighbour", 0, 256),
    ] {
        let traffic = traffic::<Distributed>(name, DISTRIBUTED_SHAPE);
        assert_eq!(traffic.shared_load.wavefronts, own, "{name}");
        let loads = traffic.distributed_load;
        assert_eq!(
            (loads.requests, loads.wavefronts),
            (distributed, distributed),
            "{name}"
        );
        assert_eq!(loads.bank_conflicts, 0, "{name}");
    }
}

//! The instructions the ladders' lessons name, counted in the kernels'
//! bodies: fused multiply-adds, shuffles, vector loads and the load width
//! a pair's alignment gives, and the halves a 64-bit shuffle moves.

use crate::builds::{PTX, PTX_SM80, PTX_SM90, body, body_in, every_entry_point};

#[test]
fn fused_multiply_adds_where_the_kernels_ask_for_them() {
    for kernel in [
        "matmul_naive",
        "matmul_tiled_16",
        "matmul_tiled_32",
        "gemv_col_major_f32",
    ] {
        assert!(
            body(kernel).contains("fma.rn.f32"),
            "{kernel} has no fma.rn.f32"
        );
    }
    assert!(body("gemv_col_major_f64").contains("fma.rn.f64"));
}

#[test]
fn the_gemv_ladder_uses_the_instructions_its_lessons_name() {
    let mut checked = 0;
    for name in every_entry_point() {
        let body = body(name);
        let vector = name.contains("_vector_");
        if name.contains("_warp_") || vector {
            assert!(
                body.contains("shfl.sync.bfly.b32"),
                "{name} sums without shuffles"
            );
            checked += 1;
        }
        if vector {
            let load = if name.ends_with("f32") {
                "ld.global.nc.v4.b32"
            } else {
                "ld.global.nc.v2.b64"
            };
            assert!(body.contains(load), "{name} has no 16-byte load");
        }
    }
    assert_eq!(checked, 6, "the warp and vector kernels, in f32 and f64");
}

#[test]
fn the_separable_blurs_move_words_and_the_running_one_scans_by_shuffles() {
    for name in ["blur_separable", "blur_running", "blur_specialised"] {
        let body = body(name);
        assert!(body.contains("ld.global.b32"), "{name} has no 4-byte load");
        assert!(body.contains("st.global.b32"), "{name} has no 4-byte store");
    }
    assert_eq!(body("blur_running").matches("shfl.sync.up.b32").count(), 5);
    // Five per channel, in each of the four channel counts it is compiled for.
    assert_eq!(
        body("blur_specialised").matches("shfl.sync.up.b32").count(),
        5 * (1 + 2 + 3 + 4)
    );
    assert!(!body("blur_separable").contains("shfl.sync"));
}

#[test]
fn the_matmul_ladder_uses_the_instructions_its_lessons_name() {
    // Slices of eight unrolled: eight FMAs a thread eight times in the 1-D
    // kernel, eight 8×8 outer products in the 2-D one. The vectorised and
    // warp-tiled kernels take one step along a slice of 16 (a loop): an 8×8
    // outer product from four 16-byte shared loads. The pipelined ones step
    // in pairs, each on fragments loaded the step before: a pair in the
    // loop along the slice (8×8 outer products from 4 loads each, or, from
    // the wide kernel on, 8×16 ones from 6; the three-quarter tiles' 8×12
    // ones from 5) and the slice's last pair after
    // it. The next slice's first fragments LLVM loads at the slice's head,
    // in 16-byte loads too.
    for (name, fmas, vector_loads) in [
        ("matmul_coarse_1d", 64, 0),
        ("matmul_blocked_2d", 512, 0),
        ("matmul_vectorised", 64, 4),
        ("matmul_warptiled", 64, 4),
        ("matmul_pipelined", 4 * 64, 4 + 2 * 4 + 4),
        ("matmul_wide", 4 * 128, 6 + 2 * 6 + 6),
        ("matmul_rasterised", 4 * 128, 6 + 2 * 6 + 6),
        ("matmul_mid_tiles", 4 * 96, 5 + 2 * 5 + 5),
    ] {
        let body = body(name);
        assert_eq!(body.matches("fma.rn.f32").count(), fmas, "{name}");
        assert_eq!(
            body.matches("ld.shared.v4.b32").count(),
            vector_loads,
            "{name}"
        );
    }
}

/// The access-width lesson's claim, in the PTX: a pair of `f32` aligned to
/// 4 bytes is two 4-byte loads, aligned to 8 one 8-byte load; 16 bytes
/// a thread is one vector load.
#[test]
fn a_pairs_alignment_decides_its_load_width() {
    for ptx in [PTX, PTX_SM80, PTX_SM90] {
        let loads = |kernel: &str| -> Vec<&str> {
            body_in(ptx, kernel)
                .lines()
                .filter(|line| line.contains("ld.global") && !line.contains(".b8"))
                .map(str::trim)
                .collect()
        };
        let align_4 = loads("copy_pairs_align_4");
        assert_eq!(align_4.len(), 2, "{align_4:?}");
        assert!(
            align_4.iter().all(|load| load.starts_with("ld.global.b32")),
            "{align_4:?}"
        );
        let align_8 = loads("copy_pairs_align_8");
        assert_eq!(align_8.len(), 1, "{align_8:?}");
        assert!(align_8[0].starts_with("ld.global.b64"), "{align_8:?}");
        let wide = loads("copy_bytes_16");
        assert_eq!(wide.len(), 1, "{wide:?}");
        assert!(wide[0].starts_with("ld.global.nc.v4.b32"), "{wide:?}");
    }
}

/// A 64-bit value crosses the warp as its two 32-bit halves, one
/// `shfl.sync` each, as CUDA's `__shfl_xor_sync` of a `double` does: the
/// warp's f64 butterfly is twice the f32 one, in every build.
#[test]
fn a_64_bit_shuffle_is_two_32_bit_ones() {
    for ptx in [PTX, PTX_SM80, PTX_SM90] {
        let butterflies = |kernel| body_in(ptx, kernel).matches("shfl.sync.bfly.b32").count();
        assert_eq!(butterflies("gemv_row_major_warp_f32"), 5);
        assert_eq!(butterflies("gemv_row_major_warp_f64"), 2 * 5);
    }
}

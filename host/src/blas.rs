//! cuBLAS, what a user would run instead of the matmul and gemv kernels.
//!
//! cuBLAS is column-major and our matrices are row-major. A row-major m×n
//! matrix is the column-major n×m matrix of its transpose, so:
//! - C = A·B (row-major) is Cᵀ = Bᵀ·Aᵀ (column-major): a gemm with the
//!   operands swapped and no transposition;
//! - y = αAx + βy with A row-major is a gemv on the column-major Aᵀ,
//!   transposed back by the call; with A column-major, a plain gemv.

use std::ffi::c_int;
use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, Gemv as BlasGemv, GemvConfig, result, sys};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use gpu_host::Gpu;
use gpu_host::gpu::DeviceBuffer;
use half::bf16;

use crate::error::{During, Error, Result};

/// How a matrix is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `A[i][j]` at `i·n + j`.
    RowMajor,
    /// `A[i][j]` at `j·m + i`.
    ColMajor,
}

/// cuBLAS on the GPU's stream, so that the same events time it.
pub struct Blas {
    blas: CudaBlas,
    /// The handle's stream, which raw calls order their buffers on.
    stream: Arc<CudaStream>,
}

impl Blas {
    /// Loads cuBLAS and creates a handle on the GPU's stream, with the
    /// default math mode: FP32 computed in FP32, never rounded to TF32 for
    /// the tensor cores (that takes `CUBLAS_TF32_TENSOR_OP_MATH`), yet free
    /// to pick its fastest FP32 algorithm, which `CUBLAS_PEDANTIC_MATH` would
    /// forbid. The mode is set explicitly so that no default can change it.
    pub fn open(gpu: &Gpu) -> Result<Self> {
        // SAFETY: only tries to open the library; no cuBLAS function is
        // called. Without it, the first call would panic on a missing library.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoCublas);
        }
        let blas = CudaBlas::new(gpu.stream().clone()).during("creating a cuBLAS handle")?;
        // SAFETY: the handle is valid: `blas` owns it and outlives the call.
        unsafe { sys::cublasSetMathMode(*blas.handle(), sys::cublasMath_t::CUBLAS_DEFAULT_MATH) }
            .result()
            .during("setting cuBLAS's math mode")?;
        Ok(Self {
            blas,
            stream: gpu.stream().clone(),
        })
    }

    /// Enqueues C = A·B, all row-major f32, A m×k and B k×n, as cuBLAS
    /// SGEMM.
    ///
    /// # Safety
    /// The buffers hold exactly m×k, k×n and m×n elements.
    pub unsafe fn sgemm(
        &self,
        dims: [usize; 3],
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        let (config, first, second) = sgemm_call(dims, a, b)?;
        // SAFETY: every buffer holds exactly the elements of its matrix (by
        // this function's contract), and the configuration's sizes and
        // leading dimensions describe those matrices (see `sgemm_call`).
        unsafe { self.blas.gemm(config, first, second, c) }.during("running cuBLAS SGEMM")
    }

    /// Enqueues C = A·B, A and B row-major bf16 (m×k and k×n), C
    /// row-major f32, computed in f32 on the tensor cores: `cublasGemmEx`
    /// with `CUBLAS_COMPUTE_32F`, which the cuBLAS of this generation
    /// serves with its `wgmma` kernels on Hopper.
    ///
    /// # Safety
    /// The buffers hold exactly m×k, k×n and m×n elements.
    pub unsafe fn gemm_bf16(
        &self,
        dims: [usize; 3],
        a: &DeviceBuffer<bf16>,
        b: &DeviceBuffer<bf16>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        let (config, first, second) = sgemm_call(dims, a, b)?;
        let stream = &self.stream;
        let (first, _read_first) = first.device_ptr(stream);
        let (second, _read_second) = second.device_ptr(stream);
        let (output, _write) = c.device_ptr_mut(stream);
        let (alpha, beta) = (config.alpha, config.beta);
        // SAFETY: the handle is valid; every pointer is a live buffer that
        // holds exactly its matrix (by this function's contract), and the
        // configuration's sizes and leading dimensions describe them (see
        // `sgemm_call`); the records keep them alive until the call is
        // enqueued.
        unsafe {
            result::gemm_ex(
                *self.blas.handle(),
                config.transa,
                config.transb,
                config.m,
                config.n,
                config.k,
                (&raw const alpha).cast(),
                first as *const _,
                sys::cudaDataType_t::CUDA_R_16BF,
                config.lda,
                second as *const _,
                sys::cudaDataType_t::CUDA_R_16BF,
                config.ldb,
                (&raw const beta).cast(),
                output as *mut _,
                sys::cudaDataType_t::CUDA_R_32F,
                config.ldc,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .during("running cuBLAS's bf16 gemm")
    }

    /// Enqueues y = αAx + βy, A m×n stored as `layout`, as cuBLAS SGEMV or
    /// DGEMV.
    ///
    /// # Safety
    /// A holds m×n elements, x n and y m.
    #[allow(clippy::too_many_arguments)] // the BLAS signature, kept whole
    pub unsafe fn gemv<T>(
        &self,
        layout: Layout,
        dims: [usize; 2],
        alpha: T,
        a: &DeviceBuffer<T>,
        x: &DeviceBuffer<T>,
        beta: T,
        y: &mut DeviceBuffer<T>,
    ) -> Result<()>
    where
        CudaBlas: BlasGemv<T>,
    {
        let config = gemv_config(layout, dims, alpha, beta)?;
        // SAFETY: every buffer holds exactly the elements the shape needs
        // (by this function's contract), and the configuration describes A
        // in its layout (see `gemv_config`).
        unsafe { self.blas.gemv(config, a, x, y) }.during("running cuBLAS gemv")
    }
}

/// The column-major SGEMM that computes the row-major C = A·B: Cᵀ = Bᵀ·Aᵀ,
/// with its two operands in cuBLAS's order (B first).
fn sgemm_call<'a, M>(
    [m, n, k]: [usize; 3],
    a: &'a M,
    b: &'a M,
) -> Result<(GemmConfig<f32>, &'a M, &'a M)> {
    let (m, n, k) = (blas_int("m", m)?, blas_int("n", n)?, blas_int("k", k)?);
    let config = GemmConfig {
        transa: sys::cublasOperation_t::CUBLAS_OP_N,
        transb: sys::cublasOperation_t::CUBLAS_OP_N,
        // Cᵀ is n×m; Bᵀ is n×k with leading dimension n; Aᵀ is k×m with
        // leading dimension k.
        m: n,
        n: m,
        k,
        alpha: 1.0,
        lda: n,
        ldb: k,
        beta: 0.0,
        ldc: n,
    };
    Ok((config, b, a))
}

/// The column-major gemv that computes y = αAx + βy for A m×n in `layout`.
fn gemv_config<T>(layout: Layout, [m, n]: [usize; 2], alpha: T, beta: T) -> Result<GemvConfig<T>> {
    let (m, n) = (blas_int("m", m)?, blas_int("n", n)?);
    let (trans, rows, cols) = match layout {
        // The column-major n×m matrix Aᵀ, transposed back.
        Layout::RowMajor => (sys::cublasOperation_t::CUBLAS_OP_T, n, m),
        Layout::ColMajor => (sys::cublasOperation_t::CUBLAS_OP_N, m, n),
    };
    Ok(GemvConfig {
        trans,
        m: rows,
        n: cols,
        alpha,
        lda: rows,
        incx: 1,
        beta,
        incy: 1,
    })
}

/// A dimension as cuBLAS's `int`.
fn blas_int(what: &'static str, size: usize) -> Result<c_int> {
    c_int::try_from(size).map_err(|_| Error::TooLarge {
        what,
        size: size as u128,
        limit: c_int::MAX as u64,
    })
}

#[cfg(test)]
mod tests {
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};

    use super::*;

    /// cuBLAS's gemm as its documentation defines it, on column-major
    /// matrices: C = α·op(A)·op(B) + β·C, element (i, j) at i + j·ld; C is
    /// not read when β = 0.
    fn column_major_gemm(config: &GemmConfig<f32>, a: &[f32], b: &[f32], c: &mut [f32]) {
        assert_eq!((config.transa, config.transb), (CUBLAS_OP_N, CUBLAS_OP_N));
        let [m, n, k, lda, ldb, ldc] = [
            config.m, config.n, config.k, config.lda, config.ldb, config.ldc,
        ]
        .map(|v| v as usize);
        assert!(lda >= m && ldb >= k && ldc >= m);
        for i in 0..m {
            for j in 0..n {
                let dot: f32 = (0..k).map(|l| a[i + l * lda] * b[l + j * ldb]).sum();
                let old = if config.beta == 0.0 {
                    0.0
                } else {
                    config.beta * c[i + j * ldc]
                };
                c[i + j * ldc] = config.alpha * dot + old;
            }
        }
    }

    /// cuBLAS's gemv as documented: y = α·op(A)·x + β·y, A rows×cols
    /// column-major.
    fn column_major_gemv(config: &GemvConfig<f64>, a: &[f64], x: &[f64], y: &mut [f64]) {
        let [rows, cols, lda] = [config.m, config.n, config.lda].map(|v| v as usize);
        assert!(lda >= rows && config.incx == 1 && config.incy == 1);
        let element = |i: usize, j: usize| a[i + j * lda];
        let (outputs, inputs) = match config.trans {
            CUBLAS_OP_N => (rows, cols),
            _ => (cols, rows),
        };
        assert_eq!((x.len(), y.len()), (inputs, outputs));
        for (out, y_out) in y.iter_mut().enumerate() {
            let dot: f64 = (0..inputs)
                .map(|i| match config.trans {
                    CUBLAS_OP_N => element(out, i) * x[i],
                    _ => element(i, out) * x[i],
                })
                .sum();
            *y_out = config.alpha * dot + config.beta * *y_out;
        }
    }

    #[test]
    fn sgemm_on_swapped_operands_computes_the_row_major_product() {
        let shape = [3, 5, 2];
        let a: Vec<f32> = (0..6).map(|v| v as f32 - 2.0).collect();
        let b: Vec<f32> = (0..10).map(|v| (v * v % 7) as f32).collect();
        let mut expected = vec![0.0; 15];
        for i in 0..3 {
            for j in 0..5 {
                expected[i * 5 + j] = (0..2).map(|l| a[i * 2 + l] * b[l * 5 + j]).sum();
            }
        }
        let (config, first, second) = sgemm_call(shape, &a, &b).unwrap();
        let mut c = vec![f32::NAN; 15];
        column_major_gemm(&config, first, second, &mut c);
        assert_eq!(c, expected);
    }

    #[test]
    fn gemv_in_either_layout_computes_the_same_y() {
        let (m, n) = (3, 5);
        let a: Vec<f64> = (0..m * n).map(|v| (v * 7 % 11) as f64 - 5.0).collect();
        let x: Vec<f64> = (0..n).map(|v| v as f64 + 1.0).collect();
        let y: Vec<f64> = (0..m).map(|v| 2.0 - v as f64).collect();
        let (alpha, beta) = (1.25, 0.75);
        let expected: Vec<f64> = (0..m)
            .map(|i| alpha * (0..n).map(|j| a[i * n + j] * x[j]).sum::<f64>() + beta * y[i])
            .collect();
        let a_col_major: Vec<f64> = (0..m * n).map(|idx| a[(idx % m) * n + idx / m]).collect();
        for (layout, stored, trans) in [
            (Layout::RowMajor, &a, CUBLAS_OP_T),
            (Layout::ColMajor, &a_col_major, CUBLAS_OP_N),
        ] {
            let config = gemv_config(layout, [m, n], alpha, beta).unwrap();
            assert_eq!(config.trans, trans);
            let mut out = y.clone();
            column_major_gemv(&config, stored, &x, &mut out);
            assert_eq!(out, expected, "{layout:?}");
        }
    }

    #[test]
    fn a_dimension_beyond_int_is_too_large() {
        assert!(matches!(
            blas_int("m", 1 << 31),
            Err(Error::TooLarge { .. })
        ));
    }
}

#pragma once

/// How a GEMM's row count sets its rate (docs/model.md §8.2, "GEMM rows"). A GEMM
/// C[M,N] = A[M,K]·B[K,N] tiles its output in blocks of rows; with few rows (a serving step's
/// batch, a short prompt) the tiles are part-empty and the waves over the SMs part-full, so it
/// runs below the large-GEMM rate. Our H200 GEMM tables (validation/microbench/h200:
/// gemm.csv's bf16 calls of at least 30 µs and small_m.csv's bf16 calls of at least 256
/// rows, 145 in all; tools/kernel_bench.py) fit
///
///     rate / large-GEMM rate = 1 / (1 + 160.9/K + 11.26/N + 24.97/M)
///
/// (least squares of the inverse, linear in 1/K, 1/N, 1/M; large-GEMM rate 681.5 TFLOP/s,
/// the median of the calls of at least 10^11 FLOP; docs/validation.md §GEMM shape;
/// tests/model/test_gemm_rows.cpp refits it from the tables). Only the rows' term is applied,
/// and only to serving: the K and N terms, and the rows' term at a training step's thousands
/// of rows (under 1.2 % at 2,048), describe the wide GEMMs the fitted rates already measure
/// (data/gpus.json efficiency and serving_efficiency), and applied to training they only
/// re-levelled every record (docs/validation.md §GEMM shape).

namespace planner {

/// Rows at which a GEMM runs at half the large-GEMM rate: the fit's 1/M coefficient.
inline constexpr double gemm_half_rate_rows = 24.97;

/// The share of the large-GEMM rate at which a GEMM of `rows` rows runs: rows / (rows + 24.97).
/// 0.84 at 128 rows, 0.91 at 256, 0.99 at 2,048.
[[nodiscard]] inline double gemm_row_share(double rows) noexcept {
  return rows > 0 ? rows / (rows + gemm_half_rate_rows) : 1.0;
}

}  // namespace planner

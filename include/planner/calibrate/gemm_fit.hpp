#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/calibrate/inputs.hpp"
#include "planner/calibrate/least_squares.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"

/// The GEMM-efficiency model calibrate fits (docs/calibrate.md §GEMM model). A GEMM of
/// F = 2mnk FLOP runs at
///     rate(m, n, k) = R∞ · F / (F + F½) · w(m, n)
/// - a saturation curve in the operation's size, the shape of Calculon's processor model
///   (calculon-ai/calculon `calculon/processor.py`: throughput(op_flops) = peak ·
///   efficiency(op_flops), an efficiency that depends on the operation's FLOP count): small
///   GEMMs cannot fill the GPU, large ones approach
///   R∞. F½ is the size at which half of R∞ is reached; it folds launch latency and pipeline
///   fill into one constant, since time = (F + F½)/(R∞·w) = F½/R∞ + F/R∞ for w = 1.
/// - wave quantisation w = tiles / (waves · SMs), tiles = ⌈m/128⌉·⌈n/128⌉ output tiles,
///   waves = ⌈tiles/SMs⌉ (NVIDIA, "Matrix Multiplication Background User's Guide", sections
///   "Tile Quantization" and "Wave Quantization"). The 128×128 tile is an assumption (a common
///   cuBLAS tile); without the SM count (the CSV's "# device: … (N SMs)" comment) w = 1.
/// Time is linear in the two constants, so fit_weighted() fits it with u = 1/w, v = F/w:
/// θ₁ = F½/R∞ (seconds), θ₂ = 1/R∞, on relative residuals (p = 2): the curve is about rates,
/// and GEMM times span three decades, so every size should count alike.

namespace planner::calibrate {

inline constexpr double gemm_tile = 128.0;
inline constexpr double gemm_weight_power = 2.0;

[[nodiscard]] inline double wave_efficiency(double m, double n, std::int64_t sms) noexcept {
  if (sms <= 0) return 1.0;
  const double tiles = std::ceil(m / gemm_tile) * std::ceil(n / gemm_tile);
  const double s = static_cast<double>(sms);
  return tiles / (std::ceil(tiles / s) * s);
}

struct GemmFit {
  double saturated_flops_per_second = 0;  ///< R∞
  double saturated_se = 0;
  double half_saturation_flop = 0;        ///< F½
  double half_saturation_se = 0;
  std::int64_t sms = 0;                   ///< 0: no wave quantisation
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  std::size_t points = 0;
  std::string source;
  [[nodiscard]] double flops_per_second(double m, double n, double k) const noexcept {
    const double f = 2.0 * m * n * k;
    return saturated_flops_per_second * f / (f + half_saturation_flop) *
           wave_efficiency(m, n, sms);
  }
};

/// Fits the curve to one table (rows of one dtype: the first row's). Throws InputError at the
/// table when fewer than 2 distinct sizes remain or the rate does not saturate.
[[nodiscard]] GemmFit fit_gemm(const GemmTable& t);

/// The rate of one transformer layer's GEMMs on one GPU under plan `p`: the FLOP-weighted
/// harmonic mean (total FLOP / total time) over QKV, attention output, MLP up and MLP down,
/// with m = micro_batch·seq_len/cp tokens and the weight dimension split over tp
/// (Narayanan et al. 2021 §3: column- then row-parallel). Attention's score GEMMs are left
/// out: their rate belongs to the attention kernel (FlashAttention), which this fit does not see.
[[nodiscard]] double layer_gemm_flops_per_second(const GemmFit& g, const Model& m, const Plan& p);

}  // namespace planner::calibrate

#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

/// Weighted least squares with two regressors and no free intercept, y ≈ θ₁·u + θ₂·v, with
/// weights w = 1/y^p. p = 2 minimises the *relative* residuals Σ((y − ŷ)/y)², so every size
/// counts alike; p = 0 is the unweighted fit, where the largest sizes decide everything; p = 1
/// sits between (docs/calibrate.md §Fits says which fit uses which, and why). Standard errors
/// are the usual σ²(XᵀWX)⁻¹ with σ² = Σw·(y − ŷ)²/(n − 2) (e.g. Draper & Smith, "Applied
/// Regression Analysis", 3rd ed., §9.2); with two points the fit is exact and they are zero.
/// Used by the collective fit (u = hops, v = bus bytes), and the GEMM curve (u = 1/wave
/// efficiency, v = FLOP/wave efficiency).

namespace planner::calibrate {

struct Observation {
  double u = 0;
  double v = 0;
  double y = 0;  ///< measured, > 0
};

struct TwoParameterFit {
  double theta1 = 0, theta2 = 0;
  double theta1_se = 0, theta2_se = 0;  ///< standard errors
  double rms_relative_residual = 0;     ///< sqrt(mean(((y − ŷ)/y)²))
  double max_relative_residual = 0;     ///< max |y − ŷ|/y
  std::size_t points = 0;
  bool solvable = false;                ///< false when the regressors are collinear
  [[nodiscard]] double predict(double u, double v) const noexcept {
    return theta1 * u + theta2 * v;
  }
};

/// The fit of `obs` (each y > 0). Regressors are scaled by their largest magnitude before the
/// normal equations are solved, so sizes of 1e10 bytes lose no precision in the determinant.
[[nodiscard]] inline TwoParameterFit fit_weighted(const std::vector<Observation>& obs,
                                                  double power) noexcept {
  TwoParameterFit f;
  f.points = obs.size();
  double su = 0, sv = 0;
  for (const Observation& o : obs) {
    su = std::max(su, std::abs(o.u));
    sv = std::max(sv, std::abs(o.v));
  }
  if (obs.size() < 2 || su <= 0 || sv <= 0) return f;
  double uu = 0, uv = 0, vv = 0, uy = 0, vy = 0;
  for (const Observation& o : obs) {
    const double w = std::pow(o.y, -power);
    const double u = o.u / su, v = o.v / sv;
    uu += w * u * u;
    uv += w * u * v;
    vv += w * v * v;
    uy += w * u * o.y;
    vy += w * v * o.y;
  }
  const double det = uu * vv - uv * uv;
  if (!(det > 1e-12 * uu * vv)) return f;
  const double t1 = (vv * uy - uv * vy) / det;
  const double t2 = (uu * vy - uv * uy) / det;
  double ss = 0, wss = 0, worst = 0;
  for (const Observation& o : obs) {
    const double e = o.y - (t1 * o.u / su + t2 * o.v / sv);
    ss += (e / o.y) * (e / o.y);
    wss += std::pow(o.y, -power) * e * e;
    worst = std::max(worst, std::abs(e / o.y));
  }
  const double n = static_cast<double>(obs.size());
  const double sigma2 = obs.size() > 2 ? wss / (n - 2.0) : 0.0;
  f.theta1 = t1 / su;
  f.theta2 = t2 / sv;
  f.theta1_se = std::sqrt(sigma2 * vv / det) / su;
  f.theta2_se = std::sqrt(sigma2 * uu / det) / sv;
  f.rms_relative_residual = std::sqrt(ss / n);
  f.max_relative_residual = worst;
  f.solvable = true;
  return f;
}

}  // namespace planner::calibrate

#pragma once
#include <cmath>
#include <cstdint>
#include <numbers>

#include "planner/inputs/stragglers.hpp"

/// Stragglers: a synchronous step ends when its slowest rank arrives, so with per-rank
/// step-time jitter the expected step is the expected *maximum* of the ranks' times, not their
/// mean. Derivations and sources: docs/resilience.md §1.

namespace planner {

/// H_n = 1 + 1/2 + … + 1/n: summed exactly up to 10^5 terms, above that the asymptotic series
/// ln n + γ + 1/(2n) − 1/(12n²) + 1/(120n⁴) (error below 1/(252n⁶), Knuth TAOCP vol. 1 §1.2.7
/// eq. (3)), which is exact in double precision there.
[[nodiscard]] inline double harmonic_number(std::int64_t n) noexcept {
  if (n <= 0) return 0;
  if (n <= 100000) {
    double h = 0;
    for (std::int64_t k = n; k >= 1; --k) h += 1.0 / static_cast<double>(k);  // small terms first
    return h;
  }
  const double x = static_cast<double>(n);
  return std::log(x) + std::numbers::egamma + 1.0 / (2.0 * x) - 1.0 / (12.0 * x * x) +
         1.0 / (120.0 * x * x * x * x);
}

/// E[max of n independent standard normal variables] by quadrature of
/// E[M] = ∫₀^∞ (1 − Φⁿ) dx − ∫_{−∞}^0 Φⁿ dx (the tail formula for a mean), composite Simpson
/// with step 1/512 on [−12, 12]; Φⁿ = exp(n·log Φ) with log Φ from erfc so the upper tail
/// keeps its precision. Exact values for checking: n = 2 gives 1/√π, n = 3 gives 3/(2√π)
/// (David & Nagaraja 2003, "Order Statistics", §3.2); tabulated for larger n by Harter 1961.
[[nodiscard]] inline double gaussian_expected_max(std::int64_t n) noexcept {
  if (n <= 1) return 0;
  const double count = static_cast<double>(n);
  auto integrand = [count](double x) {
    const double tail = 0.5 * std::erfc(std::abs(x) / std::numbers::sqrt2);  // Φ(−|x|)
    const double log_cdf = x >= 0 ? std::log1p(-tail) : std::log(tail);
    const double power = std::exp(count * log_cdf);  // Φ(x)ⁿ
    return x >= 0 ? 1.0 - power : -power;
  };
  constexpr int steps_per_unit = 512;
  constexpr double limit = 12.0;
  constexpr int intervals = static_cast<int>(2 * limit) * steps_per_unit;  // even
  constexpr double h = 2.0 * limit / intervals;
  // x = 0 is a grid point, where the integrand jumps from −2⁻ⁿ to 1 − 2⁻ⁿ: integrate each
  // half separately so Simpson never straddles the jump.
  auto simpson = [&](double from, int parts, double sign_at_zero) {
    double sum = 0;
    for (int i = 0; i <= parts; ++i) {
      const double x = from + h * i;
      double f = integrand(x);
      if (x == 0) f = sign_at_zero > 0 ? 1.0 - std::exp(-count * std::numbers::ln2)
                                       : -std::exp(-count * std::numbers::ln2);
      const double weight = (i == 0 || i == parts) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
      sum += weight * f;
    }
    return sum * h / 3.0;
  };
  return simpson(-limit, intervals / 2, -1.0) + simpson(0.0, intervals / 2, 1.0);
}

/// Expected delay of the slowest of `ranks` ranks beyond the mean step, in units of σ:
/// - exponential jitter (mean σ above the floor): the maximum of n exponentials with mean σ has
///   mean σ·H_n (Rényi's representation; David & Nagaraja 2003 §2.5), so the delay beyond one
///   rank's mean is σ·(H_n − 1) ≈ σ·(ln n + γ − 1), growing like log n;
/// - Gaussian jitter: σ·E[max of n standard normals], ≈ σ·√(2 ln n) for large n.
/// One rank (n = 1) waits for nobody: 0.
[[nodiscard]] inline double straggler_factor(JitterDistribution d, std::int64_t ranks) noexcept {
  if (ranks <= 1) return 0;
  return d == JitterDistribution::exponential ? harmonic_number(ranks) - 1.0
                                              : gaussian_expected_max(ranks);
}

/// Expected straggler delay of one synchronous step over `ranks` ranks, in seconds.
[[nodiscard]] inline double straggler_seconds(const Stragglers& s, std::int64_t ranks) noexcept {
  return s.jitter_seconds * straggler_factor(s.distribution, ranks);
}

}  // namespace planner

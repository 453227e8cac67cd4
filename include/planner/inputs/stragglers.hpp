#pragma once
#include <string_view>

/// The scenario's "stragglers" input: per-rank step-time jitter (docs/resilience.md §1; the
/// delay it causes is model/straggler_delay.hpp).

namespace planner {

/// The shape of one rank's step-time jitter around its mean.
enum class JitterDistribution { exponential, gaussian };

[[nodiscard]] constexpr std::string_view to_string(JitterDistribution d) noexcept {
  return d == JitterDistribution::exponential ? "exponential" : "gaussian";
}

/// Scenario key "stragglers": the standard deviation of one rank's step time and its shape.
/// Absent from a scenario, nothing in the step model changes.
struct Stragglers {
  JitterDistribution distribution = JitterDistribution::exponential;
  double jitter_seconds = 0;  ///< standard deviation σ of a rank's step time
};

}  // namespace planner

#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "planner/inputs/plan.hpp"

/// Delivered speedup as data-parallel workers are added (`planner scaling`): the all-reduce
/// scaling lab's closed form, and the rows of a scenario's scaling table (computed by
/// explain/scaling_table.hpp). Formulas: docs/resilience.md §1–§2.

namespace planner {

/// The all-reduce scaling lab of the course chapter on parallelism: 120 ms of local compute,
/// ring communication and a logarithmic straggler penalty. Its printed table (1, 2, 4, 8, 16
/// workers → 120.3, 125.7, 131.4, 137.8, 145.6 ms; 1.0, 1.9, 3.7, 7.0, 13.2×) is reproduced
/// exactly, at its printed precision, by the fit t(W) = 120 ms + 0.35 ms·W + 5 ms·log2 W and
/// speedup W·120 ms / t(W). The fit is ours (the lab's code is not published); the linear term
/// stands for the ring's 2(W−1) latency steps, the log term for the slowest of W ranks.
struct LabModel {
  double compute_seconds = 0.120;
  double ring_seconds_per_worker = 0.35e-3;
  double straggler_seconds_per_doubling = 5e-3;
};

/// t(W) of the lab fit, in seconds.
[[nodiscard]] inline double lab_step_seconds(const LabModel& m, std::int64_t workers) noexcept {
  const double w = static_cast<double>(workers);
  return m.compute_seconds + m.ring_seconds_per_worker * w +
         m.straggler_seconds_per_doubling * std::log2(w);
}

/// Weak-scaling speedup of the lab: W workers each do one worker's step, W·compute / t(W).
[[nodiscard]] inline double lab_speedup(const LabModel& m, std::int64_t workers) noexcept {
  return static_cast<double>(workers) * m.compute_seconds / lab_step_seconds(m, workers);
}

/// Weak scaling keeps each replica's batch, so the global batch grows with dp; strong scaling
/// keeps the global batch, so each replica's share shrinks.
enum class ScalingMode { weak, strong };

[[nodiscard]] constexpr std::string_view to_string(ScalingMode m) noexcept {
  return m == ScalingMode::weak ? "weak" : "strong";
}

/// One data-parallel size of a scaling table. Times are per optimizer step on one GPU.
struct ScalingRow {
  Plan plan;                     ///< the base plan at this dp (and grad_accum, for strong)
  std::int64_t gpus = 0;         ///< dp·tp·pp·cp
  double global_sequences = 0;   ///< sequences per optimizer step
  double compute_seconds = 0;    ///< grad_accum × the micro-batch's compute
  double communication_seconds = 0;  ///< the rest of the modelled step: exposed collectives, bubble
  double straggler_seconds = 0;  ///< expected wait for the slowest of `gpus` ranks
  double step_seconds = 0;       ///< compute + communication + straggler
  double sequences_per_second = 0;
  double speedup = 0;     ///< throughput over the first row's
  double efficiency = 0;  ///< speedup / (dp / first dp)
  double marginal = 0;    ///< throughput added per added replica, over a replica's at the first row
  bool fits = true;       ///< the memory ledger fits at this dp
};

struct ScalingTable {
  ScalingMode mode = ScalingMode::weak;
  std::vector<ScalingRow> rows;
  /// The first row whose throughput does not exceed the previous row's: there the added
  /// communication and straggler delay cost more than the split saves.
  std::optional<std::size_t> stops_paying;
};

}  // namespace planner

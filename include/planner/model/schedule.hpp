#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/inputs/plan.hpp"

/// The pipeline schedule: how many micro-batch slots a step takes, how many micro-batches a
/// stage holds at once, the point-to-point messages per micro-batch, and each stage's order of
/// forward and backward passes. One schedule for now: 1F1B (PipeDream-Flush; Narayanan et al.
/// 2021, arXiv 2104.04473, §2.2.1, Figure 4 top), interleaved when plan.virtual_stages v > 1
/// (§2.2.2, Figure 4 bottom).

namespace planner {

enum class Schedule { one_f_one_b };

/// Idle micro-batch slots of a step: p − 1 for 1F1B, so the bubble fraction is (p − 1)/m
/// (Narayanan et al. 2021 §2.2.1); (p − 1)/v with v virtual stages, bubble (p − 1)/(v·m)
/// (§2.2.2: each chunk's forward and backward take 1/v of a stage's time).
[[nodiscard]] inline double bubble_slots(const Plan& p) noexcept {
  return static_cast<double>(p.pp - 1) / static_cast<double>(std::max<std::int64_t>(p.virtual_stages, 1));
}

/// The bubble as a fraction of the ideal time: bubble slots / micro-batches.
[[nodiscard]] inline double bubble_fraction(const Plan& p) noexcept {
  return bubble_slots(p) / static_cast<double>(p.grad_accum);
}

/// Micro-batch slots of a step: m + p − 1.
[[nodiscard]] inline double step_slots(const Plan& p) noexcept {
  return static_cast<double>(p.grad_accum) + bubble_slots(p);
}

/// Micro-batches whose activations the first stage holds at once under 1F1B: min(pp, m)
/// (Narayanan et al. 2021 §2.2.1; Korthikanti et al. 2022, arXiv 2205.05198, §4.2.3).
[[nodiscard]] inline std::int64_t in_flight_micro_batches(const Plan& p) noexcept {
  return std::min(p.pp, p.grad_accum);
}

/// Activation memory of the first stage, in micro-batches of its layers: the micro-batches in
/// flight, times the interleaved schedule's penalty 1 + (p − 1)/(p·v) when v > 1 (Korthikanti
/// et al. 2022 §4.2.3; Megatron-LM megatron/training/theoretical_memory_usage.py,
/// compute_activation_memory, `interleaved_schedule_memory_penalty`).
[[nodiscard]] inline double activation_micro_batches(const Plan& p) noexcept {
  const double in_flight = static_cast<double>(in_flight_micro_batches(p));
  if (p.virtual_stages <= 1 || p.pp <= 1) return in_flight;
  const double pp = static_cast<double>(p.pp);
  return in_flight * (1.0 + (pp - 1.0) / (pp * static_cast<double>(p.virtual_stages)));
}

/// Point-to-point messages per micro-batch across one stage boundary: the activation forward
/// and its gradient backward, once per model chunk (v× with v virtual stages, §2.2.2).
[[nodiscard]] inline double p2p_messages_per_micro_batch(const Plan& p) noexcept {
  return 2.0 * static_cast<double>(std::max<std::int64_t>(p.virtual_stages, 1));
}

/// One pass of one micro-batch on a stage.
struct StageOp {
  bool forward = true;
  std::int64_t micro_batch = 0;  ///< 0-based
};

/// The order in which stage `stage` (0-based) runs its passes under 1F1B: p − stage − 1
/// warm-up forwards (at most m), then one forward and one backward in turn, then the
/// remaining backwards (Narayanan et al. 2021 §2.2.1).
[[nodiscard]] inline std::vector<StageOp> stage_timeline(const Plan& p, std::int64_t stage) {
  const std::int64_t m = p.grad_accum;
  const std::int64_t warmup = std::min(std::max<std::int64_t>(p.pp - stage - 1, 0), m);
  std::vector<StageOp> ops;
  ops.reserve(static_cast<std::size_t>(2 * m));
  std::int64_t next_forward = 0;
  std::int64_t next_backward = 0;
  for (; next_forward < warmup; ++next_forward) ops.push_back({true, next_forward});
  while (next_forward < m) {
    ops.push_back({true, next_forward++});
    ops.push_back({false, next_backward++});
  }
  while (next_backward < m) ops.push_back({false, next_backward++});
  return ops;
}

}  // namespace planner

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
  std::int64_t chunk = 0;        ///< the model chunk (0-based; 0 without interleaving)
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

/// The order of stage `stage`'s passes under the interleaved schedule with v = virtual_stages
/// model chunks per stage, as Megatron-LM runs it (megatron/core/pipeline_parallel/
/// schedules.py, forward_backward_pipelining_with_interleaving, get_schedule_table and
/// get_pp_rank_microbatches): forwards take micro-batches in groups of p, chunk 0 of the group,
/// then chunk 1, …; backwards the same table with the chunks reversed; 2·(p − stage − 1) +
/// (v − 1)·p warm-up forwards (at most all m·v), then one forward and one backward in turn,
/// then the remaining backwards (Narayanan et al. 2021 §2.2.2, Figure 4 bottom).
[[nodiscard]] inline std::vector<StageOp> interleaved_stage_timeline(const Plan& p,
                                                                     std::int64_t stage) {
  const std::int64_t m = p.grad_accum;
  const std::int64_t v = std::max<std::int64_t>(p.virtual_stages, 1);
  const std::int64_t group = std::max<std::int64_t>(p.pp, 1);
  std::vector<StageOp> table;  // forward order: (micro-batch, chunk)
  for (std::int64_t first = 0; first < m; first += group) {
    for (std::int64_t c = 0; c < v; ++c) {
      for (std::int64_t mb = first; mb < std::min(first + group, m); ++mb) table.push_back({true, mb, c});
    }
  }
  const auto total = static_cast<std::int64_t>(table.size());
  const std::int64_t warmup =
      std::min(2 * std::max<std::int64_t>(p.pp - stage - 1, 0) + (v - 1) * group, total);
  const auto forward = [&](std::int64_t k) { return table[static_cast<std::size_t>(k)]; };
  const auto backward = [&](std::int64_t k) {
    const StageOp f = table[static_cast<std::size_t>(k)];
    return StageOp{false, f.micro_batch, v - 1 - f.chunk};
  };
  std::vector<StageOp> ops;
  ops.reserve(static_cast<std::size_t>(2 * total));
  for (std::int64_t k = 0; k < warmup; ++k) ops.push_back(forward(k));
  for (std::int64_t k = 0; k < total - warmup; ++k) {
    ops.push_back(forward(warmup + k));
    ops.push_back(backward(k));
  }
  for (std::int64_t k = total - warmup; k < total; ++k) ops.push_back(backward(k));
  return ops;
}

/// One pass placed in time: stage `stage` runs `op` from `start` to `end`, in units of one
/// micro-batch slot (the forward and backward passes of one micro-batch through one stage's
/// layers, all its chunks).
struct TimedPass {
  std::int64_t stage = 0;
  StageOp op;
  double start = 0;
  double end = 0;
};

/// Every stage's passes in time: each stage runs its passes in the order of stage_timeline
/// (interleaved_stage_timeline when virtual_stages > 1), a forward as soon as the previous
/// virtual stage has sent its activations and a backward as soon as the next one has sent its
/// gradient (Narayanan et al. 2021 §2.2, Figure 4). Virtual stage c·p + s is chunk c of stage
/// s. A forward takes `forward_share` of a slot and a backward the rest (the backward costs
/// twice the forward's FLOPs plus any recompute: compute.hpp, MicroBatchFlops), each divided
/// by the v chunks. With equal stages the last pass ends after m + (p − 1)/v slots
/// (step_slots).
[[nodiscard]] inline std::vector<TimedPass> timed_schedule(const Plan& p, double forward_share) {
  const std::int64_t stages = std::max<std::int64_t>(p.pp, 1);
  const std::int64_t v = std::max<std::int64_t>(p.virtual_stages, 1);
  const std::int64_t m = p.grad_accum;
  const auto at = [m, stages](std::int64_t stage, std::int64_t chunk, std::int64_t mb) {
    return static_cast<std::size_t>((chunk * stages + stage) * m + mb);
  };
  // End times of each virtual stage's forward and backward of each micro-batch; < 0: not run.
  std::vector<double> forward_end(static_cast<std::size_t>(v * stages * m), -1.0);
  std::vector<double> backward_end(forward_end.size(), -1.0);
  std::vector<std::vector<StageOp>> order;
  for (std::int64_t s = 0; s < stages; ++s) {
    order.push_back(v > 1 ? interleaved_stage_timeline(p, s) : stage_timeline(p, s));
  }
  // The end of the pass a pass waits for; 0 when it waits for none, < 0 when not yet run.
  const auto ready_at = [&](std::int64_t s, const StageOp& op) {
    if (op.forward) {
      if (s > 0) return forward_end[at(s - 1, op.chunk, op.micro_batch)];
      return op.chunk > 0 ? forward_end[at(stages - 1, op.chunk - 1, op.micro_batch)] : 0.0;
    }
    if (s + 1 < stages) return backward_end[at(s + 1, op.chunk, op.micro_batch)];
    if (op.chunk + 1 < v) return backward_end[at(0, op.chunk + 1, op.micro_batch)];
    return forward_end[at(s, op.chunk, op.micro_batch)];
  };
  std::vector<std::size_t> next(static_cast<std::size_t>(stages), 0);
  std::vector<double> free_at(static_cast<std::size_t>(stages), 0.0);
  std::vector<TimedPass> out;
  out.reserve(forward_end.size() * 2);
  const double chunk_share = 1.0 / static_cast<double>(v);
  // Each round runs every stage's next pass whose input is ready; a round that runs none ends
  // the loop (a schedule that waited for itself would stop short: tests count the passes).
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (std::int64_t s = 0; s < stages; ++s) {
      const auto si = static_cast<std::size_t>(s);
      if (next[si] >= order[si].size()) continue;
      const StageOp op = order[si][next[si]];
      const double ready = ready_at(s, op);
      if (ready < 0) continue;
      const double start = std::max(ready, free_at[si]);
      const double end = start + chunk_share * (op.forward ? forward_share : 1.0 - forward_share);
      (op.forward ? forward_end : backward_end)[at(s, op.chunk, op.micro_batch)] = end;
      free_at[si] = end;
      out.push_back({s, op, start, end});
      ++next[si];
      progressed = true;
    }
  }
  return out;
}

}  // namespace planner

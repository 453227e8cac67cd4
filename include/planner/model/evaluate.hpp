#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "planner/inputs/constraints.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/memory.hpp"
#include "planner/inputs/scenario.hpp"
#include "planner/model/step_time.hpp"
#include "planner/model/straggler_delay.hpp"

/// One pinned plan evaluated: its memory ledger and its time (docs/model.md).

namespace planner {

/// What the evaluator needs of a scenario, prepared once: the inputs and the FLOP rate.
struct Context {
  Model model;
  Cluster cluster;
  Workload workload;
  double flops_per_second = 0;  ///< effective rate the time model uses
  bool calibrated = false;      ///< true when derived from a measured step time
  std::optional<Stragglers> stragglers;  ///< per-rank jitter: adds the slowest-rank wait
  Constraints constraints;      ///< what the user's stack can run (inputs/constraints.hpp)
};

/// The plan a measured step time belongs to: the scenario's pinned plan, else one GPU holding
/// the whole model at the workload's micro-batch with nothing recomputed.
[[nodiscard]] inline Plan reference_plan(const Scenario& s) {
  if (s.plan) return *s.plan;
  Plan p;
  p.micro_batch = s.workload.training.micro_batch;
  return p;
}

/// What a measured time per micro-batch says about the FLOP rate: the reference plan's
/// compute (its FLOPs, plus the score-matrix traffic of untiled attention, which is bound by
/// memory bandwidth) took `measured_seconds`, so every candidate is timed at the efficiency
/// the user measured. The I/O layer (io/context.hpp) turns an implausible result into an
/// input error.
struct MeasuredRate {
  double measured_seconds = 0;
  double memory_traffic_seconds = 0;  ///< score matrices (untiled) and memory-bound ops
  double flops = 0;                   ///< the reference plan's FLOPs per micro-batch
  double flops_per_second = 0;        ///< flops / (measured − traffic); valid when measured > traffic
};

[[nodiscard]] inline MeasuredRate measured_rate(const Scenario& s) noexcept {
  MeasuredRate r;
  r.measured_seconds = s.workload.training.step_time_per_micro_batch_seconds;
  const Plan ref = reference_plan(s);
  const TrainingTime t = training_time(s.model, s.cluster, ref, 1.0);
  r.memory_traffic_seconds = t.scores_io_seconds + t.elementwise_seconds;
  r.flops = micro_batch_flops(s.model, ref).total();
  if (r.measured_seconds > r.memory_traffic_seconds) {
    r.flops_per_second = r.flops / (r.measured_seconds - r.memory_traffic_seconds);
  }
  return r;
}

/// Target sequences per optimizer step: global_batch_tokens / seq_len (may be fractional).
[[nodiscard]] inline double target_sequences(const Context& ctx) noexcept {
  return ctx.workload.training.global_batch_tokens / static_cast<double>(ctx.model.seq_len);
}

/// Sequences each data-parallel replica processes per step: the target spread over dp and
/// rounded up, so the global batch is the smallest multiple of dp at or above the target
/// (the worked solution's 488 → 512 for dp = 64).
[[nodiscard]] inline std::int64_t sequences_per_replica(const Context& ctx,
                                                        std::int64_t dp) noexcept {
  return static_cast<std::int64_t>(std::ceil(target_sequences(ctx) / static_cast<double>(dp)));
}

struct Evaluation {
  Plan plan;
  MemoryLedger memory;
  TrainingTime training;  ///< set for training workloads
  ServingTime serving;    ///< set for serving workloads
  [[nodiscard]] bool fits() const noexcept { return memory.fits(); }
};

[[nodiscard]] inline MemoryLedger memory_ledger(const Context& ctx, const Plan& p) noexcept {
  return ctx.workload.kind == WorkloadKind::training
             ? training_ledger(ctx.model, ctx.cluster, ctx.workload.training, p)
             : serving_ledger(ctx.model, ctx.cluster, ctx.workload.serving, p);
}

/// The training time of `p` in `ctx`, with the expected wait for the slowest of its gpus(p)
/// ranks when the scenario gives per-rank jitter (docs/resilience.md §1): one wait per step,
/// and throughput and MFU follow the longer step. Without jitter, exactly training_time.
[[nodiscard]] inline TrainingTime training_time(const Context& ctx, const Plan& p) noexcept {
  TrainingTime t = training_time(ctx.model, ctx.cluster, p, ctx.flops_per_second);
  if (!ctx.stragglers) return t;
  const double wait = straggler_seconds(*ctx.stragglers, gpus(p));
  if (!(wait > 0)) return t;
  const double longer = t.step_seconds + wait;
  t.tokens_per_second *= t.step_seconds / longer;
  t.mfu *= t.step_seconds / longer;
  t.model_flops_per_second *= t.step_seconds / longer;
  t.straggler_seconds = wait;
  t.step_seconds = longer;
  return t;
}

/// Ledger and time of a pinned plan. The plan must have passed validate_plan.
[[nodiscard]] inline Evaluation evaluate(const Context& ctx, const Plan& p) noexcept {
  Evaluation e;
  e.plan = p;
  e.memory = memory_ledger(ctx, p);
  if (ctx.workload.kind == WorkloadKind::training) {
    e.training = training_time(ctx, p);
  } else {
    e.serving = serving_time(ctx.model, ctx.cluster, ctx.workload.serving, p, e.memory,
                             ctx.flops_per_second);
  }
  return e;
}

}  // namespace planner

#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "planner/compute.hpp"
#include "planner/error.hpp"
#include "planner/memory.hpp"
#include "planner/scenario.hpp"
#include "planner/step_time.hpp"

/// One pinned plan evaluated: its memory ledger and its time (docs/model.md).

namespace planner {

/// What the evaluator needs of a scenario, prepared once: the inputs and the FLOP rate.
struct Context {
  Model model;
  Cluster cluster;
  Workload workload;
  double flops_per_second = 0;  ///< effective rate the time model uses
  bool calibrated = false;      ///< true when derived from a measured step time
};

/// The plan a measured step time belongs to: the scenario's pinned plan, else one GPU holding
/// the whole model at the workload's micro-batch with nothing recomputed.
[[nodiscard]] inline Plan reference_plan(const Scenario& s) {
  if (s.plan) return *s.plan;
  Plan p;
  p.micro_batch = s.workload.training.micro_batch;
  return p;
}

/// The effective FLOP rate: the cluster's figure, or, when the workload gives a measured time
/// per micro-batch, the rate at which the reference plan's compute (its FLOPs, plus the
/// score-matrix traffic of untiled attention, which is bound by memory bandwidth) takes that
/// time — so every candidate is timed at the efficiency the user measured. Throws InputError
/// when the measurement is shorter than that memory traffic alone.
[[nodiscard]] inline Context make_context(const Scenario& s) {
  Context ctx{s.model, s.cluster, s.workload, s.cluster.gpu.flops_per_second, false};
  const double measured = s.workload.training.step_time_per_micro_batch_seconds;
  if (s.workload.kind == WorkloadKind::training && measured > 0) {
    const Plan ref = reference_plan(s);
    const double io = training_time(s.model, s.cluster, ref, 1.0).scores_io_seconds;
    if (measured <= io) {
      throw InputError(s.origin, "/workload/step_time_per_micro_batch",
                       fmt::format("the measured {:.4g} s is no longer than the {:.4g} s the "
                                   "reference plan's untiled attention needs just to move its "
                                   "score matrices through memory; check the value or pin a "
                                   "plan with flash_attention",
                                   measured, io));
    }
    const double flops = micro_batch_flops(s.model, ref).total();
    ctx.flops_per_second = flops / (measured - io);
    // Above the loader's limit for gpu.flops the measurement is off by orders of magnitude;
    // a time of 1e-300 s even made the rate infinite and every time zero.
    if (!(ctx.flops_per_second <= 1e21)) {
      const std::string rate = std::isfinite(ctx.flops_per_second)
                                   ? fmt::format("{:.4g}", ctx.flops_per_second)
                                   : std::string("more than 1e308");
      throw InputError(s.origin, "/workload/step_time_per_micro_batch",
                       fmt::format("the measured {:.4g} s implies {} FLOP/s for the reference "
                                   "plan's {:.4g} FLOP, above the limit of 1e21 FLOP/s; check "
                                   "the value",
                                   measured, rate, flops));
    }
    ctx.calibrated = true;
  }
  return ctx;
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

/// Ledger and time of a pinned plan. The plan must have passed validate_plan.
[[nodiscard]] inline Evaluation evaluate(const Context& ctx, const Plan& p) noexcept {
  Evaluation e;
  e.plan = p;
  e.memory = memory_ledger(ctx, p);
  if (ctx.workload.kind == WorkloadKind::training) {
    e.training = training_time(ctx.model, ctx.cluster, p, ctx.flops_per_second);
  } else {
    e.serving = serving_time(ctx.model, ctx.cluster, ctx.workload.serving, p, e.memory);
  }
  return e;
}

}  // namespace planner

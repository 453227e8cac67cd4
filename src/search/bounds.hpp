#pragma once
// The search's lower bounds on a configuration's seconds per token (docs/search.md): from its
// compute alone, before any memory or network is looked at, and on an ideal network, for
// every placement at once. Internal to src/search.
#include <algorithm>
#include <array>
#include <limits>

#include "planner/model/schedule.hpp"
#include "planner/model/step_time.hpp"
#include "planner/search/search.hpp"

namespace planner::search_detail {

/// Safety factor on lower bounds: the bounds below are exact inequalities between real
/// numbers, evaluated in a different order of floating-point operations than the time model;
/// shrinking them by one part in 10^9 (far above any rounding difference, far below the 1 %
/// time step) keeps them below the model's own rounded figures.
inline constexpr double bound_margin = 1.0 - 1e-9;

/// Pruning bound 1, from the FLOPs alone: a training step is m + (pp − 1)/v slots of at least
/// the micro-batch's compute (dense + attention + recompute FLOPs at the effective rate; the
/// score-matrix traffic, communication, bubble excess and exposed data-parallel traffic are
/// all ≥ 0; v the plan's virtual stages, schedule.hpp `bubble_slots`), so seconds per token
/// ≥ (m + (pp − 1)/v)·FLOPs/F / (dp·b·m·s).
inline double compute_bound(const Context& ctx, const Plan& p) {
  const double flops = micro_batch_flops(ctx.model, p).total();
  const double slots = static_cast<double>(p.grad_accum) + bubble_slots(p);
  const double tokens = static_cast<double>(p.dp) * static_cast<double>(p.micro_batch) *
                        static_cast<double>(p.grad_accum) * static_cast<double>(ctx.model.seq_len);
  return slots * (flops / ctx.flops_per_second) / tokens * bound_margin;
}

/// A micro-batch's compute terms (step_time.hpp add_compute_terms) and its passes' compute.
/// For one sequence (b = 1) every one is linear in the micro-batch's b·s/cp tokens (compute.hpp
/// micro_batch_flops_at, elementwise.hpp elementwise_bytes, micro_batch_time.hpp
/// add_scores_io), so `at` gives any b's by scaling. Its rounding (parts in 10^16) is far
/// inside bound_margin, and the winner search uses it for bounds alone (the plans it keeps are
/// timed by training_time).
struct ComputeTerms {
  double dense = 0, attention = 0, recompute = 0, scores_io = 0, elementwise = 0;
  double forward = 0, backward = 0;

  /// Their sum, in TrainingTime::compute_seconds' order (the same value when rounded).
  [[nodiscard]] double seconds() const noexcept {
    return dense + attention + recompute + scores_io + elementwise;
  }
  /// The terms of a micro-batch of `b` sequences.
  [[nodiscard]] ComputeTerms at(double b) const noexcept {
    return {dense * b, attention * b, recompute * b, scores_io * b, elementwise * b,
            forward * b, backward * b};
  }
  /// Sets `t`'s compute terms to these.
  void into(TrainingTime& t) const noexcept {
    t.dense_seconds = dense;
    t.attention_seconds = attention;
    t.recompute_seconds = recompute;
    t.scores_io_seconds = scores_io;
    t.elementwise_seconds = elementwise;
  }
  /// `t`'s compute terms (add_compute_terms' result) and the passes' compute.
  static ComputeTerms of(const TrainingTime& t, double forward_seconds,
                         double backward_seconds) noexcept {
    return {t.dense_seconds, t.attention_seconds, t.recompute_seconds, t.scores_io_seconds,
            t.elementwise_seconds, forward_seconds, backward_seconds};
  }
};

/// `p`'s compute terms for one sequence, with its SP setting.
inline ComputeTerms compute_terms_per_sequence(const Context& ctx, Plan p) {
  p.micro_batch = 1;
  TrainingTime t;
  double forward = 0, backward = 0;
  add_compute_terms(ctx.model, ctx.cluster, p, ctx.flops_per_second, stage_shape(ctx.model, p),
                    t, forward, backward);
  return ComputeTerms::of(t, forward, backward);
}

/// Pruning bound 1 tightened, for the winner search (search.cpp expand_row): a slot is at
/// least the micro-batch's whole compute (the GEMMs at the rates the time model uses, the
/// attention kernel's share, the score matrices' traffic and the elementwise kernels; every
/// other term of micro_batch_seconds is a traffic time ≥ 0), the smaller of the two SP
/// settings' (sequence parallelism splits elementwise bytes): one sequence's, which
/// compute_bound_per_sequence scales.
inline double compute_seconds_per_sequence(const std::array<ComputeTerms, 2>& terms,
                                           const Plan& p) {
  return p.tp > 1 ? std::min(terms[0].seconds(), terms[1].seconds()) : terms[0].seconds();
}

/// The bound of a configured plan from compute_seconds_per_sequence: (m + (pp − 1)/v) slots of
/// b sequences' compute over dp·b·m sequences of s tokens (b cancels).
inline double compute_bound_per_sequence(const Context& ctx, const Plan& p,
                                         double seconds_per_sequence) {
  const double accum = static_cast<double>(p.grad_accum);
  const double slots = accum + bubble_slots(p);
  return slots * seconds_per_sequence /
         (static_cast<double>(p.dp) * accum * static_cast<double>(ctx.model.seq_len)) *
         bound_margin;
}

/// Pruning bound 2, for every placement at once: the time model on an "ideal network" — one
/// node holding every GPU, whose single tier has the larger bandwidth and the smaller latency
/// of the two. Each collective's cost is a sum of latency·(count ≥ 0) and bytes/bandwidth·
/// (count ≥ 0), the cheapest over a set of algorithms that only grows inside a node (one-shot),
/// so it can only fall; a data-parallel collective's multi-rail form, whose cost depends on how
/// many ranks the placement puts in a node, is never below the flat one on that tier
/// (collectives.hpp group_collective); exposure
/// max(min(bucket, comm), comm − window), plus the hidden part's processor_usage share (the
/// smallest of the tiers'), and the step's sums are
/// non-decreasing in those costs; correctly rounded arithmetic is monotone. So the ideal
/// step is at most the step of any real placement.
inline Cluster ideal_network(const Cluster& c) {
  Cluster ideal = c;
  ideal.nodes = 1;
  ideal.gpus_per_node = world_size(c);
  Tier best = c.node_tier();
  for (const Tier& t : c.tiers) {
    best.bandwidth_bytes_per_second =
        std::max(best.bandwidth_bytes_per_second, t.bandwidth_bytes_per_second);
    best.latency_seconds = std::min(best.latency_seconds, t.latency_seconds);
    best.peer_memory = best.peer_memory || t.peer_memory;
    best.processor_usage = std::min(best.processor_usage, t.processor_usage);
  }
  ideal.tiers.assign(2, best);
  return ideal;
}

}  // namespace planner::search_detail

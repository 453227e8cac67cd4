#pragma once
#include <cmath>
#include <cstdint>
#include <tuple>

#include "planner/model/evaluate.hpp"
#include "planner/model/placement.hpp"

/// The one ranking rule (docs/ranking.md). Plans are compared by a key computed once per
/// plan; sorting uses exact comparisons of these keys, never a tolerance comparator.

namespace planner {

/// The time model's resolution: throughputs (or latencies) within the same 1 % step of a
/// logarithmic scale count as equal, and the simpler plan wins among them. The model's own
/// inputs (an effective FLOP rate, per-hop latencies) are not known better than that.
inline constexpr double time_resolution = 0.01;

/// Index of the 1 % logarithmic step `seconds` falls in.
[[nodiscard]] inline std::int64_t time_step(double seconds) noexcept {
  return static_cast<std::int64_t>(std::floor(std::log(seconds) / std::log1p(time_resolution)));
}

/// Time per unit of work: seconds per token (training) or per decode step (serving).
[[nodiscard]] inline double seconds_per_unit(const Context& ctx, const Evaluation& e) noexcept {
  return ctx.workload.kind == WorkloadKind::training ? 1.0 / e.training.tokens_per_second
                                                     : e.serving.per_token_seconds;
}

struct RankKey {
  std::int64_t misses_slo = 0;  ///< serving: 1 when the per-token time exceeds the SLO
  std::int64_t time = 0;        ///< step of seconds per token (training) or per decode step
  std::int64_t throughput = 0;  ///< serving: step of seconds per generated token, all replicas
  int model_axes = 0;           ///< how many model-splitting axes are used (tp, cp, pp)
  int pipeline = 0;             ///< 1 with pipeline stages
  int crossing_axes = 0;        ///< tp, cp or pp groups that leave the node
  double inter_node_bytes = 0;  ///< per token: the scarce tier's traffic
  double exact_time = 0;        ///< the unquantised time, to order plans within a step ...
  double memory_bytes = 0;      ///< ... only after simplicity and then memory headroom
  int zero = 0;
  int recompute = 0;
  // canonical tail: a total order over distinct plans
  std::int64_t dp = 0, tp = 0, pp = 0, cp = 0, ep = 0, micro_batch = 0;
  int flash = 0, sp = 0;
  int placement = 0;

  [[nodiscard]] auto tie() const noexcept {
    return std::tie(misses_slo, time, throughput, model_axes, pipeline, crossing_axes, inter_node_bytes, memory_bytes,
                    exact_time, zero, recompute, dp, tp, pp, cp, ep, micro_batch, flash, sp,
                    placement);
  }
  friend bool operator<(const RankKey& a, const RankKey& b) noexcept { return a.tie() < b.tie(); }
};

[[nodiscard]] inline int placement_code(const Placement& p) noexcept {
  int code = 0;
  for (Axis a : p) code = code * static_cast<int>(axis_count) + static_cast<int>(a);
  return code;
}

/// Training: maximise tokens per second (minimise seconds per token). Serving: meet the SLO,
/// then minimise the per-token latency; among equal latencies prefer more tokens per second.
/// Then, at equal time: fewer model-parallel axes, no pipeline, fewer axes crossing nodes
/// (Narayanan et al. 2021 §3.3: tensor parallelism inside a node, pipeline across), fewer
/// bytes per token on the inter-node tier (the shared, scarcest resource, where jitter and
/// contention the time model cannot see land), lower peak memory (the headroom a free ZeRO
/// stage or sequence parallelism buys), lower ZeRO stage, less recompute, then a canonical
/// order of the plan's fields.
[[nodiscard]] inline RankKey rank_key(const Context& ctx, const Evaluation& e) noexcept {
  RankKey k;
  const Plan& p = e.plan;
  k.exact_time = seconds_per_unit(ctx, e);
  if (ctx.workload.kind == WorkloadKind::training) {
    k.inter_node_bytes = e.training.inter_node_bytes /
                         (e.training.global_sequences * static_cast<double>(ctx.model.seq_len));
  } else {
    k.inter_node_bytes = e.serving.decode.inter_node_bytes / static_cast<double>(p.micro_batch);
    k.misses_slo = e.serving.meets_slo ? 0 : 1;
    k.throughput = time_step(1.0 / e.serving.tokens_per_second);
  }
  k.time = time_step(k.exact_time);
  for (const AxisInfo& row : axes) {
    if (!row.splits_model || degree(p, row.axis) <= 1) continue;
    ++k.model_axes;
    k.crossing_axes += inside_node(p, ctx.cluster, row.axis) ? 0 : 1;
  }
  k.pipeline = p.pp > 1;
  k.memory_bytes = e.memory.total_bytes();
  k.zero = p.zero;
  k.recompute = static_cast<int>(p.recompute);
  k.dp = p.dp;
  k.tp = p.tp;
  k.pp = p.pp;
  k.cp = p.cp;
  k.ep = p.ep;
  k.micro_batch = p.micro_batch;
  k.flash = p.flash_attention ? 0 : 1;
  k.sp = p.sequence_parallel ? 0 : 1;
  k.placement = placement_code(p.placement);
  return k;
}

}  // namespace planner

#pragma once
#include <cmath>
#include <cstdint>
#include <tuple>

#include "planner/model/evaluate.hpp"
#include "planner/model/placement.hpp"

/// The one ranking rule (docs/ranking.md). Plans are compared by a key computed once per
/// plan; sorting uses exact comparisons of these keys, never a tolerance comparator.

namespace planner {

/// The time model's resolution: the model's inputs (an effective FLOP rate, per-hop latencies)
/// are not known better than 1 % (docs/ranking.md §2). Training plans whose seconds per token
/// are within this fraction of the fastest plan's are equal (the tolerance band), and the
/// simplest of them wins.
inline constexpr double time_resolution = 0.01;

/// The slowest seconds per unit still inside the band of a fastest plan at `fastest_seconds`.
[[nodiscard]] inline double band_limit(double fastest_seconds) noexcept {
  return fastest_seconds * (1.0 + time_resolution);
}

/// Index of the 1 % logarithmic step `seconds` falls in (serving's latency classes).
[[nodiscard]] inline std::int64_t time_step(double seconds) noexcept {
  return static_cast<std::int64_t>(std::floor(std::log(seconds) / std::log1p(time_resolution)));
}

/// Time per unit of work: seconds per token (training) or per decode step (serving).
[[nodiscard]] inline double seconds_per_unit(const Context& ctx, const Evaluation& e) noexcept {
  return ctx.workload.kind == WorkloadKind::training ? 1.0 / e.training.tokens_per_second
                                                     : e.serving.per_token_seconds;
}

struct RankKey {
  /// Serving: 0 meets the SLO, 1 misses a latency target, 2 is overloaded (the rate exceeds
  /// what the deployment completes).
  std::int64_t misses_slo = 0;
  /// Training: 0 inside the tolerance band of the fastest plan, 1 outside (with_band); serving:
  /// 0. Serving's latency step is `time` below.
  int band = 0;
  /// Training: 0 inside the band, the exact seconds per token outside it, so plans outside
  /// the band rank by speed alone. Serving: the 1 % step of seconds per decode step.
  double time = 0;
  std::int64_t throughput = 0;  ///< serving: step of seconds per generated token, all replicas
  int model_axes = 0;           ///< how many model-splitting axes are used (tp, cp, pp)
  int pipeline = 0;             ///< 1 with pipeline stages
  int crossing_axes = 0;        ///< tp, cp or pp groups that leave the node
  double inter_node_bytes = 0;  ///< per token: the scarce tier's traffic
  std::int64_t virtual_stages = 1;  ///< fewer model chunks per stage (a simpler schedule)
  int tables_split = 0;         ///< 1 with the embedding and loss as stage layers
  double exact_time = 0;        ///< the unquantised time, to order plans within a step ...
  double memory_bytes = 0;      ///< ... only after simplicity and then memory headroom
  int zero = 0;
  int recompute = 0;
  // canonical tail: a total order over distinct plans
  std::int64_t dp = 0, tp = 0, pp = 0, cp = 0, ep = 0, micro_batch = 0;
  std::int64_t etp_split = 0;  ///< tp − etp: 0 for Megatron-LM's default etp = tp
  std::int64_t replicas = 1;   ///< hybrid sharding's copies of the state (1: none)
  int flash = 0, sp = 0;
  int placement = 0;

  [[nodiscard]] auto tie() const noexcept {
    return std::tie(misses_slo, band, time, throughput, model_axes, pipeline, crossing_axes,
                    inter_node_bytes, virtual_stages, tables_split, memory_bytes, exact_time,
                    zero, recompute,
                    dp, tp, pp, cp, ep, etp_split, replicas, micro_batch, flash, sp,
                    placement);
  }
  friend bool operator<(const RankKey& a, const RankKey& b) noexcept { return a.tie() < b.tie(); }
};

[[nodiscard]] inline int placement_code(const Placement& p) noexcept {
  int code = 0;
  for (Axis a : p) code = code * static_cast<int>(axis_count) + static_cast<int>(a);
  return code;
}

/// The key before the band is known (band 0): with_band places it. Training: within the band
/// of the fastest plan, all equal; outside it, by seconds per token. Serving: meet the SLO,
/// then minimise the per-token latency; among equal latencies prefer more tokens per second.
/// An overloaded deployment ranks last and, among overloaded ones, by the rate it completes
/// (its latency is unbounded, so the one that serves the most is the least wrong answer).
/// Then, at equal time: fewer model-parallel axes, no pipeline, fewer axes crossing nodes
/// (Narayanan et al. 2021 §3.3: tensor parallelism inside a node, pipeline across), fewer
/// bytes per token on the inter-node tier (the shared, scarcest resource, where jitter and
/// contention the time model cannot see land), fewer virtual pipeline stages (interleaved
/// 1F1B's v× stage messages; plain 1F1B when it is as fast), lower peak memory (the headroom a
/// free ZeRO stage or sequence parallelism buys), lower ZeRO stage, less recompute, then a
/// canonical order of the plan's fields.
[[nodiscard]] inline RankKey rank_key(const Context& ctx, const Evaluation& e) noexcept {
  RankKey k;
  const Plan& p = e.plan;
  k.exact_time = seconds_per_unit(ctx, e);
  if (ctx.workload.kind == WorkloadKind::training) {
    k.inter_node_bytes = e.training.inter_node_bytes /
                         (e.training.global_sequences * static_cast<double>(ctx.model.seq_len));
  } else {
    k.inter_node_bytes = e.serving.decode.inter_node_bytes / static_cast<double>(p.micro_batch);
    k.misses_slo = e.serving.overloaded ? 2 : e.serving.meets_slo ? 0 : 1;
    k.throughput = time_step(1.0 / e.serving.tokens_per_second);
  }
  if (ctx.workload.kind == WorkloadKind::serving && !e.serving.overloaded) {
    k.time = static_cast<double>(time_step(k.exact_time));
  }
  for (const AxisInfo& row : axes) {
    if (!row.splits_model || degree(p, row.axis) <= 1) continue;
    ++k.model_axes;
    k.crossing_axes += inside_node(p, ctx.cluster, row.axis) ? 0 : 1;
  }
  k.pipeline = p.pp > 1;
  k.memory_bytes = e.memory.total_bytes();
  k.zero = p.zero;
  k.recompute = static_cast<int>(p.recompute);
  k.virtual_stages = p.virtual_stages;
  k.tables_split = p.tables_in_pipeline_split ? 1 : 0;
  k.dp = p.dp;
  k.tp = p.tp;
  k.pp = p.pp;
  k.cp = p.cp;
  k.ep = p.ep;
  k.etp_split = p.tp - expert_tp(p);
  k.replicas = state_replicas(p);
  k.micro_batch = p.micro_batch;
  k.flash = p.flash_attention ? 0 : 1;
  k.sp = p.sequence_parallel ? 0 : 1;
  k.placement = placement_code(p.placement);
  return k;
}

/// `k` placed against a band whose slowest member takes `limit` seconds per unit (training;
/// serving keys are returned as they are): outside it, the key ranks by exact time first.
[[nodiscard]] inline RankKey with_band(RankKey k, WorkloadKind kind, double limit) noexcept {
  if (kind != WorkloadKind::training) return k;
  k.band = k.exact_time > limit ? 1 : 0;
  k.time = k.band == 1 ? k.exact_time : 0.0;
  return k;
}

}  // namespace planner

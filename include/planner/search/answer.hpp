#pragma once
#include <array>

#include "planner/model/evaluate.hpp"
#include "planner/model/placement.hpp"

/// When two plans count as the same recommendation (thresholds, sweeps, the pinned plan).

namespace planner {

/// Whether two plans are the same answer (axes, tiers, ZeRO and its shard group, recompute,
/// flash, SP), ignoring the micro-batch split, which moves with every input.
[[nodiscard]] inline bool same_answer(const Context& ctx, const Plan& a, const Plan& b) {
  const Cluster& c = ctx.cluster;
  auto tiers = [&](const Plan& p) {
    std::array<std::size_t, axis_count> out{};
    for (const AxisInfo& row : axes) out[static_cast<std::size_t>(row.axis)] = axis_tier(p, c, row.axis);
    return out;
  };
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep &&
         expert_tp(a) == expert_tp(b) &&
         a.zero == b.zero && shard_dp(a) == shard_dp(b) &&
         a.recompute == b.recompute && a.flash_attention == b.flash_attention &&
         a.sequence_parallel == b.sequence_parallel && tiers(a) == tiers(b);
}

}  // namespace planner

#pragma once
#include <array>

#include "planner/model/evaluate.hpp"
#include "planner/model/placement.hpp"

/// When two plans count as the same recommendation (thresholds, sweeps, the pinned plan).

namespace planner {

/// Whether two plans are the same answer (axes, tiers, ZeRO, recompute, flash, SP), ignoring
/// the micro-batch split, which moves with every input.
[[nodiscard]] inline bool same_answer(const Context& ctx, const Plan& a, const Plan& b) {
  const Cluster& c = ctx.cluster;
  auto tiers = [&](const Plan& p) {
    return std::array<bool, 4>{inside_node(p, c, {Axis::tp}), inside_node(p, c, {Axis::cp}),
                               inside_node(p, c, {Axis::pp}),
                               inside_node(p, c, {Axis::dp, Axis::cp})};
  };
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.zero == b.zero &&
         a.recompute == b.recompute && a.flash_attention == b.flash_attention &&
         a.sequence_parallel == b.sequence_parallel && tiers(a) == tiers(b);
}

}  // namespace planner

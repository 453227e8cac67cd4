#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/plan.hpp"

/// Which network tier a parallel group pays. Ranks are numbered with the placement's first
/// axis varying fastest (Megatron-LM's rank order is tp, cp, dp, pp). A group of axis X holds
/// the ranks r, r+stride, …, r+(d−1)·stride, stride being the product of the degrees placed
/// inside X; those ranks lie in aligned blocks of stride·d, so the group stays inside a node
/// exactly when stride·d divides gpus_per_node (docs/model.md §5).

namespace planner {

/// Product of the degrees of the axes placed inside `axis`.
[[nodiscard]] inline std::int64_t stride(const Plan& p, Axis axis) noexcept {
  std::int64_t s = 1;
  for (Axis a : p.placement) {
    if (a == axis) return s;
    s *= degree(p, a);
  }
  return s;
}

/// True when every group spanned by `axes` together lies inside one node.
[[nodiscard]] inline bool inside_node(const Plan& p, const Cluster& c,
                                      std::initializer_list<Axis> axes) noexcept {
  for (Axis a : axes) {
    const std::int64_t d = degree(p, a);
    if (d <= 1) continue;
    if (c.gpus_per_node % (stride(p, a) * d) != 0) return false;
  }
  return true;
}

/// The node's fabric for a group inside a node, else the slower inter-node network (a group
/// that crosses nodes is limited by its slowest link).
[[nodiscard]] inline const Tier& tier_of(const Cluster& c, bool inside) noexcept {
  return inside ? c.intra_node : c.inter_node;
}

/// The tier's name as the scenario file and the output spell it.
[[nodiscard]] inline std::string tier_name(bool inside) {
  return inside ? "intra_node" : "inter_node";
}

/// The tier a group over `axes` pays.
[[nodiscard]] inline const Tier& tier_for(const Plan& p, const Cluster& c,
                                          std::initializer_list<Axis> axes) noexcept {
  return tier_of(c, inside_node(p, c, axes));
}

}  // namespace planner

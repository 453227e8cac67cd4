#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/plan.hpp"

/// Which network tier a parallel group pays. Ranks are numbered with the placement's first
/// axis varying fastest (Megatron-LM's rank order is tp, cp, dp, pp). A group of axis X holds
/// the ranks r, r+stride, …, r+(d−1)·stride, stride being the product of the degrees placed
/// inside X; those ranks lie in aligned blocks of stride·d, so the group stays inside one
/// domain of D consecutive GPUs exactly when stride·d divides D (docs/model.md §5).

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

/// The dp·cp ranks in the placement's order, inner axis first: the axes ep folds into.
struct FoldedAxes {
  Axis inner = Axis::cp;
  Axis outer = Axis::dp;
};

[[nodiscard]] inline FoldedAxes folded_axes(const Plan& p) noexcept {
  for (Axis a : p.placement) {
    if (a == Axis::cp) return {Axis::cp, Axis::dp};
    if (a == Axis::dp) return {Axis::dp, Axis::cp};
  }
  return {};
}

/// One dimension of an ep group: `take` ranks, `stride` apart.
struct EpDim {
  std::int64_t stride = 1;
  std::int64_t take = 1;
};

/// An ep group: ep consecutive indices of a stage's tp·cp·dp ranks in Megatron-LM's expert
/// order "tp-ep-dp-pp" (parallel_state.py), etp fastest: so first the tp ranks etp leaves
/// (tp/etp of them, tp's stride × etp apart; none when etp = tp), then the dp·cp ranks, inner
/// axis fastest, ep taking the place of the dense cp and dp. Each dimension takes what of ep
/// remains when one of the two divides the other; when neither does the group is no regular
/// sub-grid, and every dimension counts whole (its span is then overstated, never missed).
[[nodiscard]] inline std::array<EpDim, 3> ep_group_dims(const Plan& p) noexcept {
  const FoldedAxes f = folded_axes(p);
  const std::int64_t etp = expert_tp(p);
  std::array<EpDim, 3> dims{{{stride(p, Axis::tp) * etp, p.tp / etp},
                             {stride(p, f.inner), degree(p, f.inner)},
                             {stride(p, f.outer), degree(p, f.outer)}}};
  std::int64_t rest = p.ep;
  for (EpDim& d : dims) {
    if (rest % d.take == 0) {
      rest /= d.take;
    } else if (d.take % rest == 0) {
      d.take = rest;
      rest = 1;
    } else {
      return dims;  // not a regular sub-grid: every dimension whole
    }
  }
  return dims;
}

/// An ep group lies inside one domain when each of its dimensions' spans (stride × ranks
/// taken) divides the domain: with etp = tp, the inner axis's stride × ep when ep divides the
/// inner degree, or the outer axis's stride × ep / inner degree when the inner degree divides
/// ep.
[[nodiscard]] inline bool ep_inside_domain(const Plan& p, std::int64_t domain) noexcept {
  for (const EpDim& d : ep_group_dims(p)) {
    if (d.take > 1 && domain % (d.stride * d.take) != 0) return false;
  }
  return true;
}

/// True when every group of `axis` lies inside one domain of `domain` GPUs.
[[nodiscard]] inline bool inside_domain(const Plan& p, Axis axis, std::int64_t domain) noexcept {
  const std::int64_t d = degree(p, axis);
  if (d > 1 && info(axis).folded) return ep_inside_domain(p, domain);
  return d <= 1 || domain % (stride(p, axis) * d) == 0;
}

/// Ranks of one ep group inside one domain of `domain` GPUs (all ep when it fits): of each
/// dimension, the ranks whose stride steps stay inside the domain.
[[nodiscard]] inline std::int64_t ep_ranks_per_domain(const Plan& p,
                                                      std::int64_t domain) noexcept {
  if (ep_inside_domain(p, domain)) return p.ep;
  std::int64_t held = 1;
  for (const EpDim& d : ep_group_dims(p)) {
    if (d.take > 1 && d.stride < domain) held *= std::min(d.take, domain / d.stride);
  }
  return std::min(held, p.ep);
}

/// The innermost tier whose domain holds every group spanned by `axes` together.
template <std::size_t N>
[[nodiscard]] inline std::size_t group_tier(const Plan& p, const Cluster& c,
                                            const std::array<Axis, N>& group,
                                            std::size_t group_size = N) noexcept {
  const std::size_t last = c.network_index();
  for (std::size_t k = 0; k < last; ++k) {
    const std::int64_t domain = domain_gpus(c, k);
    bool inside = true;
    for (std::size_t i = 0; i < group_size && inside; ++i) {
      inside = inside_domain(p, group[i], domain);
    }
    if (inside) return k;
  }
  return last;
}

/// The tier the communication group of `axis` pays (the axis table's `group`: dp's is dp×cp).
[[nodiscard]] inline std::size_t axis_tier(const Plan& p, const Cluster& c, Axis axis) noexcept {
  const AxisInfo& row = info(axis);
  return group_tier(p, c, row.group, row.group_size);
}

/// The degree of every axis of `p`, by Axis.
using AxisDegrees = std::array<std::int64_t, axis_count>;
[[nodiscard]] inline AxisDegrees axis_degrees(const Plan& p) noexcept {
  AxisDegrees d{};
  for (const AxisInfo& row : axes) d[static_cast<std::size_t>(row.axis)] = p.*row.degree;
  return d;
}

/// The GPUs of one domain of every tier but the last (domain_gpus), innermost first.
struct TierDomains {
  std::array<std::int64_t, 8> gpus{};
  std::size_t count = 0;  ///< tiers below the last (the loader allows 3: node and 2 domains)
};
[[nodiscard]] inline TierDomains tier_domains(const Cluster& c) noexcept {
  TierDomains t;
  t.count = std::min(c.network_index(), t.gpus.size());
  for (std::size_t k = 0; k < t.count; ++k) t.gpus[k] = domain_gpus(c, k);
  return t;
}

/// Every axis's tier (axis_tier for each row of the axis table) for degrees `d` placed in
/// `order`: the strides in one pass over the order, then the innermost tier holding each
/// group. The search's placement loop (distinct_placements) calls this for every order of the
/// axes, with the degrees and domains computed once.
[[nodiscard]] inline std::array<std::size_t, axis_count> axis_tiers(
    const AxisDegrees& d, const Placement& order, const TierDomains& domains) noexcept {
  // block[a]: stride·degree, the aligned block one group of `a` spans; 0 for degree 1, whose
  // groups are single ranks and fit anywhere.
  std::array<std::int64_t, axis_count> block{};
  std::int64_t s = 1;
  for (const Axis a : order) {
    const std::int64_t n = d[static_cast<std::size_t>(a)];
    block[static_cast<std::size_t>(a)] = n <= 1 ? 0 : s * n;
    s *= n;
  }
  std::array<std::size_t, axis_count> out{};
  for (const AxisInfo& row : axes) {
    std::size_t k = 0;
    for (; k < domains.count; ++k) {
      bool inside = true;
      for (std::size_t i = 0; i < row.group_size && inside; ++i) {
        const std::int64_t b = block[static_cast<std::size_t>(row.group[i])];
        inside = b == 0 || domains.gpus[k] % b == 0;
      }
      if (inside) break;
    }
    out[static_cast<std::size_t>(row.axis)] = k;
  }
  return out;
}

[[nodiscard]] inline std::array<std::size_t, axis_count> axis_tiers(const Plan& p,
                                                                    const Cluster& c) noexcept {
  return axis_tiers(axis_degrees(p), p.placement, tier_domains(c));
}

/// Ranks of one group spanned by `axes` that one domain of `domain` consecutive GPUs holds:
/// of each axis, the ranks whose stride steps stay inside the domain (exact for the aligned
/// layouts of degrees that divide the domain or are divided by it).
template <std::size_t N>
[[nodiscard]] inline std::int64_t group_ranks_per_domain(const Plan& p,
                                                         const std::array<Axis, N>& axes,
                                                         std::size_t count,
                                                         std::int64_t domain) noexcept {
  std::int64_t held = 1;
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t s = stride(p, axes[i]);
    if (s < domain) held *= std::min(degree(p, axes[i]), domain / s);
  }
  return held;
}

/// Hybrid sharding's two groups (Plan::dp_shard), each as up to two dimensions of `take`
/// ranks `stride` apart: a shard group is every cp rank and the innermost dp_shard of the dp
/// ranks; a replica group takes one rank of each shard group, dp ranks dp_shard apart
/// (torchtitan's mesh [..., "dp_replicate", "dp_shard", "cp", "tp"], outermost first; PyTorch
/// FSDP HYBRID_SHARD shards inside and replicates across).
struct RankDim {
  std::int64_t stride = 1;
  std::int64_t take = 1;
};
struct HybridGroup {
  std::size_t tier = 0;                ///< the innermost tier whose domain holds the group
  std::int64_t ranks_per_node = 1;     ///< of its ranks, in one node
};

/// The group's tier and ranks per node from its dimensions, as axis_tier and
/// group_ranks_per_domain count an axis's (aligned blocks of stride × take).
[[nodiscard]] inline HybridGroup placed_group(const std::array<RankDim, 2>& dims,
                                              const Cluster& c) noexcept {
  HybridGroup g;
  auto inside = [&](std::int64_t domain) {
    for (const RankDim& d : dims) {
      if (d.take > 1 && domain % (d.stride * d.take) != 0) return false;
    }
    return true;
  };
  const std::size_t last = c.network_index();
  g.tier = last;
  for (std::size_t k = 0; k < last; ++k) {
    if (inside(domain_gpus(c, k))) {
      g.tier = k;
      break;
    }
  }
  const std::int64_t node = domain_gpus(c, 0);
  for (const RankDim& d : dims) {
    if (d.take > 1 && d.stride < node) g.ranks_per_node *= std::min(d.take, node / d.stride);
  }
  return g;
}

/// The shard group of a hybrid-sharded plan (all of the dp·cp group without hybrid sharding).
[[nodiscard]] inline HybridGroup shard_group(const Plan& p, const Cluster& c) noexcept {
  return placed_group({{{stride(p, Axis::cp), p.cp}, {stride(p, Axis::dp), shard_dp(p)}}}, c);
}

/// The replica group of a hybrid-sharded plan (one rank without hybrid sharding).
[[nodiscard]] inline HybridGroup replica_group(const Plan& p, const Cluster& c) noexcept {
  return placed_group({{{stride(p, Axis::dp) * shard_dp(p), state_replicas(p)}, {1, 1}}}, c);
}

/// True when the group of `axis` stays inside a node (tier 0).
[[nodiscard]] inline bool inside_node(const Plan& p, const Cluster& c, Axis axis) noexcept {
  return axis_tier(p, c, axis) == 0;
}

/// The tier's name as the scenario file and the output spell it.
[[nodiscard]] inline const std::string& tier_name(const Cluster& c, std::size_t k) {
  return c.tiers[k].name;
}

}  // namespace planner

namespace planner {

/// The tier a what-if compares a group's tier with: the next one out for a group inside a
/// node (what leaving the node would cost), the node's for any other (what staying in would).
[[nodiscard]] inline std::size_t compared_tier(std::size_t k) noexcept { return k == 0 ? 1 : 0; }

}  // namespace planner

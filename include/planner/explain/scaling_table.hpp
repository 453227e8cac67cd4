#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/model/evaluate.hpp"
#include "planner/model/scaling.hpp"

/// A scenario's scaling table: its plan timed at each data-parallel size on whole nodes, plus
/// the straggler delay (docs/resilience.md §2).

namespace planner {

/// The cluster a plan of `gpus` GPUs runs on: whole nodes of the scenario's size, or one node
/// holding all of them when they fit in one; network domains that no longer lie between the
/// node and the world are dropped. Throws InputError (pointer "/plan/dp") when
/// `gpus` exceeds a node and is not a multiple of the node size.
[[nodiscard]] Cluster cluster_for(const Cluster& c, std::int64_t gpus, const std::string& origin);

/// The data-parallel sizes `planner scaling` reports by default: 1, 2, 4, … up to the base
/// plan's dp, and that dp itself.
[[nodiscard]] std::vector<std::int64_t> default_dp_sizes(std::int64_t base_dp);

/// The scaling table of `base` (a training plan) over `dp_sizes`, each run on cluster_for its
/// GPUs, with the straggler wait when `ctx.stragglers` is given.
[[nodiscard]] ScalingTable scaling_table(const Context& ctx, const Plan& base, ScalingMode mode,
                                         const std::vector<std::int64_t>& dp_sizes,
                                         const std::string& origin);

}  // namespace planner

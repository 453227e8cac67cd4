#pragma once
#include <optional>
#include <string>
#include <vector>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/resilience.hpp"
#include "planner/inputs/stragglers.hpp"
#include "planner/inputs/workload.hpp"

/// A whole scenario file: model, cluster, workload, an optional pinned plan and optional
/// expectations for `planner check`. Format: docs/scenario-format.md.

namespace planner {

/// One expected figure of `planner plan --format json` output: the value at `pointer`
/// must be within `relative_tolerance` of `value` (base units).
struct ExpectedFigure {
  std::string pointer;
  double value = 0;
  double relative_tolerance = 0.01;
};

/// Expectations on the recommended plan; each field is checked only when present.
struct Expect {
  std::optional<std::int64_t> dp, tp, pp, cp, micro_batch, grad_accum;
  std::optional<std::int64_t> sequences_per_replica;  ///< micro_batch · grad_accum
  std::optional<int> zero;
  std::optional<Recompute> recompute;
  std::optional<bool> flash_attention, sequence_parallel;
  std::optional<std::string> tp_tier;  ///< "intra_node" or "inter_node"
  std::vector<ExpectedFigure> figures;
  [[nodiscard]] bool empty() const noexcept {
    return !dp && !tp && !pp && !cp && !micro_batch && !grad_accum && !sequences_per_replica &&
           !zero && !recompute && !flash_attention && !sequence_parallel && !tp_tier &&
           figures.empty();
  }
};

struct Scenario {
  std::string origin;  ///< file name as given, for messages
  std::string name;    ///< optional "name" key, else empty
  Model model;
  Cluster cluster;
  Workload workload;
  std::optional<Plan> plan;  ///< the pinned configuration, if any
  Expect expect;
  std::optional<Stragglers> stragglers;  ///< per-rank step-time jitter (planner scaling)
  std::optional<Resilience> resilience;  ///< checkpoints, failures, restart budget
};

}  // namespace planner

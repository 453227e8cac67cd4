#pragma once
#include <optional>
#include <string>

#include "planner/inputs/scenario.hpp"
#include "planner/model/evaluate.hpp"

/// `planner export FILE --to runbook` (issue 31; docs/resilience.md §8): what an operator logs
/// and sets for the recommended training plan — each rank's timings with the model's
/// prediction and its validated error, the collective timeout the plan needs, the checkpoint
/// and restart figures, and the plan to fall back to when a node is lost.

namespace planner {

/// The plan for the job one node smaller (the loss of a node without spares): the search's
/// recommendation on nodes − 1, when the cluster has more than one node and a plan fits.
struct Fallback {
  std::int64_t nodes = 0;
  Context context;                 ///< the smaller cluster's, which names its plan's tiers
  std::optional<Evaluation> plan;
};

[[nodiscard]] Fallback node_loss_fallback(const Scenario& s);

/// The runbook of `e` (the scenario's recommendation), as Markdown.
[[nodiscard]] std::string runbook_markdown(const Scenario& s, const Context& ctx,
                                           const Evaluation& e, const Fallback& fallback);

}  // namespace planner

#pragma once
// Pieces shared by the plan report's writers (render.cpp: JSON and CSV; render_text.cpp:
// text). Internal to src/report.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "planner/explain/restart_budget.hpp"
#include "planner/report/report.hpp"

namespace planner::render_detail {

/// The threshold scans that gave up, as "POINTER below" / "POINTER above".
inline std::vector<std::string> not_searched_names(const PlanReport& r) {
  std::vector<std::string> out;
  for (const ScanGivenUp& g : r.thresholds_not_searched) {
    out.push_back(fmt::format("{} {}", g.parameter, to_string(g.side)));
  }
  return out;
}

/// The recommended training plan's restart budget, when the scenario has "resilience".
inline std::optional<RestartBudget> plan_restart_budget(const PlanReport& r) {
  if (!r.scenario->resilience || !r.result.found() ||
      r.context.workload.kind != WorkloadKind::training) {
    return std::nullopt;
  }
  return restart_budget(r.context, r.result.ranked.front(), *r.scenario->resilience);
}

/// The ledger's lines in GiB and bytes, then the total against the capacity.
std::string describe_memory_lines(const MemoryLedger& l);
/// The step's parts, per micro-batch and per step (training), or the serving time's.
std::string describe_time(const Context& ctx, const Evaluation& e);

}  // namespace planner::render_detail

#pragma once
// Pieces shared by the plan report's writers (render.cpp: JSON; render_csv.cpp: CSV;
// render_text.cpp: text). Internal to src/report.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "planner/explain/restart_budget.hpp"
#include "planner/report/explain_text.hpp"
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

/// The name of an earlier alternative whose best plan is the same as alternative `i`'s (pure
/// data parallel and FSDP over every GPU often find one plan), so that the writers say so
/// instead of repeating its verdict and traffic (issue 31); empty when none is.
inline std::string same_plan_as_earlier(const Context& ctx, const std::vector<Alternative>& all,
                                        std::size_t i) {
  if (!all[i].best) return {};
  const std::string plan = describe(ctx, all[i].best->plan);
  for (std::size_t j = 0; j < i; ++j) {
    if (all[j].best && describe(ctx, all[j].best->plan) == plan) {
      return alternative_name(ctx, all[j].kind);
    }
  }
  return {};
}

inline const char* bool_text(bool b) { return b ? "true" : "false"; }

/// The name of the tier the group of `a` pays.
inline const std::string& group_tier_name(const Context& ctx, const Plan& p, Axis a) {
  return tier_name(ctx.cluster, axis_tier(p, ctx.cluster, a));
}

/// The ledger's lines in GiB and bytes, then the total against the capacity.
std::string describe_memory_lines(const MemoryLedger& l);
/// The step's parts, per micro-batch and per step (training), or the serving time's.
std::string describe_time(const Context& ctx, const Evaluation& e);

}  // namespace planner::render_detail

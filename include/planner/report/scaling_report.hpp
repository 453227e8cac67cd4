#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/explain/restart_budget.hpp"
#include "planner/explain/scaling_table.hpp"
#include "planner/inputs/scenario.hpp"

/// What `planner scaling` prints: the lab table, or a scenario's scaling tables with the
/// restart budget when the scenario has resilience inputs. Text for people, JSON (versioned
/// with schema_version) for scripts; docs/output.md §planner scaling.

namespace planner {

/// The lab's table at the given worker counts.
[[nodiscard]] std::string lab_text(const LabModel& m, const std::vector<std::int64_t>& workers);
[[nodiscard]] nlohmann::json lab_json(const LabModel& m, const std::vector<std::int64_t>& workers);

struct ScalingReport {
  const Scenario* scenario = nullptr;
  Context context;
  Evaluation base;     ///< the plan being scaled, at its own dp
  bool pinned = false; ///< the scenario's plan, rather than the search's best
  std::vector<ScalingTable> tables;
  std::optional<RestartBudget> budget;  ///< when the scenario has "resilience"
};

/// Builds the report of a training scenario. `dp_sizes` empty: default_dp_sizes of the base
/// plan. Returns nullopt when no configuration fits (nothing to scale).
[[nodiscard]] std::optional<ScalingReport> make_scaling_report(
    const Scenario& s, const std::vector<ScalingMode>& modes, std::vector<std::int64_t> dp_sizes);

[[nodiscard]] std::string scaling_text(const ScalingReport& r);
[[nodiscard]] nlohmann::json scaling_json(const ScalingReport& r);

/// The restart-budget section alone (also used by `planner scaling` under the tables).
[[nodiscard]] std::string restart_budget_text(const RestartBudget& b, const Resilience& r);
[[nodiscard]] nlohmann::json restart_budget_json(const RestartBudget& b);

/// A duration in the unit a person reads best: us/ms/s below two minutes, then min, h, d.
[[nodiscard]] std::string duration_text(double seconds);

}  // namespace planner

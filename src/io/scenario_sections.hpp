#pragma once
// The sections of a scenario file (model, cluster, workload, plan, expect), each decoded and
// range-checked on its own; the loader (scenario_json.cpp) assembles them and checks what
// spans sections. The format is docs/scenario-format.md.
#include <string>

#include <nlohmann/json.hpp>

#include "planner/inputs/scenario.hpp"

namespace planner::json_input {

[[nodiscard]] Model read_model(const nlohmann::json& v, const std::string& origin);
/// `serving`: the workload serves, so a catalog GPU's rate is its serving fit where it has one
/// (io/catalog.hpp CatalogGpu::serving_efficiency).
[[nodiscard]] Cluster read_cluster(const nlohmann::json& v, const std::string& origin,
                                   bool serving = false);
[[nodiscard]] Workload read_workload(const nlohmann::json& v, const std::string& origin);
[[nodiscard]] Plan read_plan(const nlohmann::json& v, const Workload& w, const std::string& origin);
/// A plan that states tp_comm_overlap true without sequence_parallel: refused, as the plan's
/// other broken rules are.
void check_stated_overlaps(const nlohmann::json& v, const Plan& p, const std::string& origin);
[[nodiscard]] Expect read_expect(const nlohmann::json& v, const std::string& origin);

}  // namespace planner::json_input

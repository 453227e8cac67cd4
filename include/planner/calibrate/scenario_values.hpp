#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "planner/calibrate/calibrate.hpp"
#include "planner/inputs/scenario.hpp"

/// Internal to calibrate: scenario documents with fitted values written in.

namespace planner::calibrate {

/// JSON pointer → value in base units.
using Values = std::map<std::string, double>;

/// The central values of every fitted /cluster/*_node/* constant.
[[nodiscard]] Values tier_values(const Calibration& c);

/// `doc` with `values` written at their pointers and any measured
/// /workload/step_time_per_micro_batch removed (the fitted rate replaces it), then loaded.
[[nodiscard]] Scenario scenario_with(nlohmann::json doc, const std::string& origin,
                                     const Values& values);

/// Adds the /cluster/gpu/flops constant: for a target scenario, the rate the GEMM curve and
/// the runtime factor give for the target's best plan; else the runs' mean effective rate.
void add_flops_constant(Calibration& c, const Inputs& in);

[[nodiscard]] Prediction predict(const Calibration& c, const Inputs& in);

}  // namespace planner::calibrate

#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/model/evaluate.hpp"

/// The serving parts of the report: the time section, the headline, the JSON time object and
/// the "SLO MISSED" line (docs/output.md).

namespace planner {

/// The JSON time object; an MoE model adds its expert figures (docs/output.md).
[[nodiscard]] nlohmann::json serving_time_json(const Context& ctx, const ServingTime& t);
[[nodiscard]] std::string serving_time_text(const Context& ctx, const ServingTime& t);
/// TTFT at the SLO percentile, or "unbounded" for an overloaded engine.
[[nodiscard]] std::string ttft_text(const ServingTime& t);
[[nodiscard]] std::string serving_headline(const Context& ctx, const Evaluation& e);
/// Under a request rate: what one engine sustains within the targets and how many engines the
/// scenario's rate needs (JSON object, empty without a rate; and its text line).
[[nodiscard]] nlohmann::json serving_capacity_json(const Context& ctx, const Evaluation& e);
[[nodiscard]] std::string serving_capacity_text(const Context& ctx, const Evaluation& e);
/// Aggregated against disaggregated deployments: the best split meeting the targets and the
/// Pareto table of throughput per GPU against time per output token (docs/output.md).
/// Empty (text) or null (JSON) when disaggregation does not apply.
[[nodiscard]] std::string disaggregation_text(const Context& ctx,
                                              const std::vector<Evaluation>& aggregated);
[[nodiscard]] nlohmann::json disaggregation_json(const Context& ctx,
                                                 const std::vector<Evaluation>& aggregated);
/// Empty when the plan meets every target; else "SLO MISSED by …" with the largest deficit.
[[nodiscard]] std::string slo_missed_line(const Context& ctx, const Evaluation& e);

}  // namespace planner

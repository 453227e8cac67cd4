#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/report/report.hpp"

/// `planner plan --format html` and `planner sweep --format html`: one self-contained page
/// each — inline SVG and CSS, no script, nothing fetched (docs/output.md §html). Every SVG
/// element that shows a number carries it in a data attribute, in base units.

namespace planner {

[[nodiscard]] std::string report_html(const PlanReport& r);

/// The sweep's points (its JSONL lines, parsed) as curves of the headline figure against the
/// first varied input, one curve per combination of the other inputs (html_sweep.cpp).
[[nodiscard]] std::string sweep_html(const std::string& origin,
                                     const std::vector<std::string>& pointers,
                                     const std::vector<nlohmann::json>& points);

}  // namespace planner

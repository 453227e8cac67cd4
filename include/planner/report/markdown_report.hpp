#pragma once
#include <string>

#include "planner/report/report.hpp"

/// `planner plan --format md`: the report as Markdown for pull-request comments and notebooks
/// (docs/output.md §md). The same facts and sentences as the text report, in the order a
/// reader wants them: the plan, the memory and time tables, why, what would change it.

namespace planner {

[[nodiscard]] std::string report_markdown(const PlanReport& r);

/// What the text report adds after the time, as it words them: for serving, the time and
/// first-token breakdown, the capacity line and the deployments table; for training with a
/// resilience object, the restart budget. Empty when there is none. The Markdown and HTML
/// pages carry it in a preformatted block.
[[nodiscard]] std::string report_details_text(const PlanReport& r);

/// Text for a Markdown paragraph or table cell: the characters Markdown would read as markup
/// (\ ` * _ [ ] < > |) escaped with a backslash.
[[nodiscard]] std::string md_escape(std::string_view text);

}  // namespace planner

#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "planner/explain/thresholds.hpp"
#include "planner/io/context.hpp"
#include "planner/model/evaluate.hpp"

/// The pieces of the HTML pages (html_report.cpp, html_sweep.cpp): the page frame with its
/// style sheet, and one chart per function, each an inline <svg> whose elements carry the
/// numbers they draw in data attributes, in base units (docs/output.md §html).

namespace planner::html {

/// <!DOCTYPE html> … <body> with the page's title and style sheet; page_end closes it.
[[nodiscard]] std::string page_start(std::string_view title);
[[nodiscard]] std::string page_end();

/// The GPU's memory as a stack of the ledger's lines against its capacity
/// (html_charts.cpp): one <rect data-line="weights" data-bytes="…"> per non-zero line.
[[nodiscard]] std::string memory_stack_svg(const MemoryLedger& l);

/// The step (or the time per token) as one stacked bar of its parts (time_parts.hpp):
/// one <rect data-part="…" data-seconds="…"> each.
[[nodiscard]] std::string time_bar_svg(const Context& ctx, const Evaluation& e);

/// Each threshold as a bar from the input's present value to its flip point, on a log scale
/// (html_charts.cpp): <rect data-parameter data-value data-base-value>.
[[nodiscard]] std::string thresholds_svg(const std::vector<Threshold>& thresholds);

/// The pipeline schedule of a training plan: one row per stage, one <rect> per forward or
/// backward pass placed by model/schedule.hpp timed_schedule (html_schedule.cpp). Empty
/// when there are too many passes to draw.
[[nodiscard]] std::string schedule_svg(const Context& ctx, const Evaluation& e, std::string_view id);

}  // namespace planner::html

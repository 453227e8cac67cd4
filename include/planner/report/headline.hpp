#pragma once
#include <string>

#include "planner/io/context.hpp"
#include "planner/model/evaluate.hpp"

/// The one-line results every human format prints (src/report/render.cpp): shared by the
/// text report, the Markdown report and the HTML page so that they state the same facts.

namespace planner {

/// "57723 tokens/s, step 36.33 s, MFU 95.2 %, 169.4 GiB of 192.0 GiB per GPU" (training) or
/// the serving headline.
[[nodiscard]] std::string headline(const Context& ctx, const Evaluation& e);

/// The pinned plan against the recommendation: "the recommendation is 29.3 % faster", "the
/// same answer", "the recommendation fits", or "... % slower".
[[nodiscard]] std::string pinned_verdict(const Context& ctx, const Evaluation& pinned,
                                         const Evaluation& best);

/// The pinned plan's own figures: its headline, or "does not fit: ..." .
[[nodiscard]] std::string pinned_figures(const Context& ctx, const Evaluation& pinned);

}  // namespace planner

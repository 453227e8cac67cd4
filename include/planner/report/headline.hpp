#pragma once
#include <string>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/report/report.hpp"
#include "planner/search/search.hpp"

/// The one-line results every human format prints (src/report/render.cpp): shared by the
/// text report, the Markdown report and the HTML page so that they state the same facts.

namespace planner {

/// "57723 tokens/s, step 36.33 s, MFU 95.2 %, 169.4 GiB of 192.0 GiB per GPU" (training) or
/// the serving headline.
[[nodiscard]] std::string headline(const Context& ctx, const Evaluation& e);

/// The pinned plan against the recommendation: "the recommendation is 29.3 % faster", "the
/// same answer", "the recommendation fits", "tied with the recommendation within 1 %" (a
/// training plan no slower than `band_limit` seconds per token, the search's tolerance band,
/// docs/ranking.md §2), or "... % slower".
[[nodiscard]] std::string pinned_verdict(const Context& ctx, const Evaluation& pinned,
                                         const Evaluation& best, double band_limit);

/// "N plans are within 1 % of the fastest, the model's resolution; this is the simplest of
/// them" (docs/ranking.md §2); empty when the recommendation stands alone.
[[nodiscard]] std::string tied_sentence(const SearchResult& r);

/// The printed rank of the i-th ranked plan (0-based): "=1" inside the tolerance band,
/// else its position (docs/ranking.md §2).
[[nodiscard]] inline std::string rank_label(const SearchResult& r, std::size_t i) {
  return i < r.tied ? "=1" : std::to_string(i + 1);
}

/// The report's opening sentences as plain text, for the writers that mark them up (md, html):
/// each missed serving target, the recommendation and its headline, the tied sentence, and
/// the pinned plan's description, figures and verdict (empty when nothing is pinned).
struct OpeningText {
  std::vector<std::string> missed;
  std::string plan;
  std::string headline;
  std::string tied;
  std::string accuracy;  ///< the time model's measured error on such runs (report/accuracy.hpp)
  /// Ranked for trust: the faster plan outside the validated envelope, or that nothing fits
  /// inside it (docs/ranking.md §5); empty otherwise.
  std::string trust;
  std::string pinned_plan;
  std::string pinned_figures;
  std::string pinned_verdict;
};
[[nodiscard]] OpeningText opening_text(const PlanReport& r);

/// The pinned plan's own figures: its headline, or "does not fit: ..." .
[[nodiscard]] std::string pinned_figures(const Context& ctx, const Evaluation& pinned);

}  // namespace planner

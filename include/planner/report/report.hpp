#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/model/evaluate.hpp"
#include "planner/explain/explain.hpp"
#include "planner/explain/thresholds.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/inputs/scenario.hpp"
#include "planner/search/search.hpp"

/// Rendering of results for people (text) and scripts (JSON, CSV). The formats are a
/// contract: docs/output.md. Numbers in JSON are base units (bytes, seconds, bytes/s).

namespace planner {

/// Version of the JSON and CSV layouts; bumped on any incompatible change.
inline constexpr int schema_version = 2;

/// Everything `planner plan` computed for one scenario.
struct PlanReport {
  const Scenario* scenario = nullptr;
  Context context;
  SearchResult result;
  Explanation explanation;
  std::vector<Threshold> thresholds;  ///< empty unless asked for
  /// Threshold scans that ran out of their work budget; empty for every ordinary scenario
  /// (explain/thresholds.hpp, threshold_work_budget).
  std::vector<ScanGivenUp> thresholds_not_searched;
  std::optional<Evaluation> pinned;   ///< the scenario's own plan, evaluated
  /// Training ranked for trust: the fastest plan outside the validated envelope, when it is
  /// faster than the recommendation by more than the band (docs/ranking.md §4).
  std::optional<Evaluation> unvalidated;
  /// No plan fits inside the validated envelope: the recommendation is the raw ranking's.
  bool envelope_empty = false;
  /// Training whose recommendation lacks the memory headroom its validated error asks for
  /// (model/memory_accuracy.hpp has_memory_headroom): true, and the fastest plan that has it, if any.
  bool short_of_memory_headroom = false;
  std::optional<Evaluation> memory_roomy;
};

/// What an output shows of a plan report, so that make_plan_report computes nothing it leaves
/// out (src/cli/plan.cpp picks it from the format):
/// - `full`: the search's counts and closest rejections (SearchResult::evaluated, feasible,
///   rejected_by_kind, rejected) and every alternative: JSON, markdown, HTML, --full text,
///   planner check;
/// - `brief`: brief text: the counts only when nothing fits (the rejections are the answer
///   then), the alternatives it quotes (explain.hpp AlternativeScope::quoted);
/// - `ranked`: the ranked plans alone (CSV): no explanation, no fastest plan outside the
///   validated envelope, no roomier plan, no counts.
/// What a scope computes is what a larger one computes for the same parts.
enum class ReportScope { ranked, brief, full };

/// Search, explain, and (with `thresholds`, the costly part: the planner runs again for
/// every threshold input) find what would change the answer (plan_report.cpp).
[[nodiscard]] PlanReport make_plan_report(const Scenario& s, std::size_t top, bool thresholds,
                                          ReportScope scope = ReportScope::full);

[[nodiscard]] nlohmann::json plan_json(const Context& ctx, const Evaluation& e);
[[nodiscard]] nlohmann::json report_json(const PlanReport& r);
/// "FILE - NAME" (or FILE alone) as every format's heading shows it: the file and scenario
/// names are the user's text, so control characters are escaped (one_line, base/one_line.hpp):
/// an ESC, CR or newline in a name reached the terminal, and a newline injected a markdown
/// heading (issue 32).
[[nodiscard]] std::string scenario_title(const Scenario& s);

/// How much of the explanation the text prints: `brief` (planner plan's default, about 40
/// lines for a training scenario: the recommendation, the five parts, the simplest answer, one
/// line of memory) or `full` (every alternative with its traffic, the memory and time
/// breakdowns, the restart budget, the runners-up and the search's counts; `--full`).
enum class TextDetail { brief, full };

[[nodiscard]] std::string report_text(const PlanReport& r, TextDetail detail = TextDetail::full);
[[nodiscard]] std::string report_csv(const PlanReport& r);

/// `planner memory`: one pinned plan.
[[nodiscard]] nlohmann::json evaluation_report_json(const Scenario& s, const Context& ctx,
                                                    const Evaluation& e);
[[nodiscard]] std::string evaluation_report_text(const Scenario& s, const Context& ctx,
                                                 const Evaluation& e);
[[nodiscard]] std::string evaluation_report_csv(const Context& ctx, const Evaluation& e);

/// Whether plan CSV rows end with a dp_shard column: dense training whose constraints allow
/// more than one copy of the state, where the search tries hybrid sharding (docs/output.md).
[[nodiscard]] bool csv_dp_shard_column(WorkloadKind kind, bool moe, const Constraints& c);

/// CSV header and row of one plan (shared by `plan --format csv` and `sweep`).
[[nodiscard]] std::string plan_csv_header(WorkloadKind kind, bool moe = false,
                                          bool dp_shard = false);
[[nodiscard]] std::string plan_csv_row(const Context& ctx, const Evaluation& e);

/// JSON dump with a fixed layout: no NaN or infinity can appear (they would be a bug; the
/// writer turns them into an error rather than printing them).
[[nodiscard]] std::string dump_json(const nlohmann::json& j);

}  // namespace planner

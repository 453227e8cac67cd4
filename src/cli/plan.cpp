#include <fmt/format.h>

#include <memory>
#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/cli/cli.hpp"
#include "planner/report/html_report.hpp"
#include "planner/report/markdown_report.hpp"
#include "planner/report/report.hpp"

namespace planner::cli {

namespace {

struct PlanArgs {
  std::string file;
  std::string format = "text";
  std::size_t top = 5;
  bool no_thresholds = false;
  bool full = false;
  std::vector<std::string> sets;
  ConstraintArgs constraints;
};

int run_plan(const PlanArgs& a, std::ostream& out, std::ostream& err) {
  Scenario s = load_for_search(a.file, a.sets, err);
  apply_constraints(s, a.constraints);
  // The search's counts, closest rejections and every alternative appear in JSON, markdown,
  // HTML and --full text; CSV lists the ranked plans alone (report.hpp ReportScope).
  const ReportScope scope =
      a.format == "csv" ? ReportScope::ranked
      : a.format == "json" || a.format == "md" || a.format == "html" || a.full
          ? ReportScope::full
          : ReportScope::brief;
  const PlanReport r = make_plan_report(s, a.top, !a.no_thresholds && a.format != "csv", scope);
  if (a.format == "json") {
    out << dump_json(report_json(r));
  } else if (a.format == "csv") {
    out << report_csv(r);
  } else if (a.format == "md") {
    out << report_markdown(r);
  } else if (a.format == "html") {
    out << report_html(r);
  } else {
    out << report_text(r, a.full ? TextDetail::full : TextDetail::brief);
  }
  if (!r.result.found()) return exit_no;
  if (s.workload.kind == WorkloadKind::serving &&
      !r.result.ranked.front().serving.meets_slo) {
    return exit_no;
  }
  return exit_ok;
}

}  // namespace

Runner add_plan(CLI::App& sub) {
  auto a = std::make_shared<PlanArgs>();
  add_scenario_argument(sub, a->file);
  add_format(sub, a->format, {"text", "json", "csv", "md", "html"});
  sub.add_option("--top", a->top, "How many ranked plans to report")->default_val(5)
      ->check(CLI::Range(1, 1000));
  sub.add_flag("--no-thresholds", a->no_thresholds,
               "Skip the 'what would change the answer' search");
  sub.add_flag("--full", a->full,
               "Text: the full explanation (every simpler answer with its traffic, the memory "
               "and time breakdowns, the restart budget, the runners-up, the search)");
  add_sets(sub, a->sets);
  add_constraints(sub, a->constraints);
  return [a](std::ostream& out, std::ostream& err) { return run_plan(*a, out, err); };
}

}  // namespace planner::cli

#include <memory>
#include <ostream>
#include <sstream>

#include "command.hpp"
#include "planner/cli/sweep.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/html_report.hpp"

namespace planner::cli {

namespace {

/// --format html: the sweep runs as JSONL into memory, then its points are drawn on one page
/// (report/html_sweep.cpp); a page is written whole, so nothing streams.
int run_sweep_html(SweepArgs args, std::ostream& out, std::ostream& err) {
  args.format = "jsonl";
  std::ostringstream lines;
  const int code = run_sweep(args, lines, err);
  std::vector<nlohmann::json> points;
  std::istringstream in(lines.str());
  for (std::string line; std::getline(in, line);) points.push_back(nlohmann::json::parse(line));
  // run_sweep has checked every --vary: each is POINTER=...
  std::vector<std::string> pointers;
  for (const std::string& spec : args.vary) pointers.push_back(spec.substr(0, spec.find('=')));
  out << sweep_html(file_origin(args.file), pointers, points);
  return code;
}

}  // namespace

Runner add_sweep(CLI::App& sub) {
  auto a = std::make_shared<SweepArgs>();
  add_scenario_argument(sub, a->file);
  sub.add_option("--vary", a->vary,
                 "POINTER=V1,V2,... or POINTER=START..STOP:STEPS[log] (repeatable)")->required();
  add_format(sub, a->format, {"csv", "jsonl", "html"});
  add_sets(sub, a->sets);
  sub.add_option("--threads", a->threads, "Worker threads (default: all cores)");
  sub.add_option("--shard", a->shard, "Run slice K of N of the grid: K/N (1-based)");
  sub.add_flag("--no-progress", a->no_progress, "No progress bar on standard error");
  return [a](std::ostream& out, std::ostream& err) {
    return a->format == "html" ? run_sweep_html(*a, out, err) : run_sweep(*a, out, err);
  };
}

}  // namespace planner::cli

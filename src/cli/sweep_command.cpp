#include <memory>
#include <ostream>

#include "command.hpp"
#include "planner/cli/sweep.hpp"

namespace planner::cli {

Runner add_sweep(CLI::App& sub) {
  auto a = std::make_shared<SweepArgs>();
  add_scenario_argument(sub, a->file);
  sub.add_option("--vary", a->vary,
                 "POINTER=V1,V2,... or POINTER=START..STOP:STEPS[log] (repeatable)")->required();
  add_format(sub, a->format, {"csv", "jsonl"});
  add_sets(sub, a->sets);
  sub.add_option("--threads", a->threads, "Worker threads (default: all cores)");
  sub.add_option("--shard", a->shard, "Run slice K of N of the grid: K/N (1-based)");
  sub.add_flag("--no-progress", a->no_progress, "No progress bar on standard error");
  return [a](std::ostream& out, std::ostream& err) { return run_sweep(*a, out, err); };
}

}  // namespace planner::cli

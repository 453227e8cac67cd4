#include <fmt/format.h>

#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/cli/cli.hpp"
#include "planner/io/context.hpp"
#include "planner/report/export.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

/// `planner export FILE --to megatron`: the recommended plan under the framework's rules (or
/// the pinned plan, checked against them) as launch arguments.

namespace planner::cli {

namespace {

struct ExportArgs {
  std::string file;
  std::string to = "megatron";
  std::vector<std::string> sets;
  ConstraintArgs constraints;
};

int run_export(const ExportArgs& a, std::ostream& out, std::ostream& err) {
  Scenario s = load_for_search(a.file, a.sets, err);
  apply_constraints(s, a.constraints);
  s.constraints.framework = Framework::megatron;
  if (s.workload.kind != WorkloadKind::training) {
    throw InputError(s.origin, "/workload/kind", "export writes training launch arguments");
  }
  const Context ctx = make_context(s);
  if (s.plan) {
    const std::string_view why = framework_config_violation(Framework::megatron, *s.plan);
    const std::string_view order = framework_placement_violation(Framework::megatron, *s.plan);
    if (!why.empty() || !order.empty()) {
      throw InputError(s.origin, "/plan",
                       fmt::format("the pinned plan cannot be launched: {}; remove the plan to "
                                   "export the best one Megatron-LM can launch",
                                   why.empty() ? order : why));
    }
    out << megatron_arguments(ctx, *s.plan);
    return exit_ok;
  }
  SearchOptions options;
  options.keep = 1;
  options.accounting = false;
  const SearchResult r = search(ctx, options);
  if (!r.found()) {
    err << "planner: no plan Megatron-LM can launch fits\n";
    return exit_no;
  }
  out << megatron_arguments(ctx, r.ranked.front().plan);
  return exit_ok;
}

}  // namespace

Runner add_export(CLI::App& sub) {
  auto a = std::make_shared<ExportArgs>();
  add_scenario_argument(sub, a->file);
  sub.add_option("--to", a->to, "Framework to write for")
      ->check(CLI::IsMember({"megatron"}))
      ->default_val(a->to);
  add_sets(sub, a->sets);
  add_constraints(sub, a->constraints);
  return [a](std::ostream& out, std::ostream& err) { return run_export(*a, out, err); };
}

}  // namespace planner::cli

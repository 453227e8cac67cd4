#include <fmt/format.h>

#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/cli/cli.hpp"
#include "planner/io/context.hpp"
#include "planner/report/export.hpp"
#include "planner/report/runbook.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

/// `planner export FILE --to megatron|torchtitan|deepspeed`: the recommended plan under the
/// framework's rules (or the pinned plan, checked against them) as launch arguments or config.

namespace planner::cli {

namespace {

struct ExportArgs {
  std::string file;
  std::string to = "megatron";
  std::vector<std::string> sets;
  ConstraintArgs constraints;
};

const Exporter& exporter_named(std::string_view name) {
  for (const Exporter& e : exporters) {
    if (e.name == name) return e;
  }
  return exporters.front();  // unreachable: CLI11 checks the name against the table
}

/// `--to runbook`: the plan `plan` recommends (or the pinned one), for the operator.
int run_runbook(const ExportArgs& a, std::ostream& out, std::ostream& err) {
  Scenario s = load_with_overrides(a.file, a.sets, err);
  apply_constraints(s, a.constraints);
  if (s.workload.kind != WorkloadKind::training) {
    throw InputError(s.origin, "/workload/kind", "the runbook is for a training job");
  }
  const Context ctx = make_context(s);
  std::optional<Evaluation> e;
  if (s.plan) {
    e = evaluate(ctx, *s.plan);
  } else {
    SearchOptions options;
    options.keep = 1;
    options.accounting = false;
    const Recommendation rec = trusted_search(ctx, options);
    if (rec.result.found()) e = rec.result.ranked.front();
  }
  if (!e) {
    err << "planner: no plan fits, so there is nothing to run\n";
    return exit_no;
  }
  out << runbook_markdown(s, ctx, *e, node_loss_fallback(s));
  return exit_ok;
}

int run_export(const ExportArgs& a, std::ostream& out, std::ostream& err) {
  if (a.to == "runbook") return run_runbook(a, out, err);
  const Exporter& to = exporter_named(a.to);
  // A pinned plan is what export writes: a broken one is an error here (docs/errors.md §Plans),
  // not the warning plan gives before searching without it (issue 32).
  Scenario s = load_with_overrides(a.file, a.sets, err);
  apply_constraints(s, a.constraints);
  // --to names the framework; another one in --framework or the scenario's constraints is a
  // contradiction to say, not to override silently (issue 32).
  if (s.constraints.framework != Framework::any && s.constraints.framework != to.framework) {
    const bool flag = !a.constraints.framework.empty();
    throw InputError(flag ? "--framework" : s.origin, flag ? "" : "/constraints/framework",
                     fmt::format("{} contradicts --to {}; drop one (export writes for the "
                                 "framework --to names)",
                                 framework_names[static_cast<std::size_t>(s.constraints.framework)],
                                 a.to));
  }
  s.constraints.framework = to.framework;
  if (!a.constraints.fix.empty()) check_framework_fix(s, "--to");
  if (s.workload.kind != WorkloadKind::training) {
    throw InputError(s.origin, "/workload/kind", "export writes training launch arguments");
  }
  const Context ctx = make_context(s);
  if (s.plan) {
    const std::string_view why = framework_config_violation(to.framework, *s.plan);
    const std::string_view order = framework_placement_violation(to.framework, *s.plan);
    if (!why.empty() || !order.empty()) {
      throw InputError(s.origin, "/plan",
                       fmt::format("the pinned plan cannot be launched: {}; remove the plan to "
                                   "export the best one {} can launch",
                                   why.empty() ? order : why, to.label));
    }
    out << to.write(ctx, *s.plan);
    return exit_ok;
  }
  SearchOptions options;
  options.keep = 1;
  options.accounting = false;
  const Recommendation rec = trusted_search(ctx, options);
  const SearchResult& r = rec.result;
  if (!r.found()) {
    err << fmt::format("planner: no plan {} can launch fits\n", to.label);
    return exit_no;
  }
  if (rec.outside) {
    err << "planner: warning: no plan fits inside the regimes published runs validate; this is "
           "the fastest outside them (docs/ranking.md §5)\n";
  }
  out << to.write(ctx, r.ranked.front().plan);
  return exit_ok;
}

std::vector<std::string> export_names() {
  std::vector<std::string> names;
  for (const Exporter& e : exporters) names.emplace_back(e.name);
  names.emplace_back("runbook");
  return names;
}

}  // namespace

Runner add_export(CLI::App& sub) {
  auto a = std::make_shared<ExportArgs>();
  add_scenario_argument(sub, a->file);
  sub.add_option("--to", a->to,
                 "Framework to write for: megatron, torchtitan or deepspeed; or runbook (what "
                 "to log and set when the plan runs)")
      ->check(CLI::IsMember(export_names()))
      ->default_val(a->to);
  add_sets(sub, a->sets);
  add_constraints(sub, a->constraints);
  return [a](std::ostream& out, std::ostream& err) { return run_export(*a, out, err); };
}

}  // namespace planner::cli

#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "planner/inputs/scenario.hpp"

/// The command table's row type and what the commands share (after ninja's `kTools[]` in
/// src/ninja.cc: a name, a one-line summary, and the function that sets the command up).
/// Private to the CLI target: CLI11 stays out of the core's headers.

namespace planner::cli {

/// Runs a parsed command; returns its exit code (include/planner/cli/cli.hpp).
using Runner = std::function<int(std::ostream& out, std::ostream& err)>;

/// One subcommand. `add` declares its options and arguments on `sub` and returns the runner,
/// which owns the parsed values.
struct Command {
  std::string_view name;
  std::string_view summary;
  Runner (*add)(CLI::App& sub);
};

/// Every command, in the order `planner --help` lists them (src/cli/cli.cpp).
[[nodiscard]] const std::vector<Command>& commands();

Runner add_plan(CLI::App& sub);
Runner add_memory(CLI::App& sub);
Runner add_collective(CLI::App& sub);
Runner add_check(CLI::App& sub);
Runner add_sweep(CLI::App& sub);
Runner add_scaling(CLI::App& sub);
Runner add_validate(CLI::App& sub);
Runner add_calibrate(CLI::App& sub);
Runner add_list(CLI::App& sub);
Runner add_import(CLI::App& sub);
Runner add_export(CLI::App& sub);

// --- shared by the commands (src/cli/common.cpp) -------------------------------------------

/// Loads a scenario file ("-" = standard input) with the --set overrides applied first;
/// plausibility warnings (io/plausibility.hpp) go to `err`.
[[nodiscard]] Scenario load_with_overrides(const std::string& path,
                                           const std::vector<std::string>& sets,
                                           std::ostream& err);

/// Prints the plausibility warnings of a loaded scenario, one line each.
void warn_implausible(const Scenario& s, std::ostream& err);

/// The same for the commands that search: a pinned plan that no longer fits is dropped with a
/// warning on standard error.
[[nodiscard]] Scenario load_for_search(const std::string& path,
                                       const std::vector<std::string>& sets, std::ostream& err);

void add_format(CLI::App& app, std::string& format, std::vector<std::string> allowed);

/// `--fix` and `--framework` (src/cli/constraint_flags.cpp): laid over the scenario's
/// "constraints" by apply_constraints.
struct ConstraintArgs {
  std::string fix, framework, rank;
};
void add_constraints(CLI::App& app, ConstraintArgs& c);
void apply_constraints(Scenario& s, const ConstraintArgs& c);
/// Refuses --fix items that rule out every plan together or under s.constraints.framework,
/// named as coming from `framework_source` ("--framework", "--to"); apply_constraints runs it.
void check_framework_fix(const Scenario& s, std::string_view framework_source);
void add_sets(CLI::App& app, std::vector<std::string>& sets);
void add_scenario_argument(CLI::App& app, std::string& file);

}  // namespace planner::cli

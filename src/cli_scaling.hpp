#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

/// `planner scaling`: flags and the command (docs/output.md §planner scaling). Private to the
/// CLI sources: CLI11 stays out of the public headers.

namespace planner {

struct ScalingArgs {
  std::string file;
  bool lab = false;
  std::string dp;  ///< comma-separated sizes; empty: the defaults
  std::string mode = "both";
  std::string format = "text";
  std::vector<std::string> sets;
};

/// Registers the subcommand on `app`, filling `args` when parsed.
CLI::App* add_scaling_command(CLI::App& app, ScalingArgs& args);

/// Runs it: 0 ok; 1 the scenario's restart budget is not met or nothing fits; throws
/// InputError on bad input.
int run_scaling(const ScalingArgs& args, std::ostream& out);

}  // namespace planner

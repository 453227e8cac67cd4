#pragma once
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

/// The `planner calibrate` command: its options and its run (docs/calibrate.md).

namespace planner::calibrate {

struct CommandArgs {
  std::vector<std::string> nccl;  ///< nccl-tests output files
  std::vector<std::string> gemm;  ///< GEMM CSV files
  std::vector<std::string> runs;  ///< SCENARIO=LOG pairs
  std::string target;             ///< full-scale scenario ("" for none)
  std::string profile_out;        ///< where to write the profile ("" for nowhere)
  std::string format = "text";
  std::size_t warmup_steps = 1;
};

/// Adds the subcommand and its options to `app`; returns it.
CLI::App* add_command(CLI::App& app, CommandArgs& args);

/// Reads the files, calibrates, prints the report. Throws InputError on bad input.
int run_command(const CommandArgs& args, std::ostream& out);

}  // namespace planner::calibrate

#pragma once
#include <iosfwd>
#include <string>
#include <vector>

/// The command-line front end, callable in-process by tests: `args` excludes the program name.
/// Exit codes (docs/output.md): 0 success; 1 the planner ran and the answer is no (nothing
/// fits, the SLO is missed, `check` found a drifted expectation); 2 bad input or usage.

namespace planner {

enum ExitCode : int { exit_ok = 0, exit_no = 1, exit_bad_input = 2 };

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace planner

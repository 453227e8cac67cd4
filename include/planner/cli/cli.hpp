#pragma once
#include <iosfwd>
#include <string>
#include <vector>

/// The command-line front end, callable in-process by tests: `args` excludes the program name.
/// Exit codes (docs/output.md): 0 success; 1 the planner ran and the answer is no (nothing
/// fits, the SLO is missed, `check` found a drifted expectation); 2 bad input or usage;
/// 3 internal error (the binary's main); 4 the output could not be written (a full disk, a
/// closed standard output).

namespace planner {

enum ExitCode : int { exit_ok = 0, exit_no = 1, exit_bad_input = 2, exit_write_failed = 4 };

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace planner

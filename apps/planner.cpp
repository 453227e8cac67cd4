// The thin CLI: everything is in the library (src/cli.cpp), so tests run it in-process.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "planner/cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return planner::run_cli(args, std::cout, std::cerr);
  } catch (const std::exception& e) {
    // Any other exception is a bug in the planner, never a user's fault.
    std::cerr << "planner: internal error: " << e.what() << "\n";
    return 3;
  }
}

#pragma once
// Runs the CLI in-process from the source directory, so file names in the output are the
// relative ones a user types (scenarios/a.json) and golden files are portable.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "planner/cli/cli.hpp"

namespace cli_harness {

struct Run {
  int code = 0;
  std::string out;
  std::string err;
};

inline Run run(std::vector<std::string> args) {
  std::filesystem::current_path(PLANNER_SOURCE_DIR);
  std::ostringstream out, err;
  Run r;
  r.code = planner::run_cli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

/// Runs the built binary itself (not the in-process CLI) from the source directory and
/// returns its standard output; `code` gets the exit status.
inline std::string run_binary(const std::string& args, int& code) {
  const std::string command =
      std::string("cd '") + PLANNER_SOURCE_DIR + "' && '" + PLANNER_BINARY + "' " + args;
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    code = -1;
    return out;
  }
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

inline std::string read(const std::string& path) {
  std::ifstream in(std::string(PLANNER_SOURCE_DIR) + "/" + path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Compares `actual` with the golden file; with UPDATE_GOLDEN=1 in the environment, rewrites
/// it instead (review the diff before committing).
inline bool matches_golden(const std::string& path, const std::string& actual) {
  const std::string full = std::string(PLANNER_SOURCE_DIR) + "/" + path;
  if (const char* update = std::getenv("UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(full, std::ios::binary) << actual;
    return true;
  }
  return read(path) == actual;
}

}  // namespace cli_harness

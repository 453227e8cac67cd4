// Hostile inputs, second hunt: pipes that blocked every command, JSON that parsed in quadratic
// time, measured values whose ratios overflowed to exit 3, control characters that reached the
// terminal raw, and fits that were never checked against physics. Each test failed before its
// fix; the inputs are written here (small) or generated.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "hostile_test_helpers.hpp"

using namespace hostile_test_helpers;
using Catch::Contains;

namespace {

/// Runs `script` with /bin/sh in the source directory, `planner` standing for the built binary;
/// returns standard output and sets `code` (for pipes and `timeout`, which shell() cannot
/// put before the binary).
std::string sh(const std::string& script, int& code) {
  std::string command = script;
  for (std::size_t at = 0; (at = command.find("planner ", at)) != std::string::npos;) {
    const std::string binary = std::string("'") + PLANNER_BINARY + "' ";
    command.replace(at, 8, binary);
    at += binary.size();
  }
  command = std::string("cd '") + PLANNER_SOURCE_DIR + "' && " + command;
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  for (std::size_t n = 0; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

/// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// ---- 1. Named pipes --------------------------------------------------------------------------

TEST_CASE("A named pipe is refused at once by every command that reads a file", "[hostile][input]") {
  // Before: fopen(3) of a FIFO waits for a writer, so each of these hung until killed
  // (`timeout` turns that into exit 124 here instead of a hung test run).
  const std::string fifo = temp_path("fifo");
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string command :
       {"validate", "scaling", "import hf", "plan", "calibrate --nccl"}) {
    INFO(command);
    int code = -1;
    const auto start = std::chrono::steady_clock::now();
    const std::string err =
        sh(fmt::format("timeout 10 planner {} '{}' 2>&1", command, fifo), code);
    CHECK(code == 2);
    CHECK(seconds_since(start) < 8);
    CHECK(one_clean_line(err));
    CHECK_THAT(err, Contains(fifo + ": not a regular file but a named pipe, which may wait "
                                    "forever for a writer; give a file, or '-' to read "
                                    "standard input"));
  }
  std::filesystem::remove(fifo);
  // Standard input named as a path is still read, pipe or not (the user asked to wait for it).
  int code = -1;
  CHECK(sh("planner memory /dev/stdin < scenarios/a.json 2>&1", code).find("error") ==
        std::string::npos);
  CHECK(code == 0);
  CHECK(sh("cat scenarios/a.json | timeout 10 planner memory /dev/stdin 2>&1", code)
            .find("error") == std::string::npos);
  CHECK(code == 0);
}

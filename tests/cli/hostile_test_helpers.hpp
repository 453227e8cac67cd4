#pragma once

// Under AddressSanitizer (tests/run.sh's second stage) the binary is several times slower and
// its resident memory holds the shadow and the quarantine: time and memory bounds are checked
// in the Release build only.
#if defined(__SANITIZE_ADDRESS__)
#define PLANNER_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLANNER_TEST_ASAN 1
#endif
#endif
#ifndef PLANNER_TEST_ASAN
#define PLANNER_TEST_ASAN 0
#endif
// Helpers shared by test_hostile.cpp and test_hostile_work.cpp (split to stay under 500 lines).
#include <sys/resource.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>
#include "cli_harness.hpp"
#include "planner/cli/cli.hpp"
#include "planner/base/error.hpp"
#include "planner/io/context.hpp"
#include "planner/base/one_line.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/read_input.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/search/search.hpp"

namespace hostile_test_helpers {



using nlohmann::json;

constexpr bool sanitized = PLANNER_TEST_ASAN != 0;

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("planner_test_hostile_" + std::to_string(getpid()) + "_" + name))
      .string();
}

inline std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline json scenario(const std::string& path) { return json::parse(cli_harness::read(path)); }

/// An error line is one line: a single '\n', at the end, and no other byte a terminal acts on.
inline bool one_clean_line(const std::string& err) {
  if (err.empty() || err.back() != '\n') return false;
  for (std::size_t i = 0; i + 1 < err.size(); ++i) {
    const auto b = static_cast<unsigned char>(err[i]);
    if (b < 0x20 || b == 0x7F) return false;
    if (b == 0xC2 && i + 1 < err.size() && static_cast<unsigned char>(err[i + 1]) < 0xA0) {
      return false;  // a C1 control character
    }
  }
  return true;
}

/// Runs the binary through the shell with `args` (redirections included). Returns what the
/// pipe read (the command's standard output unless redirected) and sets `code`.
inline std::string shell(const std::string& args, int& code) { return cli_harness::run_binary(args, code); }

/// A stream buffer whose every write fails, as on a full disk.
class FailingBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

}  // namespace hostile_test_helpers

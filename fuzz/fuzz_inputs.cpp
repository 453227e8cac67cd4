// libFuzzer harness for the commands that read files other than a scenario (docs/testing.md
// §Fuzzing): calibrate's nccl-tests output, GEMM tables and step logs, `import hf`'s
// config.json, `validate`'s records (training and serving), `scaling` on a scenario read
// from standard input and `scaling --measured`'s step logs. The first byte picks the command
// ('0'..'8'; any byte, counted from '0', mod 9); the rest is the file, written to a temporary
// path, and the command runs through run_cli in-process. Exit codes 0, 1 and 2 are expected; an exception escaping run_cli
// (the binary's exit 3), a sanitizer report, a NaN or infinity in text output, or an error that
// is not one clean line crashes the fuzzer.
#include <unistd.h>  // getpid: a temporary file of this process's own

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "clean_lines.hpp"
#include "non_finite_word.hpp"
#include "planner/cli/cli.hpp"

namespace {

using test_support::clean_lines;
using test_support::has_non_finite_word;

std::string source(const char* relative) {
  return (std::filesystem::path(PLANNER_SOURCE_DIR) / relative).string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int mode = static_cast<unsigned char>(data[0] - '0') % 9;  // seeds: '0'..'8'
  const std::string content(reinterpret_cast<const char*>(data) + 1, size - 1);
  // A neutral name: nothing in it tells calibrate which collective a file holds.
  static const std::string file =
      (std::filesystem::temp_directory_path() / ("planner_fuzz_input_" + std::to_string(getpid())))
          .string();
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content;
  }
  std::vector<std::string> args;
  std::string standard_input;
  switch (mode) {
    case 0: args = {"calibrate", "--nccl", file}; break;
    case 1: args = {"calibrate", "--gemm", file}; break;
    case 2:
      args = {"calibrate", "--run", source("tests/data/calibrate/small-1node.json") + "=" + file};
      break;
    case 3: args = {"calibrate", "--nccl", file, "--format", "json"}; break;
    case 4: args = {"import", "hf", file}; break;
    case 5: args = {"validate", file}; break;
    case 6:
      args = {"scaling", "-"};
      standard_input = content;
      break;
    case 7: args = {"validate", file, "--format", "json"}; break;
    default:
      args = {"scaling", source("scenarios/eight-gpu-restart.json"), "--measured",
              "1=" + source("tests/data/scaling/run-1gpu.csv") + ",2=" + file};
      break;
  }
  std::istringstream input(standard_input);
  std::streambuf* const saved_input = std::cin.rdbuf(input.rdbuf());
  std::ostringstream out, err;
  const int code = planner::run_cli(args, out, err);  // anything but InputError escapes
  std::cin.rdbuf(saved_input);
  std::cin.clear();
  if (code != 0 && code != 1 && code != 2) {
    std::fprintf(stderr, "unexpected exit code %d\n", code);
    std::abort();
  }
  if (!clean_lines(err.str())) {
    std::fprintf(stderr, "standard error is not clean lines:\n%s\n", err.str().c_str());
    std::abort();
  }
  const std::string printed = out.str();
  // JSON output is checked by dump_json itself (a non-finite number throws). Text output
  // quotes names the input chose (a record's id, a scenario's name, a log's file name):
  // those lines may spell "inf"; the rest may not.
  if (printed.starts_with("{") || printed.starts_with("[")) return 0;
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line);) {
    if (content.find("inf") != std::string::npos || content.find("nan") != std::string::npos) {
      break;  // the input spells the word itself somewhere: nothing to tell apart
    }
    if (has_non_finite_word(line)) {
      std::fprintf(stderr, "non-finite number in the output:\n%s\n", printed.c_str());
      std::abort();
    }
  }
  return 0;
}

// libFuzzer harness for the command line (docs/testing.md §Fuzzing): the input is a command,
// one argument per line, run through run_cli in-process; files are named by their short names
// in scenarios/ (a.json). `planner memory` and `planner collective` do their own arithmetic on
// flag values before anything is validated, which the scenario harness cannot reach; `plan`
// runs without thresholds. Exit codes 0, 1 and 2 are expected; an exception escaping run_cli
// (the binary's exit 3), a sanitizer report, or a NaN or infinity in the output crashes the
// fuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "non_finite_word.hpp"
#include "planner/cli/cli.hpp"

namespace {

using test_support::has_non_finite_word;

/// The scenario files a command may name, by their short names (a.json), mapped to their
/// paths in the source tree; the working directory is left alone, since libFuzzer's corpus
/// and artifact paths are relative to it.
const std::map<std::string, std::string>& scenario_files() {
  static const std::map<std::string, std::string> files = [] {
    std::map<std::string, std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(
             std::filesystem::path(PLANNER_SOURCE_DIR) / "scenarios")) {
      out[entry.path().filename().string()] = entry.path().string();
    }
    return out;
  }();
  return files;
}

/// Arguments that could make the command read something else or wait on standard input: "-",
/// "..", absolute paths (a JSON pointer of --set always comes with '='), any existing file.
bool unsafe(const std::string& arg) {
  if (arg == "-" || arg.find("..") != std::string::npos) return true;
  if (arg.starts_with("/") && arg.find('=') == std::string::npos) return true;
  std::error_code error;
  return std::filesystem::exists(arg, error) || error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty() && args.size() < 32) {
    const std::size_t newline = text.find('\n');
    args.emplace_back(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  }
  if (args.empty()) return 0;
  // sweep and check are left out: a sweep's grid may hold 10^7 points by design, and check
  // computes thresholds when asked to.
  if (args[0] != "memory" && args[0] != "collective" && args[0] != "plan") return 0;
  for (std::string& arg : args) {
    if (const auto file = scenario_files().find(arg); file != scenario_files().end()) {
      arg = file->second;
      continue;
    }
    if (unsafe(arg)) return 0;
    // The scenario's name is printed as written (it may be "inf"); leave it alone.
    if (arg.find("/name") != std::string::npos) return 0;
  }
  if (args[0] == "plan") args.push_back("--no-thresholds");
  std::ostringstream out, err;
  const int code = planner::run_cli(args, out, err);  // anything but InputError escapes
  if (code != 0 && code != 1 && code != 2) {
    std::fprintf(stderr, "unexpected exit code %d\n", code);
    std::abort();
  }
  const std::string printed = out.str();
  // JSON output is checked by dump_json itself: a non-finite number throws std::logic_error,
  // which escapes run_cli and crashes the fuzzer.
  if (printed.starts_with("{")) return 0;
  // The text title repeats the scenario's name, chosen by whoever wrote it; skip that line.
  const std::string_view body =
      args[0] == "collective" ? std::string_view(printed)
                              : std::string_view(printed).substr(
                                    std::min(printed.size(), printed.find('\n') + 1));
  if (has_non_finite_word(body)) {
    std::fprintf(stderr, "non-finite number in the output:\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}

// libFuzzer harness for the command line (docs/testing.md §Fuzzing): the input is a command,
// one argument per line, run through run_cli in-process; files are named by their short names
// in scenarios/ (a.json). Every command is reached: `planner memory` and `planner collective`
// do their own arithmetic on flag values before anything is validated, which the scenario
// harness cannot reach; `plan` runs without thresholds; `sweep` on grids of at most 64 points;
// `check`; `export` (Megatron-LM, torchtitan, DeepSpeed) and `list`. Two optional controls, each a whole line: "<stdin>" ends the arguments and the
// rest of the input is standard input (for the argument "-"); "<full>" as the first line makes
// standard output fail after its first 100 bytes, as on a full disk. Exit codes 0, 1 and 2
// are expected (and 4 with "<full>"); an exception escaping run_cli (the binary's exit 3), a
// sanitizer report, a NaN or infinity in the output, or an error that is not one clean line
// crashes the fuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <streambuf>
#include <string_view>
#include <vector>

#include "clean_lines.hpp"
#include "non_finite_word.hpp"
#include "planner/cli/cli.hpp"

namespace {

using test_support::clean_lines;
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

/// Arguments that could make the command read something else: "..", absolute paths (a JSON
/// pointer of --set always comes with '='), any existing file. ("-" reads the input's own
/// standard-input part.) A --vary range's ".." comes with '='.
bool unsafe(const std::string& arg) {
  if (arg.find("..") != std::string::npos && arg.find('=') == std::string::npos) return true;
  if (arg.starts_with("/") && arg.find('=') == std::string::npos) return true;
  std::error_code error;
  return std::filesystem::exists(arg, error) || error;
}

/// Points of a sweep's grid, roughly as run_sweep counts them: a range gives its STEPS, a list
/// its items. Above 64 the input is skipped (a grid may hold 10^7 points by design).
bool small_grid(const std::vector<std::string>& args) {
  std::size_t points = 1;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] != "--vary") continue;
    const std::string& spec = args[i + 1];
    std::size_t n = static_cast<std::size_t>(std::count(spec.begin(), spec.end(), ',')) + 1;
    if (spec.find("..") != std::string::npos) {
      n = std::strtoul(spec.substr(spec.rfind(':') + 1).c_str(), nullptr, 10);
    }
    points *= std::max<std::size_t>(n, 1);
    if (points > 64) return false;
  }
  return true;
}

/// Standard output on a full disk: the first `room` bytes are taken, then every write fails.
class FullAfter : public std::streambuf {
 public:
  explicit FullAfter(std::size_t room) : room_(room) {}

 protected:
  int_type overflow(int_type ch) override {
    if (room_ == 0 || traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::eof();
    --room_;
    return ch;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    const auto take = std::min<std::size_t>(room_, static_cast<std::size_t>(n));
    room_ -= take;
    return static_cast<std::streamsize>(take);
  }

 private:
  std::size_t room_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string standard_input;
  while (!text.empty() && args.size() < 32) {
    const std::size_t newline = text.find('\n');
    std::string arg(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (arg == "<stdin>") {
      standard_input = std::string(text);
      break;
    }
    args.push_back(std::move(arg));
  }
  const bool full = !args.empty() && args[0] == "<full>";
  if (full) args.erase(args.begin());
  if (args.empty()) return 0;
  const std::string command = args[0];  // a copy: args grows below
  if (command != "memory" && command != "collective" && command != "plan" &&
      command != "sweep" && command != "check" && command != "export" && command != "list") {
    return 0;
  }
  if (command == "sweep" && !small_grid(args)) return 0;
  for (std::string& arg : args) {
    if (const auto file = scenario_files().find(arg); file != scenario_files().end()) {
      arg = file->second;
      continue;
    }
    if (unsafe(arg)) return 0;
    // The scenario's name is printed as written (it may be "inf"); leave it alone.
    if (arg.find("/name") != std::string::npos) return 0;
  }
  if (command == "plan") args.push_back("--no-thresholds");
  if (command == "sweep") args.insert(args.end(), {"--threads", "2", "--no-progress"});
  std::istringstream input(standard_input);
  std::streambuf* const saved_input = std::cin.rdbuf(input.rdbuf());
  std::ostringstream captured, err;
  FullAfter disk(100);
  std::ostream failing(&disk);
  std::ostream& out = full ? failing : captured;
  const int code = planner::run_cli(args, out, err);  // anything but InputError escapes
  std::cin.rdbuf(saved_input);
  std::cin.clear();
  if (code != 0 && code != 1 && code != 2 && !(full && code == 4)) {
    std::fprintf(stderr, "unexpected exit code %d\n", code);
    std::abort();
  }
  if (!clean_lines(err.str())) {
    std::fprintf(stderr, "standard error is not clean lines:\n%s\n", err.str().c_str());
    std::abort();
  }
  if (full) return 0;
  // A scenario read from standard input may name itself with a newline ("\n" in JSON) and
  // "inf": the title is then more than the first line. Such inputs skip the word check.
  if (standard_input.find("\\n") != std::string::npos ||
      standard_input.find("\\u") != std::string::npos) {
    return 0;
  }
  const std::string printed = captured.str();
  // JSON output is checked by dump_json itself: a non-finite number throws std::logic_error,
  // which escapes run_cli and crashes the fuzzer.
  if (printed.starts_with("{")) return 0;
  // The text title repeats the scenario's name, chosen by whoever wrote it; skip that line.
  const std::string_view body =
      command == "collective" || command == "sweep" ? std::string_view(printed)
                              : std::string_view(printed).substr(
                                    std::min(printed.size(), printed.find('\n') + 1));
  if (has_non_finite_word(body)) {
    std::fprintf(stderr, "non-finite number in the output:\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}

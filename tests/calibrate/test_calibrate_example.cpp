// The worked example of docs/calibrate.md, run end to end through the CLI.
#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "non_finite_word.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string d = "tests/data/calibrate/";

std::vector<std::string> example_args() {
  return {"calibrate",
          "--nccl", d + "mi300x-1node-all_reduce_perf.txt",
          "--nccl", d + "mi300x-2node-all_reduce_perf.txt",
          "--gemm", d + "gemm-illustrative.csv",
          "--run", d + "small-1node.json=" + d + "small-1node-megatron.log",
          "--run", d + "small-2node.json=" + d + "small-2node-torchtitan.log",
          "--target", d + "target-70b-mi300x.json"};
}

}  // namespace

TEST_CASE("Worked example: text report") {
  const cli_harness::Run r = cli_harness::run(example_args());
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK_FALSE(test_support::has_non_finite_word(r.out));
  // Measured medians, by hand: Megatron steps 2-6 (step 1 is the warm-up) 1702.6, 1698.1,
  // 1705.9, 1699.4, 1701.0 ms → 1.7010 s. torchtitan tps 36802, 36650, 36911, 36744, 36690 →
  // median 36744 tokens/s/GPU; 16·4·4·2048 = 524288 tokens per step on 16 GPUs:
  // 524288 / (36744 · 16) = 0.8918 s.
  CHECK_THAT(r.out, Contains("measured 1.7010 s"));
  CHECK_THAT(r.out, Contains("measured 0.8918 s"));
  CHECK_THAT(r.out, Contains("Skipped: " + d + "mi300x-1node-all_reduce_perf.txt: 3 line(s)"));
  CHECK_THAT(r.out, Contains("Prediction for " + d + "target-70b-mi300x.json"));
  for (const char* banned : {"seed", "worked solution", "answer key"}) {
    CHECK_THAT(r.out, !Contains(banned, Catch::CaseSensitive::No));
  }
}

namespace {

/// Runs of blanks as one space.
std::string collapsed(const std::string& line) {
  std::string out;
  for (const char c : line) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  return out;
}

}  // namespace

TEST_CASE("Worked example: docs/calibrate.md shows what the command prints") {
  const cli_harness::Run r = cli_harness::run(example_args());
  REQUIRE(r.code == 0);
  std::vector<std::string> printed;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) printed.push_back(collapsed(line));
  std::ifstream doc(std::string(PLANNER_SOURCE_DIR) + "/docs/calibrate.md");
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("Output (file names shortened, plan descriptions cut):");
  REQUIRE(at != std::string::npos);
  const std::size_t begin = text.find("```\n", at) + 4;
  const std::size_t end = text.find("```", begin);
  std::istringstream block(text.substr(begin, end - begin));
  int checked = 0;
  for (std::string line; std::getline(block, line);) {
    // The fitted constants and the prediction lines, up to a cut ("…").
    const bool fitted = line.rfind("  /cluster/", 0) == 0 || line.rfind("  runtime factor", 0) == 0;
    const bool predicted = line.rfind("  central", 0) == 0 || line.rfind("  every constant", 0) == 0;
    if (!fitted && !predicted) continue;
    std::string kept = line.substr(0, line.find("\xe2\x80\xa6"));  // "…"
    while (!kept.empty() && kept.back() == ' ') kept.pop_back();
    kept = collapsed(kept);
    INFO(kept);
    CHECK(std::any_of(printed.begin(), printed.end(),
                      [&](const std::string& p) { return p.rfind(kept, 0) == 0; }));
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("Worked example: JSON report, band ordering and the profile through --set") {
  std::vector<std::string> args = example_args();
  const std::filesystem::path profile = std::filesystem::temp_directory_path() /
      ("planner_test_calibrate_profile_" + std::to_string(getpid()) + ".json");
  args.insert(args.end(), {"--format", "json", "--profile-out", profile.string()});
  const cli_harness::Run r = cli_harness::run(args);
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  // Independent figures: the source's own busbw at the largest size (see test_calibrate.cpp).
  CHECK(j["intra_node"]["bandwidth_bytes_per_second"].get<double>() == Approx(315.69e9).epsilon(0.02));
  CHECK(j["inter_node"]["bandwidth_bytes_per_second"].get<double>() == Approx(357.46e9).epsilon(0.02));
  const json& p = j["prediction"];
  const double central = p["central"]["step_seconds"].get<double>();
  CHECK(p["pessimistic"]["step_seconds"].get<double>() >= central);
  CHECK(p["optimistic"]["step_seconds"].get<double>() <= central);
  // The profile's --set values make `planner plan` on the target give the central prediction.
  std::ifstream in(profile);
  const json prof = json::parse(in);
  std::filesystem::remove(profile);
  std::vector<std::string> plan = {"plan", d + "target-70b-mi300x.json", "--format", "json",
                                   "--no-thresholds"};
  for (const json& s : prof["set"]) plan.insert(plan.end(), {"--set", s.get<std::string>()});
  const cli_harness::Run r2 = cli_harness::run(plan);
  REQUIRE(r2.code == 0);
  CHECK(json::parse(r2.out)["best"]["time"]["step"].get<double>() == Approx(central).epsilon(1e-4));
}

TEST_CASE("calibrate usage and input errors exit 2 with one located line") {
  cli_harness::Run r = cli_harness::run({"calibrate"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("no measurements given, expected at least one of --nccl"));
  r = cli_harness::run({"calibrate", "--run", d + "small-1node.json"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("is not SCENARIO=LOG"));
  r = cli_harness::run({"calibrate", "--gemm", d + "no-such-file.csv"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("no-such-file.csv: cannot open file: No such file or directory"));
  // A step log whose scenario has no pinned plan.
  r = cli_harness::run({"calibrate", "--run", "scenarios/llama3-70b-h100.json=" + d +
                                                  "small-1node-megatron.log"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("/plan: a run's scenario needs a training workload and its pinned plan"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  r = cli_harness::run({"calibrate", "--gemm", d + "gemm-illustrative.csv", "--target",
                        "scenarios/d.json"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("scenarios/d.json: /workload/kind: calibrate predicts training"));
  // A profile that cannot be written is a failed write (exit 4), not bad input (issue 32).
  r = cli_harness::run({"calibrate", "--gemm", d + "gemm-illustrative.csv", "--profile-out",
                        "/dev/full"});
  CHECK(r.code == 4);
  CHECK_THAT(r.err, Contains("cannot write the profile to /dev/full"));
  // An unknown option is a usage error.
  r = cli_harness::run({"calibrate", "--gemm", d + "gemm-illustrative.csv", "--no-such-flag"});
  CHECK(r.code == 2);
}

// A target computing in fp8 takes its rate from flops_by_dtype, which the fit does not set.
TEST_CASE("calibrate refuses a target whose GEMMs run in fp8") {
  const std::filesystem::path f = std::filesystem::temp_directory_path() /
      ("planner_test_calibrate_fp8_" + std::to_string(getpid()) + ".json");
  json doc = json::parse(cli_harness::read(d + "small-1node.json"));
  doc["model"]["precision"] = {{"compute", "fp8"}};
  doc["cluster"]["gpu"]["flops_by_dtype"] = {{"fp8", "2000 TFLOP/s"}};
  std::ofstream(f) << doc.dump();
  const cli_harness::Run r =
      cli_harness::run({"calibrate", "--gemm", d + "gemm-illustrative.csv", "--target", f.string()});
  std::filesystem::remove(f);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("/model/precision/compute: calibrate fits the 16-bit GEMM rate"));
}

TEST_CASE("Two runs of one scenario that disagree 20x are refused, not averaged (issue 32)") {
  // The same Megatron-LM log with every step time divided by 20: the same job cannot run at
  // 20 times the rate, so one of the two logs is not what its scenario says.
  std::string log = cli_harness::read(d + "small-1node-megatron.log");
  const std::string key = "elapsed time per iteration (ms): ";
  for (std::size_t at = log.find(key); at != std::string::npos; at = log.find(key, at + 1)) {
    const std::size_t start = at + key.size();
    const std::size_t end = log.find(' ', start);
    const double ms = std::stod(log.substr(start, end - start));
    log.replace(start, end - start, std::to_string(ms / 20.0));
  }
  const std::string fast = "/tmp/planner-fast-run-" + std::to_string(getpid()) + ".log";
  { std::ofstream(fast) << log; }
  // The scenario spelt the same, through "./", or through a symbolic link is one scenario:
  // before, only equal spellings were compared, so "./s.json" let the 20x pass.
  const std::string link = "/tmp/planner-run-link-" + std::to_string(getpid()) + ".json";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(std::string(PLANNER_SOURCE_DIR) + "/" + d + "small-1node.json",
                                  link);
  for (const std::string& other : {d + "small-1node.json", "./" + d + "small-1node.json", link}) {
    INFO(other);
    const cli_harness::Run r = cli_harness::run(
        {"calibrate", "--run", d + "small-1node.json=" + d + "small-1node-megatron.log", "--run",
         other + "=" + fast});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("implies an effective rate") && Contains("times that of") &&
                          Contains("expected them within 2x"));
  }
  std::remove(fast.c_str());
  std::filesystem::remove(link);
}

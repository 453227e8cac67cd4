// Split from test_hostile.cpp (files stay under 500 lines).
// Hostile input and huge work (issue 14): unbounded input, sweeps that did not stream, failed
// writes that reported success, an extreme world that ran for minutes, physically impossible
// scenarios, error lines split or polluted by control characters, and the smaller contract
// slips. Each test failed before its fix; expected figures are derived in the comments.
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

#include "hostile_test_helpers.hpp"

using namespace hostile_test_helpers;

TEST_CASE("A world of 8,648,640 GPUs plans within seconds, thresholds given up", "[hostile][work]") {
  // 8,648,640 = 2^6·3^3·5·7·11·13 has 7·4·2·2·2·2 = 448 divisors and 84·20·4^4 = 430,080
  // ordered factorisations into (tp, cp, pp, dp). Before: 20 s without thresholds, more than
  // 5 minutes and 550 MB with them. Its own search does ~8 million steps, more than the
  // 125,000 above which the threshold scans are skipped (thresholds.hpp), so each of the 12
  // scans (6 inputs × 2 directions) is listed as not searched and the recommendation is the
  // one without thresholds.
  // Release build only: under the sanitizer build's instrumentation (tests/run.sh) one plan of
  // this world takes about 200 s (7.3 million of its 8.4 million candidates are timed: their
  // compute bound is loose on this shape), the sanitizer stage's critical path and past the
  // test command's 15 minutes. What it checks is time and the work limit's outcome; the code
  // it runs is the search every other test and the fuzzers run under the sanitizers.
  if (sanitized) {
    SUCCEED("timed in the Release build only");
    return;
  }
  json doc = scenario("scenarios/a.json");
  doc.erase("plan");
  doc.erase("expect");
  doc["model"] = json::parse(R"({"layers": 720, "hidden": 80640, "heads": 720, "kv_heads": 720,
                                 "vocab": 128000, "seq_len": 720720})");
  doc["cluster"]["nodes"] = 1081080;
  doc["workload"] = json::parse(R"({"kind": "training", "global_batch_tokens": 1e14})");
  const std::string path = write_file("extreme.json", doc.dump());
  const auto start = std::chrono::steady_clock::now();
  const auto with = cli_harness::run({"plan", path, "--format", "json"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(with.code == 0);
  CHECK(seconds < 60);
  const json a = json::parse(with.out);
  CHECK(a.at("thresholds").empty());
  CHECK(a.at("thresholds_not_searched").size() == 12);
  CHECK(a.at("thresholds_not_searched").at(0) == "/cluster/inter_node/bandwidth below");
  // The same recommendation without thresholds.
  const auto without = cli_harness::run({"plan", path, "--format", "json", "--no-thresholds"});
  const json b = json::parse(without.out);
  CHECK(a.at("best") == b.at("best"));
  CHECK_FALSE(b.contains("thresholds_not_searched"));
  std::filesystem::remove(path);
}

TEST_CASE("A search stopped at its work limit is empty and marked incomplete", "[hostile][work]") {
  // Scenario A's search does thousands of steps (7,238 configurations are evaluated); a
  // limit of 10 stops it.
  const planner::Scenario s = planner::load_scenario_file(std::string(PLANNER_SOURCE_DIR) +
                                                          "/scenarios/a.json");
  const planner::Context ctx = planner::make_context(s);
  planner::SearchOptions options;
  options.work_limit = 10;
  const planner::SearchResult stopped = planner::search(ctx, options);
  CHECK(stopped.incomplete);
  CHECK_FALSE(stopped.found());
  const planner::SearchResult whole = planner::search(ctx, {});
  CHECK_FALSE(whole.incomplete);
  CHECK(whole.work > 10);
  options.work_limit = whole.work;  // exactly enough
  CHECK_FALSE(planner::search(ctx, options).incomplete);
}

// ---- 5. Physically impossible inputs -------------------------------------------------------

namespace {

/// One GPU holding scenario A's model with tiled attention pinned: the measured time then
/// belongs to FLOPs F = 6·P·s + 14·s²·h·L (compute.hpp: 6PD dense, 12·b·s²·h attention and
/// 2·b·s²·h tiled-attention recompute per layer; b = 1, no score traffic under tiling)
/// = 6·8e9·4096 + 14·4096²·4096·32 = 1.96608e14 + 3.0786325e13 = 2.27394e14.
json one_gpu_a() {
  json doc = scenario("scenarios/a.json");
  doc.erase("expect");
  doc["cluster"]["nodes"] = 1;
  doc["cluster"]["gpus_per_node"] = 1;
  doc["plan"] = json::parse(R"({"flash_attention": true})");
  return doc;
}

// 6·P·s of the GEMMs and 14·s²·h·L of attention with flash recompute (compute.hpp), the
// square at the share a causal flash kernel computes: (1 + 128/4096)/2 of it (FlashAttention-2
// §3.1.1 skips the blocks above the diagonal; 128-token blocks, §3.3).
constexpr double causal_share_4096 = 0.5 * (1.0 + 128.0 / 4096.0);
constexpr double one_gpu_a_flops =
    6.0 * 8e9 * 4096 + 14.0 * 4096.0 * 4096.0 * 4096.0 * 32 * causal_share_4096;

}  // namespace

TEST_CASE("A measured step time faster than twice the GPU's peak is refused", "[hostile][plausible]") {
  // 0.25 s: 2.1248e14 / 0.25 = 8.499e14 FLOP/s, 2.12 times the 4e14 peak. Before: accepted
  // (scenario C at 1 ms ran at 11,800 times the peak).
  json doc = one_gpu_a();
  doc["workload"]["step_time_per_micro_batch"] = "250 ms";
  const double rate = one_gpu_a_flops / 0.25;
  try {
    (void)planner::load_scenario(doc, "a.json");
    FAIL("accepted");
  } catch (const planner::InputError& e) {
    CHECK(std::string(e.what()) ==
          fmt::format("a.json: /workload/step_time_per_micro_batch: the measured 0.25 s implies "
                      "{:.4g} FLOP/s, {:.3g} times the GPU's peak of 4e+14 FLOP/s "
                      "(/cluster/gpu/flops), and no GPU runs faster than its peak (at most 2× "
                      "is accepted); check the value and its unit",
                      rate, rate / 4e14));
  }
  // F / (2·4e14) = 0.2656 s is the shortest accepted; 0.3 s (1.77× the peak) loads with a
  // warning, 0.6 s (0.89×) without.
  doc["workload"]["step_time_per_micro_batch"] = "300 ms";
  const planner::Scenario s = planner::load_scenario(doc, "a.json");
  const auto warnings = planner::plausibility_warnings(s);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains(fmt::format("implies {:.4g} FLOP/s, {:.3g} times",
                                                      one_gpu_a_flops / 0.3,
                                                      one_gpu_a_flops / 0.3 / 4e14)));
  doc["workload"]["step_time_per_micro_batch"] = "600 ms";
  CHECK(planner::plausibility_warnings(planner::load_scenario(doc, "a.json")).empty());
  // The issue's own example, through the CLI: one line, exit 2.
  const auto r = cli_harness::run(
      {"plan", "scenarios/c.json", "--set", "/workload/step_time_per_micro_batch=1ms"});
  CHECK(r.code == 2);
  CHECK(one_clean_line(r.err));
  CHECK_THAT(r.err, Catch::Contains("times the GPU's peak of 4e+14 FLOP/s"));
}

TEST_CASE("params more than 2x off the shape's count is refused", "[hostile][plausible]") {
  // Scenario A's shape: layer = 2h² + 2h·h_kv + 2·h·f + 4h with h = h_kv = 4096, f = 16384:
  // 33,554,432 + 33,554,432 + 134,217,728 + 16,384 = 201,342,976; × 32 layers =
  // 6,442,975,232; embeddings 2·32000·4096 = 262,144,000; final norm 8,192: 6,705,127,424.
  const double shape = 6705127424.0;
  const auto r = cli_harness::run({"plan", "scenarios/a.json", "--set", "/model/params=1e9"});
  CHECK(r.code == 2);
  CHECK(r.err == fmt::format("planner: error: scenarios/a.json: /model/params: params (1e+09) "
                             "is {:.3g} times the {:.4g} the shape gives (L·(2h² + 2h·h_kv + "
                             "2·h·f + 4h) + V·h·2 + 2h, docs/model.md §1); expected within a "
                             "factor of 2: fix params or the shape, or leave params out to use "
                             "the shape's count\n",
                             1e9 / shape, shape));
  // 1.1e10 is 1.64 times: within 2, past the 1.5 of a warning. (A's measured 0.7 s then
  // calibrates above the peak too, since the FLOPs grow with params: a second warning.)
  const auto warned = cli_harness::run({"memory", "scenarios/a.json", "--set", "/model/params=1.1e10"});
  CHECK(warned.code != 2);
  CHECK_THAT(warned.err, Catch::Contains(fmt::format(
                             "planner: warning: scenarios/a.json: /model/params: params (1.1e+10) "
                             "is {:.3g} times the {:.4g} the shape gives",
                             1.1e10 / shape, shape)));
  // 8e9, scenario A's own, is 1.19 times: no warning.
  CHECK(cli_harness::run({"memory", "scenarios/a.json"}).err.find("/model/params") ==
        std::string::npos);
}

TEST_CASE("A global batch below one sequence per step is refused", "[hostile][plausible]") {
  // 2000 tokens < seq_len 4096: before, planned as one sequence per step silently.
  const auto r = cli_harness::run(
      {"plan", "scenarios/a.json", "--set", "/workload/global_batch_tokens=2000"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: scenarios/a.json: /workload/global_batch_tokens: "
                 "global_batch_tokens (2000) is less than one sequence of seq_len = 4096 tokens, "
                 "and a step trains on whole sequences; raise it to at least 4096 or lower "
                 "/model/seq_len\n");
  CHECK(cli_harness::run({"plan", "scenarios/a.json", "--no-thresholds", "--set",
                          "/workload/global_batch_tokens=4096"})
            .code == 0);
}

// ---- 6. One clean line ---------------------------------------------------------------------

TEST_CASE("one_line escapes control characters and cuts at a boundary", "[hostile][errors]") {
  using planner::one_line;
  CHECK(one_line("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(one_line(std::string("x\0y", 3)) == "x\\x00y");
  CHECK(one_line("\x1b[31mred\x7f") == "\\x1b[31mred\\x7f");
  CHECK(one_line("\xc2\x9b" "2J") == "\\u009b2J");  // C1 CSI
  CHECK(one_line("\xff\xc3") == "\\xff\\xc3");        // not UTF-8
  CHECK(one_line("caf\xc3\xa9") == "caf\xc3\xa9");    // é stays
  CHECK(one_line(std::string(100, 'k'), 40) == std::string(37, 'k') + "...");
  CHECK(one_line(std::string(40, 'k'), 40) == std::string(40, 'k'));
  // 20 × "é" (2 bytes each) cut to 10 bytes: 3 whole characters (6 bytes) and "...".
  std::string accents;
  for (int i = 0; i < 20; ++i) accents += "\xc3\xa9";
  CHECK(one_line(accents, 10) == accents.substr(0, 6) + "...");
  // An escape is never split: 40 newlines are 80 bytes escaped; 18 fit in 37.
  std::string newlines(40, '\n');
  std::string expected;
  for (int i = 0; i < 18; ++i) expected += "\\n";
  CHECK(one_line(newlines, 40) == expected + "...");
}

TEST_CASE("Keys, --set pointers and file names never split or pollute the error line", "[hostile][errors]") {
  // A key with a newline and an ESC sequence; a NUL in a key (\u0000 in JSON); a 1 MB key.
  json doc = scenario("scenarios/a.json");
  doc["model"]["hid\nden\x1b[31m"] = 1;
  const std::string escaped_key = write_file("key.json", doc.dump());
  auto r = cli_harness::run({"plan", escaped_key});
  CHECK(r.code == 2);
  CHECK(one_clean_line(r.err));
  CHECK_THAT(r.err, Catch::Contains("/model/hid\\nden\\x1b[31m: unknown key"));

  doc = scenario("scenarios/a.json");
  doc["model"][std::string("x\0y", 3)] = 1;
  const std::string nul_key = write_file("nulkey.json", doc.dump());
  r = cli_harness::run({"plan", nul_key});
  CHECK(one_clean_line(r.err));
  CHECK_THAT(r.err, Catch::Contains("/model/x\\x00y: unknown key"));

  doc = scenario("scenarios/a.json");
  doc["model"][std::string(1 << 20, 'k')] = 1;
  const std::string huge_key = write_file("hugekey.json", doc.dump());
  r = cli_harness::run({"plan", huge_key});
  CHECK(one_clean_line(r.err));
  // The key is cut to 40 characters, 37 × k and "...".
  CHECK_THAT(r.err, Catch::Contains("/model/" + std::string(37, 'k') + "...: unknown key;"));
  CHECK(r.err.size() < 400);

  r = cli_harness::run({"plan", "scenarios/a.json", "--set", "/model/hid\nden=5"});
  CHECK(one_clean_line(r.err));
  CHECK_THAT(r.err, Catch::StartsWith("planner: error: scenarios/a.json: /model/hid\\nden: unknown key"));

  r = cli_harness::run({"plan", "scenarios/a.json", "--set", "/mod\x1b[2Jel/x=5"});
  CHECK(one_clean_line(r.err));
  CHECK_THAT(r.err, Catch::StartsWith("planner: error: --set: /mod\\x1b[2Jel/x: /mod\\x1b[2Jel does not exist"));

  r = cli_harness::run({"plan", "no\nsuch\x1b[2J.json"});
  CHECK(r.err == "planner: error: no\\nsuch\\x1b[2J.json: cannot open file: No such file or "
                 "directory\n");

  r = cli_harness::run({"plan", "--frobnicate\n\x1b[2J"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("planner: error: "));
  CHECK(r.err.find('\x1b') == std::string::npos);
  for (const std::string& path : {escaped_key, nul_key, huge_key}) std::filesystem::remove(path);
}

// ---- 7. Smaller contract slips ---------------------------------------------------------------

TEST_CASE("Huge --shard numbers are refused, not clamped", "[hostile][sweep]") {
  // strtol clamped 99999999999999999999 to 2^63 − 1, so "1/99999999999999999999" ran as a
  // (valid, empty) shard.
  const auto r = cli_harness::run({"sweep", "scenarios/a.json", "--vary", "/model/seq_len=1024",
                                   "--shard", "1/99999999999999999999", "--no-progress"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "planner: error: --shard: K and N must be at most 9223372036854775807 (2^63 - "
                 "1), got '1/99999999999999999999'\n");
  const auto spaced = cli_harness::run({"sweep", "scenarios/a.json", "--vary",
                                        "/model/seq_len=1024", "--shard", " 1/2", "--no-progress"});
  CHECK(spaced.code == 2);  // strtol skipped leading spaces
}

TEST_CASE("A --vary range in units of another dimension is refused", "[hostile][sweep]") {
  // 1 GiB is a size; the field is a bandwidth. Before, 1073741824 was taken as B/s.
  const auto r = cli_harness::run({"sweep", "scenarios/a.json", "--vary",
                                   "/cluster/inter_node/bandwidth=1GiB..50GiB:3", "--no-progress"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::StartsWith(
                        "planner: error: --vary: '/cluster/inter_node/bandwidth=1GiB..50GiB:3': "
                        "range end \"1GiB\" at /cluster/inter_node/bandwidth: \"1GiB\" is a size "
                        "in bytes, but a bandwidth in bytes/s is expected here"));
  // The field's own dimension still works.
  CHECK(cli_harness::run({"sweep", "scenarios/a.json", "--vary",
                          "/cluster/inter_node/bandwidth=10GB/s..50GB/s:2", "--no-progress"})
            .code == 0);
}

TEST_CASE("A bad --vary pointer is reported as the --vary's", "[hostile][sweep]") {
  // Before: "--set: /model/nope/x: ...", naming an option the user never gave.
  const auto r = cli_harness::run(
      {"sweep", "scenarios/a.json", "--vary", "/model/nope/x=1,2", "--no-progress"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: --vary: /model/nope/x: /model/nope does not exist; --vary adds "
                 "keys only to existing objects, so set it whole: /model/nope={...}\n");
}

// ---- Fuzzing findings ------------------------------------------------------------------------

TEST_CASE("Text that is not UTF-8 in --set and --vary is an input error, not exit 3", "[hostile][fuzz]") {
  // fuzz_cli, first minutes of its hour: a --vary list item with bytes that are not UTF-8
  // reached the JSON writer, which throws (an internal error, exit 3); so did --set /name=\xff
  // with JSON output. Both are now refused with one clean line, exit 2.
  const std::string item("\xf1\x8e\xf7\xfa\xfc\x7f\0\0" "64", 11);
  auto r = cli_harness::run({"sweep", "scenarios/b.json", "--vary", "/model/heads=" + item + ",60",
                             "--shard", "1/2", "--no-progress"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(one_clean_line(r.err));
  CHECK_THAT(r.err, Catch::Contains("is not valid UTF-8 text"));
  r = cli_harness::run({"plan", "scenarios/a.json", "--no-thresholds", "--format", "json", "--set",
                        "/name=\xff"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: --set: /name: the value \"\\xff\" is not valid UTF-8 text\n");
  r = cli_harness::run({"sweep", "scenarios/a.json", "--vary", "/name=\xff,b", "--format", "jsonl",
                        "--no-progress"});
  CHECK(r.code == 2);
  CHECK(one_clean_line(r.err));
}

TEST_CASE("Control characters in a scenario's name reach no output raw (issue 32)",
          "[hostile][cli]") {
  // An ESC, CR and newline in the name went to the terminal as they were, and a newline
  // injected a markdown heading; JSON escapes them itself.
  const std::string name = "/name=\"x\\u001b[31mRED\\r\\n# injected\"";
  for (const char* format : {"text", "md", "html"}) {
    INFO(format);
    const auto r = cli_harness::run(
        {"plan", "scenarios/a.json", "--no-thresholds", "--format", format, "--set", name});
    REQUIRE(r.code == 0);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find('\r') == std::string::npos);
    CHECK(r.out.find("\n# injected") == std::string::npos);
    CHECK_THAT(r.out, Catch::Contains("x1b[31mRED") || Catch::Contains("x1b\\[31mRED"));  // shown, escaped
  }
}

// Hostile input, second round (hostile-fixes-2): a valid scenario whose tied band made the
// threshold scans take 22 s, control characters printed raw by check and sweep, --vary ranges
// that overshot or overflowed their ends, contradictions searched into "no configuration
// fits", flags and pinned switches silently ignored, an empty axis explanation, and standard
// input read twice. Each test failed before its fix.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "cli_harness.hpp"
#include "hostile_test_helpers.hpp"
#include "planner/base/error.hpp"
#include "planner/cli/sweep.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/search/search.hpp"
#include "search/collector.hpp"

using namespace hostile_test_helpers;

namespace {

/// No byte a terminal acts on outside the line ends: the escaped output of every format.
bool free_of_raw_controls(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char ch) {
    const auto b = static_cast<unsigned char>(ch);
    return (b < 0x20 && b != '\n') || b == 0x7F;
  });
}

/// Scenario A without its plan, one token per sequence and 2e9 tokens a step, its measured
/// step time kept: every plan is compute-bound at the measured rate, so ~17,000 tie.
json tied_band_scenario() {
  json doc = scenario("scenarios/a.json");
  doc.erase("plan");
  doc.erase("expect");
  doc["model"]["seq_len"] = 1;
  doc["workload"]["global_batch_tokens"] = 2e9;
  return doc;
}

}  // namespace

// ---- 1. A band of thousands of tied plans --------------------------------------------------

TEST_CASE("Holding a plan in the tied band counts as search work", "[hostile2][work]") {
  // Before: the band's plans were stored, moved and sorted as 1.6 KB evaluations and counted
  // as nothing, so the threshold scans' budget (threshold_work_budget) of 1,000,000 steps
  // took seconds per scan here, and `planner plan` 22 s. Now each plan entering the band
  // costs band_entry_work (8) steps, and the work exceeds 8 per tied plan.
  const planner::Scenario s = planner::load_scenario(tied_band_scenario(), "tied.json");
  planner::SearchOptions options;
  options.keep = 1;
  options.accounting = false;
  const planner::SearchResult r = planner::search(planner::make_context(s), options);
  REQUIRE(r.found());
  CHECK(r.tied > 10'000);
  CHECK(r.work >= planner::search_detail::band_entry_work * static_cast<std::int64_t>(r.tied));
}

TEST_CASE("The tied-band scenario answers within the 10 s bound", "[hostile2][work]") {
  // Timed, with a generous bound, because the bound is on the whole command (the main search,
  // the explanation's alternatives, the threshold scans) as the user runs it: 22 s before,
  // about 0.4 s now on one core of the reference machine (the scans report "not searched").
  if (sanitized) return;
  const std::string path = write_file("tied.json", tied_band_scenario().dump());
  int code = -1;
  const auto start = std::chrono::steady_clock::now();
  const std::string out = shell("plan '" + path + "' 2>/dev/null", code);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(code == 0);
  CHECK(seconds < 10);
  CHECK_THAT(out, Catch::Contains("not searched, the search is too large"));
  std::filesystem::remove(path);
}

// ---- 2, 3. Control characters in check and sweep output -----------------------------------

TEST_CASE("check escapes the file name and a figure's pointer", "[hostile2][escape]") {
  // Before: the name's newline and ESC were printed raw ("ok      /tmp/x" then a line
  // "# File\x1b[2J.json": a markdown heading and a terminal clear), and so was the pointer.
  const std::string path = write_file("x\n# File\x1b[2J.json", cli_harness::read("scenarios/a.json"));
  auto r = cli_harness::run({"check", path});
  CHECK(r.code == 0);
  CHECK(free_of_raw_controls(r.out));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  CHECK_THAT(r.out, Catch::Contains("x\\n# File\\x1b[2J.json"));
  r = cli_harness::run({"check", "scenarios/a.json", "--set",
                        "/expect/figures=[{\"pointer\":\"/best/\\u001b[2J\\n\\u0000x\",\"value\":1}]"});
  CHECK(r.code == 1);
  CHECK(free_of_raw_controls(r.out));
  CHECK_THAT(r.out, Catch::Contains("/best/\\x1b[2J\\n\\x00x: expected 1, but the output has no "
                                    "number there"));
  std::filesystem::remove(path);
}

TEST_CASE("sweep escapes control characters of a varied name in CSV and HTML", "[hostile2][escape]") {
  // Before: CSV kept the raw ESC and CR inside its quotes; HTML put ESC, newline and CR into
  // a <title> and the table's cells. JSONL was already escaped by its writer.
  const std::string vary = "/name=x\x1b[2J\n# H\r,b";
  auto r = cli_harness::run({"sweep", "scenarios/a.json", "--vary", vary, "--format", "csv",
                             "--no-progress", "--threads", "1"});
  CHECK(r.code == 0);
  CHECK(free_of_raw_controls(r.out));
  // The comma makes a list of two names: "x\x1b[2J\n# H\r" and "b".
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);  // the header and two points
  CHECK_THAT(r.out, Catch::Contains("\nx\\x1b[2J\\n# H\\r,ok,"));
  r = cli_harness::run({"sweep", "scenarios/a.json", "--vary", vary, "--format", "html",
                        "--no-progress", "--threads", "1"});
  CHECK(r.code == 0);
  CHECK(free_of_raw_controls(r.out));
  CHECK_THAT(r.out, Catch::Contains("x\\x1b[2J\\n# H\\r"));
}

// ---- 4, 5. --vary ranges -------------------------------------------------------------------

TEST_CASE("A --vary range starts and ends exactly at the values typed", "[hostile2][vary]") {
  // Before: 1e-9 * pow(1e9 / 1e-9, 1) = 1000000000.0000001, past request_rate's limit of 1e9,
  // so a valid end was refused (exit 2).
  const json serving = scenario("scenarios/llama31-70b-serving-h100.json");
  for (const auto& [spec, first, last] :
       std::vector<std::tuple<std::string, double, double>>{
           {"/workload/request_rate=1e-9..1e9:2log", 1e-9, 1e9},
           {"/workload/request_rate=0.7..1e9:3log", 0.7, 1e9},
           {"/workload/slo_percentile=1e-5..0.9999:3log", 1e-5, 0.9999}}) {
    INFO(spec);
    const planner::SweepAxis axis = planner::parse_vary(spec, serving);
    REQUIRE(!axis.values.empty());
    CHECK(axis.values.front().get<double>() == first);
    CHECK(axis.values.back().get<double>() == last);
  }
  const planner::SweepAxis latency =
      planner::parse_vary("/cluster/inter_node/latency=0.9s..60s:2log", scenario("scenarios/a.json"));
  CHECK(latency.values.back().get<double>() == 60);
  const auto r = cli_harness::run({"sweep", "scenarios/llama31-70b-serving-h100.json", "--vary",
                                   "/workload/request_rate=1e-9..1e9:2log", "--no-progress",
                                   "--threads", "1"});
  CHECK(r.code != 2);
  CHECK(r.err.find("1000000000.0000001") == std::string::npos);
}

TEST_CASE("An overflowing --vary range is refused as the range typed", "[hostile2][vary]") {
  // Before: 1..1e308:3 on an integer field converted 5e307 to int64 (undefined: reported
  // "got -9223372036854775808"), and -1.7e308..1.7e308:3 computed stop - start = inf, so the
  // first point was inf * 0 = NaN ("got null").
  try {
    (void)planner::parse_vary("/cluster/nodes=1..1e308:3", scenario("scenarios/a.json"));
    FAIL("accepted");
  } catch (const planner::InputError& e) {
    CHECK(std::string(e.what()) ==
          "--vary: '/cluster/nodes=1..1e308:3': point 2 of the range, 5e+307, is outside the "
          "64-bit integers (magnitude up to 9223372036854775807) that /cluster/nodes holds; "
          "narrow the range");
  }
  const planner::SweepAxis axis = planner::parse_vary(
      "/cluster/inter_node/bandwidth=-1.7e308..1.7e308:3", scenario("scenarios/a.json"));
  for (const json& v : axis.values) CHECK(std::isfinite(v.get<double>()));
  const auto r = cli_harness::run({"sweep", "scenarios/a.json", "--vary",
                                   "/cluster/inter_node/bandwidth=-1.7e308..1.7e308:3",
                                   "--no-progress", "--threads", "1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("null") == std::string::npos);
  CHECK(r.err.find("-9223372036854775808") == std::string::npos);
}

// ---- 6. Contradictory --fix items ----------------------------------------------------------

TEST_CASE("Contradictory --fix items are named, not searched", "[hostile2][fix]") {
  // Before: each was searched and reported "No configuration fits" (exit 1) with a reason
  // about some other plan.
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"plan", "scenarios/a.json", "--fix", "dp=64,tp=2"},
       "planner: error: --fix: the pinned degrees contradict the cluster: tp·dp = 2·64 = 128 "
       "must divide the 64 GPUs; loosen one of them\n"},
      {{"plan", "scenarios/a.json", "--fix", "flash=off,cp=2"},
       "planner: error: --fix: cp = 2 contradicts flash=off: context parallelism needs flash "
       "attention (ring attention computes attention in tiles); drop one\n"},
      {{"plan", "scenarios/a.json", "--fix", "recompute=op,flash=off"},
       "planner: error: --fix: recompute=op contradicts flash=off: torchtitan's op-level "
       "checkpointing needs flash attention (its attention is always tiled); drop one\n"},
      {{"export", "scenarios/q2-llama-3.1-70b-64-h100.json", "--to", "megatron", "--fix", "zero=3"},
       "planner: error: --fix: zero = 3 contradicts --to megatron: Megatron-LM shards optimizer "
       "state only (ZeRO-1) (docs/constraints.md); drop one\n"},
      {{"export", "scenarios/q2-llama-3.1-70b-64-h100.json", "--to", "deepspeed", "--fix", "cp=2"},
       "planner: error: --fix: cp = 2 contradicts --to deepspeed: DeepSpeed has no "
       "ring-attention context parallelism (docs/constraints.md); drop one\n"},
      {{"export", "scenarios/q2-llama-3.1-70b-64-h100.json", "--to", "megatron", "--fix",
        "recompute=op"},
       "planner: error: --fix: recompute=op contradicts --to megatron: op-level checkpointing "
       "is torchtitan's (docs/constraints.md); drop one\n"},
      {{"plan", "scenarios/a.json", "--framework", "megatron", "--fix", "zero=3"},
       "planner: error: --fix: zero = 3 contradicts --framework megatron: Megatron-LM shards "
       "optimizer state only (ZeRO-1) (docs/constraints.md); drop one\n"},
  };
  for (const Case& c : cases) {
    INFO(c.args[0] << " " << c.args.back());
    const auto r = cli_harness::run(c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.message);
  }
  // A legal plan under the items is still searched: zero=3 is DeepSpeed's and torchtitan's.
  CHECK(cli_harness::run({"plan", "scenarios/a.json", "--fix", "zero=3", "--no-thresholds"}).code == 0);
}

// ---- 7, 8. Flags and pinned switches no longer ignored --------------------------------------

TEST_CASE("memory refuses --grad-accum on a serving scenario, as the file would", "[hostile2][plan]") {
  // Before: replaced by 1 without a word (exit 0).
  const auto r = cli_harness::run({"memory", "scenarios/mixtral-8x7b-serving-h100.json", "--tp",
                                   "1", "--dp", "8", "--grad-accum", "2"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: command line: /plan/grad_accum: a serving plan needs "
                 "grad_accum = 1 (there is no optimizer step), got 2\n");
}

TEST_CASE("A pinned tp overlap without sequence parallelism is a broken pinned plan", "[hostile2][plan]") {
  // Before: accepted by memory, export and check, then ignored (export dropped
  // --tp-comm-overlap). Scenario A's plan has tp 1 and no sequence parallelism.
  // (pp_comm_overlap without virtual stages stays accepted: it is Megatron-LM's default, and
  // the validation records pin it so.)
  const std::string message =
      "scenarios/a.json: /plan/tp_comm_overlap: tp_comm_overlap needs sequence_parallel: true "
      "(the collectives it runs inside the GEMMs are sequence parallelism's reduce-scatters and "
      "all-gathers); set sequence_parallel to true or remove tp_comm_overlap";
  for (const std::string command : {"memory", "export", "check"}) {
    INFO(command);
    const auto r = cli_harness::run({command, "scenarios/a.json", "--set", "/plan/tp_comm_overlap=true"});
    CHECK(r.code == 2);
    CHECK(r.err == "planner: error: " + message + "\n");
  }
  // plan searches without the pin, with a warning (docs/errors.md §Plans).
  const auto r = cli_harness::run({"plan", "scenarios/a.json", "--set",
                                   "/plan/tp_comm_overlap=true", "--no-thresholds"});
  CHECK(r.code == 0);
  CHECK(r.err == "planner: warning: " + message + "; the pinned plan is ignored (the measured "
                 "step time now calibrates one GPU holding the whole model)\n");
  // Stated false is accepted as before.
  CHECK(cli_harness::run({"memory", "scenarios/a.json", "--set", "/plan/tp_comm_overlap=false"}).code == 0);
}

// ---- 10. The axis explanation ---------------------------------------------------------------

TEST_CASE("An axis no degree above 1 can use is explained, not left empty", "[hostile2][explain]") {
  // Before: "cp = 1: " with nothing after (and "why": "" in JSON): 4093 is prime, so no cp
  // divides it, and the explanation timed no answer with cp.
  auto r = cli_harness::run({"plan", "scenarios/a.json", "--set", "/model/seq_len=4093",
                             "--no-thresholds"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("cp = 1: not used; no cp above 1 divides both seq_len (4093) "
                                    "and the 64 GPUs, as a context-parallel split must"));
  r = cli_harness::run({"plan", "scenarios/a.json", "--set", "/model/seq_len=4093",
                        "--no-thresholds", "--format", "json"});
  CHECK(r.out.find("\"why\":\"\"") == std::string::npos);
  CHECK(r.out.find("\"why\": \"\"") == std::string::npos);
}

// ---- 11. Standard input twice ---------------------------------------------------------------

TEST_CASE("check refuses standard input given twice", "[hostile2][input]") {
  // Before: the second '-' read an empty input after the first had read it all.
  const auto r = cli_harness::run({"check", "-", "-"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: command line: standard input given twice ('-' appears more "
                 "than once); give it once\n");
}

// ---- 9. A figure's unit against the figure ---------------------------------------------------

TEST_CASE("check refuses an expected figure in a unit of another dimension", "[hostile2][input]") {
  // Before: "16 GB/s" against /best/memory/weights (a byte count) was compared by its number,
  // 1.6e10, and passed. A figure whose key does not say its dimension is not checked.
  auto r = cli_harness::run({"check", "scenarios/a.json", "--set",
                             "/expect/figures=[{\"pointer\":\"/best/memory/weights\","
                             "\"value\":\"16 GB/s\"}]"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: scenarios/a.json: /expect/figures/0/value: \"16 GB/s\" is in "
                 "bytes/s, but the figure at /best/memory/weights is in bytes; write the value in a "
                 "unit of bytes, or as a bare number in bytes\n");
  r = cli_harness::run({"check", "scenarios/a.json", "--set",
                        "/expect/figures=[{\"pointer\":\"/best/time/step\",\"value\":\"5 GB\"}]"});
  CHECK(r.code == 2);
  // The bundled expectations, bytes, seconds and bandwidths each in their own unit, pass.
  CHECK(cli_harness::run({"check", "scenarios/a.json"}).code == 0);
  CHECK(cli_harness::run({"check", "scenarios/b.json"}).code == 0);
}

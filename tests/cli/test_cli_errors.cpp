// Every command-line error, one test per class, with the exact text on standard error and
// exit code 2 (docs/errors.md §Command line). Errors in the scenario itself are tested word for
// word in test_scenario_json.cpp; here they only need to come out through the CLI's printer.
#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace {

using cli_harness::run;

/// Runs the CLI and requires a usage error: exit 2, nothing on standard output.
std::string usage_error(const std::vector<std::string>& args) {
  const cli_harness::Run r = run(args);
  INFO("stdout: " << r.out);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  return r.err;
}

/// CLI11's parse errors get the one-line prefix and a pointer to --help.
std::string parse_error(const std::string& message) {
  return "planner: error: " + message + "\nRun 'planner --help' for usage.\n";
}

std::string error_line(const std::string& message) { return "planner: error: " + message + "\n"; }

/// A valid scenario without a pinned plan or expectations, in a file of its own (scenario files
/// in scenarios/ belong to other tests and may gain a plan).
std::string planless_scenario() {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("planner_test_cli_errors_planless_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({
  "model": {"layers": 4, "hidden": 512, "heads": 8, "vocab": 1000, "seq_len": 1024},
  "cluster": {"nodes": 1, "gpus_per_node": 8,
    "gpu": {"memory": "80 GiB", "memory_bandwidth": "2 TB/s", "flops": "300 TFLOP/s"},
    "intra_node": {"bandwidth": "300 GB/s", "latency": "5 us"},
    "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}},
  "workload": {"kind": "training", "global_batch_tokens": 65536}
})";
  return path.string();
}

}  // namespace

TEST_CASE("CLI: an unknown subcommand or flag is a usage error", "[cli][errors]") {
  CHECK(usage_error({"frobnicate"}) ==
        parse_error("The following argument was not expected: frobnicate"));
  CHECK(usage_error({"plan", "scenarios/a.json", "--bogus"}) ==
        parse_error("The following argument was not expected: --bogus"));
  CHECK(usage_error({"plan"}) == parse_error("scenario is required"));
  CHECK(usage_error({"plan", "scenarios/a.json", "--format", "xml"}) ==
        parse_error("--format: xml not in {text,json,csv,md,html}"));
  CHECK(usage_error({"plan", "scenarios/a.json", "--top", "0"}) ==
        parse_error("--top: Value 0 not in range 1 to 1000"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--zero", "4"}) ==
        parse_error("--zero: Value 4 not in range 0 to 3"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--recompute", "ful"}) ==
        parse_error("--recompute: ful not in {none,selective,op,full}"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--tp", "abc"}) ==
        parse_error("Could not convert: --tp = abc"));
}

TEST_CASE("CLI: a missing or unreadable file names the path", "[cli][errors]") {
  CHECK(usage_error({"plan", "nope.json"}) ==
        error_line("nope.json: cannot open file: No such file or directory"));
}

TEST_CASE("CLI: memory without a pinned plan or degree flags", "[cli][errors]") {
  const std::string file = planless_scenario();
  CHECK(usage_error({"memory", file}) ==
        error_line(file +
                   ": /plan: no plan to evaluate: pin one under \"plan\" or pass "
                   "--tp/--pp/--cp/--dp (or run 'planner plan' to search)"));
  // With a degree flag the rest is filled in: dp = 8 GPUs / tp 2 = 4.
  const cli_harness::Run r = run({"memory", file, "--tp", "2", "--format", "csv"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
}

TEST_CASE("CLI: check on a scenario without expectations", "[cli][errors]") {
  const std::string file = planless_scenario();
  CHECK(usage_error({"check", file}) ==
        error_line(file + ": /expect: nothing to check: add an \"expect\" object"));
}

TEST_CASE("CLI: --placement must be a permutation of the four axes", "[cli][errors]") {
  CHECK(usage_error({"memory", "scenarios/a.json", "--placement", "tp,cp,xx,pp"}) ==
        error_line("--placement: unknown axis 'xx'; expected a permutation of tp,cp,dp,pp"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--placement", "tp,tp,dp,pp"}) ==
        error_line("--placement: expected each of tp, cp, dp, pp exactly once, e.g. tp,cp,dp,pp"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--placement", "tp,cp,dp"}) ==
        error_line("--placement: expected each of tp, cp, dp, pp exactly once, e.g. tp,cp,dp,pp"));
}

TEST_CASE("CLI: memory's integer flags are range-checked before any arithmetic", "[cli][errors]") {
  // The loader's limits for the same plan fields: degrees 1..2^24, micro-batch and
  // accumulation 1..2^16 (docs/errors.md §Limits). Before the check, --dp 0 divided the batch
  // target by zero, --micro-batch 0 cast an infinity to an integer, and --tp 2^32 --pp 2^32
  // overflowed int64 (UBSan reports found while writing these tests).
  CHECK(usage_error({"memory", "scenarios/a.json", "--tp", "0"}) ==
        error_line("command line: /plan/tp: expected a positive integer, got 0"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--dp", "0"}) ==
        error_line("command line: /plan/dp: expected a positive integer, got 0"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--micro-batch", "0"}) ==
        error_line("command line: /plan/micro_batch: expected a positive integer, got 0"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--grad-accum", "-3"}) ==
        error_line("command line: /plan/grad_accum: expected a positive integer, got -3"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--micro-batch", "65537"}) ==
        error_line("command line: /plan/micro_batch: expected a positive integer no greater "
                   "than 65536 (2^16), got 65537"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--tp", "4294967296", "--pp", "4294967296"}) ==
        error_line("command line: /plan/tp: expected a positive integer no greater than "
                   "16777216 (2^24), got 4294967296"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--micro-batch", "9223372036854775807",
                     "--grad-accum", "4"}) ==
        error_line("command line: /plan/micro_batch: expected a positive integer no greater "
                   "than 65536 (2^16), got 9223372036854775807"));
  // Three degrees at the limit: tp·pp·cp = 2^72 overflows int64, so dp cannot be derived;
  // the world-size check reports the product.
  CHECK(usage_error({"memory", "scenarios/a.json", "--tp", "16777216", "--pp", "16777216",
                     "--cp", "16777216"}) ==
        error_line("command line: /plan: world size is 64 GPUs (8 nodes × 8) but dp·tp·pp·cp = "
                   "1·16777216·16777216·16777216 = more than 2^63; the product must equal 64"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--tp", "3"}) ==
        error_line("command line: /plan: world size is 64 GPUs (8 nodes × 8) but dp·tp·pp·cp = "
                   "21·3·1·1 = 63; the product must equal 64"));
}

TEST_CASE("CLI: --set errors name the override", "[cli][errors]") {
  CHECK(usage_error({"plan", "scenarios/a.json", "--set", "/cluster/nodes"}) ==
        error_line("--set: expected POINTER=VALUE, such as /cluster/nodes=16, got "
                   "\"/cluster/nodes\""));
  CHECK(usage_error({"plan", "scenarios/a.json", "--set", "cluster/nodes=4"}) ==
        error_line("--set: cluster/nodes: a JSON pointer starts with '/', such as "
                   "/cluster/nodes (did you mean /cluster/nodes?)"));
  CHECK(usage_error({"plan", "scenarios/a.json", "--set", "/a~2=1"}) ==
        error_line("--set: /a~2: malformed JSON pointer: escape character '~' must be followed "
                   "with '0' or '1'"));
  CHECK(usage_error({"plan", "scenarios/a.json", "--set", "/cluster/gpux/memory=1"}) ==
        error_line("--set: /cluster/gpux/memory: /cluster/gpux does not exist (did you mean "
                   "'gpu'?); --set adds keys only to existing objects"));
  CHECK(usage_error({"plan", "scenarios/a.json", "--set", "/model/layers/x=1"}) ==
        error_line("--set: /model/layers/x: /model/layers is not an object; --set replaces "
                   "keys of objects only"));
  // A well-formed override with a bad value is the loader's error, against the file.
  CHECK(usage_error({"plan", "scenarios/a.json", "--set", "/cluster/nodes=0"}) ==
        error_line("scenarios/a.json: /cluster/nodes: expected a positive integer, got 0"));
  CHECK(usage_error({"memory", "scenarios/a.json", "--set", "/cluster/inter_node/latency=-1us"}) ==
        error_line("scenarios/a.json: /cluster/inter_node/latency: expected a non-negative time "
                   "in seconds, got \"-1us\""));
}

TEST_CASE("CLI: sweep --vary and --shard errors", "[cli][errors][sweep]") {
  const std::string shape =
      "expected POINTER=V1,V2,... or POINTER=START..STOP:STEPS[log], with POINTER a JSON "
      "pointer such as /cluster/inter_node/bandwidth";
  CHECK(usage_error({"sweep", "scenarios/a.json"}) == parse_error("--vary is required"));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "nodes=1,2"}) ==
        error_line("--vary: 'nodes=1,2': " + shape));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes"}) ==
        error_line("--vary: '/cluster/nodes': " + shape));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=1..4"}) ==
        error_line("--vary: '/cluster/nodes=1..4': a range needs ':STEPS', e.g. "
                   "5GB/s..400GB/s:20log"));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=1..4:0"}) ==
        error_line("--vary: '/cluster/nodes=1..4:0': STEPS must be an integer from 1 to "
                   "1000000, got '0'"));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=0..4:3log"}) ==
        error_line("--vary: '/cluster/nodes=0..4:3log': a log range needs positive ends"));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=1,,2"}) ==
        error_line("--vary: '/cluster/nodes=1,,2': empty item in the list"));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=1..2:1000000",
                     "--vary", "/cluster/gpus_per_node=1..2:1000"}) ==
        error_line("--vary: the grid has more than 10000000 points"));
  // Every point is loaded before any is planned; a bad one names its index.
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=8,0"}) ==
        error_line("scenarios/a.json (sweep point 2): /cluster/nodes: expected a positive "
                   "integer, got 0"));
  CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=1,2", "--format",
                     "xml"}) == parse_error("--format: xml not in {csv,jsonl,html}"));
  for (const std::string shard : {"3/2", "x", "0/2", "1/0", "1/", "/2", "1/2/3"}) {
    CAPTURE(shard);
    CHECK(usage_error({"sweep", "scenarios/a.json", "--vary", "/cluster/nodes=1,2", "--shard",
                       shard}) ==
          error_line("--shard: expected K/N with 1 <= K <= N, got '" + shard + "'"));
  }
}

TEST_CASE("CLI: collective flags", "[cli][errors]") {
  const auto collective = [](const std::string& gpus, const std::string& bw,
                             const std::string& latency, const std::string& bytes) {
    return usage_error({"collective", "--gpus", gpus, "--bw", bw, "--latency", latency,
                        "--bytes", bytes, "--format", "json"});
  };
  CHECK(collective("0", "1", "1", "1") ==
        error_line("command line: --gpus must be between 1 and 16777216, got 0"));
  CHECK(collective("16777217", "1", "1", "1") ==
        error_line("command line: --gpus must be between 1 and 16777216, got 16777217"));
  CHECK(collective("8", "0", "1", "1") ==
        error_line("command line: --bw must be a positive number, got 0"));
  CHECK(collective("8", "1", "1", "nan") ==
        error_line("command line: --bytes must be a positive number, got nan"));
  CHECK(collective("8", "1", "-1", "1") ==
        error_line("command line: --latency must be >= 0 microseconds, got -1"));
  // Below the loader's 1 B/s the wire time of 1e18 bytes was infinite: JSON output failed
  // with an internal error (exit 3) and text printed "inf ms".
  CHECK(collective("8", "1e-300", "0", "1e18") ==
        error_line("command line: --bw must be from 1e-09 to 1e+09 GB/s (1 B/s to 1e18 B/s), "
                   "got 1e-300"));
  CHECK(usage_error({"collective", "--gpus", "8", "--bw", "1", "--latency", "1"}) ==
        parse_error("--bytes is required"));
  const auto two = [](const std::string& per_node, std::vector<std::string> more) {
    std::vector<std::string> args{"collective", "--gpus", "64", "--bw", "50", "--latency", "15",
                                  "--bytes", "1e9", "--per-node", per_node};
    args.insert(args.end(), more.begin(), more.end());
    return usage_error(args);
  };
  CHECK(two("3", {"--node-bw", "300", "--node-latency", "5"}) ==
        error_line("command line: --per-node must be a divisor of --gpus from 2 to 32 (the "
                   "group's ranks in each node), got 3"));
  CHECK(two("8", {"--node-latency", "5"}) ==
        error_line("command line: --per-node needs --node-bw (GB/s per GPU inside the node)"));
  CHECK(two("8", {"--node-bw", "300"}) ==
        error_line("command line: --per-node needs --node-latency (microseconds per hop inside "
                   "the node)"));
}

TEST_CASE("Contradictions and broken pinned plans are named, exit 2 (issue 32)", "[cli][errors]") {
  // export and check stop on a broken pinned plan, as docs/errors.md §Plans says; before, they
  // warned, searched without it and exited 0 with arguments for another plan.
  for (const char* command : {"export", "check"}) {
    INFO(command);
    std::vector<std::string> args{command, "scenarios/a.json", "--set", "/plan/tp=3"};
    if (std::string(command) == "export") args.insert(args.end(), {"--to", "megatron"});
    const auto r = cli_harness::run(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("scenarios/a.json: /plan: world size is 64 GPUs"));
    CHECK_THAT(r.err, !Catch::Contains("warning"));
  }
  // --to names the framework; --framework naming another was overridden silently.
  auto r = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "megatron", "--framework", "deepspeed"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("--framework: deepspeed contradicts --to megatron"));
  // Two bounds that leave no degree were "No configuration fits." (exit 1).
  r = cli_harness::run({"plan", "scenarios/a.json", "--fix", "tp=8,tp=4", "--no-thresholds"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("--fix: item 'tp=4' contradicts an earlier bound on tp "
                                    "(from 8 to 8"));
  r = cli_harness::run({"plan", "scenarios/a.json", "--fix", "tp>=4,tp<=2", "--no-thresholds"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("item 'tp<=2' contradicts an earlier bound on tp (from 4 to "
                                    "any"));
  r = cli_harness::run({"plan", "scenarios/a.json", "--fix", "sp=on,sp=off", "--no-thresholds"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("item 'sp=off' contradicts an earlier value"));
  // Repeating the same value is no contradiction.
  r = cli_harness::run({"plan", "scenarios/a.json", "--fix", "zero=1,zero<=1", "--no-thresholds"});
  CHECK(r.code != 2);
}

TEST_CASE("Empty option values, a second 16-bit rate and a symbolic-link loop are input errors",
          "[cli][errors]") {
  // Issue 32: `--framework ''` and `--fix ''` were taken as absent (exit 0).
  for (const char* flag : {"--framework", "--fix", "--rank"}) {
    INFO(flag);
    const auto r = cli_harness::run({"plan", "scenarios/a.json", flag, "", "--no-thresholds"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(std::string(flag) + ": empty value"));
  }
  // flops_by_dtype.bf16 replaced gpu.flops for the GEMMs alone, silently.
  auto r = cli_harness::run({"plan", "scenarios/a.json", "--no-thresholds", "--set",
                             "/cluster/gpu/flops_by_dtype={\"bf16\": \"300 TFLOP/s\"}"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/cluster/gpu/flops_by_dtype/bf16: the 16-bit GEMM rate is "
                                    "/cluster/gpu/flops"));
  // A directory entry in a symbolic-link loop threw from std::filesystem (exit 3).
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("planner-loop-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink(dir / "x.json", dir / "x.json");
  r = cli_harness::run({"validate", dir.string()});
  std::filesystem::remove_all(dir);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("x.json: cannot read: Too many levels of symbolic links"));
}

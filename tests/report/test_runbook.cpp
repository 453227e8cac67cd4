// planner export --to runbook (issue 31; docs/resilience.md §8).
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace {

double tokens_per_second(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"plan", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                "--no-thresholds", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = cli_harness::run(args);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out).at("best").at("time").at("tokens_per_second").get<double>();
}

}  // namespace

TEST_CASE("runbook: timings to log, the timeout, checkpoints and the node-loss fallback",
          "[export][runbook]") {
  const auto r = cli_harness::run(
      {"export", "scenarios/q2-llama-3.1-70b-64-h100.json", "--to", "runbook"});
  REQUIRE(r.code == 0);
  for (const char* section : {"## Per-rank timings to log", "## Collective timeout (watchdog)",
                              "## Checkpoints and restart", "## If a node is lost"}) {
    CHECK_THAT(r.out, Catch::Contains(section));
  }
  // The plan is plan's recommendation; its axes' collectives are the rows to log.
  CHECK_THAT(r.out, Catch::Contains("| tp all-reduce (each of 320 per micro-batch) |"));
  CHECK_THAT(r.out, Catch::Contains("| cp ring step (K/V block) |"));
  // The fallback is the search on 7 of the 8 nodes: its share of the full job's throughput is
  // the ratio of two plain `plan` runs, at 7 nodes and at 8.
  const double share = tokens_per_second({"--set", "/cluster/nodes=7"}) / tokens_per_second({});
  CHECK_THAT(r.out, Catch::Contains("on 7 nodes: ") &&
                        Catch::Contains(fmt::format("({:.1f} % of the full job's tokens/s)",
                                                    100.0 * share)));
  // q2 has no resilience object: the runbook says how to get the checkpoint figures.
  CHECK_THAT(r.out, Catch::Contains("The scenario has no \"resilience\" object"));
}

TEST_CASE("runbook: the scenario's timeout against the plan's longest healthy wait",
          "[export][runbook]") {
  // eight-gpu-restart detects a hang after 5 min (its resilience.restart.detect); its step is
  // 13.2 s, so twice the longest healthy wait is well under it. On one node there is no
  // smaller job to fall back to.
  const auto r =
      cli_harness::run({"export", "scenarios/eight-gpu-restart.json", "--to", "runbook"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("The scenario's timeout 5.0 min leaves that margin"));
  CHECK_THAT(r.out, Catch::Contains("there is no smaller job to fall back to"));
  CHECK_THAT(r.out, Catch::Contains("the restart budget is 15.0 min (not met"));
  // A serving scenario has no training job to run.
  const auto serving = cli_harness::run(
      {"export", "scenarios/llama3-8b-serving-h100.json", "--to", "runbook"});
  CHECK(serving.code == 2);
  CHECK_THAT(serving.err, Catch::Contains("/workload/kind: the runbook is for a training job"));
}

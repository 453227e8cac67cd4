// Split from test_properties.cpp (files stay under 500 lines).
// Properties of the model and the planner on random small scenarios (issue 5). Each property
// is argued in a comment from the definitions in docs/model.md and docs/ranking.md; the test
// checks the argument, not a value read off the program. Scenarios come from std::mt19937_64
// with a fixed seed (set PLANNER_PROPERTY_SEED to try another); a failure prints the seed, the
// scenario's index and the scenario itself as JSON, so it can be replayed with `planner plan`.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "answer_key_inputs.hpp"
#include "cli_harness.hpp"
#include "planner/io/context.hpp"
#include "planner/model/collectives.hpp"
#include "planner/base/error.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/memory.hpp"
#include "planner/search/rank.hpp"
#include "planner/report/report.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/regime.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

using namespace planner;
using nlohmann::json;

#include "property_test_helpers.hpp"

using namespace property_test_helpers;

TEST_CASE("Property: collective time grows with bytes and latency and respects the bandwidth "
          "bound",
          "[properties]") {
  // α–β costs (docs/model.md §4): every algorithm's time is a sum of latency·(count ≥ 0) and
  // bytes/bandwidth·(count ≥ 0), so it cannot fall when bytes or latency grow. And no
  // algorithm beats the wire: in an all-gather (reduce-scatter) each rank must receive (send)
  // the (n−1)/n of the buffer it does not hold, through its link of bandwidth B; a ring
  // all-reduce is a reduce-scatter then an all-gather, 2(n−1)/n·M/B; whatever algorithm is
  // cheapest, an all-reduce must at least deliver to each rank the (n−1)/n·M it lacks.
  Random r(property_seed() + 3);
  const std::array<Collective, 5> ops{Collective::all_reduce, Collective::all_gather,
                                      Collective::reduce_scatter, Collective::all_to_all,
                                      Collective::point_to_point};
  constexpr double rounding = 1 - 1e-12;  // the bound and the model round differently
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t n = r.coin(0.2) ? r.integer(2, 16) : r.integer(2, std::int64_t{1} << 24);
    const double bytes = r.log_uniform(1, 1e13);
    const Tier tier{r.log_uniform(1, 1e18), r.coin(0.2) ? 0.0 : r.log_uniform(1e-9, 1e-2), 0,
                    false, "link"};
    const Tier slower{tier.bandwidth_bytes_per_second, tier.latency_seconds * r.uniform(1, 10), 0,
                      false, "slower link"};
    const double more = bytes * r.uniform(1, 10);
    const bool inside = r.coin();
    CAPTURE(i, n, bytes, tier.bandwidth_bytes_per_second, tier.latency_seconds, inside);
    const double wire = bytes / tier.bandwidth_bytes_per_second;
    const double share = static_cast<double>(n - 1) / static_cast<double>(n);
    for (const Collective op : ops) {
      for (const Algorithm a : all_algorithms) {
        if (!available(op, a, inside)) continue;
        const double t = collective_cost(op, a, n, bytes, tier).seconds();
        CHECK(collective_cost(op, a, n, more, tier).seconds() >= t);
        CHECK(collective_cost(op, a, n, bytes, slower).seconds() >= t);
        if (op == Collective::all_gather || op == Collective::reduce_scatter) {
          CHECK(t >= share * wire * rounding);
        }
        if (op == Collective::all_reduce && a == Algorithm::ring) {
          CHECK(t >= 2 * share * wire * rounding);
        }
        if (op == Collective::point_to_point) CHECK(t >= wire * rounding);
      }
      const double cheapest = cheapest_collective(op, n, bytes, tier, inside).seconds();
      if (op != Collective::point_to_point) CHECK(cheapest >= share * wire * rounding);
      CHECK(cheapest_collective(op, n, more, tier, inside).seconds() >= cheapest);
      CHECK(cheapest_collective(op, n, bytes, slower, inside).seconds() >= cheapest);
      // A group of one rank moves nothing.
      if (op != Collective::point_to_point) {
        CHECK(cheapest_collective(op, 1, bytes, tier, inside).seconds() == 0);
      }
    }
  }
}

TEST_CASE("Property: more bandwidth never makes the recommendation slower", "[properties]") {
  // Every plan's time is non-increasing in each tier's bandwidth (collective costs fall; the
  // exposure max(min(bucket, comm), comm − window) and the step's sums are non-decreasing in
  // them) and memory does not depend on bandwidth, so the same plans fit. The rank key starts
  // with the 1 % time step (after the SLO for serving): the winner's step at the higher
  // bandwidth is at most the old winner's step there, which is at most its step before. Within
  // a step the simpler plan wins, so the winner's exact time may rise, by less than the step:
  // new time < 1.01 × old time. For serving, a winner that met the SLO still has a plan that
  // does, and a missed SLO can only turn into a met one, at a lower time.
  Random r(property_seed() + 4);
  const std::vector<json> docs = scenarios();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    for (const char* tier : {"intra_node", "inter_node"}) {
      json faster = docs[i];
      const double factor = r.log_uniform(1.01, 100);
      faster["cluster"][tier]["bandwidth"] =
          std::min(1e18, faster["cluster"][tier]["bandwidth"].get<double>() * factor);
      INFO("seed " << property_seed() << ", scenario " << i << ", " << tier << " × " << factor
                   << ": " << docs[i].dump());
      const Context slow_ctx = make_context(load(docs[i]));
      const Context fast_ctx = make_context(load(faster));
      const SearchResult slow = search(slow_ctx);
      const SearchResult fast = search(fast_ctx);
      REQUIRE(slow.found() == fast.found());
      if (!slow.found()) continue;
      const RankKey& before = slow.keys.front();
      const RankKey& after = fast.keys.front();
      CHECK(after.misses_slo <= before.misses_slo);
      CHECK(after.time <= before.time);
      CHECK(after.exact_time < before.exact_time * 1.01);
      if (slow_ctx.workload.kind == WorkloadKind::training) {
        CHECK(fast.ranked.front().training.tokens_per_second >
              slow.ranked.front().training.tokens_per_second / 1.01);
      } else {
        CHECK(fast.ranked.front().serving.per_token_seconds <
              slow.ranked.front().serving.per_token_seconds * 1.01);
      }
    }
  }
}

TEST_CASE("Property: output is byte-identical across runs", "[properties][determinism]") {
  // The search and the explanation are pure functions of the scenario (docs/ranking.md: keys
  // sorted with exact comparisons, a total order), so the same command prints the same bytes.
  for (const std::string name : {"a", "b", "c", "d"}) {
    const std::string file = "scenarios/" + name + ".json";
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"plan", file, "--format", "json"},
                                               {"plan", file, "--format", "text", "--no-thresholds"},
                                               {"plan", file, "--format", "csv"},
                                               {"memory", file, "--format", "json"}}) {
      CAPTURE(args);
      const cli_harness::Run first = cli_harness::run(args);
      const cli_harness::Run second = cli_harness::run(args);
      CHECK(first.code == second.code);
      CHECK(first.out == second.out);
      CHECK(first.err == second.err);
      CHECK_FALSE(first.out.empty());
    }
  }
}

TEST_CASE("Property: a sweep prints the same bytes on 1 thread and on 2", "[properties][determinism]") {
  // Points are written in grid order whatever the thread count (docs/output.md §sweep), and
  // each point is a pure function of its scenario.
  for (const std::string format : {"csv", "jsonl"}) {
    std::vector<std::string> args{"sweep", "scenarios/a.json",
                                  "--vary", "/cluster/inter_node/bandwidth=5GB/s..400GB/s:4log",
                                  "--vary", "/workload/global_batch_tokens=1e6,4e6",
                                  "--format", format, "--no-progress"};
    args.insert(args.end(), {"--threads", "1"});
    const cli_harness::Run one = cli_harness::run(args);
    args.back() = "2";
    const cli_harness::Run two = cli_harness::run(args);
    CAPTURE(format, one.err);
    REQUIRE(one.code == 0);
    CHECK(two.code == 0);
    CHECK(one.out == two.out);
    // Header (csv only) and one line per point of the 4 × 2 grid.
    CHECK(std::count(one.out.begin(), one.out.end(), '\n') == (format == "csv" ? 9 : 8));
  }
}

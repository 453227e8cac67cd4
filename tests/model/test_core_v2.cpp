// Core v2 (issue 8) end to end from a scenario file: a third network tier between the node and
// the network, and dtypes other than bf16. Every expected figure is computed here by hand from
// the formulas of docs/model.md, not read back from the planner.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "cli_harness.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/schedule.hpp"

using nlohmann::json;

namespace {

json memory_json(std::vector<std::string> extra) {
  std::vector<std::string> args{"memory", "tests/data/three_tiers.json", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const cli_harness::Run r = cli_harness::run(args);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

/// α–β all-reduce over n ranks of M bytes, the cheaper of ring 2(n−1)/n·M/B + 2(n−1)α and
/// tree 2⌈log2 n⌉α + 2M/B (docs/model.md §4; no one-shot off the node's peer-memory domain).
double all_reduce_seconds(double n, double bytes, double bandwidth, double latency) {
  const double ring = 2 * (n - 1) / n * bytes / bandwidth + 2 * (n - 1) * latency;
  const double tree = 2 * std::ceil(std::log2(n)) * latency + 2 * bytes / bandwidth;
  return std::min(ring, tree);
}

}  // namespace

TEST_CASE("a tensor-parallel group of 8 over 4-GPU nodes in 16-GPU domains pays the domain tier") {
  const json j = memory_json({});
  const json& plan = j.at("plan");
  CHECK(plan.at("placement").at("tp").get<std::string>() == "rack");  // 8 | 16, 8 ∤ 4
  CHECK(plan.at("placement").at("dp").get<std::string>() == "inter_node");  // 32 ∤ 16
  // One message: s·b·h·2 bytes = 4096·1·4096·2; on the rack tier at 200 GB/s, 4 us.
  const double message = 4096.0 * 4096.0 * 2.0;
  const double expected = all_reduce_seconds(8, message, 200e9, 4e-6);
  // Per micro-batch 4 all-reduces per layer × 8 layers (no full recompute).
  const double tp_seconds = plan.at("time").at("tp").get<double>() / 32.0;
  CHECK(tp_seconds == Approx(expected).epsilon(1e-9));
}

TEST_CASE("an fp8 compute dtype runs the blocks' GEMMs at the fp8 rate, and fp8 activations halve the messages") {
  const json bf16 = memory_json({});
  const json fp8 = memory_json({"--set", "/model/precision={\"compute\": \"fp8\", \"activations\": \"fp8\"}"});
  const double dense_bf16 = bf16.at("plan").at("time").at("dense").get<double>();
  const double dense_fp8 = fp8.at("plan").at("time").at("dense").get<double>();
  // The blocks' GEMMs at 600 TFLOP/s, the two 32000 × 4096 tables (embedding, untied output
  // layer) at the bf16 300 (docs/moe.md §7). Parameters: 8 layers of 2h² + 2·h·h_kv + 3·h·f
  // + 4h = 218,120,192 and the final norm 2h; tables 2·32000·4096.
  const double blocks = 8 * 218120192.0 + 2 * 4096.0;
  const double tables = 2.0 * 32000 * 4096;
  CHECK(dense_fp8 == Approx(dense_bf16 * (blocks * 300.0 / 600.0 + tables) / (blocks + tables))
                         .epsilon(1e-12));
  const double message = 4096.0 * 4096.0 * 1.0;  // one byte per element
  const double expected = all_reduce_seconds(8, message, 200e9, 4e-6);
  CHECK(fp8.at("plan").at("time").at("tp").get<double>() / 32.0 == Approx(expected).epsilon(1e-9));
  // Activations of a layer: s·b·(10h/tp' + (4h + 4h_kv + 6f)/tp) at 1 byte instead of 2,
  // so exactly half.
  CHECK(fp8.at("plan").at("memory").at("activations").get<double>() ==
        Approx(bf16.at("plan").at("memory").at("activations").get<double>() / 2).epsilon(1e-12));
}

TEST_CASE("a compute dtype without a rate is refused with the key to add") {
  const cli_harness::Run r = cli_harness::run(
      {"memory", "tests/data/three_tiers.json", "--set", "/model/precision={\"compute\": \"int8\"}"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "planner: error: tests/data/three_tiers.json: /model/precision/compute: no FLOP rate for "
        "int8: add /cluster/gpu/flops_by_dtype/int8, such as \"800 TFLOP/s\"\n");
}

TEST_CASE("a domain must be a multiple of the tier inside and a proper divisor of the world") {
  auto with_domain_gpus = [](int gpus) {
    return cli_harness::run({"memory", "tests/data/three_tiers.json", "--set",
                             "/cluster/domains=[{\"name\": \"rack\", \"gpus\": " +
                                 std::to_string(gpus) +
                                 ", \"bandwidth\": \"200 GB/s\", \"latency\": \"4 us\"}]"});
  };
  const cli_harness::Run r = with_domain_gpus(6);
  CHECK(r.code == 2);
  CHECK(r.err.find("/cluster/domains/0/gpus: expected a multiple of 4") != std::string::npos);
  const cli_harness::Run whole = with_domain_gpus(32);
  CHECK(whole.code == 2);
  CHECK(whole.err.find("a proper divisor of the 32 GPUs") != std::string::npos);
}

TEST_CASE("the axis table names every axis once and the plan's degrees through it") {
  planner::Plan p;
  p.tp = 2;
  p.cp = 3;
  p.dp = 5;
  p.pp = 7;
  CHECK(planner::gpus(p) == 2 * 3 * 5 * 7);
  for (const planner::AxisInfo& row : planner::axes) {
    CHECK(planner::axis_named(row.name) == row.axis);
  }
  CHECK(planner::degree(p, planner::Axis::cp) == 3);
}

TEST_CASE("1F1B: p − s − 1 warm-up forwards, then alternation, every pass once") {
  planner::Plan p;
  p.pp = 4;
  p.grad_accum = 6;
  for (std::int64_t stage = 0; stage < 4; ++stage) {
    const auto ops = planner::stage_timeline(p, stage);
    REQUIRE(ops.size() == 12);
    std::int64_t leading_forwards = 0;
    while (ops[static_cast<std::size_t>(leading_forwards)].forward) ++leading_forwards;
    CHECK(leading_forwards == 4 - stage);  // warm-up p − s − 1, then the first steady forward
  }
  CHECK(planner::bubble_fraction(p) == Approx(3.0 / 6.0));
  CHECK(planner::in_flight_micro_batches(p) == 4);
}

TEST_CASE("axis_tiers gives every axis the tier axis_tier gives it, on three tiers",
          "[core_v2][placement]") {
  // The one-pass computation the search's placement loop uses against the per-axis rule
  // (stride·degree divides the domain, docs/model.md §5), over every order of the axes.
  using namespace planner;
  Cluster c;
  c.nodes = 16;
  c.gpus_per_node = 4;
  c.tiers = {Tier{1e12, 1e-6, 0, true, "intra_node"}, Tier{5e11, 2e-6, 16, false, "rack"},
             Tier{5e10, 5e-6, 0, false, "inter_node"}};
  for (const std::array<std::int64_t, 4> d :
       {std::array<std::int64_t, 4>{2, 2, 4, 4}, {4, 1, 8, 2}, {1, 8, 2, 4}, {8, 2, 1, 4}}) {
    Plan p;
    p.tp = d[0];
    p.cp = d[1];
    p.dp = d[2];
    p.pp = d[3];
    Placement order = default_placement;
    std::sort(order.begin(), order.end());
    do {
      p.placement = order;
      const auto all = axis_tiers(p, c);
      for (const AxisInfo& row : axes) {
        CHECK(all[static_cast<std::size_t>(row.axis)] == axis_tier(p, c, row.axis));
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

// The ranking rule on small hand-made scenarios; each test argues its expected answer.
#include <catch2/catch.hpp>

#include "answer_key_inputs.hpp"
#include "planner/io/context.hpp"
#include "planner/search/rank.hpp"
#include "planner/search/search.hpp"

using namespace planner;

namespace {

// 2 nodes × 4 GPUs, 80 GiB each, 100 TFLOP/s; intra 200 GB/s and 2 µs, inter 10 GB/s, 10 µs.
Cluster small_cluster() {
  Cluster c;
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.gpu.memory_bytes = 80 * gib;
  c.gpu.memory_bandwidth_bytes_per_second = 2e12;
  c.gpu.flops_per_second = 100e12;
  c.gpu.reserve_bytes = 0;
  c.node_tier() = {200e9, 2e-6, 0, true, "intra_node"};
  c.network_tier() = {10e9, 10e-6, 0, false, "inter_node"};
  return c;
}

Scenario training(double params, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                  std::int64_t seq, double batch_tokens) {
  Scenario s;
  s.model = answer_key::gpt(layers, hidden, heads, seq, params);
  s.cluster = small_cluster();
  s.workload.training.global_batch_tokens = batch_tokens;
  return s;
}

Plan best_plan(const Scenario& s) {
  const SearchResult r = search(make_context(s));
  REQUIRE(r.found());
  return r.ranked.front().plan;
}

}  // namespace

TEST_CASE("A model that fits one GPU trains with pure data parallelism", "[ranking]") {
  // 1e9 parameters: 16 GB of state fits 80 GiB. Any tp/pp/cp adds traffic on the critical
  // path, while the 2 GB gradient over 8 ranks (about 0.35 s at 10 GB/s) hides behind the
  // backward of 64 sequences of 2048 tokens (6·1e9·2048·64/100e12 ≈ 7.9 s of compute per
  // replica). So dp = 8 and no model axis.
  const Plan p = best_plan(training(1e9, 16, 2048, 16, 2048, 8 * 64 * 2048.0));
  CHECK(p.dp == 8);
  CHECK(p.tp == 1);
  CHECK(p.pp == 1);
  CHECK(p.cp == 1);
}

TEST_CASE("Tensor parallelism stays inside the node", "[ranking]") {
  // 12e9 parameters: 192 GB of state cannot fit 80 GiB unsharded. Among plans that use tp,
  // a tp group across nodes pays 10 GB/s instead of 200 GB/s on every layer's all-reduces
  // (20x the wire time on the critical path), so the best tp plan keeps its group in a node
  // and never uses tp = 8, which cannot fit in a 4-GPU node.
  const Scenario s = training(12e9, 40, 5120, 40, 2048, 8 * 32 * 2048.0);
  SearchOptions o;
  o.filter.require(Axis::tp);
  const SearchResult r = search(make_context(s), o);
  REQUIRE(r.found());
  const Plan& p = r.ranked.front().plan;
  CHECK(p.tp > 1);
  CHECK(p.tp <= 4);
  CHECK(inside_node(p, s.cluster, Axis::tp));
}

TEST_CASE("With a free network, the simpler plan wins the tie", "[ranking]") {
  // Infinite bandwidth and zero latency make every collective free, so dp = 8 and tp 2 × dp 4
  // do the same work per GPU in the same time: they fall in the same 1 % time step and the
  // rule prefers fewer model-parallel axes.
  Scenario s = training(1e9, 16, 2048, 16, 2048, 8 * 16 * 2048.0);
  s.cluster.node_tier() = {1e18, 0, 0, true, "intra_node"};
  s.cluster.network_tier() = {1e18, 0, 0, false, "inter_node"};
  const Context ctx = make_context(s);
  const SearchResult r = search(ctx);
  REQUIRE(r.found());
  const Plan& p = r.ranked.front().plan;
  CHECK(p.tp == 1);
  CHECK(p.pp == 1);
  CHECK(p.cp == 1);
  // And a tp-2 plan of the same scenario sits in the same time step: the tie was real.
  SearchOptions o;
  o.filter.pin(Axis::tp, 2);
  const SearchResult r2 = search(ctx, o);
  REQUIRE(r2.found());
  CHECK(r2.keys.front().time == r.keys.front().time);
  CHECK(r.keys.front() < r2.keys.front());
}

TEST_CASE("Serving picks the engine that meets the SLO at the lowest latency", "[ranking]") {
  // 30e9 parameters in bf16 = 60 GB: one GPU reads them in 60e9 / 2e12 = 30 ms per token, over
  // a 20 ms SLO; tp 4 inside a node reads 15 GB in 7.5 ms plus small all-reduces; tp 8 would
  // cross nodes at 10 µs per hop and pay more latency than it saves in reads. So tp = 4.
  Scenario s;
  s.model = answer_key::gpt(48, 7168, 56, 2048, 30e9);
  s.cluster = small_cluster();
  s.workload.kind = WorkloadKind::serving;
  s.workload.serving.batch = 1;
  s.workload.serving.context_tokens = 1024;
  s.workload.serving.slo_per_token_seconds = 20e-3;
  s.workload.serving.memory_bandwidth_efficiency = 1.0;
  const Plan p = best_plan(s);
  CHECK(p.tp == 4);
  CHECK(p.pp == 1);
  CHECK(inside_node(p, s.cluster, Axis::tp));
}

TEST_CASE("The ranking is deterministic", "[ranking]") {
  // Same input, same ranked list, field by field (exact key comparisons, total order).
  const Scenario s = training(12e9, 40, 5120, 40, 2048, 8 * 32 * 2048.0);
  const SearchResult a = search(make_context(s));
  const SearchResult b = search(make_context(s));
  REQUIRE(a.ranked.size() == b.ranked.size());
  for (std::size_t i = 0; i < a.ranked.size(); ++i) {
    CHECK_FALSE(a.keys[i] < b.keys[i]);
    CHECK_FALSE(b.keys[i] < a.keys[i]);
    if (i > 0) CHECK(a.keys[i - 1] < a.keys[i]);
  }
}

TEST_CASE("Time steps are 1 % wide", "[ranking]") {
  // log(1.01) steps: x and 1.005x may share a step; x and 1.02x never do.
  CHECK(time_step(1.0) == 0);
  CHECK(time_step(1.02) > time_step(1.0));
  CHECK(time_step(0.5) < time_step(1.0));
  CHECK(time_step(1.0101) == 1);
}

// The cost of overlap: a data- or context-parallel collective hidden behind compute still
// slows it, by the tier's processor_usage share of the GPU while it runs (Calculon,
// calculon/llm/llm.py; step_time.hpp fill_sharded_state_traffic, add_context_parallel;
// docs/model.md §7), worked by hand.
#include <catch2/catch.hpp>

#include "planner/model/step_time.hpp"
#include "model/small_model.hpp"

using namespace planner;

namespace {

using test_models::small_model;

// One 8-GPU node, no latency, no peer memory (so the ring is the cheapest all-reduce).
Cluster one_node(double usage) {
  Cluster c;
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.memory_bytes = 80e9;
  c.gpu.memory_bandwidth_bytes_per_second = 3.35e12;
  c.gpu.flops_per_second = 6.5e14;
  c.tiers = {Tier{100e9, 0, 8, false, "intra_node", usage},
             Tier{50e9, 0, 0, false, "inter_node", usage}};
  return c;
}

}  // namespace

TEST_CASE("overlap cost: hidden dp buckets slow compute by the tier's share", "[overlap_cost]") {
  const Model m = small_model();
  Plan p;
  p.dp = 8;
  p.zero = 0;
  const Cluster c = one_node(0.15);
  DataParallelTraffic t;
  // A backward window far longer than the all-reduce: only the last bucket shows.
  fill_sharded_state_traffic(m, c, p, 8, 8, 0, 1e9, 10.0, 10.0, t);
  // By hand: G = 1e9 bf16 parameters = 2e9 B in 4 one-layer buckets; a ring all-reduce of the
  // whole gradient over 8 ranks at 100 GB/s without latency is 2·(7/8)·2e9 / 1e11 = 35 ms, so
  // 4 buckets of 8.75 ms. Exposed without a cost: the last bucket, 8.75 ms; hidden 26.25 ms,
  // which slows compute by 0.15 × 26.25 = 3.9375 ms.
  CHECK(t.comm_seconds == Approx(35e-3));
  CHECK(t.overlap_cost_seconds == Approx(0.15 * 26.25e-3));
  CHECK(t.exposed_seconds == Approx(8.75e-3 + 0.15 * 26.25e-3));
  // Free overlap (a GPU given by numbers): the last bucket only.
  DataParallelTraffic free;
  fill_sharded_state_traffic(m, one_node(0.0), p, 8, 8, 0, 1e9, 10.0, 10.0, free);
  CHECK(free.overlap_cost_seconds == 0.0);
  CHECK(free.exposed_seconds == Approx(8.75e-3));
  // A window shorter than the traffic: 5 ms hides 5 ms, the rest is exposed, and the 5 ms
  // hidden cost 0.75 ms more.
  DataParallelTraffic short_window;
  fill_sharded_state_traffic(m, c, p, 8, 8, 0, 1e9, 5e-3, 5e-3, short_window);
  CHECK(short_window.exposed_seconds == Approx(30e-3 + 0.15 * 5e-3));
}

TEST_CASE("overlap cost: the cp ring's hidden steps slow attention, never speed it", "[overlap_cost]") {
  const Model m = small_model();
  Plan p;
  p.cp = 2;
  p.dp = 4;
  p.flash_attention = true;
  p.recompute = Recompute::selective;
  const TrainingTime free = training_time(m, one_node(0.0), p, 6.5e14);
  const TrainingTime costly = training_time(m, one_node(0.15), p, 6.5e14);
  // The ring's hidden part: cp_seconds − exposed (all of it, when attention outlasts it).
  CHECK(free.cp_overlap_cost_seconds == 0.0);
  CHECK(costly.cp_overlap_cost_seconds ==
        Approx(0.15 * (free.cp_seconds - free.cp_exposed_seconds)));
  CHECK(costly.cp_exposed_seconds ==
        Approx(free.cp_exposed_seconds + costly.cp_overlap_cost_seconds));
  CHECK(costly.step_seconds > free.step_seconds);
  CHECK(costly.dp.overlap_cost_seconds > 0);
}

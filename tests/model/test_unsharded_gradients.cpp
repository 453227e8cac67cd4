// Gradients accumulated unsharded over a step's micro-batches (workload.
// unsharded_gradient_accumulation: PyTorch's pipeline schedules with FSDP2 stages, issue 29's
// memory item). Figures worked out here by hand.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "answer_key_inputs.hpp"
#include "cli_harness.hpp"
#include "planner/model/data_parallel_time.hpp"
#include "planner/model/memory.hpp"

using namespace planner;

namespace {

// Scenario A's 8B (32 layers) at dp 8 inside one node: 300 GB/s, no latency, no SM share, so
// each collective is its wire time alone.
Cluster one_node() {
  Cluster c;
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.memory_bytes = 80.0 * gib;
  c.tiers = {Tier{300e9, 0, 8, false, "intra_node"}, Tier{50e9, 0, 0, false, "inter_node"}};
  return c;
}

Plan zero2(std::int64_t grad_accum) {
  Plan p;
  p.dp = 8;
  p.zero = 2;
  p.grad_accum = grad_accum;
  return p;
}

}  // namespace

TEST_CASE("unsharded accumulation: the whole gradient at the peak, in its own dtype",
          "[memory][data_parallel]") {
  // ZeRO-2 keeps the bf16 weights whole (2 B a parameter) and the gradient 1/8 each; with the
  // gradients accumulated unsharded in fp32 the rank holds 4 B a parameter of gradient: twice
  // the weights' line, 8 times the sharded one. Nothing else in the ledger moves.
  Model m = answer_key::model_a();
  m.precision.gradients = Dtype::fp32;
  const Cluster c = one_node();
  Training w = answer_key::training_2m();
  w.bytes_per_param = 18;
  Plan p = zero2(4);
  const MemoryLedger sharded = training_ledger(m, c, w, p);
  p.unsharded_gradient_accumulation = true;
  const MemoryLedger whole = training_ledger(m, c, w, p);
  CHECK(whole.gradients_bytes == Approx(2.0 * whole.weights_bytes));
  CHECK(whole.gradients_bytes == Approx(8.0 * sharded.gradients_bytes));
  CHECK(whole.weights_bytes == sharded.weights_bytes);
  CHECK(whole.optimizer_bytes == sharded.optimizer_bytes);
  CHECK(whole.activations_bytes == sharded.activations_bytes);
  // The setting is ZeRO-2's: ZeRO-1 already keeps the whole gradient, ZeRO-3 is unchanged.
  for (const int zero : {1, 3}) {
    Plan q = zero2(4);
    q.zero = zero;
    const double before = training_ledger(m, c, w, q).gradients_bytes;
    q.unsharded_gradient_accumulation = true;
    CHECK(training_ledger(m, c, w, q).gradients_bytes == before);
  }
}

TEST_CASE("unsharded accumulation: one reduce-scatter a step, exposed after the last backward",
          "[data_parallel]") {
  // 4 micro-batches. ZeRO-2 as DeepSpeed runs it reduce-scatters every micro-batch's
  // gradient (7/8 · G / 300 GB/s each) behind its backward, exposing one bucket (G/32) each,
  // and gathers once behind the forward. Accumulated unsharded, it reduce-scatters once,
  // after the last backward, where nothing hides it.
  const Model m = answer_key::model_a();
  const Cluster c = one_node();
  const DataParallelTraffic per_micro_batch = data_parallel_traffic(m, c, zero2(4), 100, 100);
  Plan p = zero2(4);
  p.unsharded_gradient_accumulation = true;
  const DataParallelTraffic once = data_parallel_traffic(m, c, p, 100, 100);
  const double g = per_micro_batch.gradient_bytes;
  CHECK(g == Approx(2.0 * 8e9).epsilon(0.02));  // bf16 gradients of ~8e9 parameters
  const double rs = 7.0 / 8.0 * g / 300e9;
  const double ag = 7.0 / 8.0 * per_micro_batch.gather_bytes / 300e9;
  CHECK(per_micro_batch.comm_seconds == Approx(4 * rs + ag));
  CHECK(per_micro_batch.exposed_seconds == Approx(4 * rs / 32 + ag / 32));
  CHECK(per_micro_batch.collectives_per_step == 5.0);
  CHECK(once.comm_seconds == Approx(rs + ag));
  CHECK(once.exposed_seconds == Approx(rs + ag / 32));
  CHECK(once.collectives_per_step == 2.0);
  CHECK(once.bytes_per_step == Approx(2.0 * 7.0 / 8.0 * g));
}

TEST_CASE("unsharded_gradient_accumulation is read from the scenario and shown in the plan",
          "[memory][cli]") {
  nlohmann::json s = nlohmann::json::parse(cli_harness::read("scenarios/a.json"));
  s["plan"] = {{"dp", 64}, {"zero", 2}, {"micro_batch", 1}, {"grad_accum", 4},
               {"recompute", "selective"}, {"flash_attention", true}};
  const std::string file = "/tmp/planner-unsharded-" + std::to_string(::getpid()) + ".json";
  const auto run = [&](const nlohmann::json& scenario) {
    std::ofstream(file) << scenario.dump();
    return cli_harness::run({"memory", file, "--format", "json"});
  };
  auto r = run(s);
  REQUIRE(r.code == 0);
  const nlohmann::json before = nlohmann::json::parse(r.out).at("plan");
  CHECK_FALSE(before.contains("unsharded_gradient_accumulation"));
  s["workload"]["unsharded_gradient_accumulation"] = true;
  r = run(s);
  REQUIRE(r.code == 0);
  const nlohmann::json after = nlohmann::json::parse(r.out).at("plan");
  CHECK(after.at("unsharded_gradient_accumulation") == true);
  // Sharded over 64 ranks before, whole after.
  CHECK(after.at("memory").at("gradients").get<double>() ==
        Approx(64.0 * before.at("memory").at("gradients").get<double>()));
  s["workload"]["unsharded_gradient_accumulation"] = "yes";
  r = run(s);
  std::remove(file.c_str());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/workload/unsharded_gradient_accumulation"));
}

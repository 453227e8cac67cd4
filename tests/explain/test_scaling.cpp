// planner scaling and the resilience model (issue 12): the lab's published table, a scenario's
// scaling table and restart budget against hand calculations, checkpoint bytes against the
// memory ledger, the expected-maximum figures against their closed forms and tables, and
// bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cli_harness.hpp"
#include "planner/model/memory.hpp"
#include "planner/explain/restart_budget.hpp"
#include "planner/explain/scaling_table.hpp"
#include "planner/io/context.hpp"
#include "planner/model/checkpoint.hpp"
#include "planner/model/straggler_delay.hpp"
#include "planner/io/scenario_json.hpp"

using namespace planner;
using cli_harness::run;

TEST_CASE("lab table reproduces the published rows digit for digit", "[scaling][golden]") {
  // The course's all-reduce scaling lab prints (workers, ms, speedup):
  // 1 120.3 1.0, 2 125.7 1.9, 4 131.4 3.7, 8 137.8 7.0, 16 145.6 13.2.
  const auto r = run({"scaling", "--lab"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("      1   120.3 ms     1.0x"));
  CHECK_THAT(r.out, Catch::Contains("      2   125.7 ms     1.9x"));
  CHECK_THAT(r.out, Catch::Contains("      4   131.4 ms     3.7x"));
  CHECK_THAT(r.out, Catch::Contains("      8   137.8 ms     7.0x"));
  CHECK_THAT(r.out, Catch::Contains("     16   145.6 ms    13.2x"));
  CHECK(cli_harness::matches_golden("tests/golden/scaling_lab.txt", r.out));
  const auto j = run({"scaling", "--lab", "--format", "json"});
  REQUIRE(j.code == 0);
  CHECK(cli_harness::matches_golden("tests/golden/scaling_lab.json", j.out));
}

TEST_CASE("lab fit against its terms written out", "[scaling]") {
  const LabModel lab;
  // t(8) = 120 + 0.35·8 + 5·3 = 137.8 ms; speedup 8·120/137.8 = 6.9666.
  CHECK(lab_step_seconds(lab, 8) == Approx(0.1378));
  CHECK(lab_speedup(lab, 8) == Approx(6.96662));
  // t(16) = 120 + 5.6 + 20 = 145.6 ms; speedup 1920/145.6 = 13.1868.
  CHECK(lab_speedup(lab, 16) == Approx(13.18681));
}

TEST_CASE("expected maximum of W ranks: harmonic and Gaussian closed forms", "[scaling][stragglers]") {
  CHECK(harmonic_number(1) == 1.0);
  CHECK(harmonic_number(4) == Approx(25.0 / 12.0));
  // Past 10^5 terms the asymptotic series; compare with the sum itself.
  double sum = 0;
  for (int k = 100001; k >= 1; --k) sum += 1.0 / k;
  CHECK(harmonic_number(100001) == Approx(sum).epsilon(1e-13));
  // Exponential jitter: slowest of 4 waits σ·(H_4 − 1) = σ·13/12.
  CHECK(straggler_factor(JitterDistribution::exponential, 4) == Approx(13.0 / 12.0));
  CHECK(straggler_factor(JitterDistribution::exponential, 1) == 0.0);
  // Gaussian: E[max of 2] = 1/√π, of 3 = 3/(2√π) (David & Nagaraja 2003 §3.2); Harter 1961's
  // table gives 1.53875 for 10 and 2.50759 for 100.
  const double pi = 3.14159265358979323846;
  CHECK(gaussian_expected_max(2) == Approx(1.0 / std::sqrt(pi)).epsilon(1e-9));
  CHECK(gaussian_expected_max(3) == Approx(1.5 / std::sqrt(pi)).epsilon(1e-9));
  CHECK(gaussian_expected_max(10) == Approx(1.53875).epsilon(1e-5));
  CHECK(gaussian_expected_max(100) == Approx(2.50759).epsilon(1e-5));
  // Large n stays finite and near √(2 ln n) from below.
  const double big = gaussian_expected_max(std::int64_t{1} << 24);
  CHECK(big > 5.0);
  CHECK(big < std::sqrt(2.0 * std::log(16777216.0)));
}

namespace {

// One 8-GPU node; one layer, so the data-parallel all-reduce is one bucket and wholly exposed;
// 5e9 parameters given (the 2M-word vocabulary makes the shape's count 4.1e9, within the
// loader's factor of 2), so the bf16 gradient is M = 1e10 bytes; 100 GB/s and no latency, so the
// ring all-reduce over n ranks takes 2(n−1)/n · M/B = 2(n−1)/n · 0.1 s (ring is the cheapest at
// α = 0: the tree takes 2M/B, one-shot (n−1)M/B). A measured 100 ms per micro-batch with tiled
// attention makes the compute of one micro-batch c = 0.1 s at any dp.
constexpr const char* hand_scenario = R"({
  "model": {"layers": 1, "hidden": 1024, "heads": 8, "vocab": 2000000, "seq_len": 1024, "params": 5e9},
  "cluster": {"nodes": 1, "gpus_per_node": 8,
              "gpu": {"memory": "1 TiB", "memory_bandwidth": "3 TB/s", "flops": "400 TFLOP/s"},
              "intra_node": {"bandwidth": "100 GB/s", "latency": "0 us"},
              "inter_node": {"bandwidth": "10 GB/s", "latency": "0 us"}},
  "workload": {"kind": "training", "global_batch_tokens": 8192, "step_time_per_micro_batch": "100 ms"},
  "plan": {"dp": 8, "flash_attention": true, "micro_batch": 1, "grad_accum": 1},
  "stragglers": {"distribution": "exponential", "jitter": "200 ms"}
})";

}  // namespace

TEST_CASE("scenario scaling table against a hand calculation", "[scaling]") {
  const Scenario s = load_scenario_text(hand_scenario, "hand.json");
  const Context ctx = make_context(s);
  // Strong scaling of 8 sequences: grad_accum 8/dp. Step = (8/dp)·0.1 + ring + σ(H_dp − 1):
  //   dp 1: 0.8                                      = 0.8
  //   dp 2: 0.4 + 0.1  + 0.2·0.5                     = 0.6
  //   dp 4: 0.2 + 0.15 + 0.2·(1/2 + 1/3 + 1/4)       = 0.566667
  //   dp 8: 0.1 + 0.175 + 0.2·(H_8 − 1 = 1.717857)   = 0.618571
  // dp 8 is slower than dp 4 with the same batch: adding replicas stops paying there.
  const ScalingTable strong =
      scaling_table(ctx, *s.plan, ScalingMode::strong, {1, 2, 4, 8}, s.origin);
  REQUIRE(strong.rows.size() == 4);
  CHECK(strong.rows[0].step_seconds == Approx(0.8));
  CHECK(strong.rows[1].step_seconds == Approx(0.6));
  CHECK(strong.rows[2].step_seconds == Approx(0.566667).epsilon(1e-5));
  CHECK(strong.rows[3].step_seconds == Approx(0.618571).epsilon(1e-5));
  CHECK(strong.rows[3].communication_seconds == Approx(0.175));
  CHECK(strong.rows[3].straggler_seconds == Approx(0.343571).epsilon(1e-5));
  // Speedup = (8/0.566667)/(8/0.8) = 1.41176 at dp 4; efficiency 1.41176/4.
  CHECK(strong.rows[2].speedup == Approx(1.411765).epsilon(1e-5));
  CHECK(strong.rows[2].efficiency == Approx(0.352941).epsilon(1e-5));
  REQUIRE(strong.stops_paying.has_value());
  CHECK(*strong.stops_paying == 3);

  // Weak scaling keeps grad_accum 1: step = 0.1 + ring + straggler, throughput dp/step.
  //   dp 1: 0.1; dp 2: 0.1 + 0.1 + 0.1 = 0.3 → 2/0.3 = 6.667 seq/s, speedup 0.6667.
  const ScalingTable weak =
      scaling_table(ctx, *s.plan, ScalingMode::weak, {1, 2}, s.origin);
  CHECK(weak.rows[0].sequences_per_second == Approx(10.0));
  CHECK(weak.rows[1].sequences_per_second == Approx(6.666667).epsilon(1e-5));
  CHECK(weak.rows[1].speedup == Approx(0.666667).epsilon(1e-5));
  // Marginal: (6.667 − 10) seq/s from one added replica of 10 seq/s: −0.3333.
  CHECK(weak.rows[1].marginal == Approx(-0.333333).epsilon(1e-5));
  CHECK(weak.stops_paying == std::optional<std::size_t>(1));

  // Without the "stragglers" key the straggler column is zero.
  Context without = ctx;
  without.stragglers.reset();
  const ScalingTable plain = scaling_table(without, *s.plan, ScalingMode::weak, {1, 2}, s.origin);
  CHECK(plain.rows[1].straggler_seconds == 0.0);
  CHECK(plain.rows[1].step_seconds == Approx(0.2));
}

TEST_CASE("checkpoint bytes are the ledger's state lines", "[scaling][resilience]") {
  const Scenario s = load_scenario_text(hand_scenario, "hand.json");
  const Context ctx = make_context(s);
  Plan p = *s.plan;
  p.zero = 1;  // optimizer sharded over the 8 ranks
  const MemoryLedger ledger = memory_ledger(ctx, p);
  CheckpointPolicy policy;
  policy.gradients = true;
  const CheckpointState c = checkpoint_state(ctx.model, ctx.workload.training, p, ledger, policy);
  CHECK(c.weights_bytes == ledger.weights_bytes);
  CHECK(c.master_bytes + c.moments_bytes == Approx(ledger.optimizer_bytes));
  CHECK(c.gradients_bytes == ledger.gradients_bytes);
  // By hand: 5e9 params; weights 2 B each = 1e10 B; ZeRO-1 optimizer 12 B/8 ranks = 7.5e9 B,
  // of which 4/12 is the fp32 master (2.5e9 B) and 8/12 the moments (5e9 B).
  CHECK(c.weights_bytes == Approx(1e10));
  CHECK(c.master_bytes == Approx(2.5e9));
  CHECK(c.moments_bytes == Approx(5e9));
  // Job total: one copy of 5e9 · (2 + 12 + 2) bytes, plus 8 ranks · (10,064 RNG + 16 loader).
  CHECK(c.total_bytes == Approx(8e10 + 8.0 * 10080.0));
  CHECK(c.rank_bytes() == Approx(1e10 + 7.5e9 + 1e10 + 10080.0));
}

TEST_CASE("Young-Daly interval and goodput against hand calculations", "[scaling][resilience]") {
  // δ = 100 s, M = 10^4 s: τ = sqrt(2·100·10^4) = 1414.2136 s.
  const double tau = young_daly_interval_seconds(100.0, 1e4);
  CHECK(tau == Approx(1414.2136));
  // Daly 2006: goodput = τ / (M·e^{R/M}·(e^{(τ+δ)/M} − 1)), R = 600 s:
  // 1414.2136 / (10^4 · 1.0618365 · 0.1634868) = 0.814657.
  CHECK(goodput(tau, 100.0, 600.0, 1e4) == Approx(0.814657).epsilon(1e-5));
  // First order: τ/(τ+δ)·(1 − (R + (τ+δ)/2)/M) = 0.93394 · 0.86429 = 0.80721, within 1 %.
  CHECK(goodput(tau, 100.0, 600.0, 1e4) == Approx(0.80721).epsilon(0.01));
  // The Llama 3 report: 419 unexpected interruptions in 54 days on 16,384 GPUs, one every
  // 54·24/419 = 3.0931 h for the whole job.
  CHECK(llama3_gpu_mtbf_seconds / 16384.0 / 3600.0 == Approx(3.0931).epsilon(1e-4));
}

TEST_CASE("eight-GPU restart budget against a hand calculation", "[scaling][resilience]") {
  const Scenario s = load_scenario_file(std::string(PLANNER_SOURCE_DIR) +
                                        "/scenarios/eight-gpu-restart.json");
  const Context ctx = make_context(s);
  Plan p;
  p.dp = 8;
  p.zero = 3;
  p.flash_attention = true;
  p.recompute = Recompute::selective;
  p.grad_accum = 16;
  const RestartBudget b = restart_budget(ctx, evaluate(ctx, p), *s.resilience);
  // Llama 3 8B from its shape: per layer 2h² + 2h·1024 + 3h·14336 + 4h = 218,120,192 (h = 4096);
  // ×32 + 2·128256·4096 + 2h = 8,030,527,488 parameters. Checkpoint: ×14 B + 8·10,080 B
  // = 112,427,465,472 B; at 10 Gb/s = 1.25e9 B/s: 89.942 s to write and to read.
  CHECK(b.state.total_bytes == Approx(112427465472.0));
  CHECK(b.read_seconds == Approx(89.94197).epsilon(1e-6));
  // Restart: 300 detect + 120 reschedule + 120 start + 89.942 load + 60 warm-up = 689.942 s.
  CHECK(b.restart_seconds == Approx(689.94197).epsilon(1e-6));
  // Asynchronous: δ = one rank's 14·P/8 + 10,080 B over 63.0154 GB/s = 0.223015 s; worst lost
  // work 1800 + δ + 89.942 = 1890.165 s; 2580.107 s in all, over the 900 s budget.
  CHECK(b.checkpoint_seconds == Approx(0.223015).epsilon(1e-5));
  CHECK(b.recovery_seconds == Approx(2580.107).epsilon(1e-6));
  CHECK_FALSE(b.met);
  CHECK(b.binding == "lost_work");
  // Meets it by checkpointing every 900 − 689.942 − 0.223 − 89.942 = 119.893 s.
  REQUIRE(b.interval_needed.has_value());
  CHECK(*b.interval_needed == Approx(119.893).epsilon(1e-5));
  // 8 GPUs fail every 50,677 h / 8 = 6334.6 h.
  CHECK(b.cluster_mtbf_seconds / 3600.0 == Approx(6334.6).epsilon(1e-4));
}

TEST_CASE("planner scaling on the eight-GPU scenario prints the budget and exits 1", "[scaling][cli]") {
  const auto r = run({"scaling", "scenarios/eight-gpu-restart.json"});
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("Restart budget 15.0 min"));
  CHECK_THAT(r.out, Catch::Contains("lost_work"));
  CHECK_THAT(r.out, Catch::Contains("Not met"));
  CHECK_THAT(r.out, Catch::Contains("Checkpoint at most every"));
  const auto j = run({"scaling", "scenarios/eight-gpu-restart.json", "--format", "json"});
  CHECK(j.code == 1);
  CHECK_THAT(j.out, Catch::Contains("\"schema_version\": 2"));
  CHECK_THAT(j.out, Catch::Contains("\"binding\": \"lost_work\""));
}

TEST_CASE("planner scaling: bad input exits 2 with the JSON pointer", "[scaling][errors]") {
  const std::string file = "scenarios/eight-gpu-restart.json";
  auto error_with = [&](const std::string& set) {
    const auto r = run({"scaling", file, "--set", set});
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK(error_with("/resilience/gpu_mtbf=-5 h") ==
        "planner: error: scenarios/eight-gpu-restart.json: /resilience/gpu_mtbf: expected a "
        "time of at least 1 s such as \"50677 h\" (at most 1e12 s), got \"-5 h\"\n");
  CHECK(error_with("/resilience/storage/write_bandwidth=0") ==
        "planner: error: scenarios/eight-gpu-restart.json: /resilience/storage/write_bandwidth: "
        "expected a bandwidth such as \"10 GB/s\" (1 B/s to 1e18 B/s), got 0\n");
  CHECK(error_with("/resilience/storage/read_bandwidth=1e-300 B/s") ==
        "planner: error: scenarios/eight-gpu-restart.json: /resilience/storage/read_bandwidth: "
        "expected a bandwidth such as \"10 GB/s\" (1 B/s to 1e18 B/s), got \"1e-300 B/s\"\n");
  CHECK(error_with("/resilience/restart/budget=0 min") ==
        "planner: error: scenarios/eight-gpu-restart.json: /resilience/restart/budget: expected "
        "a positive time such as \"15 min\" (at most 1e12 s), got \"0 min\"\n");
  CHECK(error_with("/stragglers/jitter=-1 ms") ==
        "planner: error: scenarios/eight-gpu-restart.json: /stragglers/jitter: expected a "
        "non-negative time in seconds, got \"-1 ms\"\n");
  CHECK(error_with("/resilience/restart/detect=soon min") ==
        "planner: error: scenarios/eight-gpu-restart.json: /resilience/restart/detect: cannot "
        "read \"soon min\" as a time; write a number and a unit, such as \"15 min\"\n");
  CHECK(error_with("/resilience/storage/write_bandwith=1 GB/s") ==
        "planner: error: scenarios/eight-gpu-restart.json: /resilience/storage/write_bandwith: "
        "unknown key (did you mean 'write_bandwidth'?)\n");
  CHECK(error_with("/stragglers/distribution=\"gausian\"") ==
        "planner: error: scenarios/eight-gpu-restart.json: /stragglers/distribution: expected "
        "one of \"exponential\", \"gaussian\", got \"gausian\" (did you mean \"gaussian\"?)\n");
  const auto order = run({"scaling", file, "--dp", "4,2"});
  CHECK(order.code == 2);
  CHECK(order.err == "planner: error: --dp: sizes must increase: 2 follows 4\n");
  const auto serving = run({"scaling", "scenarios/llama3-8b-serving-h100.json"});
  CHECK(serving.code == 2);
  CHECK_THAT(serving.err, Catch::Contains("/workload/kind"));
  const auto neither = run({"scaling"});
  CHECK(neither.code == 2);
}

TEST_CASE("Llama 3 405B: the reported failure rate and effective training time", "[scaling][resilience]") {
  // Dubey et al. 2024 (arXiv 2407.21783) §3.3.4, Table 5: 419 unexpected interruptions in 54
  // days on 16,384 GPUs: 419/54 = 7.759 a day, one every 1296 h/419 = 3.0931 h; "more than
  // 90 %" effective training time.
  const auto r = run({"scaling", "scenarios/llama3-405b-resilience.json", "--mode", "weak",
                      "--dp", "2048", "--format", "json"});
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& res = j.at("resilience");
  CHECK(res.at("failures").at("per_day").get<double>() == Approx(419.0 / 54.0).epsilon(1e-4));
  CHECK(res.at("failures").at("job_mtbf").get<double>() / 3600.0 == Approx(3.0931).epsilon(1e-4));
  CHECK(res.at("goodput").get<double>() > 0.90);
  // One copy of 405.9e9 parameters' state at 14 B each (weights 2, master 4, moments 8):
  // 16,384 GPUs' RNG and loader state add 16384 · 10,080 B.
  const double params = 126.0 * (2.0 * 16384.0 * 16384.0 + 2.0 * 16384.0 * 1024.0 +
                                  3.0 * 16384.0 * 53248.0 + 4.0 * 16384.0) +
                        2.0 * 128256.0 * 16384.0 + 2.0 * 16384.0;
  CHECK(res.at("checkpoint").at("total").get<double>() ==
        Approx(params * 14.0 + 16384.0 * 10080.0));
}

TEST_CASE("stragglers in the step model: opt-in, one wait per step", "[scaling][stragglers]") {
  const Scenario s = load_scenario_text(hand_scenario, "hand.json");
  const Context ctx = make_context(s);
  Context without = ctx;
  without.stragglers.reset();
  // The pinned dp 8 plan: 8 GPUs wait σ·(H_8 − 1) = 0.2 s · 1.717857 = 0.343571 s more per step;
  // tokens/s and MFU shrink by the ratio of the steps.
  const Evaluation plain = evaluate(without, *s.plan);
  const Evaluation jittered = evaluate(ctx, *s.plan);
  CHECK(plain.training.straggler_seconds == 0.0);
  CHECK(jittered.training.straggler_seconds == Approx(0.343571).epsilon(1e-5));
  CHECK(jittered.training.step_seconds ==
        Approx(plain.training.step_seconds + 0.343571).epsilon(1e-6));
  CHECK(jittered.training.tokens_per_second * jittered.training.step_seconds ==
        Approx(plain.training.tokens_per_second * plain.training.step_seconds));
  // planner plan prints the wait and the restart budget only when the scenario asks.
  const auto r = run({"plan", "scenarios/eight-gpu-restart.json", "--no-thresholds", "--full"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("    straggler wait "));
  CHECK_THAT(r.out, Catch::Contains("Restart budget 15.0 min"));
  const auto a = run({"plan", "scenarios/a.json", "--no-thresholds", "--full"});
  CHECK_THAT(a.out, !Catch::Contains("straggler") && !Catch::Contains("Restart"));
}

TEST_CASE("planner scaling: extreme inputs stay finite", "[scaling][extremes]") {
  // The smallest MTBF and bandwidths the loader takes, the largest jitter: every figure must
  // still print (the JSON writer refuses NaN and infinity with exit 3).
  for (const char* format : {"json", "text"}) {
    const auto r = run({"scaling", "scenarios/eight-gpu-restart.json", "--format", format,
                        "--set", "/resilience/gpu_mtbf=1 s",
                        "--set", "/resilience/storage={\"write_bandwidth\": \"1 B/s\"}",
                        "--set", "/resilience/checkpoint/host_copy_bandwidth=1 B/s",
                        "--set", "/stragglers={\"jitter\": \"3600 s\", \"distribution\": \"gaussian\"}",
                        "--dp", "1,8,4096"});
    CHECK((r.code == 0 || r.code == 1));
    CHECK(r.err.empty());
  }
  const auto lab = run({"scaling", "--lab", "--dp", "1,16777216", "--format", "json"});
  CHECK(lab.code == 0);
}

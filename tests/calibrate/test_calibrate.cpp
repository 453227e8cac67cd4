// planner calibrate, fits and the worked example (docs/calibrate.md): known parameters
// recovered from synthetic measurements, and the example run end to end.
#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "calibrate_synthetic.hpp"
#include "cli_harness.hpp"
#include "non_finite_word.hpp"
#include "planner/calibrate/calibrate.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/step_time.hpp"

using namespace planner::calibrate;
using calibrate_synthetic::Noise;
using calibrate_synthetic::nccl_table;
using Catch::Matchers::Contains;

TEST_CASE("Intra-node tier: alpha and bandwidth recovered from a noisy synthetic all-reduce") {
  // Known: α = 2.5 us per hop, B = 180 GB/s, 8 ranks; ring all-reduce hops 2(n−1) = 14,
  // factor 2(n−1)/n = 1.75; every time off by up to ±3 % (deterministic).
  Noise noise(0.03);
  const std::string text = nccl_table("all_reduce_perf", 8, 1, 2.5e-6, 180e9, 14, 1.75, noise);
  const NcclTable t = parse_nccl_tests(text, "synthetic.txt");
  const TierFit f = fit_tier({&t});
  CHECK(f.tier == TierName::intra_node);
  // Stated tolerance: 2 % on the bandwidth, 10 % on the latency with ±3 % noise on 31 sizes.
  CHECK(f.bandwidth_bytes_per_second == Approx(180e9).epsilon(0.02));
  CHECK(f.latency_seconds == Approx(2.5e-6).epsilon(0.10));
  CHECK(f.max_relative_residual < 0.04);  // the noise, plus the printed rounding
  // The reported band (±2 standard errors) contains the truth.
  CHECK(std::abs(f.bandwidth_bytes_per_second - 180e9) < 2 * f.bandwidth_se_bytes_per_second);
  CHECK(std::abs(f.latency_seconds - 2.5e-6) < 2 * f.latency_se_seconds);
}

TEST_CASE("Inter-node tier: one fit over all-gather and reduce-scatter tables of two nodes") {
  // Known: α = 6 us, B = 45 GB/s, 16 ranks on 2 nodes; hops n − 1 = 15, factor 15/16.
  Noise noise(0.03);
  const NcclTable ag = parse_nccl_tests(
      nccl_table("all_gather_perf", 16, 2, 6e-6, 45e9, 15, 15.0 / 16, noise), "ag.txt");
  const NcclTable rs = parse_nccl_tests(
      nccl_table("reduce_scatter_perf", 16, 2, 6e-6, 45e9, 15, 15.0 / 16, noise), "rs.txt");
  CHECK(ag.op == NcclOp::all_gather);
  CHECK(rs.op == NcclOp::reduce_scatter);
  const TierFit f = fit_tier({&ag, &rs});
  CHECK(f.tier == TierName::inter_node);
  CHECK(f.bandwidth_bytes_per_second == Approx(45e9).epsilon(0.02));
  CHECK(f.latency_seconds == Approx(6e-6).epsilon(0.10));
}

TEST_CASE("Without noise the tier fit is exact") {
  Noise none(0.0);
  const NcclTable t = parse_nccl_tests(
      nccl_table("sendrecv_perf", 2, 2, 4e-6, 25e9, 1, 1, none), "p2p.txt");
  const TierFit f = fit_tier({&t});
  // Printed times carry 2 decimals of a microsecond: exact to that rounding.
  CHECK(f.bandwidth_bytes_per_second == Approx(25e9).epsilon(1e-3));
  CHECK(f.latency_seconds == Approx(4e-6).epsilon(1e-2));
}

TEST_CASE("Public MI300X samples: the fitted bandwidth matches the large-message busbw") {
  // Independent figure: at 8 GiB (one node) and 16 GiB (two nodes) latency is < 0.01 % of the
  // time, so B must be close to the busbw rccl-tests itself printed there: 315.69 and
  // 357.46 GB/s (tests/data/calibrate/README.md). Tolerance 2 %.
  const NcclTable one = parse_nccl_tests(
      cli_harness::read("tests/data/calibrate/mi300x-1node-all_reduce_perf.txt"), "one");
  const NcclTable two = parse_nccl_tests(
      cli_harness::read("tests/data/calibrate/mi300x-2node-all_reduce_perf.txt"), "two");
  CHECK(fit_tier({&one}).bandwidth_bytes_per_second == Approx(315.69e9).epsilon(0.02));
  CHECK(fit_tier({&two}).bandwidth_bytes_per_second == Approx(357.46e9).epsilon(0.02));
}

TEST_CASE("GEMM curve: R_inf and F_half recovered with wave quantisation on 132 SMs") {
  // Known: R∞ = 800 TFLOP/s, F½ = 3 GFLOP, 128×128 tiles on 132 SMs; ±2 % noise.
  const double r_inf = 800e12, f_half = 3e9;
  std::string csv = "# device: SYNTH (132 SMs)\nm,n,k,dtype,seconds\n";
  Noise noise(0.02);
  for (const double s : {256.0, 512.0, 1000.0, 1024.0, 1536.0, 2048.0, 2100.0, 3072.0, 4096.0,
                         5000.0, 6144.0, 8192.0, 12288.0, 16384.0}) {
    const double flop = 2 * s * s * s;
    const double tiles = std::ceil(s / 128) * std::ceil(s / 128);
    const double w = tiles / (std::ceil(tiles / 132) * 132);
    const double seconds = (flop + f_half) / (r_inf * w) * (1 + noise.next());
    csv += fmt::format("{0},{0},{0},bf16,{1:.9e}\n", s, seconds);
  }
  const GemmFit g = fit_gemm(parse_gemm_csv(csv, "g.csv"));
  CHECK(g.sms == 132);
  CHECK(g.saturated_flops_per_second == Approx(r_inf).epsilon(0.02));
  CHECK(g.half_saturation_flop == Approx(f_half).epsilon(0.15));
}

TEST_CASE("Layer GEMM rate, by hand, for the worked example's 1.3B model") {
  // Illustrative GEMM table (tools/gemm_bench.py --backend fake): R∞ = 500 TFLOP/s,
  // F½ = 2 GFLOP, no SM count (w = 1). The layer's four GEMMs at m = 4·2048 = 8192 tokens:
  // QKV 6144×2048, output 2048×2048, MLP up 8192×2048, down 2048×8192, so
  // ΣF = 2·8192·2048·(6144 + 2048 + 8192 + 8192) = 8.246337e11 FLOP and the rate is
  // R∞·ΣF/(ΣF + 4·F½) = 500e12 · 8.246337e11 / 8.326337e11 = 495.196 TFLOP/s.
  const GemmFit g = fit_gemm(parse_gemm_csv(
      cli_harness::read("tests/data/calibrate/gemm-illustrative.csv"), "gemm-illustrative.csv"));
  CHECK(g.saturated_flops_per_second == Approx(500e12).epsilon(1e-4));
  CHECK(g.half_saturation_flop == Approx(2e9).epsilon(1e-3));
  const planner::Scenario s =
      planner::load_scenario_file(std::string(PLANNER_SOURCE_DIR) +
                                  "/tests/data/calibrate/small-1node.json");
  CHECK(layer_gemm_flops_per_second(g, s.model, *s.plan) == Approx(495.196e12).epsilon(1e-4));
}

TEST_CASE("Runtime factor recovered from a step log made with a known factor") {
  // The step time the planner's own model gives at ρ = 0.8 × the GEMM curve's layer rate,
  // written as a CSV log (first step a slow warm-up): calibrate must return ρ = 0.8.
  const std::string dir = std::string(PLANNER_SOURCE_DIR) + "/tests/data/calibrate/";
  Inputs in;
  in.gemm.push_back(parse_gemm_csv(cli_harness::read("tests/data/calibrate/gemm-illustrative.csv"),
                                   "gemm.csv"));
  const GemmFit g = fit_gemm(in.gemm.front());
  const nlohmann::json doc = planner::read_json_file(dir + "small-1node.json");
  const planner::Scenario s = planner::load_scenario(doc, "small-1node.json");
  const double flops = 0.8 * layer_gemm_flops_per_second(g, s.model, *s.plan);
  const double step = planner::training_time(s.model, s.cluster, *s.plan, flops).step_seconds;
  const std::string log = fmt::format("step,seconds\n1,{:.9e}\n2,{:.9e}\n3,{:.9e}\n", 10 * step,
                                      step, step);
  in.runs.push_back({doc, "small-1node.json", parse_step_log(log, "run.csv")});
  const Calibration c = calibrate(in);
  REQUIRE(c.runtime_factor);
  CHECK(*c.runtime_factor == Approx(0.8).epsilon(1e-6));
  CHECK(c.runs.front().measured_seconds == Approx(step).epsilon(1e-9));
  CHECK(c.runs.front().predicted_seconds == Approx(step).epsilon(1e-6));
}

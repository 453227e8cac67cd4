// Tiled attention at its kernel's measured share of the GEMM rate (inputs/attention_kernel.hpp,
// data/gpus.json attention_rate, docs/model.md §6b). The curves are refitted here from our H200
// tables (validation/microbench/h200), so neither the catalog nor the tables can change alone,
// and the step time is checked against a hand calculation.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "planner/inputs/workload_settings.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/step_time.hpp"
#include "planner/report/validate.hpp"

namespace {

/// The rows of a kernel_bench CSV: '#' lines and the header skipped, fields split on ','.
std::vector<std::vector<std::string>> csv_rows(const char* name) {
  std::ifstream in(std::filesystem::path(PLANNER_SOURCE_DIR) / "validation/microbench/h200" /
                   name);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

TEST_CASE("the attention-rate curves are the fit of the H200 SDPA tables", "[attention]") {
  // The GEMM rate the shares are against: the median bf16 GEMM of at least 1e11 FLOP.
  std::vector<double> gemm;
  for (const auto& r : csv_rows("gemm.csv")) {
    const double flop = 2.0 * std::stod(r[0]) * std::stod(r[1]) * std::stod(r[2]);
    if (r[3] == "bf16" && flop >= 1e11) gemm.push_back(std::stod(r[5]));
  }
  REQUIRE(gemm.size() == 100);
  const double reference = planner::median(gemm);
  CHECK(reference == Approx(681.5).margin(0.05));
  const planner::AttentionRateTable& table = planner::attention_rate_table();
  // Each kernel: 1/share = 1/limit + (half/limit)·(1/s), a straight line in 1/s.
  const std::pair<const char*, planner::AttentionKernel> kernels[] = {
      {"cudnn", planner::AttentionKernel::cudnn}, {"flash", planner::AttentionKernel::flash2}};
  for (const auto& [backend, kernel] : kernels) {
    INFO(backend);
    std::vector<double> x, y;
    for (const auto& r : csv_rows("attention.csv")) {
      if (r[4] != backend) continue;
      x.push_back(1.0 / std::stod(r[0]));
      y.push_back(reference / std::stod(r[8]));
    }
    REQUIRE(x.size() == 5);
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
    mx /= 5.0;
    my /= 5.0;
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) * (x[i] - mx);
    }
    const double slope = sxy / sxx, intercept = my - slope * mx;
    const double limit = 1.0 / intercept, half = slope * limit;
    const std::size_t k = static_cast<std::size_t>(kernel);
    CHECK(table.limit[k].value == Approx(limit).margin(5e-5));
    CHECK(table.half_tokens[k].value == Approx(half).margin(0.05));
    // The curve reproduces every measured point within 1 %.
    for (std::size_t i = 0; i < x.size(); ++i) {
      const planner::AttentionRate curve{table.limit[k].value, table.half_tokens[k].value};
      CHECK(planner::attention_rate_share(curve, 1.0 / x[i]) == Approx(1.0 / y[i]).epsilon(0.01));
    }
  }
  CHECK(std::find(table.gpus.begin(), table.gpus.end(), "H100-SXM") != table.gpus.end());
  CHECK(std::find(table.gpus.begin(), table.gpus.end(), "A100-SXM4-80GB") == table.gpus.end());
}

namespace {

constexpr std::string_view h100_scenario = R"({
  "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
            "gated_mlp": true, "vocab": 128256, "seq_len": 8192},
  "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": {"catalog": "H100-SXM", "reserve": "4 GiB"},
              "intra_node": {"bandwidth": "450 GB/s", "latency": "5 us"},
              "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}},
  "workload": {"kind": "training", "global_batch_tokens": 65536}
})";

struct Timed {
  planner::TrainingTime time;
  planner::MicroBatchFlops flops;
  double rate = 0;
};

Timed time_of(std::string text, std::string_view kernel, std::int64_t cp) {
  if (!kernel.empty()) {
    const std::string from = R"("kind": "training",)";
    text.replace(text.find(from), from.size(),
                 std::string(from) + R"( "attention_kernel": ")" + std::string(kernel) + "\",");
  }
  const auto s = planner::load_scenario_text(text, "attention.json");
  planner::Plan p;
  p.dp = 8 / cp;
  p.cp = cp;
  p.zero = 1;
  p.micro_batch = 1;
  p.grad_accum = 1;
  p.flash_attention = true;
  p.recompute = planner::Recompute::full;
  planner::apply_workload_settings(s.workload.training, p);
  const double rate = s.cluster.gpu.flops_per_second;
  return {planner::training_time(s.model, s.cluster, p, rate), planner::micro_batch_flops(s.model, p),
          rate};
}

}  // namespace

TEST_CASE("attention runs at its kernel's share of the GEMM rate, by tokens per call",
          "[attention]") {
  // By hand: cuDNN at 8192 tokens a call, 0.8104 · 8192 / (8192 + 654.3) = 0.75046; at cp 2
  // each call attends over 4096 tokens, 0.8104 · 4096 / 4750.3 = 0.69878; FlashAttention-2 at
  // 8192, 0.4880 · 8192 / (8192 + 689.9) = 0.45010.
  const Timed cudnn = time_of(std::string(h100_scenario), "", 1);
  CHECK(cudnn.time.attention_seconds ==
        Approx(cudnn.flops.attention / (cudnn.rate * 0.75046)).epsilon(1e-4));
  // Full recompute re-runs the core in the same kernel: its share of the recompute time too.
  const double gemm_recompute = cudnn.flops.recompute - cudnn.flops.attention_recompute;
  CHECK(cudnn.flops.attention_recompute > 0);
  CHECK(cudnn.time.recompute_seconds ==
        Approx(gemm_recompute / cudnn.rate +
               cudnn.flops.attention_recompute / (cudnn.rate * 0.75046))
            .epsilon(1e-4));
  const Timed ring = time_of(std::string(h100_scenario), "cudnn", 2);
  CHECK(ring.time.attention_seconds ==
        Approx(ring.flops.attention / (ring.rate * 0.69878)).epsilon(1e-4));
  const Timed flash2 = time_of(std::string(h100_scenario), "flash2", 1);
  CHECK(flash2.time.attention_seconds ==
        Approx(flash2.flops.attention / (flash2.rate * 0.45010)).epsilon(1e-4));
  // A typed rate is an effective one that covers attention: no curve.
  std::string typed(h100_scenario);
  const std::string from = R"("catalog": "H100-SXM",)";
  typed.replace(typed.find(from), from.size(), R"("catalog": "H100-SXM", "flops": "500 TFLOP/s",)");
  const Timed effective = time_of(typed, "flash2", 1);
  CHECK(effective.time.attention_seconds ==
        Approx(effective.flops.attention / effective.rate).epsilon(1e-12));
}

TEST_CASE("the attention-rate curves hold past the lengths they were fitted on", "[attention]") {
  // A second H200 session (attention_long.csv, gemm-quick-repeat.csv; not used by the fit):
  // causal calls of 32K-128K tokens and context-parallel ring blocks, each against that
  // session's own bf16 GEMM median, within 6 % of the curve (sessions differ by ~3 %).
  std::vector<double> gemm;
  for (const auto& r : csv_rows("gemm-quick-repeat.csv")) {
    const double flop = 2.0 * std::stod(r[0]) * std::stod(r[1]) * std::stod(r[2]);
    if (r[3] == "bf16" && flop >= 1e11) gemm.push_back(std::stod(r[5]));
  }
  REQUIRE(gemm.size() > 20);
  const double reference = planner::median(gemm);
  const planner::AttentionRateTable& table = planner::attention_rate_table();
  int checked = 0;
  for (const auto& r : csv_rows("attention_long.csv")) {
    INFO(r[0] << " " << r[1] << " " << r[3]);
    const auto k = static_cast<std::size_t>(r[3] == "flash" ? planner::AttentionKernel::flash2
                                                             : planner::AttentionKernel::cudnn);
    const planner::AttentionRate curve{table.limit[k].value, table.half_tokens[k].value};
    CHECK(planner::attention_rate_share(curve, std::stod(r[1])) ==
          Approx(std::stod(r[5]) / reference).epsilon(0.06));
    ++checked;
  }
  CHECK(checked == 10);
}

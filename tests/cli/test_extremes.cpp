// Extreme and absurd inputs (issue 5): 10^15 parameters, a million GPUs, a 10-million-token
// sequence, 1 byte of memory, a 1 bit/s link, zero latency, every limit of docs/errors.md at
// once. Each input either comes back with finite, meaningful numbers in every output format
// (plan JSON, text, CSV; memory JSON, text, CSV), through the CLI in-process and through the
// library, or is rejected with one clear InputError. Each expected value is argued in a comment
// from the model's definitions, not read off the program's output.
#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli_harness.hpp"
#include "non_finite_word.hpp"
#include "planner/io/context.hpp"
#include "planner/base/error.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/report/report.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/base/units.hpp"

namespace {

using test_support::has_non_finite_word;

using nlohmann::json;
using planner::InputError;

constexpr std::int64_t million_gpus = std::int64_t{1} << 20;  // 131072 nodes × 8

/// An ordinary 8B training scenario on 8 × 8 GPUs; each test changes what it is about.
json training_scenario() {
  return json::parse(R"({
    "name": "extreme",
    "model": {"layers": 32, "hidden": 4096, "heads": 32, "vocab": 128256, "seq_len": 4096},
    "cluster": {"nodes": 8, "gpus_per_node": 8,
      "gpu": {"memory": "192 GiB", "memory_bandwidth": "4.8 TB/s", "flops": "400 TFLOP/s",
              "reserve": "10 GiB"},
      "intra_node": {"bandwidth": "450 GB/s", "latency": "5 us"},
      "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}},
    "workload": {"kind": "training", "global_batch_tokens": 4194304}
  })");
}

json serving_scenario() {
  json doc = training_scenario();
  doc["workload"] = json::parse(
      R"({"kind": "serving", "batch": 8, "context_tokens": 4096, "slo_per_token": "25 ms"})");
  return doc;
}

std::string write_scenario(const json& doc, const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("planner_test_extremes_" + name + "_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << doc.dump(2);
  return path.string();
}

/// A plan object of the JSON output (docs/output.md) is meaningful: every ledger line is a
/// non-negative number of bytes and the total is their sum; every time is non-negative (the
/// SLO margin may be negative: it is a difference); the degrees multiply to the world size.
void check_plan_json(const json& plan, std::int64_t world) {
  const json& memory = plan.at("memory");
  double sum = 0;
  for (const char* line : {"weights", "gradients", "optimizer", "activations", "logits",
                           "recompute_working", "zero3_gather", "kv_cache", "reserve"}) {
    const double bytes = memory.at(line).get<double>();
    CHECK(bytes >= 0);
    sum += bytes;
  }
  CHECK(memory.at("total").get<double>() == Approx(sum).epsilon(1e-12));
  for (auto it = plan.at("time").begin(); it != plan.at("time").end(); ++it) {
    if (!it.value().is_number() || it.key() == "slo_margin") continue;
    CAPTURE(it.key());
    CHECK(it.value().get<double>() >= 0);
  }
  CHECK(plan.at("time").at("tokens_per_second").get<double>() > 0);
  CHECK(plan.at("dp").get<std::int64_t>() * plan.at("tp").get<std::int64_t>() *
            plan.at("pp").get<std::int64_t>() * plan.at("cp").get<std::int64_t>() ==
        world);
}

struct PlanOutputs {
  int code = 0;
  json report;      ///< plan --format json
  std::string text;  ///< plan --format text
  std::string csv;
};

/// `planner plan` in all three formats, in-process, and the library path the fuzzer takes:
/// the same exit code each time (0 or 1, never the internal error), nothing on standard error,
/// no NaN or infinity in any format, and every plan in the JSON meaningful.
PlanOutputs plan_everywhere(const json& doc, const std::string& name, bool thresholds = false) {
  const std::string file = write_scenario(doc, name);
  PlanOutputs o;
  std::vector<std::string> common{"plan", file};
  if (!thresholds) common.push_back("--no-thresholds");
  for (const std::string format : {"json", "text", "csv"}) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--format", format});
    const cli_harness::Run r = cli_harness::run(args);
    INFO("planner " << format << ": " << r.err);
    REQUIRE((r.code == 0 || r.code == 1));
    CHECK(r.err.empty());
    if (format == "json") {
      o.code = r.code;
      o.report = json::parse(r.out);  // dump_json refuses NaN and infinity (exit 3)
    } else {
      CHECK(r.code == o.code);
      // The title line repeats the scenario's name; nothing else is user text.
      const std::string_view body = std::string_view(r.out).substr(r.out.find('\n') + 1);
      CHECK_FALSE(has_non_finite_word(body));
      (format == "text" ? o.text : o.csv) = r.out;
    }
  }
  const std::int64_t world = doc.at("cluster").at("nodes").get<std::int64_t>() *
                             doc.at("cluster").at("gpus_per_node").get<std::int64_t>();
  for (const json& plan : o.report.at("ranked")) check_plan_json(plan, world);
  if (o.report.contains("pinned")) check_plan_json(o.report.at("pinned"), world);
  for (const json& alternative : o.report.at("alternatives")) {
    if (!alternative.at("plan").is_null()) check_plan_json(alternative.at("plan"), world);
  }

  const planner::Scenario s = planner::load_scenario(doc, name);
  const planner::PlanReport r = planner::make_plan_report(s, 3, false);
  CHECK_NOTHROW(planner::dump_json(planner::report_json(r)));
  CHECK_FALSE(has_non_finite_word(planner::report_csv(r)));
  return o;
}

/// `planner memory` on the pinned plan, in all three formats: finite and meaningful.
json memory_everywhere(const json& doc, const std::string& name) {
  const std::string file = write_scenario(doc, name);
  json report;
  int code = -1;
  for (const std::string format : {"json", "text", "csv"}) {
    const cli_harness::Run r = cli_harness::run({"memory", file, "--format", format});
    INFO("planner memory " << format << ": " << r.err);
    REQUIRE((r.code == 0 || r.code == 1));
    CHECK(r.err.empty());
    if (format == "json") {
      code = r.code;
      report = json::parse(r.out);
    } else {
      CHECK(r.code == code);
      CHECK_FALSE(has_non_finite_word(std::string_view(r.out).substr(r.out.find('\n') + 1)));
    }
  }
  const std::int64_t world = doc.at("cluster").at("nodes").get<std::int64_t>() *
                             doc.at("cluster").at("gpus_per_node").get<std::int64_t>();
  check_plan_json(report.at("plan"), world);
  CHECK(report.at("fits").get<bool>() == (code == 0));
  return report;
}

/// The message of the InputError that loading (or starting the planner on) `doc` throws.
std::string rejection(const json& doc) {
  try {
    const planner::Scenario s = planner::load_scenario(doc, "extreme.json");
    (void)planner::make_context(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

double state_bytes(const json& plan) {
  const json& m = plan.at("memory");
  return m.at("weights").get<double>() + m.at("gradients").get<double>() +
         m.at("optimizer").get<double>();
}

}  // namespace

TEST_CASE("10^15 parameters cannot fit 64 GPUs: exit 1 and a state-memory verdict",
          "[extremes]") {
  // 16 bytes per parameter (mixed-precision Adam), sharded over all 64 GPUs at best:
  // 16e15 / 64 = 2.5e14 B per GPU, a thousand times the 192 GiB. The shape is one of 10^15
  // parameters (the loader refuses a count more than 2× off the shape's, issue 14): 19418
  // layers of 12·h² + 4h = 5.154e10 (h = 65536, f = 4h) are 1.0008e15, plus 2·V·h = 3.4e10.
  json doc = training_scenario();
  doc["model"] = json::parse(R"({"layers": 19418, "hidden": 65536, "heads": 512,
                                 "vocab": 256000, "seq_len": 4096, "params": 1e15})");
  const PlanOutputs o = plan_everywhere(doc, "params_1e15_64_gpus");
  CHECK(o.code == 1);
  CHECK(o.report.at("best").is_null());
  CHECK(o.report.at("binding_constraint").at("kind") == "state memory");
  CHECK_THAT(o.text, Catch::Contains("No configuration fits."));
  CHECK(o.csv.find('\n') == o.csv.size() - 1);  // the header alone
}

TEST_CASE("10^15 parameters on a million GPUs: state is spread at best evenly over all",
          "[extremes]") {
  // A 10^15-parameter model (19418 layers of h = 65536: 1.03e15 by the shape's count, the
  // test above) on 2^20 GPUs. Model state cannot be
  // split more finely than evenly over every GPU: 16 B × 1e15 / 2^20 = 1.53e10 B (14.2 GiB) per
  // GPU is a lower bound for weights + gradients + optimizer of any plan; ZeRO-3 over dp·cp with
  // tp·pp splitting the rest reaches it. The global batch is the target of 2^26 tokens /
  // 8192 = 8192 sequences, rounded up to a multiple of dp (evaluate.hpp).
  json doc = training_scenario();
  doc["model"] = json::parse(R"({"layers": 19418, "hidden": 65536, "heads": 512,
                                 "vocab": 256000, "seq_len": 8192, "params": 1e15})");
  doc["cluster"]["nodes"] = 131072;
  doc["cluster"]["intra_node"]["bandwidth"] = "900 GB/s";
  doc["cluster"]["inter_node"]["bandwidth"] = "100 GB/s";
  doc["cluster"]["gpu"]["flops"] = "1000 TFLOP/s";
  doc["workload"]["global_batch_tokens"] = 67108864;
  const PlanOutputs o = plan_everywhere(doc, "params_1e15_million_gpus", true);
  REQUIRE(o.code == 0);
  const json& best = o.report.at("best");
  CHECK(state_bytes(best) >= 16e15 / static_cast<double>(million_gpus) * (1 - 1e-12));
  CHECK(best.at("memory").at("total").get<double>() <=
        best.at("memory").at("capacity").get<double>());
  const double sequences = best.at("time").at("global_sequences").get<double>();
  CHECK(sequences >= 8192);
  CHECK(sequences < 8192 + best.at("dp").get<double>());
}

TEST_CASE("A million GPUs train an 8B model: every GPU used, dp within the batch", "[extremes]") {
  // 4 Mi tokens / 4096 = 1024 sequences per step: at most 1024 replicas, so the other 2^10
  // ways of the 2^20 GPUs must be model parallel (tp·pp·cp ≥ 1024).
  json doc = training_scenario();
  doc["cluster"]["nodes"] = 131072;
  const PlanOutputs o = plan_everywhere(doc, "million_gpus_8b");
  REQUIRE(o.code == 0);
  const json& best = o.report.at("best");
  CHECK(best.at("dp").get<std::int64_t>() <= 1024);
  CHECK(best.at("tp").get<std::int64_t>() * best.at("pp").get<std::int64_t>() *
            best.at("cp").get<std::int64_t>() >=
        1024);
}

TEST_CASE("A 10-million-token sequence needs tiled attention", "[extremes]") {
  // Untiled attention keeps (or, under selective and full recompute, re-materialises during
  // the backward pass) the 5·a·s²·b-byte score tensors of one layer on a tp rank: 5 · 32 ·
  // (1e7)² / 32 = 5e14 B with the widest tp = 32, far above 192 GiB; context parallelism
  // requires tiled attention. So every fitting plan uses flash attention. A batch of 10^7
  // tokens is one sequence per step (less than one is refused since issue 14).
  json doc = training_scenario();
  doc["model"]["seq_len"] = 10000000;
  doc["workload"]["global_batch_tokens"] = 10000000;
  const PlanOutputs o = plan_everywhere(doc, "seq_10m");
  REQUIRE(o.code == 0);
  const json& best = o.report.at("best");
  CHECK(best.at("flash_attention").get<bool>());
  CHECK(best.at("time").at("global_sequences").get<double>() == 1);
  CHECK(best.at("dp").get<std::int64_t>() == 1);
}

TEST_CASE("One byte of GPU memory: nothing fits, in every output", "[extremes]") {
  // The bf16 weights alone are billions of bytes; the reserve must be below the memory, so 0.
  json doc = training_scenario();
  doc["cluster"]["gpu"]["memory"] = "1 B";
  doc["cluster"]["gpu"]["reserve"] = 0;
  const PlanOutputs o = plan_everywhere(doc, "one_byte");
  CHECK(o.code == 1);
  CHECK(o.report.at("best").is_null());
  CHECK(o.report.at("search").at("feasible").get<std::int64_t>() == 0);
  doc["plan"] = json::parse(R"({"dp": 64})");
  const json memory = memory_everywhere(doc, "one_byte_memory");
  CHECK_FALSE(memory.at("fits").get<bool>());
  CHECK(memory.at("plan").at("memory").at("capacity").get<double>() == 1);
  CHECK(memory.at("plan").at("memory").at("total").get<double>() > 1);
}

TEST_CASE("A 1 bit/s link is below the loader's 1 B/s and is rejected", "[extremes][errors]") {
  // docs/errors.md §Limits: bandwidths from 1 B/s. One bit per second is 0.125 B/s, written as
  // bytes or as bits (1e-9 Gbps = 1 bit/s).
  for (const char* bandwidth : {"0.125 B/s", "1e-9 Gbps"}) {
    json doc = training_scenario();
    doc["cluster"]["inter_node"]["bandwidth"] = bandwidth;
    CHECK(rejection(doc) ==
          std::string("extreme.json: /cluster/inter_node/bandwidth: expected a bandwidth such as "
                      "\"50 GB/s\" (1 B/s to 1e18 B/s), got \"") +
              bandwidth + "\"");
  }
  const cli_harness::Run r = cli_harness::run(
      {"plan", "scenarios/a.json", "--set", "/cluster/intra_node/bandwidth=0.125 B/s"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "planner: error: scenarios/a.json: /cluster/intra_node/bandwidth: expected a bandwidth "
        "such as \"50 GB/s\" (1 B/s to 1e18 B/s), got \"0.125 B/s\"\n");
}

TEST_CASE("1 B/s between nodes: accepted, finite, and every plan pays for crossing", "[extremes]") {
  // 64 GPUs in nodes of 8: some axis's group must leave the node. Whatever crosses moves at
  // least a megabyte per step on the critical path at 1 B/s: a tp all-reduce is s·b·h·2 =
  // 32 MiB, a stage send s·b·h·2/tp ≥ 1 MiB (tp ≤ 32 heads), a ring K/V block 2·(s/cp)·b·h·2 ≥
  // 1 MiB (cp ≤ 64), and data-parallel traffic always exposes at least one layer's gradient
  // bucket (step_time.hpp: exposed ≥ min(bucket, comm)), 2·P_layer/tp ≥ 12 MB. So every step
  // takes more than 1e5 s, and still a finite, positive time.
  json doc = training_scenario();
  doc["cluster"]["inter_node"]["bandwidth"] = "1 B/s";
  doc["cluster"]["inter_node"]["latency"] = "60 s";  // the loader's largest latency too
  const PlanOutputs o = plan_everywhere(doc, "one_byte_per_second");
  REQUIRE(o.code == 0);
  CHECK(o.report.at("best").at("time").at("step").get<double>() > 1e5);
}

TEST_CASE("The slowest HBM the loader accepts keeps serving finite", "[extremes]") {
  // 1 B/s of memory bandwidth at the lowest efficiency, 0.001: each decode step reads at least
  // the per-GPU weights (16 GB of bf16 over at most 64 GPUs) at 0.001 B/s, above 1e8 s per
  // token: the SLO is missed (exit 1), with finite numbers. Below 0.001 the loader refuses
  // the efficiency: at 1e-300 the per-token time was infinite (internal error, exit 3).
  json doc = serving_scenario();
  doc["cluster"]["gpu"]["memory_bandwidth"] = "1 B/s";
  doc["workload"]["memory_bandwidth_efficiency"] = 0.001;
  const PlanOutputs o = plan_everywhere(doc, "slow_hbm");
  CHECK(o.code == 1);
  CHECK(o.report.at("best").at("time").at("per_token").get<double>() > 1e8);
  doc["workload"]["memory_bandwidth_efficiency"] = 1e-300;
  CHECK(rejection(doc) ==
        "extreme.json: /workload/memory_bandwidth_efficiency: expected a fraction from 0.001 to "
        "1, such as 0.7, got 1e-300");
}

TEST_CASE("Zero latency on both tiers: collectives cost their wire time alone", "[extremes]") {
  json doc = training_scenario();
  doc["cluster"]["intra_node"]["latency"] = 0;
  doc["cluster"]["inter_node"]["latency"] = "0 us";
  const PlanOutputs o = plan_everywhere(doc, "zero_latency");
  CHECK(o.code == 0);
  // α = 0: a ring all-reduce of M = 8 MiB over 8 ranks at 100 GB/s is exactly 2·7/8·M/B.
  const cli_harness::Run r = cli_harness::run({"collective", "--gpus", "8", "--bw", "100",
                                               "--latency", "0", "--bytes", "8388608",
                                               "--format", "json"});
  REQUIRE(r.code == 0);
  const json report = json::parse(r.out);
  for (const json& a : report.at("algorithms")) {
    CHECK(a.at("latency_seconds").get<double>() == 0);
    CHECK(a.at("seconds").get<double>() == a.at("wire_seconds").get<double>());
    if (a.at("algorithm") == "ring") {
      CHECK(a.at("seconds").get<double>() == Approx(2.0 * 7 / 8 * 8388608 / 100e9));
    }
  }
}

TEST_CASE("A collective at the extremes of its flags stays finite", "[extremes]") {
  // 2^24 ranks, 1 B/s, 1e6 s per hop, 1e18 bytes: the one-shot wire time (n−1)·M/B = 1.7e25 s
  // is the largest figure, well inside double range.
  for (const std::string format : {"json", "text"}) {
    const cli_harness::Run r = cli_harness::run({"collective", "--gpus", "16777216", "--bw", "1e-9",
                                                 "--latency", "1e12", "--bytes", "1e18",
                                                 "--format", format});
    REQUIRE(r.code == 0);
    CHECK_FALSE(has_non_finite_word(r.out));
  }
}

TEST_CASE("Every limit of the loader at once: finite outputs, no integer overflow",
          "[extremes][limits]") {
  // docs/errors.md §Limits, each at its maximum: 2^24 GPUs, 2^20 layers, h = heads = 2^24,
  // f = 2^26 gated, V = 2^30, s = 2^30, 2^50 tokens per step (2^20 sequences), 2^60 B of memory,
  // 1e18 B/s, 1e21 FLOP/s, 60 s latency, 64 bytes per parameter, micro-batches of 2^16. The
  // derived parameter count (~2^72) and the FLOPs (~2^120) are far beyond int64 but inside
  // double; the int64 products (dp·micro_batch·grad_accum ≤ 2^24·2^16·2^16, world size,
  // vocab·hidden) stay below 2^63. The pinned plan puts all 2^24 GPUs into tp: it does not fit.
  const json doc = json::parse(R"({
    "model": {"layers": 1048576, "hidden": 16777216, "heads": 16777216, "kv_heads": 16777216,
              "ffn_hidden": 67108864, "gated_mlp": true, "vocab": 1073741824,
              "seq_len": 1073741824},
    "cluster": {"nodes": 2097152, "gpus_per_node": 8,
      "gpu": {"memory": 1152921504606846976, "memory_bandwidth": 1e18, "flops": 1e21,
              "reserve": 0},
      "intra_node": {"bandwidth": 1e18, "latency": 60},
      "inter_node": {"bandwidth": 1e18, "latency": 60}},
    "workload": {"kind": "training", "global_batch_tokens": 1125899906842624,
                 "micro_batch": 65536, "bytes_per_param": 64},
    "plan": {"dp": 1, "tp": 16777216, "pp": 1, "cp": 1, "zero": 3, "recompute": "full",
             "flash_attention": true, "sequence_parallel": true, "micro_batch": 65536,
             "grad_accum": 65536, "placement": ["pp", "dp", "cp", "tp"]}
  })");
  const PlanOutputs o = plan_everywhere(doc, "all_limits");
  REQUIRE(o.code == 0);
  // 2^20 sequences per step at least: the target, rounded up to a multiple of dp.
  CHECK(o.report.at("best").at("time").at("global_sequences").get<double>() >= 1048576);
  // The pinned plan's 2^16 × 2^16 sequences per replica: the product is exact in int64.
  const json memory = memory_everywhere(doc, "all_limits_memory");
  CHECK_FALSE(memory.at("fits").get<bool>());
  CHECK(memory.at("plan").at("time").at("global_sequences").get<double>() == 4294967296.0);
  // The pinned plan loses to the recommendation because it does not fit, not by a speed.
  CHECK_THAT(o.text, Catch::Contains("does not fit: needs"));
  CHECK_THAT(o.text, Catch::Contains("; the recommendation fits\n"));
}

TEST_CASE("Serving at its limits: a 2^46-token KV cache is finite and does not fit",
          "[extremes][limits]") {
  // batch 2^16 × 2^30 tokens of context: 2·L·h·2 bytes per token = 2·32·4096·2 = 512 KiB, so
  // 2^46 tokens need 2^65 B of cache, over every engine. Nothing fits: exit 1.
  json doc = serving_scenario();
  doc["workload"]["batch"] = 65536;
  doc["workload"]["context_tokens"] = 1073741824;
  doc["workload"]["slo_per_token"] = "3600 s";
  const PlanOutputs o = plan_everywhere(doc, "serving_limits");
  CHECK(o.code == 1);
  CHECK(o.report.at("best").is_null());
}

TEST_CASE("Sequences per step are bounded at 2^32", "[extremes][limits][errors]") {
  // micro_batch · grad_accum ≤ 2^16 · 2^16 on one replica. Beyond, the search's divisor
  // enumeration of each replica's share grew with the square root of 2^50: seconds per
  // search, minutes per plan with thresholds.
  json doc = training_scenario();
  doc["model"]["seq_len"] = 1;
  doc["workload"]["global_batch_tokens"] = 4294967296.0;
  const PlanOutputs o = plan_everywhere(doc, "sequences_2_32");
  CHECK(o.code == 0);
  CHECK(o.report.at("best").at("time").at("global_sequences").get<double>() == 4294967296.0);
  doc["workload"]["global_batch_tokens"] = 4294967297.0;
  CHECK(rejection(doc) ==
        "extreme.json: /workload/global_batch_tokens: global_batch_tokens / seq_len = "
        "4294967297 / 1 = 4294967297 sequences per step exceeds the limit of 4294967296 (2^32)");
  doc["model"]["seq_len"] = 3;
  doc["workload"]["global_batch_tokens"] = 1e15;
  CHECK(rejection(doc) ==
        "extreme.json: /workload/global_batch_tokens: global_batch_tokens / seq_len = 1e+15 / 3 "
        "= 3.333333333e+14 sequences per step exceeds the limit of 4294967296 (2^32)");
}

TEST_CASE("Plan degrees at the limit: the world-size product is checked without overflow",
          "[extremes][limits][errors]") {
  // 2^24 four times is 2^96: validate_plan multiplies with overflow checks.
  json doc = training_scenario();
  doc["cluster"]["nodes"] = 2097152;
  doc["plan"] = json::parse(R"({"dp": 16777216, "tp": 16777216, "pp": 16777216,
                                "cp": 16777216})");
  CHECK(rejection(doc) ==
        "extreme.json: /plan: world size is 16777216 GPUs (2097152 nodes × 8) but dp·tp·pp·cp = "
        "16777216·16777216·16777216·16777216 = more than 2^63; the product must equal 16777216");
}

TEST_CASE("A measured step time implying more than 1e21 FLOP/s is rejected", "[extremes][errors]") {
  // Scenario A's reference plan (its pinned plan) does 2.125e14 FLOP per micro-batch (6·8e9·4096
  // + 14·4096³·32 of attention and flash recompute at the causal share (1 + 128/4096)/2, the
  // blocks a flash kernel computes: 1.966e14 + 1.587e13); measured
  // in 1e-300 s the rate overflowed to infinity and every time became 0 (exit 3, and a UBSan
  // report in rank.hpp's time_step). The loader's limit for gpu.flops bounds the implied rate.
  const cli_harness::Run r = cli_harness::run(
      {"plan", "scenarios/a.json", "--no-thresholds", "--set",
       "/workload/step_time_per_micro_batch=1e-300 s"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "planner: error: scenarios/a.json: /workload/step_time_per_micro_batch: the measured "
        "1e-300 s implies more than 1e308 FLOP/s for the reference plan's 2.125e+14 FLOP, above "
        "the limit of 1e21 FLOP/s; check the value\n");
  const cli_harness::Run finite = cli_harness::run(
      {"memory", "scenarios/a.json", "--set", "/workload/step_time_per_micro_batch=1e-12 s"});
  CHECK(finite.code == 2);
  CHECK(finite.err ==
        "planner: error: scenarios/a.json: /workload/step_time_per_micro_batch: the measured "
        "1e-12 s implies 2.125e+26 FLOP/s for the reference plan's 2.125e+14 FLOP, above the "
        "limit of 1e21 FLOP/s; check the value\n");
}

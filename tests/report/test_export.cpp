// planner export --to megatron: the arguments parse back to the plan the planner recommends
// under the megatron rules (docs/exports.md).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <vector>
#include <sstream>
#include <string>

#include "cli_harness.hpp"

using nlohmann::json;

namespace {

/// "--name value" and "--flag" lines (trailing backslashes, '#' comments) → name → value ("" for
/// a flag).
std::map<std::string, std::string> parse_arguments(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.size() >= 2 && line.substr(line.size() - 2) == " \\") line.resize(line.size() - 2);
    std::istringstream words(line);
    std::string name, value;
    words >> name >> value;
    REQUIRE(name.rfind("--", 0) == 0);
    REQUIRE(out.count(name) == 0);  // each argument once
    out[name] = value;
  }
  return out;
}

std::int64_t integer(const std::map<std::string, std::string>& a, const std::string& name) {
  REQUIRE(a.count(name) == 1);
  return std::stoll(a.at(name));
}

}  // namespace

// Scenarios without a pinned plan: export writes the recommendation (a pinned plan is exported
// as pinned).
TEST_CASE("Megatron-LM arguments round-trip to the recommended plan", "[export]") {
  for (const char* scenario : {"scenarios/q2-llama-3.1-70b-64-h100.json", "scenarios/q6-gpt-3-175b-1024-a100.json",
                               "scenarios/q1-llama-3.1-8b-one-node.json"}) {
    INFO(scenario);
    const auto exported = cli_harness::run({"export", scenario, "--to", "megatron"});
    REQUIRE(exported.code == 0);
    const auto planned = cli_harness::run({"plan", scenario, "--framework", "megatron",
                                           "--format", "json", "--no-thresholds"});
    REQUIRE(planned.code == 0);
    const json best = json::parse(planned.out).at("best");
    const auto a = parse_arguments(exported.out);
    const std::int64_t world = best.at("dp").get<std::int64_t>() *
                               best.at("tp").get<std::int64_t>() *
                               best.at("pp").get<std::int64_t>() *
                               best.at("cp").get<std::int64_t>();
    // Megatron derives dp from the world size (megatron/training/arguments.py).
    const std::int64_t tp = integer(a, "--tensor-model-parallel-size");
    const std::int64_t pp = integer(a, "--pipeline-model-parallel-size");
    const std::int64_t cp = integer(a, "--context-parallel-size");
    const std::int64_t dp = world / (tp * pp * cp);
    const std::int64_t mb = integer(a, "--micro-batch-size");
    CHECK(tp == best.at("tp"));
    CHECK(pp == best.at("pp"));
    CHECK(cp == best.at("cp"));
    CHECK(dp == best.at("dp"));
    CHECK(mb == best.at("micro_batch"));
    CHECK(integer(a, "--global-batch-size") / (dp * mb) == best.at("grad_accum"));
    CHECK((a.count("--use-distributed-optimizer") ? 1 : 0) == best.at("zero"));
    CHECK(a.count("--sequence-parallel") == (best.at("sequence_parallel") == true ? 1u : 0u));
    const std::string recompute =
        a.count("--recompute-granularity") ? a.at("--recompute-granularity") : "none";
    CHECK(recompute == best.at("recompute"));
    // Tiled attention is the kernel the scenario times, cuDNN's unless it names flash2.
    CHECK((a.at("--attention-backend") == "fused") == best.at("flash_attention").get<bool>());
    // Interleaving: L / (pp · layers per virtual stage) model chunks per pipeline rank.
    const std::int64_t v = a.count("--num-layers-per-virtual-pipeline-stage")
                               ? integer(a, "--num-layers") /
                                     (pp * integer(a, "--num-layers-per-virtual-pipeline-stage"))
                               : 1;
    CHECK(v == best.value("virtual_stages", std::int64_t{1}));
  }
}

TEST_CASE("Export refuses a pinned plan Megatron-LM cannot launch", "[export]") {
  // Scenario B pins ZeRO stages through --set: ZeRO-3 has no Megatron-LM stage.
  const auto r = cli_harness::run({"export", "scenarios/b.json", "--set",
                                   "/plan={\"dp\": 32, \"tp\": 2, \"zero\": 3, "
                                   "\"recompute\": \"selective\", \"flash_attention\": true}"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/plan") && Catch::Contains("ZeRO-1"));
}

TEST_CASE("Megatron-LM arguments for the embedding and loss in the pipeline split", "[export]") {
  // Llama 3.1 405B (126 layers) on 16,384 GPUs with the tables in the split: 128 units, so
  // interleaving is given by chunks per rank (arguments.py
  // --num-virtual-stages-per-pipeline-rank), with both --account-for-*-in-pipeline-split flags.
  const char* scenario = "scenarios/q3-llama-3.1-405b-16k-h100.json";
  const char* setting = "/workload/tables_in_pipeline_split=true";
  const auto exported =
      cli_harness::run({"export", scenario, "--to", "megatron", "--set", setting});
  REQUIRE(exported.code == 0);
  const auto planned = cli_harness::run({"plan", scenario, "--framework", "megatron", "--format",
                                         "json", "--no-thresholds", "--set", setting});
  REQUIRE(planned.code == 0);
  const json best = json::parse(planned.out).at("best");
  REQUIRE(best.at("pp").get<std::int64_t>() > 1);
  CHECK(best.at("tables_in_pipeline_split") == true);
  const auto a = parse_arguments(exported.out);
  CHECK(a.count("--account-for-embedding-in-pipeline-split") == 1);
  CHECK(a.count("--account-for-loss-in-pipeline-split") == 1);
  CHECK(a.count("--num-layers-per-virtual-pipeline-stage") == 0);
  const std::int64_t v = a.count("--num-virtual-stages-per-pipeline-rank")
                             ? integer(a, "--num-virtual-stages-per-pipeline-rank")
                             : 1;
  CHECK(v == best.value("virtual_stages", std::int64_t{1}));
  // Megatron-LM's rule: pp·v divides the 126 layers and the two tables.
  CHECK((126 + 2) % (integer(a, "--pipeline-model-parallel-size") * v) == 0);
  // torchtitan and DeepSpeed split by layers alone: no such plan for them.
  const auto titan = cli_harness::run({"plan", scenario, "--framework", "torchtitan", "--format",
                                       "json", "--no-thresholds", "--set", setting});
  REQUIRE(titan.code == 0);
  CHECK_FALSE(json::parse(titan.out).at("best").contains("tables_in_pipeline_split"));
}

TEST_CASE("Megatron-LM exports use its argument names and the switches the model assumed",
          "[export]") {
  // Every argument name the exporter writes, as megatron/training/arguments.py (core_r0.12)
  // spells it: _add_network_size_args, _add_training_args, _add_distributed_args,
  // _add_moe_args, _add_mixed_precision_args (transcribed; fetch NVIDIA/Megatron-LM to check).
  const std::set<std::string> megatron{
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
      "--num-virtual-stages-per-pipeline-rank", "--num-layers-per-virtual-pipeline-stage",
      "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
      "--context-parallel-size", "--num-experts", "--moe-router-topk", "--moe-ffn-hidden-size",
      "--moe-shared-expert-intermediate-size", "--expert-model-parallel-size",
      "--expert-tensor-parallel-size", "--moe-token-dispatcher-type", "--sequence-parallel",
      "--tp-comm-overlap", "--overlap-p2p-communication", "--use-distributed-optimizer",
      "--num-distributed-optimizer-instances", "--overlap-grad-reduce", "--overlap-param-gather",
      "--use-tp-pp-dp-mapping", "--micro-batch-size", "--global-batch-size",
      "--recompute-granularity", "--recompute-method", "--recompute-num-layers",
      "--attention-backend", "--num-layers", "--hidden-size", "--ffn-hidden-size",
      "--num-attention-heads", "--group-query-attention", "--num-query-groups", "--swiglu",
      "--untie-embeddings-and-output-weights", "--seq-length", "--max-position-embeddings",
      "--bf16", "--grad-reduce-in-bf16", "--fp8-format", "--fp8-recipe", "--normalization",
      "--position-embedding-type", "--disable-bias-linear", "--add-qkv-bias", "--hidden-dropout",
      "--attention-dropout"};
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> expected;  ///< switches this plan's timing assumed
    std::string fp8_recipe;             ///< the recipe the scenario names, if FP8
  };
  const std::vector<Case> cases{
      // 70B on 64 H100: data parallel with the distributed optimizer, its collectives hidden.
      {{"scenarios/q2-llama-3.1-70b-64-h100.json"}, {"--overlap-grad-reduce"}, ""},
      // Mixtral: experts split over ranks exchange tokens by all-to-all.
      {{"scenarios/q4-mixtral-8x7b-training.json"}, {}, ""},
      // FP8 GEMMs at the default (tensor-wise) recipe.
      {{"scenarios/deepseek-v3-h800.json"}, {"--moe-token-dispatcher-type"}, "tensorwise"},
      {{"scenarios/q6-gpt-3-175b-1024-a100.json"}, {"--overlap-grad-reduce"}, ""},
      // FP8 GEMMs timed with the block-wise recipe.
      {{"scenarios/q1-llama-3.1-8b-one-node.json", "--set",
        "/model/precision={\"compute\": \"fp8\", \"fp8_recipe\": \"blockwise\"}"},
       {"--fp8-format", "--fp8-recipe"},
       "blockwise"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"export"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--to", "megatron"});
    const auto r = cli_harness::run(args);
    INFO(c.args.front());
    REQUIRE(r.code == 0);
    const auto a = parse_arguments(r.out);
    for (const auto& [name, value] : a) {
      INFO(name);
      CHECK(megatron.count(name) == 1);
    }
    for (const std::string& name : c.expected) CHECK(a.count(name) == 1);
    if (a.count("--use-distributed-optimizer") && a.count("--overlap-grad-reduce")) {
      CHECK(a.count("--overlap-param-gather") == 1);
    }
    if (a.count("--expert-model-parallel-size") && integer(a, "--expert-model-parallel-size") > 1) {
      CHECK(a.at("--moe-token-dispatcher-type") == "alltoall");
    }
    CHECK(a.count("--fp8-recipe") == (c.fp8_recipe.empty() ? 0u : 1u));
    if (a.count("--fp8-recipe")) {
      CHECK(a.at("--fp8-format") == "hybrid");
      CHECK(a.at("--fp8-recipe") == c.fp8_recipe);
    }
  }
}

TEST_CASE("Megatron-LM's attention backend is the kernel the plan was timed with", "[export]") {
  // arguments.py --attention-backend: fused (Transformer Engine's cuDNN attention, the timed
  // default on Hopper) unless the workload names FlashAttention-2, the flash-attn package.
  const char* scenario = "scenarios/q2-llama-3.1-70b-64-h100.json";
  const auto cudnn = cli_harness::run({"export", scenario, "--to", "megatron", "--framework",
                                       "megatron"});
  REQUIRE(cudnn.code == 0);
  CHECK_THAT(cudnn.out, Catch::Contains("--attention-backend fused"));
  const auto flash2 = cli_harness::run({"export", scenario, "--to", "megatron", "--framework",
                                        "megatron", "--set",
                                        "/workload/attention_kernel=\"flash2\""});
  REQUIRE(flash2.code == 0);
  CHECK_THAT(flash2.out, Catch::Contains("--attention-backend flash"));
  CHECK_THAT(flash2.out, !Catch::Contains("--attention-backend fused"));
}

TEST_CASE("Megatron-LM exports build the architecture that was timed", "[export]") {
  // arguments.py's defaults are GPT-2's: --normalization LayerNorm, --position-embedding-type
  // learned_absolute, biases on every linear layer (add_bias_linear), hidden and attention
  // dropout 0.1. Llama 3.1 (its config.json: RMSNorm, RoPE, attention_bias false, attention
  // dropout 0.0) must switch each off; GPT-3 (Brown et al. 2020 §2.1: GPT-2's architecture)
  // keeps them.
  const auto llama = cli_harness::run(
      {"export", "scenarios/q2-llama-3.1-70b-64-h100.json", "--to", "megatron"});
  REQUIRE(llama.code == 0);
  const auto l = parse_arguments(llama.out);
  CHECK(l.at("--normalization") == "RMSNorm");
  CHECK(l.at("--position-embedding-type") == "rope");
  CHECK(l.count("--disable-bias-linear") == 1);
  CHECK(l.count("--add-qkv-bias") == 0);
  CHECK(l.at("--hidden-dropout") == "0");
  CHECK(l.at("--attention-dropout") == "0");

  const auto gpt3 = cli_harness::run(
      {"export", "scenarios/q6-gpt-3-175b-1024-a100.json", "--to", "megatron"});
  REQUIRE(gpt3.code == 0);
  const auto g = parse_arguments(gpt3.out);
  CHECK(g.at("--normalization") == "LayerNorm");
  CHECK(g.at("--position-embedding-type") == "learned_absolute");
  CHECK(g.count("--disable-bias-linear") == 0);
  CHECK(g.count("--hidden-dropout") == 0);

  // Qwen2's Q, K and V projections carry biases, its others none (modeling_qwen2.py).
  const auto qwen = cli_harness::run(
      {"export", "scenarios/q1-llama-3.1-8b-one-node.json", "--to", "megatron", "--set",
       "/model={\"preset\": \"qwen2.5-7b\", \"seq_len\": 4096}"});
  REQUIRE(qwen.code == 0);
  const auto q = parse_arguments(qwen.out);
  CHECK(q.count("--disable-bias-linear") == 1);
  CHECK(q.count("--add-qkv-bias") == 1);

  // ALiBi has no Megatron-LM option: said in a header line, not silently dropped.
  const auto alibi = cli_harness::run({"export", "scenarios/q1-llama-3.1-8b-one-node.json",
                                       "--to", "megatron", "--set",
                                       "/model/position_embedding=\"alibi\""});
  REQUIRE(alibi.code == 0);
  CHECK(alibi.out.find("ALiBi") != std::string::npos);
  CHECK(parse_arguments(alibi.out).count("--position-embedding-type") == 0);
}

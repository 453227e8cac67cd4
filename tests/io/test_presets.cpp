// Model presets (data/models/*.json) and Hugging Face config.json import (io/presets.hpp).

#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "cli_harness.hpp"
#include "planner/base/error.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/presets.hpp"
#include "planner/inputs/model.hpp"
#include "planner/io/scenario_json.hpp"

using namespace planner;
using nlohmann::json;

namespace {

const std::string source_dir = PLANNER_SOURCE_DIR;

/// A small training scenario around `model`, loaded as if it were a file in tests/data/.
Scenario load_with_model(const json& model) {
  json doc = json::parse(R"({
    "cluster": {"nodes": 1, "gpus_per_node": 8,
                "gpu": {"memory": "80 GiB", "memory_bandwidth": "3.35 TB/s",
                        "flops": "400 TFLOP/s"},
                "intra_node": {"bandwidth": "450 GB/s", "latency": "3 us"},
                "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}},
    "workload": {"kind": "training", "global_batch_tokens": 1048576}})");
  doc["model"] = model;
  return load_scenario(doc, source_dir + "/tests/data/scenario.json");
}

std::string error_of(const json& model) {
  try {
    (void)load_with_model(model);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("An HF config.json for Llama-3.1-8B imports to the preset's model", "[presets]") {
  const Model from_hf =
      load_with_model({{"hf_config", "hf/llama-3.1-8b-config.json"}, {"seq_len", 8192}}).model;
  const Model from_preset = load_with_model({{"preset", "llama-3.1-8b"}, {"seq_len", 8192}}).model;
  // The Llama 3 paper (arXiv 2407.21783, Table 3), typed here, not read from the program.
  CHECK(from_preset.layers == 32);
  CHECK(from_preset.hidden == 4096);
  CHECK(from_preset.heads == 32);
  CHECK(from_preset.kv_heads == 8);
  CHECK(from_preset.ffn_hidden == 14336);
  CHECK(from_preset.vocab == 128256);
  CHECK(from_preset.gated_mlp);
  CHECK_FALSE(from_preset.tied_embeddings);
  CHECK(from_hf.layers == from_preset.layers);
  CHECK(from_hf.hidden == from_preset.hidden);
  CHECK(from_hf.heads == from_preset.heads);
  CHECK(from_hf.kv_heads == from_preset.kv_heads);
  CHECK(from_hf.ffn_hidden == from_preset.ffn_hidden);
  CHECK(from_hf.vocab == from_preset.vocab);
  CHECK(from_hf.gated_mlp == from_preset.gated_mlp);
  CHECK(from_hf.tied_embeddings == from_preset.tied_embeddings);
  CHECK(from_hf.seq_len == 8192);
  // Llama's config.json: attention_dropout 0.0, attention_bias and mlp_bias false, and no
  // residual dropout in LlamaDecoderLayer: no masks kept, no biases, from either route.
  CHECK_FALSE(from_preset.dropout);
  CHECK_FALSE(from_hf.dropout);
  CHECK(from_preset.linear_bias == LinearBias::none);
  CHECK(from_hf.linear_bias == LinearBias::none);
  // Meta's model card: 8.03 B parameters (embedding and output layer untied).
  CHECK(total_params(from_hf) / 1e9 == Approx(8.03).margin(0.01));
}

TEST_CASE("Presets match their published parameter counts", "[presets]") {
  // Model cards on the Hugging Face Hub: Llama 3.1 8.03 B, 70.6 B, 405.9 B (the "Model size"
  // of the safetensors); GPT-3 175 B (Brown et al. 2020, Table 2.1).
  const std::pair<const char*, double> cases[] = {{"llama-3.1-8b", 8.03},
                                                  {"llama-3.1-70b", 70.55},
                                                  {"llama-3.1-405b", 405.85},
                                                  {"gpt-3-175b", 175.0}};
  for (const auto& [name, billions] : cases) {
    INFO(name);
    const Model m = load_with_model({{"preset", name}, {"seq_len", 2048}}).model;
    CHECK(total_params(m) / 1e9 == Approx(billions).epsilon(0.01));
  }
  CHECK(model_preset_names().size() >= 7);
}

TEST_CASE("A scenario's model keys override the preset's", "[presets]") {
  const Model m = load_with_model({{"preset", "llama-3.1-70b"}, {"layers", 40}, {"seq_len", 4096}})
                      .model;
  CHECK(m.layers == 40);
  CHECK(m.hidden == 8192);  // the rest from the preset
  CHECK(m.seq_len == 4096);
}

TEST_CASE("Preset and HF errors name the key and the fix", "[presets]") {
  CHECK_THAT(error_of({{"preset", "llama-3.1-8"}, {"seq_len", 8192}}),
             Catch::Contains("/model/preset") && Catch::Contains("did you mean \"llama-3.1-8b\""));
  CHECK_THAT(error_of({{"preset", "llama-3.1-8b"}}), Catch::Contains("/model") &&
                                                         Catch::Contains("seq_len"));
  CHECK_THAT(error_of({{"layers", 32}, {"num_key_value_heads", 8}}),
             Catch::Contains("/model/num_key_value_heads") && Catch::Contains("\"kv_heads\""));
  // Gemma 2 alternates sliding-window layers, which the planner's full attention is not.
  json dense_arch = json::parse(R"({"architectures": ["Gemma2ForCausalLM"]})");
  CHECK_THROWS_WITH(model_from_hf(dense_arch, "g.json"), Catch::Contains("/architectures/0"));
  CHECK_THAT(error_of({{"hf_config", "hf/missing.json"}, {"seq_len", 4096}}),
             Catch::Contains("missing.json"));
}

TEST_CASE("planner import hf and planner list models", "[presets][cli]") {
  const auto imported = cli_harness::run({"import", "hf", "tests/data/hf/llama-3.1-8b-config.json"});
  REQUIRE(imported.code == 0);
  const json m = json::parse(imported.out).at("model");
  CHECK(m.at("kv_heads") == 8);
  CHECK(m.at("seq_len") == 131072);  // max_position_embeddings, with a note on stderr
  CHECK_THAT(imported.err, Catch::Contains("context window"));
  // Mixtral (issue 10): imported with its experts, as the preset has them.
  const auto moe = cli_harness::run({"import", "hf", "tests/data/hf/mixtral-8x7b-config.json"});
  REQUIRE(moe.code == 0);
  CHECK(json::parse(moe.out).at("model").at("moe") ==
        json::parse(R"({"experts": 8, "top_k": 2, "expert_ffn_hidden": 14336})"));
  // Dense Qwen3 (issue 31): Qwen/Qwen3-8B's config.json. The report's 8.2B parameters, 6.95B
  // outside the embeddings (arXiv 2505.09388 Table 1, the model card), from the imported shape:
  // 36 × (4096·(4096 + 2·1024) + 4096·4096 + 3·4096·12288 + 2·4096) = 6.946e9, plus two untied
  // 151936 × 4096 tables, 1.245e9.
  const auto qwen3 = cli_harness::run({"import", "hf", "tests/data/hf/qwen3-8b-config.json"});
  REQUIRE(qwen3.code == 0);
  const json q = json::parse(qwen3.out).at("model");
  CHECK(q.at("layers") == 36);
  CHECK(q.at("kv_heads") == 8);
  CHECK(q.at("ffn_hidden") == 12288);
  CHECK_FALSE(q.contains("head_dim"));  // 32 × 128 = 4096: the default width, not written
  json with_len = q;
  with_len["seq_len"] = 4096;
  const planner::Model qm = planner::load_model(with_len, "qwen3-8b-config.json");
  CHECK(planner::total_params(qm) / 1e9 == Approx(8.19).epsilon(0.01));
  CHECK((planner::total_params(qm) - planner::embedding_params(qm)) / 1e9 ==
        Approx(6.95).epsilon(0.01));
  // Gemma 7B: google/gemma-7b's config.json. The Gemma report (arXiv 2403.08295, Table 2)
  // counts 7,751,248,896 non-embedding parameters: 28 × (3072·(4096 + 2·4096) + 4096·3072 +
  // 3·3072·24576 + 2·3072) + 3072 = 7,751,248,896 (its final norm included); the planner
  // counts the 256,000 × 3072 table once, tied (GemmaConfig's default; the file has no key).
  const auto gemma = cli_harness::run({"import", "hf", "tests/data/hf/gemma-7b-config.json"});
  REQUIRE(gemma.code == 0);
  const json g = json::parse(gemma.out).at("model");
  CHECK(g.at("head_dim") == 256);  // 16 × 256 = 4096, not the 3072 hidden
  CHECK(g.at("tied_embeddings") == true);
  CHECK(g.at("gated_mlp") == true);
  json gemma_len = g;
  gemma_len["seq_len"] = 8192;
  const planner::Model gm = planner::load_model(gemma_len, "gemma-7b-config.json");
  CHECK(planner::embedding_params(gm) == Approx(256000.0 * 3072));
  // The planner counts each norm as a LayerNorm (scale and bias: 114 vectors of 3072 against
  // RMSNorm's 57), 175,104 parameters over the report's count, 2.3e-5 of it.
  CHECK((planner::total_params(gm) - planner::embedding_params(gm)) ==
        Approx(7751248896.0 + 57 * 3072).epsilon(1e-9));
  // Gemma's gate is GeLU; SiLU in a Gemma file (or GeLU in a Llama one) is not its layer.
  const auto bad = cli_harness::run({"import", "hf", "tests/data/three_tiers.json"});
  CHECK(bad.code == 2);
  const auto listed = cli_harness::run({"list", "models"});
  CHECK(listed.code == 0);
  CHECK_THAT(listed.out, Catch::Contains("llama-3.1-405b") && Catch::Contains("gpt-3-175b"));
  const auto gpus = cli_harness::run({"list", "gpus"});
  CHECK(gpus.code == 0);
  CHECK_THAT(gpus.out, Catch::Contains("H100-SXM") && Catch::Contains("MI300X"));
  // Each GPU's GEMM rate, as a scenario naming it without a rate gets it: the bf16 peak times
  // the catalog's efficiency, its own fit or the pooled default (data/gpus.json).
  for (const planner::CatalogGpu& g : planner::gpu_catalog()) {
    INFO(g.name);
    const double peak = g.peak("bf16").value_or(0);
    CHECK_THAT(gpus.out, Catch::Contains(fmt::format(
                             "GEMMs at {:.1f} % of it, {:.0f} TFLOP/s ({}", 100 * g.default_efficiency,
                             peak * g.default_efficiency / 1e12,
                             g.efficiency_own ? "its own" : "the pooled default")));
  }
  // The A100's serving fit beside it (data/gpus.json serving_efficiency, 0.6896 of 312).
  CHECK_THAT(gpus.out, Catch::Contains("serving at 69.0 %, 215 TFLOP/s (fitted to single-node "
                                       "serving runs)"));
  CHECK(planner::find_catalog_gpu("H100-SXM")->efficiency_own);
  CHECK_FALSE(planner::find_catalog_gpu("B200")->efficiency_own);
}

TEST_CASE("The question scenarios use presets and fit in ten lines", "[presets]") {
  for (const char* name : {"q1-llama-3.1-8b-one-node.json", "q2-llama-3.1-70b-64-h100.json",
                           "q3-llama-3.1-405b-16k-h100.json", "q4-mixtral-8x7b-training.json",
                           "q5-llama-3.1-70b-serving-one-node.json",
                           "q6-gpt-3-175b-1024-a100.json"}) {
    INFO(name);
    const std::string path = source_dir + "/scenarios/" + name;
    const json doc = read_json_file(path);
    CHECK(doc.at("model").contains("preset"));
    std::ifstream in(path);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    CHECK(lines <= 10);
    CHECK_NOTHROW(load_scenario_file(path));
  }
}

TEST_CASE("planner import hf refuses what the scenario loader would refuse", "[presets][cli]") {
  // Issue 32: import wrote models the loader rejects and exited 0 (kv heads not dividing the
  // heads, top-k above the experts, 10^15 layers); head_dim × heads overflowed int64.
  const json llama = json::parse(cli_harness::read("tests/data/hf/llama-3.1-8b-config.json"));
  const json mixtral = json::parse(cli_harness::read("tests/data/hf/mixtral-8x7b-config.json"));
  const auto import_with = [](json config, const std::string& key, const json& value) {
    config[key] = value;
    const std::string file =
        "/tmp/planner-hf-" + std::to_string(::getpid()) + "-" + key + ".json";
    std::ofstream(file) << config.dump();
    auto r = cli_harness::run({"import", "hf", file});
    std::remove(file.c_str());
    return r;
  };
  auto r = import_with(llama, "num_key_value_heads", 12);  // 32 heads: 12 does not divide them
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/num_key_value_heads: the model this config describes "
                                    "cannot be planned: kv_heads (12) must divide heads (32)"));
  r = import_with(mixtral, "num_experts_per_tok", 9);  // 8 experts
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/num_experts_per_tok: the model this config describes "
                                    "cannot be planned"));
  r = import_with(llama, "num_hidden_layers", 1000000000000000);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/num_hidden_layers: expected a positive integer up to 2^31"));
  r = import_with(llama, "head_dim", 4611686018427387904);  // 2^62: × 32 heads overflowed
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/head_dim: expected a positive integer up to 2^31"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("planner import hf maps DeepSeek, Qwen2-MoE and Phi-3 configs (issue 31)", "[presets][cli]") {
  auto imported = [](const char* file, std::int64_t seq_len) {
    const auto r = cli_harness::run({"import", "hf", std::string("tests/data/hf/") + file});
    INFO(file << ": " << r.err);
    REQUIRE(r.code == 0);
    json m = json::parse(r.out).at("model");
    m["seq_len"] = seq_len;
    return std::make_pair(planner::load_model(m, file), r.err);
  };
  // DeepSeek-V2 (arXiv 2405.04434, abstract): 236B total, 21B activated per token. By hand from
  // the config: MLA 1536·(5120 + 128·192 + 1) + 512·(5120 + 128·256 + 1) + 5120·64 +
  // 128·128·5120 = 149.2M a layer × 60; one dense MLP 3·5120·12288; 59 MoE layers of
  // (160 + 2) experts 3·5120·1536 and a 5120 × 160 router; two 102400 × 5120 tables: 235.7B,
  // of which 8 experts a layer are active: 21.3B.
  const auto [v2, v2_notes] = imported("deepseek-v2-config.json", 4096);
  CHECK(v2.moe.experts == 160);
  CHECK(v2.moe.top_k == 6);
  CHECK(v2.moe.shared_experts == 2);
  CHECK(v2.moe.expert_ffn_hidden == 1536);
  CHECK(v2.moe.first_dense_layers == 1);
  CHECK(v2.mla.q_lora_rank == 1536);
  CHECK(v2.mla.kv_lora_rank == 512);
  CHECK(planner::total_params(v2) / 1e9 == Approx(236.0).epsilon(0.01));
  CHECK(planner::active_params(v2) / 1e9 == Approx(21.0).epsilon(0.03));
  // DeepSeek-V3 (arXiv 2412.19437 §1): 671B total, 37B activated; the MTP module is named in a
  // note, not imported. The import equals the catalog's preset, typed from the same config.
  const auto [v3, v3_notes] = imported("deepseek-v3-config.json", 4096);
  CHECK(planner::total_params(v3) / 1e9 == Approx(671.0).epsilon(0.02));
  CHECK(planner::active_params(v3) / 1e9 == Approx(37.0).epsilon(0.03));
  CHECK(v3.mtp_layers == 0);
  CHECK_THAT(v3_notes, Catch::Contains("multi-token-prediction") && Catch::Contains("mtp_layers"));
  const Model preset = load_with_model({{"preset", "deepseek-v3"}, {"seq_len", 4096}}).model;
  CHECK(planner::total_params(v3) == Approx(planner::total_params(preset)).epsilon(1e-12));
  CHECK(planner::active_params(v3) == Approx(planner::active_params(preset)).epsilon(1e-12));
  // DeepSeek-V2-Lite's null q_lora_rank: queries projected directly (no q_lora_rank written).
  json lite = read_json_file(source_dir + "/tests/data/hf/deepseek-v2-config.json");
  lite["q_lora_rank"] = nullptr;
  CHECK_FALSE(model_from_hf(lite, "lite.json").at("mla").contains("q_lora_rank"));
  // Qwen1.5-MoE-A2.7B (Qwen's release post): 14.3B total, 2.7B activated. By hand: 24 × (4 ·
  // 2048² attention + 60 · 3·2048·1408 routed + 3·2048·5632 shared) + 2 · 151936·2048 =
  // 14.32B; active with 4 routed: 2.69B. The 5632-wide shared expert is 4 of 1408.
  const auto [qwen, qwen_notes] = imported("qwen1.5-moe-a2.7b-config.json", 4096);
  CHECK(qwen.moe.experts == 60);
  CHECK(qwen.moe.shared_experts == 4);
  CHECK(planner::total_params(qwen) / 1e9 == Approx(14.3).epsilon(0.01));
  CHECK(planner::active_params(qwen) / 1e9 == Approx(2.7).epsilon(0.02));
  CHECK(qwen_notes.find("sliding window") == std::string::npos);  // use_sliding_window false
  // Qwen2-MoE's attention (modeling_qwen2_moe.py): biases on q_proj, k_proj, v_proj only.
  CHECK(qwen.linear_bias == LinearBias::qkv);
  json odd = read_json_file(source_dir + "/tests/data/hf/qwen1.5-moe-a2.7b-config.json");
  odd["shared_expert_intermediate_size"] = 5000;
  CHECK_THROWS_WITH(model_from_hf(odd, "q.json"),
                    Catch::Contains("/shared_expert_intermediate_size"));
  // Phi-3-mini (arXiv 2404.14219 §2): 3.8B. By hand: 32 × (4 · 3072² + 3 · 3072·8192) +
  // 2 · 32064·3072 = 3.82B. Its 2,047-token sliding window is named on stderr.
  const auto [phi, phi_notes] = imported("phi-3-mini-4k-config.json", 4096);
  CHECK(planner::total_params(phi) / 1e9 == Approx(3.82).epsilon(0.01));
  CHECK_THAT(phi_notes, Catch::Contains("sliding window of 2047 tokens"));
  // Refusals name the reason and the config key.
  CHECK_THROWS_WITH(model_from_hf(json::parse(R"({"architectures": ["Gemma2ForCausalLM"]})"), "g.json"),
                    Catch::Contains("sliding-window"));
  json greedy = read_json_file(source_dir + "/tests/data/hf/deepseek-v2-config.json");
  greedy["num_experts_per_tok"] = 200;
  const std::string path = fmt::format("/tmp/planner-hf-{}.json", getpid());
  std::ofstream(path) << greedy.dump();
  const auto refused = cli_harness::run({"import", "hf", path});
  std::remove(path.c_str());
  CHECK(refused.code == 2);
  CHECK_THAT(refused.err, Catch::Contains("/num_experts_per_tok") && Catch::Contains("top_k"));
}

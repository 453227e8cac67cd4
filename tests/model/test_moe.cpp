// Mixture of experts, expert parallelism and MLA (issue 10; docs/moe.md): parameter counts of
// the presets against published totals, loader errors, the expert-parallel group's tier, the
// all-to-all's cost and the memory ledger against Megatron-LM's formula, each worked by hand.

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <string>

#include "cli_harness.hpp"
#include "planner/base/error.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/legality.hpp"

using namespace planner;
using nlohmann::json;

#include "moe_test_helpers.hpp"

using namespace moe_test_helpers;

TEST_CASE("Mixtral-8x7B: 46.7B total and 12.9B active parameters by formula", "[moe]") {
  const Model m = preset("mixtral-8x7b");
  // h = 4096, L = 32, a = 32, 8 KV heads of 128, 8 experts of f = 14336 (SwiGLU), top-2,
  // V = 32000 untied. Attention 2h² + 2h·1024; one expert 3·h·f; router h·8; norms 4h.
  const double attention = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024;  // 41,943,040
  const double expert = 3.0 * 4096 * 14336;                         // 176,160,768
  const double layer = attention + 8 * expert + 4096.0 * 8 + 4 * 4096.0;
  const double total = 32 * layer + 2.0 * 32000 * 4096 + 2 * 4096.0;  // 46,703,058,944
  const double active = total - 32 * 6 * expert;                      // 12,880,191,488
  CHECK(total_params(m) == Approx(total).epsilon(1e-12));
  CHECK(active_params(m) == Approx(active).epsilon(1e-12));
  // Published (Jiang et al. 2024, arXiv 2401.04088, §2): 46.7B total, 12.9B active; within
  // 0.5 % (the figures are rounded to three digits).
  CHECK(total / 1e9 == Approx(46.7).epsilon(0.005));
  CHECK(active / 1e9 == Approx(12.9).epsilon(0.005));
}

TEST_CASE("DeepSeek-V3: 671B total and 37B active parameters by formula (MLA)", "[moe]") {
  const Model m = preset("deepseek-v3");
  // MLA as Megatron-LM theoretical_memory_usage.py counts it (h = 7168, a = 128):
  const double q = 1536.0 * (7168 + 128 * (128 + 64) + 1);   // 48,760,320
  const double kv = 512.0 * (7168 + 128 * (128 + 128) + 1);  // 20,447,744
  const double attention = q + kv + 7168.0 * 64 + 128.0 * 128 * 7168;  // 187,107,328
  const double dense_layer = attention + 3.0 * 7168 * 18432 + 4 * 7168.0;
  const double expert = 3.0 * 7168 * 2048;  // 44,040,192
  // 256 routed + 1 shared expert, router 7168·256, norms 4h; layers 3–60 are MoE.
  const double moe_layer = attention + 257 * expert + 7168.0 * 256 + 4 * 7168.0;
  const double total = 3 * dense_layer + 58 * moe_layer + 2.0 * 129280 * 7168 + 2 * 7168.0;
  const double active = total - 58 * 248 * expert;  // 37,553,164,288
  CHECK(moe_layer_count(m) == 58);
  CHECK(total_params(m) == Approx(total).epsilon(1e-12));
  CHECK(active_params(m) == Approx(active).epsilon(1e-12));
  // DeepSeek-AI 2024 (arXiv 2412.19437) §1: 671B total, 37B activated; within 2 % (the MTP
  // module is excluded there and here; biases and the routing bias are not counted).
  CHECK(total / 1e9 == Approx(671.0).epsilon(0.02));
  CHECK(active / 1e9 == Approx(37.0).epsilon(0.02));
}

TEST_CASE("DeepSeek-V3 with its multi-token-prediction module: 685B as published", "[moe][mtp]") {
  // The MTP module (DeepSeek-AI 2024, arXiv 2412.19437, §2.2, D = 1): one more transformer
  // block, numbered 61 and so an MoE block, a projection M ∈ R^{d×2d} and three norms
  // (Megatron-LM multi_token_prediction.py: enorm, hnorm, final_layernorm; 2h each as the
  // planner counts norms); embedding and output head shared with the main model.
  json doc = scenario_doc({{"preset", "deepseek-v3"}, {"seq_len", 4096}, {"mtp_layers", 1}});
  const Model m = load(doc).model;
  const Model main = preset("deepseek-v3");
  const double attention = 187107328.0;  // MLA, worked in the test above
  const double expert = 3.0 * 7168 * 2048;
  const double block = attention + 257 * expert + 7168.0 * 256 + 4 * 7168.0;  // 11,507,300,352
  const double module = block + 2.0 * 7168 * 7168 + 6 * 7168.0;             // 11,610,103,808
  CHECK(moe_layer_count(m) == 59);
  CHECK(total_params(m) - total_params(main) == Approx(module).epsilon(1e-12));
  // Hugging Face deepseek-ai/DeepSeek-V3 README: "685B, which includes 671B of the Main Model
  // weights and 14B of the Multi-Token Prediction (MTP) Module weights"; the checkpoint's MTP
  // layer stores its own copies of the embedding and the head (README_WEIGHTS.md:
  // embed_tokens, shared_head.head), 2·V·h more than training holds.
  const double checkpoint = total_params(m) + 2.0 * 129280 * 7168;
  CHECK(checkpoint / 1e9 == Approx(685.0).epsilon(0.002));
  // FLOPs at pp 1: the module's active parameters (9 of its 257 experts) and one more pass
  // through the V·h head, 6 FLOPs per parameter per token.
  const double active_module = attention + 9 * expert + 7168.0 * 256 + 4 * 7168.0 +
                               2.0 * 7168 * 7168 + 6 * 7168.0 + 129280.0 * 7168;
  Plan p;
  p.dp = 8;
  p.ep = 8;
  const double tokens = 4096;
  CHECK(micro_batch_flops(with_counts(m), p).dense -
            micro_batch_flops(with_counts(main), p).dense ==
        Approx(6.0 * active_module * tokens).epsilon(1e-9));
  // A pipeline splits 62 blocks: ⌈62/16⌉ = 4 on the largest stage, as for 61 layers.
  p.pp = 16;
  CHECK(stage_layers(m, p) == 4);
  // Serving plans the main model (engines load the module only for speculative decoding).
  doc["workload"] = {{"kind", "serving"}, {"batch", 8}, {"context_tokens", 4096}, {"slo_per_token", "50 ms"}};
  CHECK(total_params(make_context(load(doc)).model) == Approx(total_params(main)));
  // Bad input: a negative count is refused with its pointer.
  doc["model"]["mtp_layers"] = -1;
  CHECK_THROWS_WITH(load(doc), Catch::Contains("/model/mtp_layers"));
}

TEST_CASE("The other MoE presets match their published totals", "[moe]") {
  // Mixtral-8x22B 141B / 39B (mistral.ai); Qwen3-235B-A22B 235B / 22B (arXiv 2505.09388);
  // gpt-oss-120b 116.8B total (model card). Within 2 %.
  const struct {
    const char* name;
    double total, active;
  } cases[] = {{"mixtral-8x22b", 141, 39}, {"qwen3-235b-a22b", 235, 22}, {"gpt-oss-120b", 116.8, 0}};
  for (const auto& c : cases) {
    INFO(c.name);
    const Model m = preset(c.name);
    CHECK(total_params(m) / 1e9 == Approx(c.total).epsilon(0.02));
    if (c.active > 0) CHECK(active_params(m) / 1e9 == Approx(c.active).epsilon(0.02));
  }
  // gpt-oss: the card's 5.1B active counts the unembedding but not the input embedding.
  const Model oss = preset("gpt-oss-120b");
  CHECK((active_params(oss) - 201088.0 * 2880) / 1e9 == Approx(5.13).epsilon(0.02));
}

TEST_CASE("Bad MoE input names the JSON pointer", "[moe]") {
  json model = {{"preset", "mixtral-8x7b"}, {"seq_len", 4096}};
  model["moe"] = {{"experts", 8}, {"top_k", 9}};
  CHECK_THROWS_WITH(load(scenario_doc(model)),
             Catch::Contains("/model/moe/top_k") && Catch::Contains("must not exceed experts"));
  model["moe"] = {{"experts", 8}, {"top_k", 2}, {"capacity_factor", 0}};
  CHECK_THROWS_WITH(load(scenario_doc(model)), Catch::Contains("/model/moe/capacity_factor"));
  model["moe"] = {{"experts", 8}, {"top_k", 2}, {"expert_count", 3}};
  CHECK_THROWS_WITH(load(scenario_doc(model)), Catch::Contains("/model/moe/expert_count"));
  json doc = scenario_doc({{"preset", "mixtral-8x7b"}, {"seq_len", 4096}});
  doc["plan"] = {{"dp", 8}, {"ep", 3}};
  CHECK_THROWS_WITH(load(doc), Catch::Contains("/plan/ep") && Catch::Contains("divide the 8"));
  doc["plan"] = {{"dp", 2}, {"tp", 4}, {"ep", 4}};
  CHECK_THROWS_WITH(load(doc), Catch::Contains("/plan/ep") && Catch::Contains("dp·cp = 2"));
  json dense = scenario_doc({{"preset", "mistral-7b"}, {"seq_len", 4096}});
  dense["plan"] = {{"dp", 8}, {"ep", 2}};
  CHECK_THROWS_WITH(load(dense), Catch::Contains("/plan/ep"));
}

TEST_CASE("Bad MoE input exits 2 from the command line", "[moe][cli]") {
  json doc = scenario_doc({{"preset", "mixtral-8x7b"}, {"seq_len", 4096}});
  doc["model"]["moe"] = {{"experts", 8}, {"top_k", 2}, {"capacity_factor", -1}};
  const std::string path = write_scenario(doc, "moe_bad_capacity.json");
  const auto r = cli_harness::run({"plan", path});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/model/moe/capacity_factor"));
}

TEST_CASE("The ep group's tier follows Megatron's tp-ep-dp rank order", "[moe]") {
  Cluster c;
  c.nodes = 4;
  c.gpus_per_node = 8;
  Plan p;
  p.dp = 32;
  p.ep = 8;  // ranks r..r+7: one node
  CHECK(axis_tier(p, c, Axis::ep) == 0);
  p.dp = 16;
  p.tp = 2;  // stride 2, ranks r, r+2, …, r+14: two nodes, four in each
  CHECK(axis_tier(p, c, Axis::ep) == 1);
  CHECK(ep_ranks_per_domain(p, 8) == 4);
  p.ep = 4;  // stride 2 × 4 = 8: one node again
  CHECK(axis_tier(p, c, Axis::ep) == 0);
}

TEST_CASE("Dispatch and combine all-to-all by hand", "[moe]") {
  Scenario s = load(scenario_doc({{"preset", "mixtral-8x7b"}, {"seq_len", 4096}}, 2));
  Plan p;
  p.dp = 8;
  p.tp = 2;
  p.ep = 8;
  const ExpertTraffic t = expert_traffic(s.model, s.cluster, p);
  // 4096 tokens / tp 2 = 2048 per rank, each sent to 2 experts: M = 2048·2·4096·2 B.
  const double m = 2048.0 * 2 * 4096 * 2;
  CHECK(t.message_bytes == Approx(m));
  CHECK(t.ranks_in_node == 4);  // ranks 0, 2, 4, 6 of node 0 and 8, …, 14 of node 1
  // Pairwise exchange: 3 peers on NVLink, 4 across the network, M/8 to each.
  const double seconds = 3 * (3e-6 + m / 8 / 450e9) + 4 * (10e-6 + m / 8 / 50e9);
  CHECK(t.all_to_all.seconds() == Approx(seconds));
  CHECK(t.all_to_alls == 4 * 32);  // dispatch + combine, forward + backward, 32 MoE layers
  CHECK(t.seconds == Approx(128 * seconds));
  // A routed-load imbalance of 1.5 makes the busiest rank's buffer 1.5 M; a capacity factor
  // of 1.25 drops the tokens beyond it, so 1.25 M.
  s.model.moe.imbalance = 1.5;
  CHECK(expert_traffic(s.model, s.cluster, p).message_bytes == Approx(1.5 * m));
  s.model.moe.capacity_factor = 1.25;
  CHECK(expert_traffic(s.model, s.cluster, p).message_bytes == Approx(1.25 * m));
}

TEST_CASE("Expert state per GPU matches Megatron-LM's report_theoretical_memory", "[moe]") {
  // Megatron-LM megatron/training/theoretical_memory_usage.py, compute_weight_and_optimizer_
  // memory, at commit d98e8a64 (2026-08-22): Mixtral-8x7B (RMSNorm, SwiGLU, GQA 8, untied),
  // tp = etp = 2, pp = 1, ep = 4, dp = 8 (world 16), distributed optimizer:
  //   attention = 2h²(1 + 8/32) = 41,943,040; routed experts per layer 2·h·f·8·3/2
  //   = 1,409,286,144; layernorms 2h = 8192 and router h·8 = 32768 per layer, final 4096.
  //   tp-sharded on the shard: (32·attention + V·h)/tp + V·h/tp (untied, pp = 1)
  //     = (1,342,177,280 + 131,072,000)/2 + 65,536,000 = 802,160,640
  //   replicated: 32·(8192 + 32768) + 4096 = 1,314,816
  //   expert-sharded: 32·1,409,286,144 / (etp·ep = 8) = 5,637,144,576
  //   expert dp = 16 / (2·4·1) = 2; bytes per parameter 6 + 12/dp
  //   total = (802,160,640 + 1,314,816)·(6 + 12/8) + 5,637,144,576·(6 + 12/2)
  const double megatron = (802160640.0 + 1314816.0) * 7.5 + 5637144576.0 * 12.0;
  json doc = scenario_doc({{"preset", "mixtral-8x7b"}, {"seq_len", 4096}}, 2);
  doc["model"]["precision"] = {{"gradients", "fp32"}};  // Megatron's fp32 main gradients
  doc["workload"]["bytes_per_param"] = 18;
  Scenario s = load(doc);
  Plan p;
  p.dp = 8;
  p.tp = 2;
  p.ep = 4;
  p.zero = 1;
  const MemoryLedger l = training_ledger(s.model, s.cluster, s.workload.training, p);
  // Within 0.1 %: the planner splits norms and router by tp and counts 4h of norms per layer.
  CHECK(l.state_bytes() == Approx(megatron).epsilon(0.001));
  CHECK(gpu_params(s.model, p).experts == Approx(5637144576.0));
}

TEST_CASE("A dense model's plans keep ep = 1 and its figures", "[moe]") {
  const Model m = preset("mistral-7b");
  CHECK(active_params(m) == total_params(m));
  CHECK(moe_layer_count(m) == 0);
  Plan p;
  p.dp = 8;
  CHECK(expert_traffic(m, Cluster{}, p).seconds == 0);
}

TEST_CASE("planner plan on DeepSeek-V3 recommends ep > 1 and explains the all-to-all",
          "[moe][cli]") {
  const auto r = cli_harness::run({"plan", "scenarios/deepseek-v3-h800.json", "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("best").at("ep").get<int>() > 1);
  CHECK_THAT(r.out, Catch::Contains("all-to-all"));
  // The thresholds include the inter-node bandwidth at which the ep group's size or tier
  // changes.
  bool bandwidth_moves_ep = false;
  for (const json& t : j.at("thresholds")) {
    if (t.at("parameter") != "/cluster/inter_node/bandwidth") continue;
    bandwidth_moves_ep = bandwidth_moves_ep || t.at("plan").value("ep", 1) != j.at("best").at("ep");
  }
  CHECK(bandwidth_moves_ep);
  CHECK_THAT(j.at("failure_mode").get<std::string>(), Catch::Contains("routing imbalance"));
  bool ep_note = false;
  for (const json& n : j.at("traffic")) ep_note = ep_note || n.at("axis") == "ep";
  CHECK(ep_note);
}

TEST_CASE("FP8 GEMMs run at the catalog's fp8 rate, MFU also against the bf16 rate", "[moe]") {
  json doc = json::parse(cli_harness::read("scenarios/q4-mixtral-8x7b-training.json"));
  doc["model"]["precision"] = {{"compute", "fp8"}};
  doc["cluster"]["gpu"]["flops"] = "400 TFLOP/s";
  const Context ctx = make_context(load(doc));
  // data/gpus.json H100-SXM: dense fp8 1978.9 and bf16 989.4 TFLOP/s; a typed 400 TFLOP/s
  // bf16 rate is the same fraction of each peak, times the tensor-wise FP8 ratio
  // (fp8_efficiency_ratio, docs/validation.md §FP8): 400 × 1978.9/989.4 × r TFLOP/s.
  const double r = fp8_efficiency_ratio(Fp8Recipe::tensorwise).value;
  REQUIRE(r > 0.3);
  REQUIRE(r < 1.0);  // FP8 GEMMs reach a smaller fraction of their peak than bf16 ones
  CHECK(ctx.flops_per_second == Approx(400e12 * 1978.9 / 989.4 * r).epsilon(1e-3));
  // Half the fp8 rate against the bf16 rate: 0.5 × 2.0001 r.
  CHECK_THAT(bf16_mfu_note(ctx, 0.5),
             Catch::Contains("fp8 rate") &&
                 Catch::Contains(fmt::format("{:.1f} % of the bf16 rate", 100.0 * r * 1978.9 / 989.4 / 2)));
  // MFU as PaLM (Chowdhery et al. 2022, Appendix B) defines it, against the datasheet peaks:
  // half the effective fp8 rate is 400 r TFLOP/s of model FLOPs (2 × 400 × 1978.9/989.4 × r
  // / 2), 400 r / 989.4 of the bf16 dense peak and 400 r / 1978.9 of the fp8 peak.
  const double model_flops = 0.5 * ctx.flops_per_second;  // model FLOP/s per GPU
  const PeakMfu peak = peak_mfu(ctx, model_flops);
  CHECK(peak.bf16_peak == Approx(400.0 * r / 989.4).epsilon(1e-3));
  CHECK(peak.compute_peak == Approx(400.0 * r / 1978.9).epsilon(1e-3));
  CHECK_THAT(mfu_text(ctx, 0.5, model_flops, model_flops),
             Catch::StartsWith(fmt::format("MFU {:.1f} % of the bf16 dense peak, {:.1f} % of the fp8 "
                                           "peak (50.0 % of the effective",
                                           100.0 * 400.0 * r / 989.4,
                                           // exactly: half of 400 × 1978.9/989.4 × r of 1978.9
                                           100.0 * 0.5 * 400.0 * 1978.9 / 989.4 * r / 1978.9)));
  // Each recipe its own ratio: row-wise scaling runs at its ratio of the same base rate,
  // block-wise at tensor-wise's (data/gpus.json says why); a typed fp8 rate takes no ratio.
  const auto rate_with = [&](const json& precision) {
    json d = doc;
    d["model"]["precision"] = precision;
    return make_context(load(d)).flops_per_second;
  };
  const double base = 400e12 * 1978.9 / 989.4;
  CHECK(rate_with({{"compute", "fp8"}, {"fp8_recipe", "rowwise"}}) ==
        Approx(base * fp8_efficiency_ratio(Fp8Recipe::rowwise).value).epsilon(1e-9));
  CHECK(rate_with({{"compute", "fp8"}, {"fp8_recipe", "blockwise"}}) ==
        Approx(base * fp8_efficiency_ratio(Fp8Recipe::blockwise).value).epsilon(1e-9));
  json typed = doc;
  typed["cluster"]["gpu"]["flops_by_dtype"] = {{"fp8", "700 TFLOP/s"}};
  CHECK(make_context(load(typed)).flops_per_second == Approx(700e12));
  // A GPU given by numbers has no datasheet peak: the share of its typed effective rate is
  // printed as that, not as MFU (MFU divides by a peak; issue 31).
  const Context numbers = make_context(load(scenario_doc({{"preset", "mistral-7b"}, {"seq_len", 4096}})));
  CHECK(peak_mfu(numbers, 0.5 * numbers.flops_per_second).bf16_peak == 0);
  const std::string share =
      mfu_text(numbers, 0.5, 0.5 * numbers.flops_per_second, numbers.flops_per_second);
  CHECK(share == "50.0 % of the typed rate");
}

TEST_CASE("FP8 GEMMs keep their inputs in FP8 and cache FP8 weights", "[moe][fp8]") {
  // Mistral-7B (h 4096, 8 KV heads of 128: h_kv 1024, gated f 14336), bf16 activations, tp 1,
  // no sequence parallelism. Per token per layer, Korthikanti et al. 2022 §4.1 as
  // model/activations.hpp itemises it: 10h + 4h + 4h_kv + 6f = 147,456 bytes in bf16 with
  // dropout; Mistral has none (its config's attention_dropout 0.0, no residual dropout), so
  // the two 1-byte masks of h go: 147,456 − 2·4096 = 139,264. Under FP8 GEMMs (Transformer
  // Engine saves the FP8 cast of each Linear's input) the QKV and MLP inputs (2h each), the
  // output-projection input (2h) and the second MLP GEMM's input (2f) drop to 1 byte per
  // element: 139,264 − (2048·3 + 14,336) = 112,640 bytes.
  json doc = scenario_doc({{"preset", "mistral-7b"}, {"seq_len", 4096}});
  const Model bf16 = load(doc).model;
  doc["model"]["precision"] = {{"compute", "fp8"}};
  doc["cluster"]["gpu"]["flops_by_dtype"] = {{"fp8", "800 TFLOP/s"}};
  const Model fp8 = load(doc).model;
  auto per_token = [](const Model& m) {
    const LayerActivationTerms t = layer_activation_terms(m, 1, 4096);
    return (t.replicated_bytes + t.tp_split_bytes) / 4096;
  };
  CHECK(per_token(bf16) == Approx(139264.0));
  CHECK(per_token(fp8) == Approx(112640.0));
  // The cached FP8 weights and transposes: 2 bytes per parameter but the two 32000 × 4096
  // tables, i.e. 32 layers of 2h² + 2·h·h_kv + 3·h·f + 4h = 218,120,192 and the final norm
  // 2h; plus 32 layers × 80 KiB of delayed-scaling amax history (4 GEMMs × 5 tensors × 1024
  // × 4 B).
  Plan p;
  p.dp = 8;
  p.zero = 1;
  const Scenario s = load(doc);
  const double gemm_params = 32 * 218120192.0 + 2 * 4096.0;
  CHECK(training_ledger(with_counts(fp8), s.cluster, s.workload.training, p).fp8_weights_bytes ==
        Approx(2 * gemm_params + 32 * 81920.0));
  CHECK(training_ledger(with_counts(bf16), s.cluster, s.workload.training, p).fp8_weights_bytes ==
        0);
}

TEST_CASE("FP8 GEMMs: the attention core and the output layer stay at the bf16 rate",
          "[moe][fp8]") {
  // Mistral-7B, one sequence of 4096 tokens on one GPU, bf16 at 400 and fp8 at 800 TFLOP/s.
  // Transformer Engine runs the attention core in bf16 (no fp8_dot_product_attention) and
  // Megatron-LM's output layer is not a TE module: those FLOPs take the bf16 rate, the
  // transformer blocks' GEMMs the fp8 rate (Kaplan et al. 2020: 6 FLOPs per parameter and
  // token; Korthikanti et al. 2022: 12·s²·h per layer for the attention core).
  json doc = scenario_doc({{"preset", "mistral-7b"}, {"seq_len", 4096}});
  doc["model"]["precision"] = {{"compute", "fp8"}};
  doc["cluster"]["gpu"]["flops_by_dtype"] = {{"fp8", "800 TFLOP/s"}};
  const Scenario s = load(doc);
  const Context ctx = make_context(s);
  Plan p;
  p.dp = 8;
  p.flash_attention = true;
  const double tokens = 4096;
  const double tables = 2.0 * 32000 * 4096;  // input embedding and output layer, untied
  const double blocks = 32 * 218120192.0 + 2 * 4096.0;
  const double dense = 6 * blocks * tokens / 800e12 + 6 * tables * tokens / 400e12;
  // The causal flash kernel computes (1 + 128/4096)/2 of the square (compute.hpp
  // attention_square_share: FlashAttention-2 §3.1.1 skips the blocks above the diagonal).
  const double causal = 0.5 * (1.0 + 128.0 / 4096.0);
  const double attention = 12.0 * tokens * tokens * 4096 * 32 * causal / 400e12;
  const TrainingTime t = evaluate(ctx, p).training;
  CHECK(t.dense_seconds == Approx(dense).epsilon(1e-9));
  CHECK(t.attention_seconds == Approx(attention).epsilon(1e-9));
  // FlashAttention's backward recomputes QKᵀ and the softmax, 2·s²·h per layer, in bf16 too.
  CHECK(t.recompute_seconds ==
        Approx(2.0 * tokens * tokens * 4096 * 32 * causal / 400e12).epsilon(1e-9));
}

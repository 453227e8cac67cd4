// Split from test_moe.cpp (files stay under 500 lines).
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

TEST_CASE("MLA caches the kv latent and the RoPE key: 70 KB per token for DeepSeek-V3", "[moe]") {
  const Model m = preset("deepseek-v3");
  Plan p;
  p.tp = 8;
  // DeepSeek-V2 (arXiv 2405.04434) Table 1: (d_c + d_R)·l elements per token; V3: d_c = 512,
  // d_R = 64, 61 layers, bf16: 576·61·2 = 70,272 B on every tp rank.
  CHECK(kv_bytes_per_token(m, p, KvSharding::replicate) == Approx(576.0 * 61 * 2));
  CHECK(kv_bytes_per_token(m, p, KvSharding::batch) == Approx(576.0 * 61 * 2 / 8));
}

namespace {
/// Mixtral's experts over 8 ranks of a 16-way data-parallel group, selective recompute with
/// tiled attention: the plan the all-to-all overlap cases below time.
Plan mixtral_ep8() {
  Plan p;
  p.dp = 16;
  p.ep = 8;
  p.recompute = Recompute::selective;
  p.flash_attention = true;
  return p;
}
}  // namespace

TEST_CASE("Overlapping the all-to-all hides it behind another micro-batch's compute", "[moe]") {
  json doc = scenario_doc({{"preset", "mixtral-8x7b"}, {"seq_len", 4096}}, 2);
  Scenario s = load(doc);
  Plan p = mixtral_ep8();
  const TrainingTime plain = training_time(s.model, s.cluster, p, 400e12);
  s.model.moe.overlap_all_to_all = true;
  const TrainingTime overlapped = training_time(s.model, s.cluster, p, 400e12);
  // exposed = max(0, all-to-all − compute) per micro-batch; the rest of the step unchanged.
  const double exposed = std::max(0.0, plain.ep.seconds - plain.compute_seconds());
  CHECK(overlapped.ep.exposed_seconds == Approx(exposed).margin(1e-12));
  CHECK(overlapped.micro_batch_seconds() ==
        Approx(plain.micro_batch_seconds() - plain.ep.seconds + exposed));
  p.recompute = Recompute::full;  // Megatron-LM refuses the overlap with full recompute
  const TrainingTime full = training_time(s.model, s.cluster, p, 400e12);
  CHECK(full.ep.exposed_seconds == full.ep.seconds);
}

TEST_CASE("Shared experts beside the all-to-alls hide them up to their GEMMs' time, by hand",
          "[moe]") {
  // Megatron-LM --moe-shared-expert-overlap: the dispatch beside the shared fc1 (2/3 of a
  // gated expert's FLOPs), the combine beside fc2 (1/3), backward at twice the FLOPs. With an
  // all-to-all of 3 ms and a shared forward of 3 ms: forward max(0, 3 − 2) + max(0, 3 − 1) =
  // 3 ms, backward max(0, 3 − 4) + max(0, 3 − 2) = 1 ms: 4 ms per MoE layer, 8 ms over 2
  // layers, against 4 × 3 ms × 2 = 24 ms exposed without it.
  Model m;
  m.gated_mlp = true;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.shared_experts = 1;
  m.moe.shared_expert_overlap = true;
  ExpertTraffic t;
  t.layers = 2;
  t.all_to_all.wire_seconds = 3e-3;
  t.seconds = 4 * 3e-3 * 2;
  Plan p;
  CHECK(exposed_all_to_all_seconds(m, p, t, 1.0, 3e-3) == Approx(8e-3));
  // Full recompute runs the forward pair twice: (3 + 3 + 1) ms per layer.
  p.recompute = Recompute::full;
  CHECK(exposed_all_to_all_seconds(m, p, t, 1.0, 3e-3) == Approx(14e-3));
  // Without a shared expert, or without the option, nothing is hidden.
  p.recompute = Recompute::none;
  m.moe.shared_expert_overlap = false;
  CHECK(exposed_all_to_all_seconds(m, p, t, 1.0, 3e-3) == Approx(24e-3));
  // Both overlaps: what the shared experts leave, another micro-batch's compute may hide.
  m.moe.shared_expert_overlap = true;
  m.moe.overlap_all_to_all = true;
  CHECK(exposed_all_to_all_seconds(m, p, t, 5e-3, 3e-3) == Approx(3e-3));
  // In the step: Mixtral with one shared expert (3 · 4096 · 14336 = 176,160,768 parameters)
  // at 4096 tokens, tp = cp = 1, 400 TFLOP/s: F = 2 · 176160768 · 4096 / 400e12 = 3.6078 ms.
  json doc = scenario_doc({{"preset", "mixtral-8x7b"}, {"seq_len", 4096}}, 2);
  doc["model"]["moe"] = {{"experts", 8}, {"top_k", 2}, {"shared_experts", 1},
                         {"shared_expert_overlap", true}};
  Scenario s = load(doc);
  const Plan q = mixtral_ep8();
  const TrainingTime with = training_time(s.model, s.cluster, q, 400e12);
  const double a = with.ep.all_to_all.seconds();
  const double f = 2.0 * 176160768.0 * 4096 / 400e12;
  auto left = [](double x) { return std::max(0.0, x); };
  const double per_layer = left(a - 2 * f / 3) + left(a - f / 3) + left(a - 4 * f / 3) +
                           left(a - 2 * f / 3);
  CHECK(with.ep.exposed_seconds == Approx(32 * per_layer).epsilon(1e-9));
  CHECK(with.ep.exposed_seconds < with.ep.seconds);
}

// ---- Expert tensor parallelism other than tp (Megatron-LM --expert-tensor-parallel-size):
// a stage's tp·dp·cp ranks regrouped as etp × ep × edp (docs/moe.md §3).

TEST_CASE("etp 1 keeps each expert whole: Megatron-LM's expert shard and expert-dp group",
          "[moe][etp]") {
  // Megatron-LM theoretical_memory_usage.py (commit d98e8a64), Mixtral-8x7B, world 16, tp 2,
  // pp 1, distributed optimizer, now with etp = 1 and ep = 8 (ep·etp = 8 divides tp·dp = 16):
  //   routed experts 32 layers × 1,409,286,144 = 45,097,156,608; per rank / (etp·ep = 8)
  //   = 5,637,144,576 (the same count as tp 2 × ep 4, now whole experts);
  //   expert dp = world / (etp·ep·pp) = 16 / 8 = 2, so 6 + 12/2 bytes per expert parameter.
  //   The rest as with etp = tp: (802,160,640 + 1,314,816)·(6 + 12/8).
  const double megatron = (802160640.0 + 1314816.0) * 7.5 + 5637144576.0 * 12.0;
  json doc = scenario_doc(mixtral, 2);
  doc["model"]["precision"] = {{"gradients", "fp32"}};
  doc["workload"]["bytes_per_param"] = 18;
  Scenario s = load(doc);
  Plan p;
  p.dp = 8;
  p.tp = 2;
  p.etp = 1;
  p.ep = 8;
  p.zero = 1;
  CHECK_FALSE(first_violation(s.model, s.cluster, WorkloadKind::training, p,
                              LegalityScope::plan));
  CHECK(expert_data_parallel_ranks(p) == 2);
  CHECK(gpu_params(s.model, p).experts == Approx(5637144576.0));
  const MemoryLedger l = training_ledger(s.model, s.cluster, s.workload.training, p);
  CHECK(l.state_bytes() == Approx(megatron).epsilon(0.001));
  // With pp 2 and dp 4, ep 8 under etp 1 takes every rank of a stage (tp 2 × dp 4), which
  // etp = tp cannot: ep would have to divide dp·cp = 4.
  p.pp = 2;
  p.dp = 4;
  CHECK_FALSE(first_violation(s.model, s.cluster, WorkloadKind::training, p,
                              LegalityScope::plan));
  CHECK(expert_data_parallel_ranks(p) == 1);
  p.etp = 0;  // etp = tp = 2
  CHECK(first_violation(s.model, s.cluster, WorkloadKind::training, p, LegalityScope::plan)
            ->kind == ViolationKind::ep_dp_cp);
}

TEST_CASE("The ep group takes in the tp ranks etp leaves (Megatron's tp-ep-dp order)",
          "[moe][etp]") {
  // DeepSeek-V3's dgxc layout: tp 2, etp 1, ep 64 over 1,024 GPUs in 8-GPU nodes. Ranks run
  // tp fastest, so an ep group is 64 consecutive ranks (2 tp × 32 dp): 8 nodes, 8 ranks in
  // each. With etp = tp = 2 and ep 8 the group is ranks r, r+2, …, r+14: 2 nodes, 4 in each.
  Cluster c;
  c.nodes = 128;
  c.gpus_per_node = 8;
  Plan p;
  p.tp = 2;
  p.pp = 16;
  p.dp = 32;
  p.etp = 1;
  p.ep = 64;
  CHECK(axis_tier(p, c, Axis::ep) == 1);
  CHECK(ep_ranks_per_domain(p, 8) == 8);
  p.ep = 4;  // ranks r..r+3: the node
  CHECK(axis_tier(p, c, Axis::ep) == 0);
  p.etp = 0;
  p.ep = 8;
  CHECK(axis_tier(p, c, Axis::ep) == 1);
  CHECK(ep_ranks_per_domain(p, 8) == 4);
}

TEST_CASE("etp 1 drops the MLP's tp collectives in MoE layers without a shared expert",
          "[moe][etp]") {
  // Megatron-LM's all-to-all dispatcher gathers and scatters tokens only over the expert
  // tensor-parallel group: with etp 1 an MoE layer's tp traffic is the attention block's,
  // 2 of the layer's 4 (Korthikanti et al. 2022 §4.2.2: two in the forward, two in the
  // backward, half of them the MLP's). Mixtral: 32 layers, every one MoE, no shared expert.
  const Scenario s = load(scenario_doc(mixtral, 2));
  Plan p;
  p.dp = 8;
  p.tp = 2;
  p.ep = 8;
  p.sequence_parallel = true;
  p.flash_attention = true;
  const Context ctx = make_context(s);
  CHECK(evaluate(ctx, p).training.tp_messages == 4 * 32);
  p.etp = 1;
  CHECK(evaluate(ctx, p).training.tp_messages == 2 * 32);
  p.recompute = Recompute::full;  // the forward pair again: 6 per layer, the attention's 3
  CHECK(evaluate(ctx, p).training.tp_messages == 3 * 32);
}

TEST_CASE("Bad etp exits 2 with the JSON path", "[moe][etp][cli]") {
  json doc = scenario_doc(mixtral, 2);
  doc["plan"] = {{"dp", 4}, {"tp", 4}, {"ep", 2}, {"etp", 3}};
  CHECK_THROWS_WITH(load(doc), Catch::Contains("/plan/etp") && Catch::Contains("divide tp (4)"));
  doc["plan"] = {{"dp", 2}, {"tp", 8}, {"ep", 8}, {"etp", 4}};  // 8·4 does not divide 16
  CHECK_THROWS_WITH(load(doc), Catch::Contains("/plan/ep") && Catch::Contains("tp·dp·cp = 16"));
  json dense = scenario_doc(mixtral, 1);
  dense["model"] = {{"preset", "mistral-7b"}, {"seq_len", 4096}};
  dense["plan"] = {{"dp", 4}, {"tp", 2}, {"etp", 1}};
  CHECK_THROWS_WITH(load(dense), Catch::Contains("/plan/etp"));
  doc["plan"] = {{"dp", 4}, {"tp", 4}, {"ep", 2}, {"etp", 3}};
  const std::string path = write_scenario(doc, "moe_bad_etp.json");
  const auto r = cli_harness::run({"memory", path});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/plan/etp"));
}

TEST_CASE("The search tries etp below tp and exports it for Megatron-LM", "[moe][etp]") {
  // 16 GPUs, tp pinned to 8: etp = 8 (ep divides dp = 2) against etp 1, 2, 4 (ep·etp divides
  // 16); the winner must be one of the legal ones, and a pinned etp 1 reaches the export.
  json doc = scenario_doc(mixtral, 2);
  doc["plan"] = {{"dp", 2}, {"tp", 8}, {"ep", 8}, {"etp", 1}, {"sequence_parallel", true},
                 {"flash_attention", true}, {"recompute", "full"}};
  const std::string path = write_scenario(doc, "moe_etp.json");
  const auto csv = cli_harness::run({"plan", path, "--format", "csv", "--fix", "tp=8"});
  REQUIRE(csv.code == 0);
  CHECK_THAT(csv.out.substr(0, csv.out.find('\n')),
             Catch::EndsWith(",ep,ep_tier,etp,virtual_stages"));
  CHECK_THAT(csv.out, Catch::Contains(",8,intra_node,1,1\n") ||
                          Catch::Contains(",8,inter_node,1,1\n"));
  const auto text = cli_harness::run({"plan", path});
  CHECK_THAT(text.out, Catch::Contains("x ep 8 (intra), etp 1"));
  const auto args = cli_harness::run({"export", path, "--to", "megatron"});
  CHECK_THAT(args.out, Catch::Contains("--expert-tensor-parallel-size 1"));
}

TEST_CASE("moe_layer_count's closed form counts the layers the definition names",
          "[moe]") {
  // The definition (Hugging Face DeepSeek-V3 modeling): layer i is MoE when
  // i >= first_k_dense_replace and i % moe_layer_freq == 0, the MTP blocks numbered on.
  // DeepSeek-V3 by hand: 61 layers, the first 3 dense, every layer from 3 on MoE, plus its
  // MTP block (layer 61) = 59.
  Model m;
  m.layers = 61;
  m.mtp_layers = 1;
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.first_dense_layers = 3;
  m.moe.layer_freq = 1;
  CHECK(moe_layer_count(m) == 59);
  for (std::int64_t layers = 1; layers <= 40; ++layers) {
    for (std::int64_t first = 0; first < layers; ++first) {
      for (std::int64_t freq = 1; freq <= 5; ++freq) {
        m.layers = layers;
        m.mtp_layers = layers % 2;
        m.moe.first_dense_layers = first;
        m.moe.layer_freq = freq;
        std::int64_t by_definition = 0;
        for (std::int64_t i = 0; i < layers + m.mtp_layers; ++i) {
          if (i >= first && i % freq == 0) ++by_definition;
        }
        INFO(layers << " layers, first " << first << ", every " << freq);
        REQUIRE(moe_layer_count(m) == by_definition);
      }
    }
  }
}

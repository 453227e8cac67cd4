// The embedding and the loss counted as layers in the pipeline split (Megatron-LM
// --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split; Llama 3,
// arXiv 2407.21783, §3.3.2; activations.hpp stage_layers, docs/model.md §7), by hand.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "planner/base/error.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/legality.hpp"
#include "planner/model/memory.hpp"

using namespace planner;

namespace {

// Llama 3.1 405B's shape: 126 layers, h 16384, 128 heads of which 8 KV, FFN 53248, SwiGLU,
// vocabulary 128256.
Model llama_405b() {
  Model m;
  m.layers = 126;
  m.hidden = 16384;
  m.heads = 128;
  m.kv_heads = 8;
  m.ffn_hidden = 53248;
  m.gated_mlp = true;
  m.vocab = 128256;
  m.seq_len = 8192;
  return m;
}

}  // namespace

TEST_CASE("pipeline split: the tables take a layer's place on the end stages", "[pipeline_split]") {
  const Model m = llama_405b();
  // One layer by hand: Q and O 2·h², K and V 2·h·(8·128) = 2·h·1024, the MLP 3·h·f, the two
  // norms 2·h: 2·16384² + 2·16384·1024 + 3·16384·53248 + 2·16384 = 3,187,703,808. The table
  // V·h = 128256 · 16384 = 2,101,346,304, lighter than a layer.
  const double layer = 2.0 * 16384 * 16384 + 2.0 * 16384 * 1024 + 3.0 * 16384 * 53248 + 2.0 * 16384;
  const double table = 128256.0 * 16384;
  REQUIRE(layer_params(m) == Approx(layer));
  Plan p;
  p.pp = 16;
  p.dp = 1;
  // Layers alone: ⌈126/16⌉ = 8 layers and a table on the end stage.
  CHECK(stage_layers(m, p) == 8);
  CHECK(stage_params(m, p) == Approx(8 * layer + table));
  // Meta's split: 128 units (126 layers, the embedding, the loss), 8 per stage; the end stages
  // hold 7 layers and a table (7·layer + table < 8·layer), so a middle stage's 8 layers, with
  // no table, are the largest: one table's parameters fewer, and 6 FLOPs each per token.
  p.tables_in_pipeline_split = true;
  CHECK(pipeline_units(m, p) == 128);
  CHECK(stage_layers(m, p) == 8);
  CHECK(stage_table_params(m, p) == 0.0);
  CHECK(stage_params(m, p) == Approx(8 * layer));
  // A small model whose table outweighs a layer (Llama 3.1 8B's 128K vocabulary, 32 layers):
  // the end stage is the largest, with one layer fewer: pp 4 → 34 units, ⌈34/4⌉ = 9, so 8
  // layers and a table (even split: ⌈32/4⌉ = 8 layers and a table, the same).
  Model small = m;
  small.layers = 32;
  small.hidden = 4096;
  small.heads = 32;
  small.ffn_hidden = 14336;
  Plan q;
  q.pp = 4;
  q.tables_in_pipeline_split = true;
  CHECK(stage_layers(small, q) == 8);
  CHECK(stage_table_params(small, q) == Approx(128256.0 * 4096));
}

TEST_CASE("pipeline split: virtual stages divide the layers and the two tables", "[pipeline_split]") {
  const Model m = llama_405b();
  Plan p;
  p.pp = 16;
  p.dp = 1;
  p.virtual_stages = 8;  // Llama 3: one unit per chunk, 128 / 16 = 8 chunks per rank
  p.grad_accum = 16;
  Cluster c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  const auto v = first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan);
  REQUIRE(v);
  CHECK(v->kind == ViolationKind::virtual_stages_layers);  // 126 % 128 ≠ 0
  p.tables_in_pipeline_split = true;
  CHECK_FALSE(first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan));
  p.pp = 1;
  p.dp = 16;
  p.virtual_stages = 1;
  const auto alone = first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan);
  REQUIRE(alone);
  CHECK(alone->kind == ViolationKind::tables_split_pp);
}

TEST_CASE("pipeline split: a pinned plan without a pipeline is refused in one line",
          "[pipeline_split][errors]") {
  const nlohmann::json doc = {
      {"model", {{"layers", 6}, {"hidden", 512}, {"heads", 8}, {"vocab", 32000}, {"seq_len", 1024}}},
      {"cluster", {{"nodes", 1}, {"gpus_per_node", 4},
                   {"gpu", {{"memory", "80 GiB"}, {"memory_bandwidth", "2 TB/s"},
                            {"flops", "300 TFLOP/s"}}},
                   {"intra_node", {{"bandwidth", "300 GB/s"}, {"latency", "5 us"}}},
                   {"inter_node", {{"bandwidth", "25 GB/s"}, {"latency", "10 us"}}}}},
      {"workload", {{"kind", "training"}, {"global_batch_tokens", 16384}}},
      {"plan", {{"dp", 4}, {"tables_in_pipeline_split", true}}}};
  std::string message;
  try {
    (void)load_scenario(doc, "a.json");
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message == "a.json: /plan/tables_in_pipeline_split: tables_in_pipeline_split needs pp > 1 "
                   "(it moves a layer off each end stage of the pipeline); set it to false or "
                   "raise pp");
}

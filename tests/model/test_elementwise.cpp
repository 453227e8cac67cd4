// Memory-bound operations (issue 9 cause 3; model/elementwise.hpp, docs/model.md §6a): the HBM
// bytes of one micro-batch worked by hand from the operations' reads and writes, and when the
// time model charges them (a catalog GPU's GEMM rate) and when not (a typed effective rate).
#include <catch2/catch.hpp>

#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/elementwise.hpp"
#include "planner/model/evaluate.hpp"

using namespace planner;
using nlohmann::json;

namespace {

// h 1024, 16 heads, 4 KV heads (h_kv 256), SwiGLU f 2816, V 32000, s 2048, 4 layers, bf16.
Model small_gated() {
  Model m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 4;
  m.ffn_hidden = 2816;
  m.gated_mlp = true;
  m.vocab = 32000;
  m.seq_len = 2048;
  return m;
}

Plan tp2_sp() {
  Plan p;
  p.tp = 2;
  p.sequence_parallel = true;
  p.micro_batch = 1;
  p.recompute = Recompute::selective;
  p.flash_attention = true;
  return p;
}

}  // namespace

TEST_CASE("memory-bound bytes of a dense SwiGLU layer, worked by hand", "[elementwise]") {
  // Per token and layer, elements (2 bytes each):
  //   forward: norms 2·2h + bias-dropout-adds 2·3h = 10h = 10240, split by tp under SP → 5120;
  //            SwiGLU 3f = 8448, split by tp → 4224; 9344 elements = 18688 bytes.
  //   backward: norms 2·3h + adds 2·2h = 10h → 5120; SwiGLU 5f = 14080 → 7040; 12160 = 24320 B.
  // 2048 tokens × 4 layers = 8192 token-layers: forward 153,092,096 B, backward 199,229,440 B.
  // Loss: 28 bytes per logit × V/tp = 16000 logits × 2048 tokens = 917,504,000 B, 5/7 forward.
  const ElementwiseBytes b = elementwise_bytes(small_gated(), tp2_sp());
  CHECK(b.forward == Approx(153092096.0 + 917504000.0 * 5.0 / 7.0));
  CHECK(b.backward == Approx(199229440.0 + 917504000.0 * 2.0 / 7.0));
  CHECK(b.total() == Approx(1269825536.0));
}

TEST_CASE("memory-bound bytes: no SP keeps the norms whole, full recompute repeats the forward",
          "[elementwise]") {
  Plan p = tp2_sp();
  p.sequence_parallel = false;
  // Without SP each tp rank runs the norms and adds on every token: 10h = 10240 elements
  // forward and backward instead of 5120: 2 × 5120 × 2 B × 8192 token-layers more.
  const double more = 2.0 * 5120.0 * 2.0 * 8192.0;
  CHECK(elementwise_bytes(small_gated(), p).total() == Approx(1269825536.0 + more));
  p = tp2_sp();
  p.recompute = Recompute::full;
  // The layers' forward (153,092,096 B) once more; the loss is not recomputed.
  CHECK(elementwise_bytes(small_gated(), p).total() == Approx(1269825536.0 + 153092096.0));
}

TEST_CASE("memory-bound bytes: FP8 adds Transformer Engine's cast-transposes", "[elementwise]") {
  Model m = small_gated();
  m.precision.compute = Dtype::fp8;
  // 4 bytes per cast element (read 2, write the FP8 tensor and its transpose).
  //   forward: the projection input h = 1024 and the second MLP input f = 2816, over tp:
  //            1920 elements → 7680 B;
  //   backward: output gradients of QKV (h + 2·256 = 1536), the first MLP GEMM (2f = 5632)
  //            over tp = 3584, of the projection and the second MLP GEMM (h each) over tp
  //            under SP = 1024: 4608 elements → 18432 B. Per token-layer 26112 B × 8192.
  const double casts = 26112.0 * 8192.0;
  CHECK(elementwise_bytes(m, tp2_sp()).total() == Approx(1269825536.0 + casts));
}

TEST_CASE("memory-bound ops are timed for a catalog GPU's GEMM rate, not a typed rate",
          "[elementwise]") {
  const json model = {{"layers", 4},      {"hidden", 1024}, {"heads", 16},
                      {"kv_heads", 4},    {"ffn_hidden", 2816}, {"gated_mlp", true},
                      {"vocab", 32000},   {"seq_len", 2048}};
  json doc = {{"model", model},
              {"cluster",
               {{"nodes", 1},
                {"gpus_per_node", 8},
                {"gpu", {{"catalog", "H100-SXM"}}},
                {"intra_node", {{"bandwidth", "450 GB/s"}, {"latency", "3 us"}}},
                {"inter_node", {{"bandwidth", "50 GB/s"}, {"latency", "10 us"}}}}},
              {"workload", {{"kind", "training"}, {"global_batch_tokens", 1048576}}}};
  const std::string origin = std::string(PLANNER_SOURCE_DIR) + "/tests/data/scenario.json";
  Plan p = tp2_sp();
  p.dp = 4;
  p.grad_accum = 32;
  {
    const Context ctx = make_context(load_scenario(doc, origin));
    const TrainingTime t = training_time(ctx.model, ctx.cluster, p, ctx.flops_per_second);
    // data/gpus.json H100-SXM: 3.35 TB/s of HBM. 1,269,825,536 B / 3.35e12 B/s = 379.05 µs.
    CHECK(t.elementwise_seconds == Approx(1269825536.0 / 3.35e12));
    CHECK(t.compute_seconds() ==
          Approx(t.dense_seconds + t.attention_seconds + t.recompute_seconds +
                 1269825536.0 / 3.35e12));
  }
  // A typed effective rate already covers the memory-bound work (the seed's "400 TFLOP/s
  // effective"): nothing is added.
  doc["cluster"]["gpu"]["flops"] = "400 TFLOP/s";
  const Context typed = make_context(load_scenario(doc, origin));
  CHECK(training_time(typed.model, typed.cluster, p, typed.flops_per_second)
            .elementwise_seconds == 0.0);
}

TEST_CASE("untiled attention's score traffic, kernel by kernel, worked by hand", "[elementwise]") {
  // Megatron-LM's CoreAttention without flash: QKᵀ, softmax, dropout, ·V, each through HBM.
  // Per score element at 2-byte activations and 1-byte masks: forward write 2 (QKᵀ) + read 2
  // write 2 (softmax) + read 2 write 2 and 1 (dropout) + read 2 (·V) = 13 bytes; backward
  // write 2 read 2 (·V's dP' and dV) + read 2 and 1 write 2 (dropout) + read 4 write 2
  // (softmax) + read 4 (dQ, dK) = 19 bytes.
  const ScoreTraffic k = score_traffic(2.0);
  CHECK(k.forward_bytes_per_element == 13.0);
  CHECK(k.backward_bytes_per_element == 19.0);

  Model m = small_gated();
  Cluster c;
  c.gpu.memory_bandwidth_bytes_per_second = 2e12;
  c.gpu.flops_per_second = 1e14;
  c.tiers = {Tier{300e9, 5e-6, 8, true, "intra_node"}, Tier{50e9, 10e-6, 0, false, "inter_node"}};
  c.nodes = 1;
  c.gpus_per_node = 8;
  Plan p = tp2_sp();
  p.flash_attention = false;
  p.recompute = Recompute::none;
  // Score elements per layer and rank: 16 heads / tp 2 × 2048 × 2048 × b 1 = 33,554,432.
  // No recompute: (13 + 19) B × 33,554,432 × 4 layers = 4,294,967,296 B = 2.147 ms at 2 TB/s.
  CHECK(training_time(m, c, p, c.gpu.flops_per_second).scores_io_seconds ==
        Approx(4294967296.0 / 2e12));
  // Selective recompute runs the forward kernels again: (2 × 13 + 19) B per element.
  p.recompute = Recompute::selective;
  CHECK(training_time(m, c, p, c.gpu.flops_per_second).scores_io_seconds ==
        Approx(45.0 * 33554432.0 * 4.0 / 2e12));
  // FlashAttention keeps the scores on chip.
  p.flash_attention = true;
  CHECK(training_time(m, c, p, c.gpu.flops_per_second).scores_io_seconds == 0.0);
}

TEST_CASE("memory-bound bytes in eager PyTorch, worked kernel by kernel", "[elementwise]") {
  // small_gated: h 1024, q 1024 (16 heads of 64), kv 256, f 2816; bf16 (e = 2); tp 2 with SP,
  // so the hidden-state terms and the head/MLP terms are both halved. Bytes per token-layer
  // (docs/model.md §6a's eager table, each kernel's reads and writes):
  //   forward, hidden state: 2 norms × (e+4 + 4+4 + 4 + 4+4 + 4+e + 2e = 36) × 1024 = 73,728,
  //            2 residual adds × 3e × 1024 = 12,288; 86,016 / 2 = 43,008;
  //   forward, heads and MLP: rotary (e+4 + 8 + 4+e = 20) × (1024 + 256) = 25,600, repeat_kv
  //            2e × 1280 = 5,120, the attention output's copy 2e × 1024 = 4,096, SwiGLU
  //            5e × 2816 = 28,160; 62,976 / 2 = 31,488. Forward 74,496.
  //   backward, hidden state: 2 norms × 84 × 1024 = 172,032, 2 accumulations × 3e × 1024 =
  //            12,288; 184,320 / 2 = 92,160;
  //   backward, heads and MLP: rotary 25,600, repeat_kv 5,120, SwiGLU 9e × 2816 = 50,688;
  //            81,408 / 2 = 40,704. Backward 132,864.
  // Fused (the first test): 18,688 + 24,320 = 43,008 per token-layer. Over 8192 token-layers
  // the eager layers move (74,496 + 132,864 − 43,008) × 8192 bytes more; the loss is the same.
  Plan p = tp2_sp();
  p.eager_elementwise = true;
  const ElementwiseBytes b = elementwise_bytes(small_gated(), p);
  CHECK(b.forward == Approx(74496.0 * 8192.0 + 917504000.0 * 5.0 / 7.0));
  CHECK(b.backward == Approx(132864.0 * 8192.0 + 917504000.0 * 2.0 / 7.0));
  CHECK(b.total() == Approx(1269825536.0 + (74496.0 + 132864.0 - 43008.0) * 8192.0));
  // Without grouped KV heads (kv = q = 1024) there is no repeat_kv copy, and rotary covers
  // 2048 columns: forward heads and MLP 20 × 2048 + 4,096 + 28,160 = 73,216 / 2 = 36,608, so
  // 43,008 + 36,608 = 79,616 per token-layer against the fused 18,688 (which does not depend on
  // the KV heads).
  Model mha = small_gated();
  mha.kv_heads = mha.heads;
  const ElementwiseBytes eager_mha = elementwise_bytes(mha, p);
  const ElementwiseBytes fused_mha = elementwise_bytes(mha, tp2_sp());
  CHECK(eager_mha.forward - fused_mha.forward == Approx((79616.0 - 18688.0) * 8192.0));
}

TEST_CASE("memory-bound bytes in eager PyTorch: LayerNorm and learned positions",
          "[elementwise]") {
  // MosaicGPT's block (model.norm "layernorm", model.position_embedding "learned"): F.layer_norm
  // is one kernel forward (read x, write y: 2e) and two backward (dx reads dy and x, writes
  // dx: 3e; the weight and bias gradients read dy and x again: 2e), and no rotary kernels run
  // in the layers. small_gated at tp 2 with SP, e = 2, per token-layer:
  //   forward, hidden state: 2 norms × 2e × 1024 = 8,192, 2 residual adds × 3e × 1024 =
  //            12,288; 20,480 / 2 = 10,240;
  //   forward, heads and MLP: repeat_kv 5,120, the attention output's copy 4,096, SwiGLU
  //            28,160; 37,376 / 2 = 18,688. Forward 28,928.
  //   backward, hidden state: 2 norms × 5e × 1024 = 20,480, 2 accumulations 12,288;
  //            32,768 / 2 = 16,384;
  //   backward, heads and MLP: repeat_kv 5,120, SwiGLU 50,688; 55,808 / 2 = 27,904.
  //            Backward 44,288.
  // The loss is the same as in the test above: 917,504,000 bytes, 5/7 forward.
  Model m = small_gated();
  m.norm = Norm::layer;
  m.position = Position::learned;
  Plan p = tp2_sp();
  p.eager_elementwise = true;
  const ElementwiseBytes b = elementwise_bytes(m, p);
  CHECK(b.forward == Approx(28928.0 * 8192.0 + 917504000.0 * 5.0 / 7.0));
  CHECK(b.backward == Approx(44288.0 * 8192.0 + 917504000.0 * 2.0 / 7.0));
  // Each choice on its own: RMSNorm with learned positions drops only the rotary rows
  // (25,600 per token-layer each way, halved by tp); LayerNorm with rotary only the norms'
  // difference ((36 − 4) × 2 × 1024 forward, halved by SP).
  m.norm = Norm::rms;
  Model rotary_ln = small_gated();
  rotary_ln.norm = Norm::layer;
  const ElementwiseBytes llama = elementwise_bytes(small_gated(), p);
  CHECK(llama.forward - elementwise_bytes(m, p).forward == Approx(12800.0 * 8192.0));
  CHECK(llama.forward - elementwise_bytes(rotary_ln, p).forward ==
        Approx(32.0 * 1024.0 * 8192.0));
  // Fused kernels move the same bytes whatever the norm and the positions.
  CHECK(elementwise_bytes(m, tp2_sp()).total() == elementwise_bytes(small_gated(), tp2_sp()).total());
}

TEST_CASE("model.norm and model.position_embedding are read, and refused when unknown",
          "[elementwise][io]") {
  json s = json::parse(R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "vocab": 32000,
      "seq_len": 2048, "norm": "layernorm", "position_embedding": "alibi"},
    "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": {"catalog": "H100-SXM"},
                "intra_node": {"bandwidth": "450 GB/s", "latency": "5 us"},
                "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}},
    "workload": {"kind": "training", "global_batch_tokens": 1e6}})");
  const Scenario read = load_scenario(s, "m.json");
  CHECK(read.model.norm == Norm::layer);
  CHECK(read.model.position == Position::alibi);
  s["model"]["norm"] = "batchnorm";
  CHECK_THROWS_WITH(load_scenario(s, "m.json"),
                    Catch::Contains("m.json: /model/norm") && Catch::Contains("layernorm"));
}

// Tensor-parallel communication overlap (Megatron-LM --tp-comm-overlap, Transformer Engine
// userbuffers; step_time.hpp layer_tp_overlap, docs/model.md §7): what each collective leaves
// exposed beside its GEMM and what the overlap costs, worked by hand.
#include <catch2/catch.hpp>

#include "model/small_model.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/step_time.hpp"

using namespace planner;

namespace {

// One 8-GPU node at H100-like rates (a 650 TFLOP/s GEMM rate, 132 SMs), its scale-up link at
// `link_bytes_per_second`.
Cluster one_node(double link_bytes_per_second) {
  Cluster c;
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.memory_bytes = 80e9;
  c.gpu.memory_bandwidth_bytes_per_second = 3.35e12;
  c.gpu.flops_per_second = 6.5e14;
  c.gpu.compute_units = 132;
  c.tiers = {Tier{link_bytes_per_second, 5e-6, 8, true, "intra_node"},
             Tier{50e9, 10e-6, 0, false, "inter_node"}};
  return c;
}

/// tp 8 with sequence parallelism, tiled attention and selective recompute.
Plan tp8_sp() {
  Plan p;
  p.tp = 8;
  p.sequence_parallel = true;
  p.flash_attention = true;
  p.recompute = Recompute::selective;
  return p;
}

}  // namespace

TEST_CASE("tp overlap: each collective hidden by its GEMM, TE's pairing, by hand", "[tp_overlap]") {
  // tp 4, one reduce-scatter or all-gather c = 1 ms; forward GEMMs QKV 3, proj 1, FC1 8,
  // FC2 4 ms; 132 SMs, of which pipeline and bulk collectives take 16.
  const LayerGemms g{3e-3, 1e-3, 8e-3, 4e-3};
  const double cost = 1e-3 * 16.0 / 132.0;  // min(c, GEMM) = c everywhere below
  // forward: AG in QKV (ring exchange) max(c/4, c − 3) = 0.25; RS in proj (pipeline, 4 splits)
  //          max(c/4, c − 1) = 0.25 + cost; AG in FC1 0.25; RS in FC2 0.25 + cost.
  // backward: AG in proj's dgrad (ring) 0.25; RS beside QKV's wgrad (bulk) max(0, c − 3) = 0
  //           + cost; AG in FC2's dgrad 0.25; RS beside FC1's wgrad 0 + cost.
  const TpOverlap o = layer_tp_overlap(g, 1e-3, 1.0, true, 4, 132.0);
  CHECK(o.exposed_seconds == Approx(6 * 0.25e-3 + 4 * cost));
  CHECK(o.cost_seconds == Approx(4 * cost));
  // Without overlap the same 8 collectives cost 8 ms on the critical path.
  // Full recompute runs the forward four again; a layer without the MLP's collectives (MoE,
  // etp 1) keeps the attention's four.
  CHECK(layer_tp_overlap(g, 1e-3, 2.0, true, 4, 132.0).exposed_seconds ==
        Approx(6 * 0.25e-3 + 4 * cost + (4 * 0.25e-3 + 2 * cost)));
  CHECK(layer_tp_overlap(g, 1e-3, 1.0, false, 4, 132.0).exposed_seconds ==
        Approx(3 * 0.25e-3 + 2 * cost));
  // A collective longer than its GEMM shows the excess: c = 2 ms beside the 1 ms projection
  // (pipeline): max(0.5, 1) = 1 ms exposed, plus the GEMM's 1 ms × 16/132 of SMs.
  CHECK(overlapped_collective(2e-3, 1e-3, OverlapMethod::pipeline, 4, 132.0).seconds() ==
        Approx(1e-3 + 1e-3 * 16.0 / 132.0));
  // A GPU of unknown SM count pays no overlap cost.
  CHECK(overlapped_collective(2e-3, 1e-3, OverlapMethod::bulk, 4, 0.0).seconds() == Approx(1e-3));
}

TEST_CASE("tp overlap in the step: only with sequence parallelism, and never slower",
          "[tp_overlap]") {
  Model m = test_models::small_model();
  m.seq_len = 4096;
  const Cluster c = one_node(450e9);
  Plan p = tp8_sp();
  const TrainingTime plain = training_time(m, c, p, c.gpu.flops_per_second);
  p.tp_comm_overlap = true;
  const TrainingTime overlapped = training_time(m, c, p, c.gpu.flops_per_second);
  CHECK(overlapped.tp_unoverlapped_seconds == Approx(plain.tp_seconds));
  CHECK(overlapped.tp_seconds < plain.tp_seconds);
  CHECK(overlapped.tp_overlap_cost_seconds > 0);
  // By hand: the layer's message is 4096 tokens × 4096 × 2 B = 33,554,432 B; a ring all-gather
  // over 8 ranks at 450 GB/s and 5 µs: 7/8 × 33.55 MB / 450 GB/s + 7 × 5 µs = 100.25 µs.
  // QKV forward: 2 × 4096 × 4096 × (4096 + 2·1024) / 8 / 6.5e14 = 39.6 µs; proj 26.4 µs;
  // FC1 2 × 4096 × 4096 × 2·14336 / 8 / 6.5e14 = 184.9 µs; FC2 92.5 µs.
  const double ag = 7.0 / 8.0 * 33554432.0 / 450e9 + 7 * 5e-6;
  const double per = 2.0 * 4096 * 4096 / 8 / 6.5e14;
  const double qkv = per * (4096 + 2048), proj = per * 4096, fc1 = per * 2 * 14336,
               fc2 = per * 14336;
  const double k = 16.0 / 132.0;
  const double fwd = std::max(ag / 8, ag - qkv) + std::max(ag / 4, ag - proj) + k * std::min(ag, proj) +
                     std::max(ag / 8, ag - fc1) + std::max(ag / 4, ag - fc2) + k * std::min(ag, fc2);
  const double bwd = std::max(ag / 8, ag - proj) + std::max(0.0, ag - qkv) + k * std::min(ag, qkv) +
                     std::max(ag / 8, ag - fc2) + std::max(0.0, ag - fc1) + k * std::min(ag, fc1);
  CHECK(overlapped.tp_seconds == Approx(4 * (fwd + bwd)));
  // Without SP, Transformer Engine has nothing to overlap (the all-reduce form): unchanged.
  p.sequence_parallel = false;
  const TrainingTime no_sp = training_time(m, c, p, c.gpu.flops_per_second);
  p.tp_comm_overlap = false;
  CHECK(no_sp.tp_seconds == Approx(training_time(m, c, p, c.gpu.flops_per_second).tp_seconds));
}

TEST_CASE("tp overlap needs peer memory: a tp group across the network keeps its collectives",
          "[tp_overlap]") {
  // Transformer Engine's userbuffers need the tp GPUs on one NVLink/NVSwitch domain
  // (TE examples/pytorch/comm_gemm_overlap/README.md, Requirements). Two 4-GPU nodes, tp 8:
  // the group crosses the network (no peer memory), so overlap changes nothing.
  Model m = test_models::small_model();
  m.seq_len = 4096;
  Cluster c = one_node(450e9);
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.tiers[0].domain_gpus = 4;
  Plan p = tp8_sp();
  const TrainingTime plain = training_time(m, c, p, c.gpu.flops_per_second);
  p.tp_comm_overlap = true;
  const TrainingTime asked = training_time(m, c, p, c.gpu.flops_per_second);
  CHECK(asked.tp_seconds == plain.tp_seconds);
  CHECK(asked.tp_unoverlapped_seconds == 0);
  CHECK(asked.tp_overlap_cost_seconds == 0);
  CHECK(plain.tp_seconds > 0);
}

TEST_CASE("pipeline sends overlapped with the next chunk, by hand", "[tp_overlap]") {
  Model m;
  m.layers = 8;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 16384;
  m.vocab = 32000;
  m.seq_len = 4096;
  // A slow scale-up link, so that a send outlasts a forward chunk.
  const Cluster c = one_node(2e9);
  Plan p;
  p.pp = 2;
  p.dp = 1;
  p.virtual_stages = 2;
  p.grad_accum = 4;
  p.flash_attention = true;
  p.recompute = Recompute::selective;
  const TrainingTime plain = training_time(m, c, p, c.gpu.flops_per_second);
  // One send: 4096 tokens × 4096 × 2 B = 33,554,432 B at 2 GB/s + 5 µs of latency + 3 µs of
  // launch (NCCL issue #1984: 3.5 µs plain against 0.5 µs from a CUDA graph) = 16.78 ms; 2·v = 4
  // per micro-batch on the critical path without overlap.
  const double send = 33554432.0 / 2e9 + 5e-6 + 3e-6;
  CHECK(plain.pp_seconds == Approx(4 * send));
  p.pp_comm_overlap = true;
  const TrainingTime overlapped = training_time(m, c, p, c.gpu.flops_per_second);
  // Each send beside a chunk: v × (max(0, send − forward chunk) + max(0, send − backward chunk)),
  // a chunk being the micro-batch's compute over v, a third of it forward.
  const double chunk = overlapped.compute_seconds() / 2.0;
  CHECK(chunk / 3.0 < send);  // the case this test is for
  CHECK(overlapped.pp_seconds ==
        Approx(2.0 * (std::max(0.0, send - chunk / 3.0) + std::max(0.0, send - 2.0 * chunk / 3.0))));
  CHECK(overlapped.pp_seconds < plain.pp_seconds);
  // Plain 1F1B has no chunk to overlap with (Megatron-LM: interleaved schedule only).
  p.virtual_stages = 1;
  CHECK(training_time(m, c, p, c.gpu.flops_per_second).pp_seconds == Approx(2 * send));
}

TEST_CASE("ZeRO-3 gathered parameters under DeepSpeed's live-parameter limit, by hand",
          "[zero3]") {
  // h 1024, 16 heads (MHA), ungated f 4096: a layer holds 2h² + 2h·h (Q, O; K, V) + 2·h·f + 4h
  // = 2,097,152 + 2,097,152 + 8,388,608 + 4,096 = 12,587,008 parameters; two layers 25,174,016.
  Model m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 2048;
  Plan p;
  p.zero = 3;
  // No limit: the layer computed and the one prefetched (the worked solution's two buffers).
  CHECK(zero3_gathered_params(m, p, 0) == Approx(25174016.0));
  // Largest matrix: the first MLP GEMM h·f = 4,194,304 (QKV is h·3h = 3,145,728). A 1e6 limit
  // still holds that module whole; a 1e8 limit is above two layers, which stay the bound.
  CHECK(largest_matrix_params(m, p) == Approx(4194304.0));
  CHECK(zero3_gathered_params(m, p, 1e6) == Approx(4194304.0));
  CHECK(zero3_gathered_params(m, p, 2e7) == Approx(2e7));
  CHECK(zero3_gathered_params(m, p, 1e8) == Approx(25174016.0));
  // tp splits the module: at tp 2 the largest matrix is 2,097,152 per GPU.
  p.tp = 2;
  CHECK(zero3_gathered_params(m, p, 1e6) == Approx(2097152.0));
}

TEST_CASE("PyTorch FSDP's root unit keeps the tables gathered, by hand", "[zero3]") {
  // Llama 3.1 8B's tables (Dubey et al. 2024 Table 3: vocabulary 128,256, model dimension
  // 4096, untied): V·h = 525,336,576 parameters each. FSDP's root is not resharded after the
  // forward, so at the backward's start it holds both tables gathered and the output layer's
  // unsharded gradient, 2 bytes each in bf16: 3 · 525,336,576 · 2 = 3,152,019,456 B
  // (docs/model.md §3).
  Model m = test_models::small_model();  // Llama 3 8B's layer shape
  m.layers = 32;
  m.vocab = 128256;
  Cluster c;
  Training w;
  Plan p;
  p.dp = 8;
  p.zero = 3;
  auto root_bytes = [&](const Plan& plan) {
    Training root = w;
    root.fsdp_root_unit = true;
    return training_ledger(m, c, root, plan).zero3_gather_bytes -
           training_ledger(m, c, w, plan).zero3_gather_bytes;
  };
  CHECK(root_bytes(p) == Approx(3152019456.0));
  // tp 2 splits the tables (and their gradients) in two.
  Plan tp2 = p;
  tp2.tp = 2;
  CHECK(root_bytes(tp2) == Approx(1576009728.0));
  // An end stage of a pipeline holds one table: 2 · 525,336,576 · 2 B.
  Plan pp2 = p;
  pp2.pp = 2;
  CHECK(root_bytes(pp2) == Approx(2101346304.0));
  // Tied tables are one: the same 2 · 525,336,576 · 2 B.
  m.tied_embeddings = true;
  CHECK(root_bytes(p) == Approx(2101346304.0));
  // Below ZeRO-3 the tables are never sharded, so nothing is gathered.
  Plan zero1 = p;
  zero1.zero = 1;
  CHECK(root_bytes(zero1) == 0.0);
}

// The model's terms beyond the answer key (split from test_model.cpp, files stay under 500
// lines): activations without dropout and under op-level checkpointing, the logits, the causal
// kernel's blocks, ZeRO-3's per-tensor collectives, fp32 gradient reduction and HFU, each
// worked by hand in the comments.
#include <catch2/catch.hpp>

#include "answer_key_inputs.hpp"
#include "planner/base/error.hpp"
#include "planner/io/context.hpp"
#include "planner/model/activations.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/step_time.hpp"

using namespace planner;
using answer_key::printed_as;

#include "model_test_helpers.hpp"

using namespace model_test_helpers;

TEST_CASE("A measured step shorter than the score-matrix traffic is rejected", "[calibration]") {
  // Scenario A's pinned plan without tiled attention moves 3 passes × 5·a·s²·b = 3 × 2.68e9 B
  // per layer × 32 layers = 258 GB through 5.3 TB/s HBM: 48.6 ms. A 10 ms measurement cannot
  // be right, and must not silently fall back to the datasheet FLOP rate.
  Scenario s;
  s.origin = "a.json";
  s.model = answer_key::model_a();
  s.cluster = answer_key::cluster();
  s.workload.training = answer_key::training_2m();
  s.workload.training.step_time_per_micro_batch_seconds = 0.010;
  s.plan = answer_key::plan(64, 1, 1, 1, 2, Recompute::selective, false, false, 1, 8);
  CHECK_THROWS_AS(make_context(s), InputError);
  s.workload.training.step_time_per_micro_batch_seconds = 0.7;
  CHECK(make_context(s).calibrated);
}

TEST_CASE("activations: a model without dropout keeps no masks", "[activations]") {
  // Korthikanti et al. 2022 Eq. (1) with h_kv = h, f = 4h, ungated: s·b·h·(34 + 5as/h) bytes
  // per layer; without dropout the two 1-byte sbh masks and the score mask and dropout output
  // (3as²b) go: s·b·h·(32 + 2as/h).
  Model m;
  m.layers = 2;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 1000;
  m.seq_len = 2048;
  const double sbh = 2048.0 * 1024;
  const LayerActivationTerms with = layer_activation_terms(m, 1, 2048);
  CHECK(with.replicated_bytes + with.tp_split_bytes == Approx(34 * sbh));
  CHECK(with.scores_bytes == Approx(5.0 * 16 * 2048 * 2048));
  m.dropout = false;
  const LayerActivationTerms without = layer_activation_terms(m, 1, 2048);
  CHECK(without.replicated_bytes + without.tp_split_bytes == Approx(32 * sbh));
  CHECK(without.scores_bytes == Approx(2.0 * 16 * 2048 * 2048));
}

TEST_CASE("activations: torchtitan's op-level checkpointing, by hand", "[activations]") {
  // Llama 3.1 8B shape, one micro-batch of 2 × 8192 tokens, tp 1: the block input (h), wq's
  // and attention's outputs (4096 each), wv's (1024), w1's (14336) and w2's (4096) are saved,
  // torchtitan's `_save_list` with every second matmul recomputed: (4·4096 + 1024 + 14336) ·
  // 2 B = 63,488 B per token and layer. Recomputed: wk 4096·1024, wo 4096·4096, w3
  // 4096·14336 parameters, 2 FLOPs each per token.
  Model m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.gated_mlp = true;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.dropout = false;
  Plan p;
  p.dp = 8;
  p.micro_batch = 2;
  p.flash_attention = true;
  p.recompute = Recompute::op;
  const double tokens = 2.0 * 8192;
  CHECK(layer_activation_bytes(m, p, Recompute::op) == Approx(63488.0 * tokens));
  const double recomputed = 4096.0 * 1024 + 4096.0 * 4096 + 4096.0 * 14336;
  CHECK(op_recomputed_params(m) == Approx(recomputed));
  const MicroBatchFlops with_op = micro_batch_flops(m, p);
  p.recompute = Recompute::selective;
  const MicroBatchFlops selective = micro_batch_flops(m, p);
  CHECK(with_op.recompute - selective.recompute == Approx(2.0 * recomputed * tokens * 32));
  // Under tp 4 with sequence parallelism the input is split, w2's product is not (it is saved
  // before its reduce-scatter), and the two reduce-scatter outputs are saved too:
  // 4096/4 + (2·4096 + 1024 + 14336)/4 + 4096 + 2·4096/4 = 13,056 elements per token.
  p.recompute = Recompute::op;
  p.tp = 4;
  p.dp = 2;
  p.sequence_parallel = true;
  CHECK(layer_activation_bytes(m, p, Recompute::op) == Approx(2.0 * 13056 * tokens));
}

namespace {
/// Llama 3.1 8B's attention shape at 8K tokens (32 layers, h 4096, 32 heads, V 128256), MHA
/// and an ungated MLP: what the logits and causal-share cases below need of it.
Model llama_8b_attention_shape() {
  Model m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.vocab = 128256;
  m.seq_len = 8192;
  return m;
}
}  // namespace

TEST_CASE("logits: an unfused fp32 cross-entropy holds three logit tensors", "[activations]") {
  // pp 1, tp 1, one micro-batch of 2 × 8192 tokens, h 4096, V 128256: Korthikanti §4.3's
  // 4·s·b·h·(1 + V/h) with the fused loss; PyTorch's cross_entropy on an fp32 copy keeps the
  // log-softmax output, the loss gradient and the input gradient at the backward's start:
  // 4·s·b·h + 12·s·b·V, plus the embedding's s·b·h for the one micro-batch in flight.
  Model m = llama_8b_attention_shape();
  Plan p;
  p.micro_batch = 2;
  const double sb = 2.0 * 8192;
  CHECK(logits_activation_bytes(m, p) == Approx(sb * 4096 + 4.0 * sb * (4096 + 128256)));
  CHECK(logits_activation_bytes(m, p, false) ==
        Approx(sb * 4096 + 4.0 * sb * 4096 + 12.0 * sb * 128256));
}

TEST_CASE("logits: the unfused loss under tp is loss parallel, four fp32 logit tensors",
          "[activations]") {
  // tp 8, the vocabulary sharded: PyTorch's loss_parallel backward
  // (torch/distributed/tensor/parallel/loss.py _nll_loss_and_log_softmax_backward) holds the
  // saved log-probabilities, zeros_like(x), (zeros + exp(x)) and its product with the loss
  // gradient: 4 fp32 tensors of s·b·V/8, 16·s·b·V/8 bytes; everything else split by 8 too.
  Model m = llama_8b_attention_shape();
  Plan p;
  p.micro_batch = 2;
  p.tp = 8;
  const double sb = 2.0 * 8192;
  CHECK(logits_activation_bytes(m, p, false) ==
        Approx((sb * 4096 + 4.0 * sb * 4096 + 16.0 * sb * 128256) / 8));
  // The fused loss keeps its one fp32 tensor of the shard.
  CHECK(logits_activation_bytes(m, p) == Approx((sb * 4096 + 4.0 * sb * (4096 + 128256)) / 8));
  // PyTorch's DTensor tensor parallelism under SP: the output layer's bf16 input is saved
  // whole (ColwiseParallel(input_layouts=Shard(1)) gathers it to Replicate before the
  // matmul), 2·s·b·h; the embedding's mask and the final norm's input stay split by 8.
  p.sequence_parallel = true;
  p.tp_saves_gathered_inputs = true;
  CHECK(logits_activation_bytes(m, p, false) ==
        Approx((sb * 4096 + 2.0 * sb * 4096 + 16.0 * sb * 128256) / 8 + 2.0 * sb * 4096));
}

TEST_CASE("DTensor tensor parallelism keeps the gathered QKV and MLP inputs", "[activations]") {
  // Llama 3.1 8B's attention shape, tp 8 with SP, one sequence of 8192 tokens: Korthikanti's
  // replicated group is split by 8 under SP (§4.2.2); torchtitan's
  // PrepareModuleInput(Shard(1) -> Replicate()) before wq/wk/wv and w1/w3 makes autograd keep
  // the gathered QKV input and MLP input, 2·s·b·h bytes each in bf16, whole on every rank:
  // 4·8192·4096·(1 − 1/8) bytes more per layer than the shards.
  Model m = llama_8b_attention_shape();
  Plan p;
  p.micro_batch = 1;
  p.tp = 8;
  p.sequence_parallel = true;
  const double shard = layer_activation_bytes(m, p, Recompute::selective);
  p.tp_saves_gathered_inputs = true;
  const double gathered = layer_activation_bytes(m, p, Recompute::selective);
  CHECK(gathered - shard == Approx(4.0 * 8192 * 4096 * 7.0 / 8.0));
  // Full recompute keeps the block input (its shard) either way; the working set, one layer
  // rebuilt, carries the difference.
  CHECK(layer_activation_bytes(m, p, Recompute::full) == Approx(2.0 * 8192 * 4096 / 8));
  // Without SP the inputs are counted whole already: no difference.
  p.sequence_parallel = false;
  const double no_sp = layer_activation_bytes(m, p, Recompute::selective);
  p.tp_saves_gathered_inputs = false;
  CHECK(layer_activation_bytes(m, p, Recompute::selective) == Approx(no_sp));
  // FP8 GEMMs save their inputs in FP8 (torchao's Float8ColwiseParallel casts before the
  // all-gather): half the bytes.
  m.precision.compute = Dtype::fp8;
  p.sequence_parallel = true;
  const double fp8_shard = layer_activation_bytes(m, p, Recompute::selective);
  p.tp_saves_gathered_inputs = true;
  CHECK(layer_activation_bytes(m, p, Recompute::selective) - fp8_shard ==
        Approx(4.0 * 8192 * 4096 * 7.0 / 8.0 / 2.0));
}

TEST_CASE("a causal flash kernel computes the blocks on and below the diagonal", "[compute]") {
  // s = 8192 in 128-token blocks is 64 block rows; a causal kernel runs 64·65/2 = 2080 of the
  // 64² = 4096 blocks (FlashAttention-2, Dao 2023, §3.1.1 skips the blocks above the
  // diagonal), 0.5078 of the square. Unfused attention computes the square and masks it.
  Model m = llama_8b_attention_shape();
  Plan p;
  p.flash_attention = true;
  CHECK(attention_square_share(m, p) == Approx(2080.0 / 4096.0));
  // Forward QKᵀ and A·V, 4·s²·h per layer, twice that in the backward, and the backward's
  // recompute of QKᵀ, 2·s²·h: 14 units of s²·h·L at the share.
  const MicroBatchFlops flash = micro_batch_flops(m, p);
  const double square = 8192.0 * 8192.0 * 4096.0 * 32.0;
  CHECK(flash.attention == Approx(12.0 * square * 2080.0 / 4096.0));
  CHECK(flash.recompute == Approx(2.0 * square * 2080.0 / 4096.0));
  p.flash_attention = false;
  CHECK(attention_square_share(m, p) == 1.0);
  CHECK(micro_batch_flops(m, p).attention == Approx(12.0 * square));
  // A sequence shorter than one block is one block on the diagonal, computed whole.
  m.seq_len = 64;
  p.flash_attention = true;
  CHECK(attention_square_share(m, p) == 1.0);
  // MFU's model FLOPs keep the whole square (PaLM, Chowdhery et al. 2022, Appendix B:
  // 12·L·H·Q·T per token); the executed count, which the effective rate is measured on,
  // lacks the skipped 2016 of 4096 blocks: 12·s²·h·L·2016/4096 per sequence.
  m.seq_len = 8192;
  CHECK(model_flops_per_sequence(m) - executed_model_flops_per_sequence(m, p) ==
        Approx(12.0 * square * 2016.0 / 4096.0));
}

TEST_CASE("ZeRO-3 per parameter tensor, with blocking gathers, by hand", "[data_parallel][zero3]") {
  // Scenario A's 8B (32 layers; 16e9 B of bf16 gradient), dp = 8 inside one node (300 GB/s,
  // 5 us per hop), windows of 1 s forward and 2 s backward, one micro-batch.
  const Model m = answer_key::model_a();
  Cluster c;
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.tiers = {Tier{300e9, 5e-6, 8, true, "intra_node"}, Tier{50e9, 15e-6, 0, false, "inter_node"}};
  Plan p;
  p.dp = 8;
  p.zero = 3;
  // One bucket per layer: each of the three buffers is 32 ring collectives over 8 ranks,
  // 7/8 · 16e9 / 300e9 = 46.667 ms of wire and 32 · 7 · 5 us = 1.12 ms of latency.
  const DataParallelTraffic layer = data_parallel_traffic(m, c, p, 1.0, 2.0);
  CHECK(layer.comm_seconds == Approx(3 * (46.6667e-3 + 1.12e-3)).epsilon(1e-5));
  // DeepSpeed 2021: 12 collectives per layer (one per parameter tensor), 384 per buffer, each
  // paying 7 · 5 us: 46.667 ms + 13.44 ms per buffer.
  p.zero3_collectives_per_layer = 12;
  const DataParallelTraffic tensors = data_parallel_traffic(m, c, p, 1.0, 2.0);
  const double buffer = 46.6667e-3 + 384 * 35e-6;
  const double bucket = 46.6667e-3 / 384 + 35e-6;
  CHECK(tensors.comm_seconds == Approx(3 * buffer).epsilon(1e-5));
  // Overlapped, the windows hide all but the first forward and the last backward buckets.
  CHECK(tensors.exposed_seconds == Approx(3 * bucket).epsilon(1e-5));
  // Blocking: both gathers run between the kernels, in full; the reduce-scatter still hides
  // behind the backward but for its last bucket. Each of the 2 · 384 gathers also pays the
  // host's 130 + 250 us of pre-launch and launch before its synchronize (DeepSpeed issue
  // #1069, 8 A100, DeepSpeed 0.3.16): 768 · 380 us = 291.84 ms. PyTorch 1.8's list-based
  // reduce-scatter copies each of the 8 ranks' slices into its flat buffer, 6.7 us a copy
  // (copy_loop.csv); the gathers' first 8 copies are inside the 380 us: 384 · 8 · 6.7 us.
  p.zero3_blocking_gathers = true;
  const DataParallelTraffic blocking = data_parallel_traffic(m, c, p, 1.0, 2.0);
  const double issue = 768 * 380e-6 + 384 * 8 * 6.7e-6;
  CHECK(blocking.issue_seconds == Approx(issue).epsilon(1e-9));
  CHECK(blocking.exposed_seconds == Approx(2 * buffer + bucket + issue).epsilon(1e-5));
  // Over 64 ranks (8 nodes of 8) each bucket's two gathers copy 56 slices more than the
  // measured 8 and its reduce-scatter 64: 384 · (2 · 56 + 64) · 6.7 us = 452.8 ms more.
  Cluster eight = c;
  eight.nodes = 8;
  Plan wide = p;
  wide.dp = 64;
  CHECK(data_parallel_traffic(m, eight, wide, 1.0, 2.0).issue_seconds ==
        Approx(768 * 380e-6 + 384 * (2 * 56 + 64) * 6.7e-6).epsilon(1e-9));
  // Other stages ignore both settings: ZeRO-2's buckets stay one layer each.
  p.zero = 2;
  Plan plain = p;
  plain.zero3_collectives_per_layer = 1;
  plain.zero3_blocking_gathers = false;
  CHECK(data_parallel_traffic(m, c, p, 1.0, 2.0).exposed_seconds ==
        data_parallel_traffic(m, c, plain, 1.0, 2.0).exposed_seconds);
}

TEST_CASE("fp32 gradients are reduced in fp32, the parameters gathered in their own dtype",
          "[data_parallel]") {
  // Megatron-LM keeps fp32 main gradients under bf16 (arguments.py: "bfloat16 requires
  // gradient accumulation and all-reduce to be done in fp32") and gathers the distributed
  // optimizer's bf16 parameters. Scenario A's 8B (8e9 parameters), dp 8 in one node at
  // 300 GB/s with no latency, ZeRO-1: the reduce-scatter moves 7/8 · 32e9 B, the all-gather
  // 7/8 · 16e9 B.
  const Model bf16 = answer_key::model_a();
  Model fp32 = bf16;
  fp32.precision.gradients = Dtype::fp32;
  Cluster c;
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.tiers = {Tier{300e9, 0, 8, false, "intra_node"}, Tier{50e9, 0, 0, false, "inter_node"}};
  Plan p;
  p.dp = 8;
  p.zero = 1;
  const DataParallelTraffic t = data_parallel_traffic(fp32, c, p, 100.0, 100.0);
  CHECK(t.gradient_bytes == Approx(2.0 * data_parallel_traffic(bf16, c, p, 100.0, 100.0)
                                             .gradient_bytes));
  CHECK(t.gather_bytes == Approx(t.gradient_bytes / 2.0));
  const double rs = 7.0 / 8.0 * t.gradient_bytes / 300e9;
  const double ag = 7.0 / 8.0 * t.gather_bytes / 300e9;
  CHECK(t.comm_seconds == Approx(rs + ag));
  CHECK(t.bytes_per_step == Approx(7.0 / 8.0 * (t.gradient_bytes + t.gather_bytes)));
  // ZeRO-3: two gathers of parameters and one reduce-scatter of gradients per micro-batch.
  p.zero = 3;
  const DataParallelTraffic z3 = data_parallel_traffic(fp32, c, p, 100.0, 100.0);
  CHECK(z3.comm_seconds == Approx(rs + 2.0 * ag));
}

TEST_CASE("HFU's hardware FLOPs: MFU's count plus the recomputation, by hand", "[compute][hfu]") {
  // Korthikanti et al. 2022 §6: hardware FLOPs include the recompute. With tiled attention the
  // backward recomputes QKᵀ, 2·s²·h per layer on the field's whole-square count: for the 8B
  // attention shape at 8K tokens, 2 · 8192² · 4096 · 32 on top of the model FLOPs.
  Model m = llama_8b_attention_shape();
  Plan p;
  p.flash_attention = true;
  p.recompute = Recompute::selective;
  const double square = 8192.0 * 8192.0 * 4096.0 * 32.0;
  CHECK(hardware_flops_per_sequence(m, p) - model_flops_per_sequence(m) ==
        Approx(2.0 * square));
  // Unfused selective recompute re-runs the attention core: 4·s²·h per layer.
  p.flash_attention = false;
  CHECK(hardware_flops_per_sequence(m, p) - model_flops_per_sequence(m) ==
        Approx(4.0 * square));
  // Full recompute re-runs each layer's forward, 2·P_layer·s + 4·s²·h, the whole model's.
  p.recompute = Recompute::full;
  CHECK(hardware_flops_per_sequence(m, p) - model_flops_per_sequence(m) ==
        Approx(32.0 * 2.0 * active_layer_params(m) * 8192.0 + 4.0 * square));
  // Nothing recomputed: HFU's count is MFU's; the plan's split does not change it.
  p.recompute = Recompute::none;
  p.tp = 8;
  p.pp = 4;
  CHECK(hardware_flops_per_sequence(m, p) == Approx(model_flops_per_sequence(m)));
}

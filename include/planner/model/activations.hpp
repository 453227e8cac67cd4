#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/experts.hpp"
#include "planner/model/schedule.hpp"

/// Activation memory of one transformer layer, per GPU, in bytes (docs/model.md §2).
///
/// Korthikanti et al. 2022, arXiv 2205.05198, §4.1 count, for 16-bit activations and 1-byte
/// dropout masks, s·b·h·(34 + 5·a·s/h) bytes per layer. We keep their itemisation and let the
/// K/V width (GQA) and the MLP width and gating vary:
///   - not split by tensor parallelism (§4.2.2): two LayerNorm inputs 4sbh, the QKV input 2sbh,
///     the MLP input 2sbh, two dropout masks 2sbh                          → 10·s·b·h
///   - split by tp: Q 2sbh, K and V 2·s·b·h_kv each, the output-projection input 2sbh,
///     and the f-wide MLP tensors (GeLU input and output: 4sbf; gated: gate, up, product: 6sbf)
///                                                                         → s·b·(4h + 4h_kv + c·f)
///   - the attention scores: softmax output 2as²b, its dropout mask as²b, dropout output 2as²b
///                                                                         → 5·a·s²·b
/// With h_kv = h, f = 4h, ungated: 10 + 4 + 4 + 16 = 34 and 5as/h — Korthikanti's Eq. (1).
/// Other activation dtypes scale every term by their size over 2 bytes (the 1-byte dropout
/// masks included, an approximation worth at most 3 of the 34 + 5as/h).
/// FP8 training (model.precision.compute "fp8") keeps the GEMM inputs saved for the weight
/// gradient in FP8, 1 byte per element: Transformer Engine's Linear saves the FP8 cast of its
/// input (transformer_engine/pytorch/module/linear.py, saved_inputmat = the FP8 inputmat
/// unless the recipe overrides wgrad precision), and DeepSeek-V3 caches the Linear inputs in
/// FP8 (arXiv 2412.19437 §3.3.3). Those are the QKV and MLP inputs (2sbh each, of the first
/// group), the output-projection input (2sbh) and the second MLP GEMM's input (2sbf, or the
/// experts' and the routed copies', model/experts.hpp mlp_gemm_input_width); the norms'
/// inputs, Q, K, V (attention's own inputs), the activation function's inputs and the masks
/// keep the activation dtype.
/// A model without dropout (model.dropout false) keeps neither mask: 8·s·b·h in the first
/// group, 2·a·s²·b of scores.
/// Sequence parallelism (§4.2.2) splits the first group by tp too. Context parallelism splits
/// the sequence: each rank keeps s/cp of every tensor. Selective recompute (§5) and tiled
/// (FlashAttention, Dao et al. 2022, arXiv 2205.14135) attention drop the score term; full
/// recompute keeps only each layer's 2·s·b·h input (§5), split by tp under SP.

namespace planner {

/// The three groups of one layer's activations for one micro-batch, before any split.
struct LayerActivationTerms {
  double replicated_bytes = 0;  ///< not split by tp unless sequence parallel (10·s·b·h)
  double tp_split_bytes = 0;    ///< split by tp (s·b·(4h + 4h_kv + c·f))
  double scores_bytes = 0;      ///< the s² attention term (5·a·s²·b), split by tp
  /// Of `replicated_bytes`, the QKV and MLP inputs (4·s·b·h, in FP8 under FP8 GEMMs): the
  /// column-parallel GEMMs' inputs, which PyTorch's DTensor tensor parallelism keeps gathered
  /// under sequence parallelism (tp_gathered_input_bytes).
  double gathered_bytes = 0;
};

/// The first two terms under FP8 GEMMs: the GEMM inputs (4sbh of the first group; 2sbh and
/// the MLP's GEMM inputs of the second) in FP8, the rest in the activation dtype, for `sb`
/// tokens and an MLP `mlp_width` wide.
inline void fp8_gemm_input_terms(const Model& m, double sb, double mlp_width,
                                 LayerActivationTerms& t) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double scale = bytes_of(m.precision.activations) / 2.0;
  const double gemm_scale = bytes_of(Dtype::fp8) / 2.0;
  const double gemm_inputs = mlp_gemm_input_width(m);
  // 6sbh: the two norms' inputs and, with dropout, the two masks.
  t.replicated_bytes =
      scale * (m.dropout ? 6.0 : 4.0) * sb * h + gemm_scale * 4.0 * sb * h;
  t.tp_split_bytes = scale * sb * (2.0 * h + 4.0 * kv_hidden(m) + mlp_width - gemm_inputs) +
                     gemm_scale * sb * (2.0 * h + gemm_inputs);
  t.gathered_bytes = gemm_scale * 4.0 * sb * h;
}

/// Terms for a micro-batch of `micro_batch` sequences of `seq_len` tokens, of which this rank
/// keeps `local_tokens` per sequence (seq_len / cp).
[[nodiscard]] inline LayerActivationTerms layer_activation_terms(const Model& m,
                                                                 double micro_batch,
                                                                 double local_tokens) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double a = static_cast<double>(m.heads);
  const double s = static_cast<double>(m.seq_len);
  const double sb = local_tokens * micro_batch;
  const double mlp_factor = m.gated_mlp ? 6.0 : 4.0;
  const double scale = bytes_of(m.precision.activations) / 2.0;
  const double mlp_width = is_moe(m) ? mlp_activation_width(m) : mlp_factor * f;
  LayerActivationTerms t;
  if (m.precision.compute == Dtype::fp8) {
    fp8_gemm_input_terms(m, sb, mlp_width, t);
  } else {
    t.replicated_bytes = scale * (m.dropout ? 10.0 : 8.0) * sb * h;  // 2sbh: the masks
    t.tp_split_bytes = scale * sb * (4.0 * h + 4.0 * kv_hidden(m) + mlp_width);
    t.gathered_bytes = scale * 4.0 * sb * h;
  }
  // routed experts, dispatch copies and router logits (model/experts.hpp)
  if (is_moe(m)) t.replicated_bytes += sb * router_activation_bytes_per_token(m);
  // local queries against all keys: (s/cp)·s per head; with cp > 1 the planner requires tiled
  // attention, so this term is only ever stored with cp = 1, where it is 5·a·s²·b.
  // Without dropout only the softmax output (2as²b) stays, not its mask and output (3as²b).
  t.scores_bytes = scale * (m.dropout ? 5.0 : 2.0) * a * local_tokens * s * micro_batch;
  return t;
}

/// The terms of one layer for the plan's micro-batch, on a rank keeping s/cp of the sequence.
[[nodiscard]] inline LayerActivationTerms plan_activation_terms(const Model& m,
                                                                const Plan& p) noexcept {
  return layer_activation_terms(m, static_cast<double>(p.micro_batch),
                                static_cast<double>(m.seq_len) / static_cast<double>(p.cp));
}

/// torchtitan's selective op-level checkpointing (torchtitan/parallelisms/parallelize_llama.py
/// at 9dec370, `_save_list` and `_custom_policy`: "Saves output of all compute ops, except
/// every second mm"): per token, the block's input (h, as sequence parallelism leaves it), the
/// outputs of the odd matmuls in the layer's order — wq (the query width), wv (h_kv), w1 (f)
/// and, gated, w2 (h: the row-parallel product before its reduce-scatter, not split) — and
/// attention's output (the query width), split by tp, with sequence parallelism the two
/// reduce-scatters' outputs (h/tp each), all in the activation dtype. Every other tensor of
/// the layer (norms, K, the output projection, w3, the activation function) is recomputed.
[[nodiscard]] inline double op_kept_layer_bytes(const Model& m, const Plan& p) noexcept {
  const double tp = static_cast<double>(p.tp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.heads) * head_dim(m);
  const double f = static_cast<double>(m.ffn_hidden);
  double per_token = h / (sp ? tp : 1.0) + (2.0 * q + kv_hidden(m) + f) / tp;
  if (m.gated_mlp) per_token += h;
  if (sp) per_token += 2.0 * h / tp;
  const double tokens = static_cast<double>(m.seq_len) / static_cast<double>(p.cp) *
                        static_cast<double>(p.micro_batch);
  return bytes_of(m.precision.activations) * per_token * tokens;
}

/// Whether the plan's column-parallel GEMMs keep their gathered inputs (below): the setting,
/// with sequence parallelism over more than one tp rank (without it the inputs are whole
/// under either framework).
[[nodiscard]] inline bool keeps_gathered_inputs(const Plan& p) noexcept {
  return p.tp_saves_gathered_inputs && p.sequence_parallel && p.tp > 1;
}

/// What PyTorch's DTensor tensor parallelism keeps of a layer's column-parallel GEMM inputs
/// beyond the sequence-parallel shards Korthikanti et al. count (§4.2.2). torchtitan's plan
/// (parallelisms/parallelize_llama.py at 9dec370) prepares the attention and the MLP with
/// `PrepareModuleInput(input_layouts=Shard(1), desired_input_layouts=Replicate())`: the
/// norm's sequence-parallel output is all-gathered before wq/wk/wv and w1/w3
/// (`ColwiseParallel`), and autograd saves that gathered tensor for their weight gradients,
/// the whole QKV and MLP inputs on every tp rank. Megatron-LM's column-parallel linear saves
/// the shard and gathers it again in the backward (core/tensor_parallel/layers.py,
/// LinearWithGradAccumulationAndAsyncCommunication), which is the shard counted. Zero
/// without sequence parallelism (the inputs are counted whole then) or without the setting.
[[nodiscard]] inline double tp_gathered_input_bytes(const Plan& p,
                                                    const LayerActivationTerms& t) noexcept {
  if (!keeps_gathered_inputs(p)) return 0;
  return t.gathered_bytes * (1.0 - 1.0 / static_cast<double>(p.tp));
}

/// Bytes one layer keeps for the backward pass on one GPU under `recompute`, from the plan's
/// terms (computed once for the ledger's three uses).
[[nodiscard]] inline double kept_layer_bytes(const Model& m, const Plan& p,
                                             const LayerActivationTerms& t,
                                             Recompute recompute) noexcept {
  const double tp = static_cast<double>(p.tp);
  const double sp_split = p.sequence_parallel ? tp : 1.0;
  if (recompute == Recompute::op) return op_kept_layer_bytes(m, p);
  if (recompute == Recompute::full) {
    const double local_tokens = static_cast<double>(m.seq_len) / static_cast<double>(p.cp);
    return bytes_of(m.precision.activations) * local_tokens *
           static_cast<double>(p.micro_batch) * static_cast<double>(m.hidden) / sp_split;
  }
  double bytes = t.replicated_bytes / sp_split + t.tp_split_bytes / tp +
                 tp_gathered_input_bytes(p, t);
  const bool scores_kept = recompute == Recompute::none && !p.flash_attention;
  if (scores_kept) bytes += t.scores_bytes / tp;
  return bytes;
}

/// Bytes one layer keeps for the backward pass on one GPU, under `recompute`.
[[nodiscard]] inline double layer_activation_bytes(const Model& m, const Plan& p,
                                                   Recompute recompute) noexcept {
  return kept_layer_bytes(m, p, plan_activation_terms(m, p), recompute);
}

/// The pipeline's units: the blocks, plus the embedding and the loss as one unit each when
/// plan.tables_in_pipeline_split (Megatron-LM treats each "as a standard transformer layer in
/// the context of partition and placement", arguments.py --account-for-embedding-in-pipeline-
/// split, --account-for-loss-in-pipeline-split).
[[nodiscard]] inline std::int64_t pipeline_units(const Model& m, const Plan& p) noexcept {
  return blocks(m) + (p.pp > 1 && p.tables_in_pipeline_split ? 2 : 0);
}

/// With the tables in the split, whether the slowest stage is an end stage (one layer fewer
/// and a V·h table, the output layer's GEMM being the costlier end) rather than a middle
/// stage of ⌈U/pp⌉ layers: the table's parameters against one layer's active ones, the
/// FLOPs per token either runs (6 per parameter).
/// Kept out of line (gnu::noinline): inlined, its parameter count made stage_layers and
/// stage_table_params, which an evaluation calls a dozen times, too large for GCC to inline
/// them, and an evaluation took 30 % longer (docs/performance.md).
[[gnu::noinline]] inline bool end_stage_largest(const Model& m) noexcept {
  return static_cast<double>(m.vocab) * static_cast<double>(m.hidden) > active_layer_params(m);
}

/// stage_layers with the tables in the split, out of line for the reason end_stage_largest is.
[[gnu::noinline]] inline std::int64_t split_stage_layers(const Model& m, const Plan& p) noexcept {
  const std::int64_t per_stage = (pipeline_units(m, p) + p.pp - 1) / p.pp;
  return end_stage_largest(m) ? per_stage - 1 : per_stage;
}

/// Layers held by the largest pipeline stage (the largest sets memory and time), the MTP
/// blocks counted with the layers (docs/moe.md §8): ⌈L/pp⌉, the end stages carrying the
/// embedding and output tables beside theirs; with the tables in the split, ⌈U/pp⌉ on a
/// middle stage, or one fewer on the end stage when its table outweighs a layer.
[[nodiscard]] inline std::int64_t stage_layers(const Model& m, const Plan& p) noexcept {
  if (!p.tables_in_pipeline_split || p.pp == 1) return (blocks(m) + p.pp - 1) / p.pp;
  return split_stage_layers(m, p);
}

/// Bytes the first stage keeps for its layers: ⌈L/pp⌉ layers × micro-batches in flight.
[[nodiscard]] inline double stage_activation_bytes(const Model& m, const Plan& p,
                                                   const LayerActivationTerms& t) noexcept {
  return kept_layer_bytes(m, p, t, p.recompute) * static_cast<double>(stage_layers(m, p)) *
         activation_micro_batches(p);
}

/// Largest extra a layer needs while it is recomputed and back-propagated: what the layer
/// holds with nothing recomputed minus what it kept (the score matrix under selective
/// recompute without tiled attention; the whole layer under full recompute).
[[nodiscard]] inline double recompute_working_bytes(const Model& m, const Plan& p,
                                                    const LayerActivationTerms& t) noexcept {
  // op-level checkpointing can keep more than no recompute at all (under SP, the row-parallel
  // matmul's unsplit output it saves against the split input autograd would keep): then
  // nothing more is re-materialised.
  return std::max(0.0, kept_layer_bytes(m, p, t, Recompute::none) -
                           kept_layer_bytes(m, p, t, p.recompute));
}

/// Embedding and output-layer activations (Korthikanti et al. 2022 §4.3): the embedding
/// dropout mask s·b·h per in-flight micro-batch on the first stage, and, when one stage holds
/// the output layer too (pp = 1), 4·s·b·h·(1 + V/h) for the final LayerNorm input, the output
/// layer input and the fp32 logits. Split by tp (vocabulary-parallel output layer).
/// Without a fused cross-entropy (PyTorch's F.cross_entropy on `pred.float()`, torchtitan
/// train.py loss_fn at 9dec370, with `del pred` before the backward) the backward's first
/// step holds the log-softmax output it saved, the loss gradient and the input gradient it
/// makes, three fp32 tensors of the logits: 12·s·b·V where the fused loss keeps 4·s·b·V.
/// Under tp the unfused loss runs on the vocabulary-sharded logits as PyTorch's loss parallel
/// (torchtitan enables it whenever tp is: train.py, disable_loss_parallel false by default),
/// whose backward (torch/distributed/tensor/parallel/loss.py
/// `_nll_loss_and_log_softmax_backward`: `grad_input = zeros_like(x)`, then
/// `(grad_input + exp(x)) * grad_output`) holds four: the saved log-probabilities, the zeros,
/// their sum with exp(x) and the product, 16·s·b·V/t. PyTorch's DTensor tensor parallelism
/// (Plan::tp_saves_gathered_inputs) keeps the output layer's input whole under sequence
/// parallelism: torchtitan's plan (parallelisms/parallelize_llama.py at 9dec370) puts the
/// output layer under `ColwiseParallel(input_layouts=Shard(1))`, whose input hook
/// redistributes the sequence-parallel shard to `Replicate()` (torch/distributed/tensor/
/// parallel/style.py, desired_input_layouts) before the matmul, and autograd saves that
/// gathered input for the weight gradient: 2·s·b·h, where Megatron-LM saves its shard and
/// gathers it again in the backward (tp_gathered_input_bytes), 2·s·b·h/t.
[[nodiscard]] inline double logits_activation_bytes(const Model& m, const Plan& p,
                                                    bool fused_loss = true) noexcept {
  const double sb = static_cast<double>(m.seq_len) / static_cast<double>(p.cp) *
                    static_cast<double>(p.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double tp = static_cast<double>(p.tp);
  double bytes = sb * h * activation_micro_batches(p) / tp;
  // Each MTP module computes its own logits with the shared head (docs/moe.md §8).
  const double heads = 1.0 + static_cast<double>(m.mtp_layers);
  const double logit_bytes = fused_loss ? 4.0 : (p.tp > 1 ? 16.0 : 12.0);
  if (p.pp == 1) {
    // The final norm's input (2·s·b·h) and the output layer's (2·s·b·h, whole under PyTorch's
    // tensor parallelism: above), each split by tp where the framework keeps a shard.
    const double output_input = keeps_gathered_inputs(p) ? 2.0 * sb * h * tp : 2.0 * sb * h;
    bytes += heads *
             (2.0 * sb * h + output_input + logit_bytes * sb * static_cast<double>(m.vocab)) / tp;
  }
  return bytes;
}

}  // namespace planner

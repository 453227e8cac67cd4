#pragma once
#include <algorithm>
#include "planner/model/activations.hpp"
#include "planner/model/memory.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"

/// FLOPs of one micro-batch on one GPU of the largest pipeline stage (docs/model.md §6).

namespace planner {

struct MicroBatchFlops {
  double dense = 0;      ///< 6 · parameters · tokens: forward 2PD + backward 4PD
  double attention = 0;  ///< 12 · b · s² · h per layer: QKᵀ and attention·V, forward + backward
  double recompute = 0;  ///< forward work repeated for the backward pass
  /// Of `recompute`, the attention core a tiled kernel runs again (the flash backward's QKᵀ,
  /// full recompute's core): timed at the attention kernel's rate with `attention`.
  double attention_recompute = 0;
  /// Of `dense` and `recompute`, the FLOPs that stay in bf16 when the GEMMs run in FP8 (the
  /// attention core is all of `attention`): the embedding and output tables with the MTP
  /// heads, and the attention core's recomputation (docs/moe.md §7).
  double dense_high_precision = 0;
  double recompute_high_precision = 0;
  [[nodiscard]] double total() const noexcept { return dense + attention + recompute; }
  [[nodiscard]] double forward() const noexcept { return (dense + attention) / 3.0; }
  [[nodiscard]] double backward() const noexcept {
    return 2.0 * (dense + attention) / 3.0 + recompute;
  }
};

/// The output head each MTP module runs again on its own prediction (arXiv 2412.19437 §2.2:
/// the head is shared, its GEMM is not): V·h parameters' worth of FLOPs per module.
[[nodiscard]] inline double mtp_head_flop_params(const Model& m) noexcept {
  return static_cast<double>(m.mtp_layers) * static_cast<double>(m.vocab) *
         static_cast<double>(m.hidden);
}

/// The MTP heads' share on the largest stage: all of them with pp = 1; else spread over the
/// stages like the MTP blocks and every layer's parameters (layer_params): frameworks put
/// the MTP module on the last stage and give that stage fewer layers (Megatron-LM
/// --decoder-last-pipeline-num-layers), which the planner's even stages stand for
/// (docs/moe.md §8).
[[nodiscard]] inline double stage_mtp_head_flop_params(const Model& m, const Plan& p) noexcept {
  if (m.mtp_layers == 0) return 0;
  if (p.pp == 1) return mtp_head_flop_params(m);
  return mtp_head_flop_params(m) * static_cast<double>(stage_layers(m, p)) /
         static_cast<double>(blocks(m));
}

/// Parameters whose GEMMs one GPU runs per token, tp aside: the stage's parameters with each
/// MoE layer's routed experts counted k/E times (the experts a token visits), scaled by the
/// load of the busiest expert rank (model/experts.hpp); the whole stage for a dense model.
[[nodiscard]] inline double stage_flop_params(const Model& m, const Plan& p) noexcept {
  const double heads = stage_mtp_head_flop_params(m, p);
  if (!is_moe(m)) return stage_params(m, p) + heads;
  const double experts = stage_expert_params(m, p);
  const double used = static_cast<double>(m.moe.top_k) / static_cast<double>(m.moe.experts);
  return stage_params(m, p) - experts + experts * used * expert_load_factor(m) + heads;
}

/// Parameters of the matmuls torchtitan's op-level checkpointing runs again in the backward,
/// per layer (activations.hpp op_kept_layer_bytes): the even ones in the layer's order, wk
/// (h·h_kv, QKV's K third), wo (the projection) and w3 (h·f, as large as the second MLP GEMM;
/// fc2 itself when ungated).
[[nodiscard]] inline double op_recomputed_params(const Model& m) noexcept {
  const LayerGemms w = layer_gemm_weights(m, static_cast<double>(m.ffn_hidden));
  return static_cast<double>(m.hidden) * kv_hidden(m) + w.proj + w.fc2;
}

/// Key-block size of tiled attention: FlashAttention-2 tunes its blocks among {64, 128} ×
/// {64, 128} (Dao 2023, arXiv 2307.08691, §3.3); 128 is the size of its head-dim-128 kernels.
inline constexpr double flash_block_tokens = 128;

/// The share of the s × s attention square the kernels compute. A tiled (flash) kernel under
/// the causal mask skips every block wholly above the diagonal (Dao 2023 §3.1.1, "causal
/// masking"): with n = s/T square blocks per side it runs n(n+1)/2 of the n², (1 + T/s)/2 of
/// the square. Unfused attention (Megatron-LM's baddbmm and fused scale-mask-softmax)
/// computes the whole square and masks it after, share 1. The model FLOPs of MFU keep the
/// whole square either way (model_flops_per_sequence), as the field counts them.
[[nodiscard]] inline double attention_square_share(const Model& m, const Plan& p) noexcept {
  if (!p.flash_attention) return 1.0;
  const double s = static_cast<double>(m.seq_len);
  return std::min(1.0, 0.5 * (1.0 + flash_block_tokens / s));
}

/// - dense: 6·P·D (Kaplan et al. 2020 §2.1; EleutherAI "Transformer Math 101"), P the stage's
///   parameters, D = b·s tokens, split over tp and cp.
/// - attention: 12·b·s²·h per layer, the s/6h term of Korthikanti et al. 2022 Eq. (7)
///   (non-causal, as Megatron-LM's MFU counts it), split over tp and cp; a flash kernel
///   computes attention_square_share of it, and of every attention recompute below.
/// - recompute: selective re-runs the attention core, 4·b·s²·h per layer (Korthikanti §5);
///   tiled attention's backward recomputes QKᵀ and the softmax from the saved statistics
///   (Dao et al. 2022, Alg. 4), 2·b·s²·h, so FlashAttention carries that cost whatever the
///   recompute mode; full recompute re-runs the layer forward, 2·P_layer·D + 4·b·s²·h.
/// Every b·s²·h term is counted at `square_share` of itself: the kernels' share for the time
/// model (micro_batch_flops below), 1, the field's count, for HFU.
[[nodiscard]] inline MicroBatchFlops micro_batch_flops_at(const Model& m, const Plan& p,
                                                         double square_share) noexcept {
  const double b = static_cast<double>(p.micro_batch);
  const double s = static_cast<double>(m.seq_len);
  const double h = attention_core_width(m);
  const double layers = static_cast<double>(stage_layers(m, p));
  const double split = static_cast<double>(p.tp) * static_cast<double>(p.cp);
  const double tokens = b * s;
  const double core = b * s * s * h * square_share;  // one b·s²·h unit per layer
  MicroBatchFlops f;
  f.dense = 6.0 * stage_flop_params(m, p) * tokens / split;
  f.attention = 12.0 * core * layers / split;
  double recompute_per_layer = 0;
  double kernel_recompute_per_layer = 0;  // of it, what the tiled kernel runs
  if (p.flash_attention) kernel_recompute_per_layer += 2.0 * core;
  if (p.recompute == Recompute::selective && !p.flash_attention) recompute_per_layer += 4.0 * core;
  if (p.recompute == Recompute::full) {
    recompute_per_layer += 2.0 * active_layer_params(m) * tokens;
    (p.flash_attention ? kernel_recompute_per_layer : recompute_per_layer) += 4.0 * core;
  }
  recompute_per_layer += kernel_recompute_per_layer;
  // op-level checkpointing re-runs the matmuls it did not save; attention's output is saved.
  if (p.recompute == Recompute::op) recompute_per_layer += 2.0 * op_recomputed_params(m) * tokens;
  f.recompute = recompute_per_layer * layers / split;
  f.attention_recompute = kernel_recompute_per_layer * layers / split;
  const Dtype d = m.precision.compute;
  if (d == Dtype::bf16 || d == Dtype::fp16) return f;  // one rate for all: no split needed
  f.dense_high_precision =
      6.0 * (stage_table_params(m, p) + stage_mtp_head_flop_params(m, p)) * tokens / split;
  // The recomputed layer GEMMs run in FP8 like the first pass; the rest stays bf16.
  const double recomputed_gemms =
      p.recompute == Recompute::full  ? 2.0 * active_layer_params(m) * tokens
      : p.recompute == Recompute::op ? 2.0 * op_recomputed_params(m) * tokens
                                      : 0.0;
  f.recompute_high_precision = (recompute_per_layer - recomputed_gemms) * layers / split;
  return f;
}

/// FLOPs of one micro-batch as the kernels run them: the attention square at the share they
/// compute (attention_square_share).
[[nodiscard]] inline MicroBatchFlops micro_batch_flops(const Model& m, const Plan& p) noexcept {
  return micro_batch_flops_at(m, p, attention_square_share(m, p));
}

/// Model FLOPs of one sequence, without recompute: 6·P·s + 12·s²·h·L, P the active
/// parameters (all of them for a dense model; for MoE the ones a token uses, as DeepSeek-AI
/// 2024, arXiv 2412.19437, counts 37B of 671B) and h the attention core's width, the square
/// term counted at `square_share` of itself.
[[nodiscard]] inline double model_flops_per_sequence_at(const Model& m,
                                                        double square_share) noexcept {
  const double s = static_cast<double>(m.seq_len);
  return 6.0 * (active_params(m) + mtp_head_flop_params(m)) * s +
         12.0 * s * s * attention_core_width(m) * static_cast<double>(blocks(m)) * square_share;
}

/// MFU's model FLOPs: the whole square, as the field counts them.
[[nodiscard]] inline double model_flops_per_sequence(const Model& m) noexcept {
  return model_flops_per_sequence_at(m, 1.0);
}

/// The same model FLOPs with the attention square at the share `p`'s kernels compute
/// (attention_square_share): the work the effective rate is measured on.
[[nodiscard]] inline double executed_model_flops_per_sequence(const Model& m,
                                                              const Plan& p) noexcept {
  return model_flops_per_sequence_at(m, attention_square_share(m, p));
}

/// Hardware FLOPs of one sequence, as the field counts them: MFU's model FLOPs (the whole
/// attention square) plus every recomputation, activation recompute and the flash backward's
/// QKᵀ, on the same count (Korthikanti et al. 2022 §6: HFU includes the recompute; the
/// SC21 paper's Eq. 3 with its 4× for full recompute), over the whole model. At least MFU's
/// count, whatever the kernels skip.
[[nodiscard]] inline double hardware_flops_per_sequence(const Model& m, const Plan& p) noexcept {
  Plan whole = p;  // one GPU holding the model, one sequence: the recompute of all layers
  whole.tp = whole.cp = whole.pp = whole.ep = 1;
  whole.etp = 0;
  whole.virtual_stages = 1;
  whole.micro_batch = 1;
  whole.tables_in_pipeline_split = false;
  return model_flops_per_sequence(m) + micro_batch_flops_at(m, whole, 1.0).recompute;
}

}  // namespace planner

#pragma once
#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/activations.hpp"
#include "planner/model/experts.hpp"

/// The memory-bound operations of one micro-batch on one GPU of the largest stage: the work
/// that is not a GEMM and is timed by the bytes it moves through HBM, not by FLOPs (issue 9
/// cause 3; docs/model.md §6a). A GEMM's time falls with a faster number format (FP8); these
/// do not, and FP8 adds its own casts.
///
/// Each operation y = g(x) reads its inputs and writes its output once in the forward pass;
/// its backward reads the saved inputs and the output's gradient and writes the inputs'
/// gradients. Per token and layer, in elements of the activation dtype (fused kernels as
/// Megatron-LM and Transformer Engine run them):
///
/// | operation                                   | forward      | backward     | split by        |
/// |---------------------------------------------|--------------|--------------|-----------------|
/// | 2 norms (input, pre-MLP)                    | 2 × 2h       | 2 × 3h       | tp only with SP |
/// | 2 bias-dropout-adds (after attention, MLP)  | 2 × 3h       | 2 × 2h       | tp only with SP |
/// | MLP activation, gated (SwiGLU: gate, up)    | 3f           | 5f           | tp              |
/// | MLP activation, GeLU                        | 2f           | 3f           | tp              |
/// | MoE permute + unpermute, k routed copies    | 2h(1 + k)    | 2h(1 + k)    | tp only with SP |
///
/// (norm: read x, write y; backward read x and dy, write dx. Bias-dropout-add: read the
/// branch and the residual, write the sum; backward read dy, write the branch's gradient, the
/// residual's passing through. SwiGLU silu(g)·u: read g and u, write the product; backward
/// read g, u and dy, write dg and du. MoE permutation: Megatron-LM moe_utils.permute copies each
/// token to its k experts, unpermute gathers the k copies back, h each way per copy.)
/// The attention core's own traffic is inside the attention kernel (FlashAttention) or in
/// micro_batch_time.hpp's score-matrix I/O (untiled); rotary embeddings (a read and write of Q and K)
/// are not counted.
///
/// The loss on the stage that holds the output layer (the timed stage, as its FLOPs count the
/// output layer's GEMM, compute.hpp): Megatron-LM's vocab-parallel cross-entropy
/// (tensor_parallel/cross_entropy.py) casts the V/tp logits of each token to fp32 and makes
/// about seven passes over them (the cast's read and write, the max, the subtract-exp, the
/// sum, the backward's read and its write of the gradient): 28 bytes per logit, once per
/// head (1 + mtp_layers).
///
/// FP8 GEMMs (model.precision.compute fp8): Transformer Engine casts each GEMM input that is
/// not already FP8 with a fused cast-transpose (transformer_engine/common/transpose/
/// cast_transpose.cu): read 2 bytes, write the FP8 tensor and its transpose, 1 byte each, 4
/// bytes per element. Forward: the output projection's input (the attention core's width)
/// and the second MLP GEMM's input (f); the QKV and first MLP inputs come out of
/// LayerNormLinear's norm already in FP8. Backward: the gradient of every GEMM's output —
/// QKV (h + 2·h_kv), the output projection (h), the first MLP GEMM (2f gated, f), the second
/// (h).
///
/// Full recompute runs the forward operations once more.
///
/// Eager PyTorch (Plan::eager_elementwise, workload.elementwise_kernels "eager": no
/// torch.compile, no fused kernels) runs each elementwise operation of the layer as its own
/// kernel, each reading its inputs from HBM and writing its output there, and autograd runs one
/// or more kernels per operation backward. Counted kernel by kernel on Meta's reference Llama
/// code as torchtitan runs it (torchtitan 9dec370: models/norms.py RMSNorm lines 96-101,
/// models/llama/model.py apply_rotary_emb 108-113, repeat_kv, Attention.forward's
/// transpose(1, 2).contiguous(), FeedForward 253, TransformerBlock 323-324), in bytes per
/// element, e the activation dtype's bytes, fp32 intermediates 4:
///
/// | operation (width) | forward kernels | fwd | backward kernels | bwd |
/// |---|---|---|---|---|
/// | RMSNorm, 2 per layer (h) | x.float() e+4, pow(2) 4+4, mean 4, x·rsqrt 4+4, type_as 4+e, ·weight 2e | 28 + 4e | ·weight's input grad 2e and weight grad (product, sum) 4e, cast e+4, x·r's grads: 4+4 and (product, sum) 8+4+4, mean's expand 4, pow's 2x and ·g 4+4+8+4, the two grads of x added 8+4, cast 4+e | 68 + 8e |
/// | rotary, Q and K (q + kv) | float() e+4, complex multiply 4+4, type_as 4+e | 16 + 2e | the same three backward | 16 + 2e |
/// | repeat_kv, GQA only (K and V: read kv, write q) | expand + reshape copies | 2e·(q + kv) | sum over the repeats | 2e·(q + kv) |
/// | attention output (q) | transpose(1, 2).contiguous() | 2e·q | none | 0 |
/// | SwiGLU (f) | silu 2e, product 3e | 5e | product's two grads 3e + 3e, silu's 3e | 9e |
/// | GeLU MLP (f), residual adds (h) | as fused | | the two residual grads accumulated 3e each (fused: 2e) | |
/// | LayerNorm, 2 per layer (h), model.norm "layernorm" | F.layer_norm, one kernel: read x, write y, 2e | 2e | dx's kernel reads dy and x, writes dx, 3e; the weight and bias gradients' kernel reads dy and x again, 2e | 5e |
///
/// (the LayerNorm row: PyTorch aten/src/ATen/native/cuda/layer_norm_kernel.cu, the vectorized
/// forward and LayerNormBackwardKernelImplInternal's two passes; it replaces the RMSNorm row.
/// A model whose positions are not rotary, model.position_embedding "learned", "alibi" or
/// "none", has no rotary row: a learned table is added once before the first layer, ALiBi's
/// bias is inside the attention kernel.)
///
/// (the reductions' outputs, per-token scalars, and the rotary table, broadcast over heads, are
/// not counted). At e = 2 a norm moves 36 and 84 bytes per element where the fused kernels move
/// 4 and 6. The MoE permutation and the loss are counted as above. The count is of torchtitan's
/// code; other eager code with the same operations (fms-fsdp's FMS Llama: the same RMSNorm and
/// SwiGLU, a heavier rotary) is counted the same, and the records say where it differs.

namespace planner {

struct ElementwiseBytes {
  double forward = 0;   ///< bytes through HBM in the forward pass (and its recompute)
  double backward = 0;  ///< bytes through HBM in the backward pass
  [[nodiscard]] double total() const noexcept { return forward + backward; }
};

/// One layer's elementwise bytes per token in eager PyTorch (the eager table above), before the
/// splits: the terms on the whole hidden state (norms, residual adds, the MoE permutation as
/// fused), split by tp only with sequence parallelism, and those on the heads or the MLP's
/// width, split by tp.
struct EagerLayerBytes {
  double forward_replicated = 0, backward_replicated = 0;
  double forward_split = 0, backward_split = 0;
};
[[nodiscard]] inline EagerLayerBytes eager_layer_bytes(const Model& m, double e) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double f = mlp_f_per_token(m);
  const double q = attention_core_width(m);
  const double kv = kv_hidden(m);
  const double permute = 2.0 * h * (moe_layer_share(m) + routed_copies_per_token(m)) * e;
  const bool grouped = m.kv_heads > 0 && m.kv_heads < m.heads;
  const bool layer_norm = m.norm == Norm::layer;
  const double norm_forward = layer_norm ? 2.0 * e : 28.0 + 4.0 * e;
  const double norm_backward = layer_norm ? 5.0 * e : 68.0 + 8.0 * e;
  EagerLayerBytes b;
  b.forward_replicated = 2.0 * norm_forward * h + 2.0 * 3.0 * e * h + permute;
  b.backward_replicated = 2.0 * norm_backward * h + 2.0 * 3.0 * e * h + permute;
  const double rotary = m.position == Position::rotary ? (16.0 + 2.0 * e) * (q + kv) : 0.0;
  const double repeat = grouped ? 2.0 * e * (q + kv) : 0.0;
  b.forward_split = rotary + repeat + 2.0 * e * q + (m.gated_mlp ? 5.0 : 2.0) * e * f;
  b.backward_split = rotary + repeat + (m.gated_mlp ? 9.0 : 3.0) * e * f;
  return b;
}

/// HBM bytes of the memory-bound operations of one micro-batch on one GPU of the largest
/// stage (the table above).
[[nodiscard]] inline ElementwiseBytes elementwise_bytes(const Model& m, const Plan& p) noexcept {
  const double tokens = static_cast<double>(m.seq_len) / static_cast<double>(p.cp) *
                        static_cast<double>(p.micro_batch);
  const double tp = static_cast<double>(p.tp);
  const double sp_split = p.sequence_parallel ? tp : 1.0;
  const double h = static_cast<double>(m.hidden);
  const double f = mlp_f_per_token(m);
  const double k = routed_copies_per_token(m);
  // The permutation's "1 +" (the token itself, read on the way out, written on the way back)
  // counts on MoE layers only, as k does (both averaged over the layers).
  const double moe_share = moe_layer_share(m);
  const double act = bytes_of(m.precision.activations);
  const double layers = static_cast<double>(stage_layers(m, p));

  const double fwd_replicated = 4.0 * h + 6.0 * h + 2.0 * h * (moe_share + k);
  const double bwd_replicated = 6.0 * h + 4.0 * h + 2.0 * h * (moe_share + k);
  const double fwd_f = m.gated_mlp ? 3.0 * f : 2.0 * f;
  const double bwd_f = m.gated_mlp ? 5.0 * f : 3.0 * f;
  double fwd = 0, bwd = 0;
  if (p.eager_elementwise) {
    const EagerLayerBytes eager = eager_layer_bytes(m, act);
    fwd = eager.forward_replicated / sp_split + eager.forward_split / tp;
    bwd = eager.backward_replicated / sp_split + eager.backward_split / tp;
  } else {
    fwd = act * (fwd_replicated / sp_split + fwd_f / tp);
    bwd = act * (bwd_replicated / sp_split + bwd_f / tp);
  }
  if (m.precision.compute == Dtype::fp8) {
    constexpr double cast_bytes = 4.0;  // read 2 B, write FP8 and its transpose
    const double gemm_out_f = m.gated_mlp ? 2.0 * f : f;
    fwd += cast_bytes * (attention_core_width(m) + f) / tp;
    bwd += cast_bytes * ((h + 2.0 * kv_hidden(m) + gemm_out_f) / tp + 2.0 * h / sp_split);
  }
  // Full and op-level recompute run the layer's memory-bound operations forward again.
  if (p.recompute == Recompute::full || p.recompute == Recompute::op) fwd *= 2.0;
  ElementwiseBytes b{fwd * tokens * layers, bwd * tokens * layers};

  constexpr double loss_bytes_per_logit = 28.0;
  const double heads = 1.0 + static_cast<double>(m.mtp_layers);
  const double loss = loss_bytes_per_logit * heads * static_cast<double>(m.vocab) / tp * tokens;
  b.forward += loss * 5.0 / 7.0;  // the cast's read and write, max, subtract-exp, sum
  b.backward += loss * 2.0 / 7.0;
  return b;
}

}  // namespace planner

#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/base/dtype.hpp"
#include "planner/inputs/moe.hpp"

/// The transformer being trained or served, as shape numbers plus an optional parameter
/// count. Derivations are in docs/model.md §1.

namespace planner {

/// Parameter counts derived from a model's shape, computed once per evaluation context
/// (with_counts below; io/context.cpp) instead of on every one of the search's evaluations.
/// `ready` false: not computed, and every count function derives its figure from the shape.
/// None depends on seq_len, the one model field the thresholds vary on a prepared context.
struct ParamCounts {
  bool ready = false;
  double total = 0;
  double active = 0;
  double layer = 0;
  double active_layer = 0;
  double routed_experts = 0;
  std::int64_t moe_layers = 0;  ///< moe_layer_count, two integer divisions per call
};

/// The normalization each block applies twice (before attention, before the MLP). It moves
/// the same bytes in fused kernels; in eager PyTorch RMSNorm written as tensor operations
/// (Meta's Llama, torchtitan) runs several kernels where F.layer_norm runs one
/// (model/elementwise.hpp).
enum class Norm { rms, layer };

/// How positions enter the model: rotary embeddings on Q and K inside every layer (Llama), or
/// outside the layers' elementwise work (a learned table added once, ALiBi's bias inside the
/// attention kernel, none). Eager PyTorch runs the rotary product as kernels of its own
/// (model/elementwise.hpp).
enum class Position { rotary, learned, alibi, none };

/// Which linear layers carry a bias: none (Llama, Mistral, Mixtral, DeepSeek), only the Q, K
/// and V projections (Qwen2), or all of them (GPT-2 and GPT-3). The planner's counts leave
/// biases out (h per matrix, under 0.01 % of a layer's h² terms; docs/model.md §1); the field
/// exists so that an export builds the model that was timed (docs/exports.md).
enum class LinearBias { none, qkv, all };

struct Model {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  ///< GQA/MQA groups; equals heads for multi-head attention
  std::int64_t ffn_hidden = 0;
  bool gated_mlp = false;  ///< SwiGLU-style MLP: three h×f matrices instead of two
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  /// Dropout on the residual branches and the attention probabilities, whose masks the
  /// backward keeps (Korthikanti et al. 2022 §4.1). false for models trained without it
  /// (Llama: hidden and attention dropout 0; PyTorch's dropout returns its input unmasked at
  /// p = 0, aten/src/ATen/native/Dropout.cpp), whose layers keep no masks.
  bool dropout = true;
  Norm norm = Norm::rms;
  Position position = Position::rotary;
  LinearBias linear_bias = LinearBias::none;
  std::int64_t seq_len = 0;
  double params = 0;  ///< total parameters; 0 = derive from the shape
  Precision precision;  ///< the formats the job stores and computes the model in
  std::int64_t head_dim = 0;  ///< attention head width; 0 = hidden / heads
  Moe moe;  ///< routed experts (docs/moe.md §1); experts = 0 for a dense model
  Mla mla;  ///< multi-head latent attention (docs/moe.md §2); kv_lora_rank = 0 when absent
  /// Multi-token-prediction modules (DeepSeek-AI 2024, arXiv 2412.19437, §2.2; Megatron-LM
  /// --mtp-num-layers): each one more transformer block, trained, after the main layers.
  std::int64_t mtp_layers = 0;
  /// Derived, not read from the scenario: stale if a shape field changes after with_counts.
  ParamCounts counts;
};

[[nodiscard]] inline bool is_moe(const Model& m) noexcept { return m.moe.experts > 0; }
[[nodiscard]] inline bool is_mla(const Model& m) noexcept { return m.mla.kv_lora_rank > 0; }

/// Transformer blocks a training step runs: the main layers and one per multi-token-
/// prediction module (docs/moe.md §8). Equal to `layers` without MTP.
[[nodiscard]] inline std::int64_t blocks(const Model& m) noexcept {
  return m.layers + m.mtp_layers;
}

/// Parameters of the MTP modules beyond their blocks: each has a projection of the
/// concatenated [h; embedding] to h, 2h² (M_k ∈ R^{d×2d}, arXiv 2412.19437 Eq. 21), and three
/// norms (the two inputs' and its output's, Megatron-LM multi_token_prediction.py enorm,
/// hnorm, final_layernorm; 2h each as this file counts norms). The embedding and output head
/// are the main model's, shared (§2.2).
[[nodiscard]] inline double mtp_extra_params(const Model& m) noexcept {
  const double h = static_cast<double>(m.hidden);
  return static_cast<double>(m.mtp_layers) * (2.0 * h * h + 6.0 * h);
}

/// Width of one attention head: the given head_dim, else h / a.
[[nodiscard]] inline double head_dim(const Model& m) noexcept {
  if (m.head_dim > 0) return static_cast<double>(m.head_dim);
  return static_cast<double>(m.hidden) / static_cast<double>(m.heads);
}

/// Width of the K (or V) projection output: kv_heads · head_dim (= h for MHA).
[[nodiscard]] inline double kv_hidden(const Model& m) noexcept {
  return static_cast<double>(m.kv_heads) * head_dim(m);
}

/// Input (and, untied, output) embedding parameters: V·h each (Megatron-LM
/// theoretical_memory_usage.py; Narayanan et al. 2021 Eq. for P counts V·h once, tied).
[[nodiscard]] inline double embedding_params(const Model& m) noexcept {
  const double one = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
  return m.tied_embeddings ? one : 2.0 * one;
}

/// Attention parameters of one layer. Standard: Q and O 2·h·(a·d_head) (2h² when
/// d_head = h/a), K and V 2·h·h_kv. MLA: Megatron-LM theoretical_memory_usage.py
/// (`multi_latent_attention` branch): q_lora·(h + a·(d_nope + d_rope) + 1) (1 = its RMSNorm),
/// kv_lora·(h + a·(d_nope + d_v) + 1), h·d_rope (the shared RoPE key), a·d_v·h (output).
[[nodiscard]] inline double attention_layer_params(const Model& m) noexcept {
  const double h = static_cast<double>(m.hidden);
  if (is_mla(m)) {
    const double a = static_cast<double>(m.heads);
    const double qk = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    const double rope = static_cast<double>(m.mla.qk_rope_head_dim);
    const double v = static_cast<double>(m.mla.v_head_dim);
    const double q_lora = static_cast<double>(m.mla.q_lora_rank);
    const double q = q_lora > 0 ? q_lora * (h + a * qk + 1.0) : h * a * qk;
    const double kv = static_cast<double>(m.mla.kv_lora_rank) *
                      (h + a * (static_cast<double>(m.mla.qk_nope_head_dim) + v) + 1.0);
    return q + kv + h * rope + a * v * h;
  }
  if (m.head_dim <= 0) return 2.0 * h * h + 2.0 * h * kv_hidden(m);
  return 2.0 * h * static_cast<double>(m.heads) * head_dim(m) + 2.0 * h * kv_hidden(m);
}

/// Parameters of one dense transformer layer derived from the shape:
/// attention (2h² + 2·h·h_kv for MHA/GQA), MLP: (3 if gated else 2)·h·f, two norms: 4·h.
/// Megatron-LM theoretical_memory_usage.py P_T = 2Lh²[(1+g/a) + (f/h)(1.5 if SwiGLU) + 2/h]
/// (linear biases ignored as there), which this is, divided by L.
[[nodiscard]] inline double derived_layer_params(const Model& m) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double attention = attention_layer_params(m);
  const double mlp = (m.gated_mlp ? 3.0 : 2.0) * h * f;
  return attention + mlp + 4.0 * h;
}

/// Layers whose MLP is a mixture of experts: layer i (from 0) when i ≥ first_dense_layers
/// and i % layer_freq == 0 (Hugging Face DeepSeek-V3 modeling: `layer_idx >=
/// first_k_dense_replace and layer_idx % moe_layer_freq == 0`); MTP blocks continue the
/// numbering (DeepSeek-V3's MTP block is layer 61, an MoE layer). Counted in closed form, the
/// multiples of layer_freq in [first_dense_layers, blocks): ⌈b/k⌉ − ⌈a/k⌉ for 0 ≤ a ≤ b; a loop
/// over the layers, run by every evaluation through the per-layer MoE averages, was 58 % of an
/// MoE search's time (perf on deepseek-v3-h800, docs/performance.md).
[[nodiscard]] inline std::int64_t moe_layer_count(const Model& m) noexcept {
  if (!is_moe(m) || m.moe.layer_freq < 1) return 0;
  if (m.counts.ready) return m.counts.moe_layers;
  const std::int64_t k = m.moe.layer_freq;
  const std::int64_t b = blocks(m);
  const std::int64_t a = std::min(std::max<std::int64_t>(m.moe.first_dense_layers, 0), b);
  return (b + k - 1) / k - (a + k - 1) / k;
}

/// One routed (or shared) expert: an MLP of width expert_ffn_hidden, (3 if gated else 2)·h·f_e.
[[nodiscard]] inline double expert_params(const Model& m) noexcept {
  return (m.gated_mlp ? 3.0 : 2.0) * static_cast<double>(m.hidden) *
         static_cast<double>(m.moe.expert_ffn_hidden);
}

/// One MoE layer with `experts` of its routed experts counted: attention, those experts, the
/// shared experts, the router h·E and two norms 4h (Megatron-LM theoretical_memory_usage.py
/// num_parameters_in_transformer_layer_moe / num_active_parameters_in_transformer_layer_moe).
[[nodiscard]] inline double moe_layer_params(const Model& m, double experts) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double router = h * static_cast<double>(m.moe.experts);
  return attention_layer_params(m) +
         (experts + static_cast<double>(m.moe.shared_experts)) * expert_params(m) + router +
         4.0 * h;
}

/// Routed-expert parameters of the whole model (the part expert parallelism splits).
[[nodiscard]] inline double routed_expert_params(const Model& m) noexcept {
  if (m.counts.ready) return m.counts.routed_experts;
  return static_cast<double>(moe_layer_count(m)) * static_cast<double>(m.moe.experts) *
         expert_params(m);
}

/// Total parameters: the given count, else the layers + embeddings + final norm (2h); an MoE
/// layer counts all its experts (what memory holds).
[[nodiscard]] inline double total_params(const Model& m) noexcept {
  if (m.counts.ready) return m.counts.total;
  if (m.params > 0) return m.params;
  if (is_moe(m)) {
    const double moe_layers = static_cast<double>(moe_layer_count(m));
    const double dense_layers = static_cast<double>(blocks(m)) - moe_layers;
    return dense_layers * derived_layer_params(m) +
           moe_layers * moe_layer_params(m, static_cast<double>(m.moe.experts)) +
           embedding_params(m) + 2.0 * static_cast<double>(m.hidden) + mtp_extra_params(m);
  }
  return static_cast<double>(blocks(m)) * derived_layer_params(m) + embedding_params(m) +
         2.0 * static_cast<double>(m.hidden) + mtp_extra_params(m);
}

/// Parameters one token uses: the total less the routed experts it is not sent to,
/// (E − k) per MoE layer (what FLOPs count). Equal to the total for a dense model.
[[nodiscard]] inline double active_params(const Model& m) noexcept {
  if (m.counts.ready) return m.counts.active;
  if (!is_moe(m)) return total_params(m);
  const double idle = static_cast<double>(m.moe.experts - m.moe.top_k);
  return total_params(m) - static_cast<double>(moe_layer_count(m)) * idle * expert_params(m);
}

/// Parameters of one layer. When the total is given, or the model is MoE, the non-embedding
/// remainder is spread evenly over the layers, so per-GPU shares sum back to the total.
[[nodiscard]] inline double layer_params(const Model& m) noexcept {
  if (m.counts.ready) return m.counts.layer;
  if (m.params <= 0 && !is_moe(m)) return derived_layer_params(m);
  const double rest = total_params(m) - embedding_params(m);
  return rest / static_cast<double>(blocks(m));
}

/// Parameters of one layer a token passes through: layer_params less, on average, the routed
/// experts it is not sent to. Equal to layer_params for a dense model.
[[nodiscard]] inline double active_layer_params(const Model& m) noexcept {
  if (m.counts.ready) return m.counts.active_layer;
  if (!is_moe(m)) return layer_params(m);
  return layer_params(m) - (total_params(m) - active_params(m)) / static_cast<double>(blocks(m));
}

/// Width of the attention core's s² products: QKᵀ and scores·V each cost 2·s²·(this) FLOPs
/// per sequence forward. h for standard attention with d_head = h/a; a·d_head otherwise;
/// MLA: a·(d_nope + d_rope + d_v)/2, the mean of the query/key and value head widths.
[[nodiscard]] inline double attention_core_width(const Model& m) noexcept {
  const double a = static_cast<double>(m.heads);
  if (is_mla(m)) {
    return a * static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim +
                                   m.mla.v_head_dim) / 2.0;
  }
  if (m.head_dim <= 0) return static_cast<double>(m.hidden);
  return a * head_dim(m);
}

/// `m` with its parameter counts computed once: the count functions above then return them
/// unchanged, since they are the same functions of the same shape.
[[nodiscard]] inline Model with_counts(Model m) noexcept {
  m.counts = ParamCounts{};
  ParamCounts k;
  k.total = total_params(m);
  k.active = active_params(m);
  k.layer = layer_params(m);
  k.active_layer = active_layer_params(m);
  k.routed_experts = routed_expert_params(m);
  k.moe_layers = moe_layer_count(m);
  k.ready = true;
  m.counts = k;
  return m;
}

}  // namespace planner

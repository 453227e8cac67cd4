#pragma once
#include <cstdint>

/// Mixture-of-experts and multi-head latent attention shapes (docs/moe.md). Both are optional
/// parts of a Model: `experts == 0` is a dense model, `kv_lora_rank == 0` standard attention.

namespace planner {

/// Routed experts replacing the MLP of some layers (Shazeer et al. 2017; Fedus et al. 2022;
/// names as Megatron-LM's --num-experts, --moe-router-topk, --moe-ffn-hidden-size,
/// --moe-shared-expert-intermediate-size, and Hugging Face DeepSeek-V3's first_k_dense_replace,
/// moe_layer_freq).
struct Moe {
  std::int64_t experts = 0;            ///< routed experts per MoE layer; 0 = dense model
  std::int64_t top_k = 0;              ///< experts each token is routed to
  std::int64_t expert_ffn_hidden = 0;  ///< one expert's MLP width
  std::int64_t shared_experts = 0;     ///< always-active experts of the same width
  std::int64_t layer_freq = 1;         ///< layer i ≥ first_dense_layers is MoE when i % freq == 0
  std::int64_t first_dense_layers = 0; ///< the first n layers keep the dense MLP
  double capacity_factor = 0;          ///< tokens an expert takes, × the mean; 0 = dropless
  double imbalance = 1.0;              ///< routed load of the busiest expert rank ÷ the mean
  /// The framework overlaps each micro-batch's token all-to-all with another micro-batch's
  /// compute (DeepSeek-V3's DualPipe; Megatron-LM's overlap_moe_expert_parallel_comm).
  bool overlap_all_to_all = false;
  /// The framework runs the shared experts beside the token all-to-alls on a second stream
  /// (Megatron-LM --moe-shared-expert-overlap: the shared fc1 during the dispatch, fc2
  /// during the combine; moe/token_dispatcher.py, moe/shared_experts.py).
  bool shared_expert_overlap = false;
};

/// Multi-head latent attention (DeepSeek-AI 2024, arXiv 2405.04434, §2.1): queries and keys/
/// values go through low-rank latents; the cache keeps the kv latent and one shared RoPE key.
struct Mla {
  std::int64_t q_lora_rank = 0;       ///< 0 = queries projected directly from h
  std::int64_t kv_lora_rank = 0;      ///< d_c; 0 = not MLA
  std::int64_t qk_rope_head_dim = 0;  ///< d_h^R, the decoupled RoPE part of a query/key head
  std::int64_t qk_nope_head_dim = 0;  ///< d_h, the compressed part of a query/key head
  std::int64_t v_head_dim = 0;        ///< value head width
};

}  // namespace planner

#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"

/// Per-rank quantities of a mixture-of-experts model that do not depend on the network
/// (docs/moe.md §3–§4): the expert-data-parallel group, the routed load, the MLP activations.

namespace planner {

/// Ranks holding the same experts: tp·dp·cp / (etp·ep), dp·cp / ep when etp = tp (Megatron-
/// LM parallel_state.py: expert_data_parallel_size = world / (etp·ep·pp)). ZeRO shards
/// expert state over them.
[[nodiscard]] inline std::int64_t expert_data_parallel_ranks(const Plan& p) noexcept {
  return p.tp * p.dp * p.cp / (expert_tp(p) * p.ep);
}

/// Tokens the busiest expert rank processes ÷ the mean: the routing imbalance, capped by the
/// capacity factor when tokens beyond it are dropped (Fedus et al. 2022, arXiv 2101.03961,
/// "expert capacity" = capacity factor × tokens / experts). Dropless routing (capacity
/// factor 0) takes the whole imbalance.
[[nodiscard]] inline double expert_load_factor(const Model& m) noexcept {
  if (m.moe.capacity_factor > 0) return std::min(m.moe.imbalance, m.moe.capacity_factor);
  return m.moe.imbalance;
}

/// The share of the blocks that are MoE layers (0 for a dense model): what a per-layer MoE
/// quantity is weighted by when averaged over the layers.
[[nodiscard]] inline double moe_layer_share(const Model& m) noexcept {
  if (!is_moe(m)) return 0;
  return static_cast<double>(moe_layer_count(m)) / static_cast<double>(blocks(m));
}

/// Elements per token of one f-wide MLP tensor, averaged over the layers: f for a dense
/// layer; for an MoE layer f_e for each of the top-k copies of a token (times the load of the
/// busiest rank, expert_load_factor) and for each shared expert.
[[nodiscard]] inline double mlp_f_per_token(const Model& m) noexcept {
  const double dense = static_cast<double>(m.ffn_hidden);
  if (!is_moe(m)) return dense;
  const double copies = static_cast<double>(m.moe.top_k) * expert_load_factor(m);
  const double moe = static_cast<double>(m.moe.expert_ffn_hidden) *
                     (copies + static_cast<double>(m.moe.shared_experts));
  const double share = moe_layer_share(m);
  return dense * (1.0 - share) + moe * share;
}

/// Routed copies of a token per layer, averaged over the layers: top-k times the busiest
/// rank's load on an MoE layer, none on a dense one.
[[nodiscard]] inline double routed_copies_per_token(const Model& m) noexcept {
  if (!is_moe(m)) return 0;
  const double copies = static_cast<double>(m.moe.top_k) * expert_load_factor(m);
  return copies * moe_layer_share(m);
}

/// Bytes per token of one layer's MLP tensors for 2-byte activations, `per_f` bytes per
/// element of its f-wide tensors (mlp_f_per_token), plus, for MoE, the permuted input copy,
/// 2·h bytes per routed copy (Megatron-LM's token dispatcher keeps it for the expert GEMM's
/// backward). Averaged over the layers.
[[nodiscard]] inline double mlp_width_per_token(const Model& m, double per_f) noexcept {
  return per_f * mlp_f_per_token(m) +
         2.0 * static_cast<double>(m.hidden) * routed_copies_per_token(m);
}

/// Activation bytes per token of one layer's MLP, split by tp: the c·f tensors (c = 4, or 6
/// gated; activations.hpp) and, for MoE, the routed copies (mlp_width_per_token).
[[nodiscard]] inline double mlp_activation_width(const Model& m) noexcept {
  return mlp_width_per_token(m, m.gated_mlp ? 6.0 : 4.0);
}

/// Of mlp_activation_width, the bytes per token that are GEMM inputs kept for the weight
/// gradient: the second MLP GEMM's input, 2·f (2·f_e per routed copy and shared expert), and
/// the permuted input copy of each routed token (2·h, the expert's first GEMM input). FP8
/// training stores these in FP8 (activations.hpp).
[[nodiscard]] inline double mlp_gemm_input_width(const Model& m) noexcept {
  return mlp_width_per_token(m, 2.0);
}

/// Router logits per token per layer, averaged over the layers: E fp32 scores (4·E bytes),
/// kept for the softmax's backward; not split by tp.
[[nodiscard]] inline double router_activation_bytes_per_token(const Model& m) noexcept {
  if (!is_moe(m)) return 0;
  return 4.0 * static_cast<double>(m.moe.experts) * moe_layer_share(m);
}

}  // namespace planner

#pragma once
#include <cstdint>

#include "planner/base/dtype.hpp"

/// The transformer being trained or served, as shape numbers plus an optional parameter
/// count. Derivations are in docs/model.md §1.

namespace planner {

struct Model {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  ///< GQA/MQA groups; equals heads for multi-head attention
  std::int64_t ffn_hidden = 0;
  bool gated_mlp = false;  ///< SwiGLU-style MLP: three h×f matrices instead of two
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  std::int64_t seq_len = 0;
  double params = 0;  ///< total parameters; 0 = derive from the shape
  Precision precision;  ///< the formats the job stores and computes the model in
};

/// Width of one attention head (h / a).
[[nodiscard]] inline double head_dim(const Model& m) noexcept {
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

/// Parameters of one transformer layer derived from the shape:
/// Q and O: 2·h², K and V: 2·h·h_kv, MLP: (3 if gated else 2)·h·f, two norms: 4·h.
/// Megatron-LM theoretical_memory_usage.py P_T = 2Lh²[(1+g/a) + (f/h)(1.5 if SwiGLU) + 2/h]
/// (linear biases ignored as there), which this is, divided by L.
[[nodiscard]] inline double derived_layer_params(const Model& m) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double attention = 2.0 * h * h + 2.0 * h * kv_hidden(m);
  const double mlp = (m.gated_mlp ? 3.0 : 2.0) * h * f;
  return attention + mlp + 4.0 * h;
}

/// Total parameters: the given count, else L·layer + embeddings + final norm (2h).
[[nodiscard]] inline double total_params(const Model& m) noexcept {
  if (m.params > 0) return m.params;
  return static_cast<double>(m.layers) * derived_layer_params(m) + embedding_params(m) +
         2.0 * static_cast<double>(m.hidden);
}

/// Parameters of one layer. When the total is given, the non-embedding remainder is spread
/// evenly over the layers, so per-GPU shares always sum back to the given total.
[[nodiscard]] inline double layer_params(const Model& m) noexcept {
  if (m.params <= 0) return derived_layer_params(m);
  const double rest = m.params - embedding_params(m);
  return rest / static_cast<double>(m.layers);
}

}  // namespace planner

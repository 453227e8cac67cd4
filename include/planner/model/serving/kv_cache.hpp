#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/activations.hpp"

/// The KV cache of a serving engine (docs/model.md §8.3): bytes per cached token on one GPU,
/// and the tokens a sequence reserves under paged allocation.

namespace planner {

/// KV heads one tp rank holds. Up to the model's KV heads, tp splits them (Pope et al. 2022,
/// arXiv 2211.05102, §3.1: a head's cache lives with its attention). Past them, `replicate`
/// keeps one head per rank (vLLM and TensorRT-LLM copy the KV heads when tp > kv_heads), and
/// `batch` splits the requests over the ranks instead (SGLang's data-parallel attention), so
/// each rank holds kv_heads / tp of a head's worth of every token on average.
[[nodiscard]] inline double kv_heads_per_rank(const Model& m, std::int64_t tp,
                                              KvSharding sharding) noexcept {
  const double share = static_cast<double>(m.kv_heads) / static_cast<double>(tp);
  return sharding == KvSharding::batch ? share : std::max(1.0, share);
}

/// K and V for every layer of the stage: 2 · ⌈L/p⌉ · KV heads on the rank · head_dim · the
/// cache dtype's bytes (fp8: 1), per cached token. MLA caches the kv latent and the shared
/// RoPE key instead, (d_c + d_R) elements per layer (DeepSeek-AI 2024, arXiv 2405.04434,
/// Table 1), whole on every tp rank (one latent serves all heads), split by tp only when the
/// requests are (`batch`).
[[nodiscard]] inline double kv_bytes_per_token(const Model& m, const Plan& p,
                                               KvSharding sharding) noexcept {
  if (is_mla(m)) {
    const double latent = static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
    const double split = sharding == KvSharding::batch ? static_cast<double>(p.tp) : 1.0;
    return static_cast<double>(stage_layers(m, p)) * latent * bytes_of(m.precision.kv_cache) /
           split;
  }
  return 2.0 * static_cast<double>(stage_layers(m, p)) * kv_heads_per_rank(m, p.tp, sharding) *
         head_dim(m) * bytes_of(m.precision.kv_cache);
}

/// Tokens one sequence reserves: the context rounded up to whole blocks of the paged cache
/// (Kwon et al. 2023, vLLM, arXiv 2309.06180, §4.1: blocks of 16 tokens by default; the last
/// block of a sequence is partly empty).
[[nodiscard]] inline std::int64_t reserved_tokens(const Serving& w) noexcept {
  const std::int64_t block = std::max<std::int64_t>(1, w.kv_block_tokens);
  return (w.context_tokens + block - 1) / block * block;
}

}  // namespace planner

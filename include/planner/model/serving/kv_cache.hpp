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

/// Times a decode step reads each cached K and V element on a rank (docs/model.md §8.2). A
/// grouped kernel loads a KV head once for all the query heads that share it: 1. A kernel with
/// one thread block per query head (TensorRT-LLM's masked multi-head attention before its XQA
/// kernel, whose blog credits XQA with 2.4x Llama-70B decode throughput by "reducing data
/// loading", docs/source/blogs/XQA-kernel.md; vLLM's PagedAttention v1/v2 kernel, grid over
/// query heads) loads it once per query head on the rank: heads / kv_heads while tp splits
/// both, heads / tp once each rank keeps a single copied KV head. L2 reuse between those
/// blocks is not credited. MLA's latent serves every head from one load in either kernel.
[[nodiscard]] inline double kv_reads_per_element(const Model& m, const Plan& p,
                                                 DecodeAttention kernel) noexcept {
  if (kernel == DecodeAttention::grouped || is_mla(m) || m.kv_heads <= 0) return 1.0;
  const double heads = static_cast<double>(m.heads);
  const double per_rank = std::min(heads / static_cast<double>(m.kv_heads),
                                   heads / static_cast<double>(p.tp));
  return std::max(1.0, per_rank);
}

/// `tokens` rounded up to whole blocks of the paged cache (Kwon et al. 2023, vLLM, arXiv
/// 2309.06180, §4.1: blocks of 16 tokens by default; the last block of a sequence is partly
/// empty).
[[nodiscard]] inline std::int64_t block_rounded_tokens(const Serving& w,
                                                       std::int64_t tokens) noexcept {
  const std::int64_t block = std::max<std::int64_t>(1, w.kv_block_tokens);
  return (tokens + block - 1) / block * block;
}

/// Tokens one sequence reserves for its whole context (block_rounded_tokens).
[[nodiscard]] inline std::int64_t reserved_tokens(const Serving& w) noexcept {
  return block_rounded_tokens(w, w.context_tokens);
}

}  // namespace planner

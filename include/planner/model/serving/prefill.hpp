#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/gemm_rows.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/serving/expert_serving.hpp"
#include "planner/model/serving/kv_cache.hpp"

/// Prefill: the forward pass over a request's prompt that fills its KV cache and yields its
/// first token (docs/model.md §8.1). Figures are per GPU of the largest pipeline stage.

namespace planner {

/// Parameters a token passes through in GEMMs on the largest stage: its layers (the active
/// ones of an MoE model, inputs/model.hpp), plus the output layer (V·h) that the last stage
/// runs for the logits.
[[nodiscard]] inline double stage_layer_params(const Model& m, const Plan& p) noexcept {
  return static_cast<double>(stage_layers(m, p)) * active_layer_params(m);
}

/// FLOPs of one prefill chunk covering prompt positions [begin, end) on one GPU:
/// - GEMMs: 2 FLOPs per parameter per token (Kaplan et al. 2020 §2.1, forward 2N), the
///   stage's layers for every token and the output layer (2·V·h) once, for the last token's
///   logits (engines compute logits only for the positions they sample);
/// - attention: QKᵀ and attention·V, 2·h FLOPs each per (query, key) pair; causal, so the
///   query at position i sees i keys: 4·h·Σ i = 2·h·(end·(end+1) − begin·(begin+1)) per layer
///   (FlashAttention-2, Dao 2023, arXiv 2307.08691, §3.1.1, skips the masked blocks).
/// Both split over tp.
struct PrefillChunkFlops {
  double gemm = 0;
  double logits = 0;  ///< of gemm, the output layer's: one row per prompt
  double attention = 0;
  [[nodiscard]] double total() const noexcept { return gemm + attention; }
};

[[nodiscard]] inline PrefillChunkFlops prefill_chunk_flops(const Model& m, const Plan& p,
                                                           std::int64_t begin, std::int64_t end,
                                                           bool last_chunk) noexcept {
  const double tp = static_cast<double>(p.tp);
  const double h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(end - begin);
  const double b = static_cast<double>(begin);
  const double e = static_cast<double>(end);
  PrefillChunkFlops f;
  f.gemm = 2.0 * stage_layer_params(m, p) * tokens / tp;
  if (last_chunk) f.logits = 2.0 * static_cast<double>(m.vocab) * h / tp;
  f.gemm += f.logits;
  f.attention = 2.0 * h * (e * (e + 1.0) - b * (b + 1.0)) *
                static_cast<double>(stage_layers(m, p)) / tp;
  return f;
}

struct PrefillTime {
  /// Tokens the prefill forward runs: the prompt, less its last token when the first token
  /// comes from a decode step (prefilled_tokens); zero then for a one-token prompt.
  std::int64_t prompt_tokens = 0;
  std::int64_t chunks = 0;
  double flops = 0;              ///< per GPU of the largest stage, all chunks
  /// FLOPs at the compute dtype's effective rate, the GEMMs at their rows' share (gemm_rows.hpp)
  double compute_seconds = 0;
  double memory_seconds = 0;     ///< weight and KV re-reads, one per chunk
  double kv_seconds = 0;         ///< of memory_seconds, the prompts' cache re-reads
  double gemm_seconds = 0;       ///< of compute_seconds, the GEMMs' (the rest is attention's)
  double fixed_seconds = 0;      ///< each layer's kernel floors, once per chunk
  double tp_seconds = 0;         ///< two all-reduces of chunk·h per layer per chunk
  double ep_seconds = 0;         ///< MoE under ep: dispatch and combine per MoE layer per chunk
  double stage_seconds = 0;      ///< one stage's busy time for the whole prompt
  double pp_seconds = 0;         ///< pipeline fill and stage sends
  double seconds = 0;            ///< prompt in, first token out, no queueing
};

/// One prompt through a tp × pp engine. Each chunk takes, on a stage, its GEMMs' max(weight
/// read, FLOPs) and its attention's max(cache re-read, FLOPs), plus its tp all-reduces (Pope
/// et al. 2022 §3: prefill is compute-bound once a chunk holds enough tokens, decode is
/// memory-bound); chunked prefill splits the prompt into pieces of
/// `prefill_chunk_tokens` (Agrawal et al. 2024, Sarathi-Serve, arXiv 2403.02310, §4.1),
/// each re-reading the stage's weights and the prompt's cache so far. Under `first_token:
/// decode_step` the forward runs the prompt but its last token (workload.hpp FirstToken).
/// Chunks flow through the stages as a pipeline: the prompt takes the stages' busy time plus
/// (pp − 1) times the longest chunk and a send per boundary to fill it (Narayanan et al. 2021
/// §2.2). Under ep each chunk's tokens cross the stage's MoE layers by all-to-all
/// (expert_serving.hpp). `prompts` equal prompts prefilled together in one forward (a lockstep
/// round, §8.4) share each chunk's weight read and fixed costs; their FLOPs, cache and
/// messages add up.
[[nodiscard]] inline PrefillTime prefill_time(const Model& m, const Cluster& c, const Serving& w,
                                              const Plan& p, double weights_bytes,
                                              double flops_per_second,
                                              double prompts = 1) noexcept {
  PrefillTime t;
  t.prompt_tokens = prefilled_tokens(w);
  if (t.prompt_tokens <= 0) return t;  // the whole prompt goes through a decode step
  const std::int64_t chunk = w.prefill_chunk_tokens > 0 ? w.prefill_chunk_tokens : t.prompt_tokens;
  const double bandwidth =
      c.gpu.memory_bandwidth_bytes_per_second * w.memory_bandwidth_efficiency;
  const double kv_bandwidth = c.gpu.memory_bandwidth_bytes_per_second * kv_read_efficiency(w);
  const double kv_per_token = kv_bytes_per_token(m, p, w.kv_sharding);
  const double activation_bytes = bytes_of(m.precision.activations);
  const Tier* tp_tier = p.tp > 1 ? &c.tiers[axis_tier(p, c, Axis::tp)] : nullptr;
  double longest = 0;
  for (std::int64_t begin = 0; begin < t.prompt_tokens; begin += chunk) {
    const std::int64_t end = std::min(t.prompt_tokens, begin + chunk);
    const PrefillChunkFlops f = prefill_chunk_flops(m, p, begin, end, end == t.prompt_tokens);
    const double flops = prompts * f.total();
    // The layers' GEMMs have one row per prompt token, the logits' one per prompt: short
    // prompts run them below the large-GEMM rate (gemm_rows.hpp).
    const double rows = prompts * static_cast<double>(end - begin);
    const double gemm = prompts *
                        ((f.gemm - f.logits) / gemm_row_share(rows) +
                         f.logits / gemm_row_share(prompts)) /
                        flops_per_second;
    const double compute = gemm + prompts * f.attention / flops_per_second;
    const double kv = prompts * kv_per_token * static_cast<double>(end) / kv_bandwidth;
    const double weights = weights_bytes / bandwidth;
    const double memory = weights + kv;
    double tp = 0;
    if (tp_tier != nullptr) {
      const double message = prompts * static_cast<double>(end - begin) *
                             static_cast<double>(m.hidden) * activation_bytes;
      tp = 2.0 * static_cast<double>(stage_layers(m, p)) *
           cheapest_collective(Collective::all_reduce, p.tp, message, *tp_tier).seconds();
    }
    const double ep = serving_all_to_all(m, c, p, prompts * static_cast<double>(end - begin),
                                         stage_moe_layers(m, p))
                          .seconds;
    const double fixed =
        static_cast<double>(stage_layers(m, p)) * w.layer_step_seconds;  // kernel floors
    // The GEMMs and the attention kernels run one after the other, each at its own roofline
    // (decode.hpp).
    const double busy =
        std::max(weights, gemm) + std::max(kv, compute - gemm) + fixed + tp + ep;
    ++t.chunks;
    t.flops += flops;
    t.compute_seconds += compute;
    t.memory_seconds += memory;
    t.kv_seconds += kv;
    t.gemm_seconds += gemm;
    t.fixed_seconds += fixed;
    t.tp_seconds += tp;
    t.ep_seconds += ep;
    t.stage_seconds += busy;
    longest = std::max(longest, busy);
  }
  if (p.pp > 1) {
    const double stages = static_cast<double>(p.pp);
    const double message = prompts * static_cast<double>(std::min(chunk, t.prompt_tokens)) *
                           static_cast<double>(m.hidden) * activation_bytes;
    const Tier& pp_tier = c.tiers[axis_tier(p, c, Axis::pp)];
    t.pp_seconds = (stages - 1.0) *
                   (longest + cheapest_collective(Collective::point_to_point, 2, message, pp_tier)
                                  .seconds());
  }
  t.seconds = t.stage_seconds + t.pp_seconds;
  return t;
}

}  // namespace planner

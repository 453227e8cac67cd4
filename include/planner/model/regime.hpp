#pragma once
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"

/// Where the time model has been checked against published runs, and where not. An exhaustive
/// search over a model with regional bias lands where the bias is most optimistic (ZeRO-3 over
/// thousands of ranks, tp across nodes, one layer per virtual stage, context parallelism at
/// short sequences): these are the features of a training plan that drive the model's error
/// (docs/ranking.md §4, docs/validation.md §Regimes). A plan is inside the validated envelope
/// when each feature lies within what the validation runs reached; the default search
/// recommends only such plans.

namespace planner {

/// The reach of the validation records (`set: validation` in validation/), feature by feature;
/// tests/report/test_regime.cpp recomputes each limit from the records.
struct ValidatedEnvelope {
  /// The largest ZeRO-3 (FSDP) shard group of a validated run that gathers a layer's
  /// parameters at a time: 512 (llm-foundry's MPT 7B-70B FULL_SHARD runs on 512 H100, -2.3 ...
  /// +24.9 %; 128 before they were added: torchtitan Llama 3.1 8B, fms-fsdp).
  /// DeepSpeed 2021's per-tensor ZeRO-3 (up to 2,240 ranks) is another implementation, with
  /// errors of 46-104 %, and does not extend it.
  std::int64_t max_zero3_shard_ranks = 0;
  /// The deepest interleaving of a validated run: v = 20 (Llama 2 70B in NeMo 24.07's H100
  /// table: 80 layers over 4 stages, one layer per chunk, +5.7 %); GPT-3 175B on NeMo (dgxc)
  /// runs v = 12, Llama 3 405B at Meta and Grok-1 v = 8.
  std::int64_t max_virtual_stages = 0;
  /// The fewest tokens of a sequence one context-parallel rank held in a validated run: 4,096
  /// (cp 2 at 8K, the dgxc Llama 3.1 and Grok-1 recipes; Meta's cp 16 at 131K holds 8,192).
  std::int64_t min_cp_tokens_per_rank = 0;
  /// No validated run splits a tp group across the network.
  bool tp_across_network = false;
};

inline constexpr ValidatedEnvelope validated_envelope{512, 20, 4096, false};

/// The ranks one ZeRO-3 gather spans: the shard group (dp_shard · cp, or dp · cp); 0 without
/// ZeRO-3 or with DeepSpeed's per-tensor issue pattern (its own regime).
[[nodiscard]] inline std::int64_t zero3_gather_ranks(const Plan& p) noexcept {
  if (p.zero != 3 || p.zero3_collectives_per_layer > 1) return 0;
  return shard_dp(p) * p.cp;
}

/// The first feature of the plan's degrees and settings outside `e` (none when inside): the
/// checks that do not depend on the rank order. The report words it (report/accuracy.hpp
/// outside_envelope_reason).
enum class EnvelopeFeature { none, zero3_shard_group, interleaving_depth, cp_split };

[[nodiscard]] inline EnvelopeFeature outside_envelope_config(const ValidatedEnvelope& e,
                                                             const Plan& p,
                                                             std::int64_t seq_len) noexcept {
  if (zero3_gather_ranks(p) > e.max_zero3_shard_ranks) return EnvelopeFeature::zero3_shard_group;
  if (p.pp > 1 && p.virtual_stages > e.max_virtual_stages) {
    return EnvelopeFeature::interleaving_depth;
  }
  if (p.cp > 1 && seq_len / p.cp < e.min_cp_tokens_per_rank) return EnvelopeFeature::cp_split;
  return EnvelopeFeature::none;
}

/// True when the plan's tp group crosses the network where `e` has no such run.
[[nodiscard]] inline bool tp_outside_envelope(const ValidatedEnvelope& e, const Plan& p,
                                              const Cluster& c, std::size_t tp_tier) noexcept {
  return p.tp > 1 && !e.tp_across_network && tp_tier == c.network_index();
}

}  // namespace planner

#pragma once
#include <bit>
#include <cstdint>
#include <string_view>

#include "planner/inputs/constraints.hpp"
#include "planner/inputs/plan.hpp"

/// The frameworks' launch rules (docs/constraints.md cites each), and the user's bounds, as
/// predicates the search applies. A rule returns the reason a plan cannot be launched, or an
/// empty view.

namespace planner {

/// The non-trivial axes of `p`'s placement, innermost first, compared with `order`'s.
[[nodiscard]] inline bool placement_follows(const Plan& p, const Placement& order) noexcept {
  std::size_t j = 0;
  for (Axis a : p.placement) {
    if (degree(p, a) <= 1) continue;
    while (j < order.size() && (order[j] != a)) ++j;
    if (j == order.size()) return false;
    ++j;
  }
  return true;
}

/// Megatron-LM: ranks in order tp-cp-ep-dp-pp (megatron/core/parallel_state.py,
/// initialize_model_parallel's `order` default), or tp-cp-ep-pp-dp with
/// --use-tp-pp-dp-mapping, which refuses context parallelism (megatron/training/arguments.py).
inline constexpr Placement megatron_tp_pp_dp{Axis::tp, Axis::cp, Axis::pp, Axis::dp};

[[nodiscard]] inline std::string_view framework_config_violation(Framework f,
                                                                 const Plan& p) noexcept;
[[nodiscard]] inline std::string_view framework_placement_violation(Framework f,
                                                                    const Plan& p) noexcept;

/// `any`: a reason when none of the frameworks launches the plan's configuration (the ZeRO
/// stage, recompute and switches with its degrees: ZeRO-2 with cp, say, is no framework's).
[[nodiscard]] inline std::string_view any_framework_config_violation(const Plan& p) noexcept {
  for (const Framework f : launching_frameworks) {
    if (framework_config_violation(f, p).empty()) return {};
  }
  return "no supported framework launches this combination (Megatron-LM, torchtitan and "
         "DeepSpeed each refuse one of its settings)";
}

/// `any`: empty when some framework launches both the configuration and the rank order.
[[nodiscard]] inline std::string_view any_framework_placement_violation(const Plan& p) noexcept {
  for (const Framework f : launching_frameworks) {
    if (framework_config_violation(f, p).empty() && framework_placement_violation(f, p).empty()) {
      return {};
    }
  }
  return "no supported framework orders ranks so (tp innermost, then cp; docs/constraints.md)";
}

/// Why `f` cannot launch `p`'s degrees, ZeRO stage and switches; empty when it can.
[[nodiscard]] inline std::string_view framework_config_violation(Framework f,
                                                                 const Plan& p) noexcept {
  switch (f) {
    case Framework::unrestricted: return {};
    case Framework::any: return any_framework_config_violation(p);
    case Framework::megatron:
      if (p.zero > 1) return "Megatron-LM shards optimizer state only (ZeRO-1)";
      if (p.recompute == Recompute::op) return "op-level checkpointing is torchtitan's";
      return {};
    case Framework::torchtitan:
      // torchtitan v0.2.2, models/llama3/infra/parallelize.py: FSDP2 over dp_shard x cp, or
      // DDP only when it is the sole axis (fsdp_enabled: parallel_dims.py); tp always with
      // sequence parallelism; attention by SDPA or flex.
      // Under pipelining its FSDP2 keeps each stage's parameters gathered after the forward
      // (job_config.py fsdp_reshard_after_forward "default": parallelize.py reshards only
      // without pp) and PyTorch's schedules defer the gradients' reduce-scatter to the last
      // micro-batch (pipelining/stage.py): ZeRO-2 with unsharded accumulation, never ZeRO-3.
      if (p.zero == 1) return "torchtitan replicates (DDP) or fully shards (FSDP2)";
      if (p.zero == 3 && p.pp > 1) {
        return "under pipelining torchtitan's FSDP2 keeps each stage's parameters and gradients "
               "unsharded until the last micro-batch (ZeRO-2)";
      }
      if (p.zero == 2 && (p.pp == 1 || !p.unsharded_gradient_accumulation)) {
        return "torchtitan keeps FSDP2's parameters gathered only under pipelining, with the "
               "gradients accumulated unsharded";
      }
      if (p.zero == 0 && p.cp > 1) return "torchtitan fully shards (FSDP2) over cp";
      if (p.zero == 0 && p.dp > 1 && gpus(p) != p.dp) {
        return "torchtitan's DDP runs with no other axis";
      }
      if (p.tp > 1 && !p.sequence_parallel) return "torchtitan's tp always shards the sequence";
      if (!p.flash_attention) return "torchtitan's attention is always tiled (SDPA or flex)";
      if (p.tables_in_pipeline_split) {
        return "the planner's torchtitan export splits the pipeline by layers alone";
      }
      return {};
    case Framework::deepspeed:
      // DeepSpeed 0.19.6: runtime/pipe/engine.py (ZeRO < 2 with stages), AutoTP training with
      // ZeRO 0-2 and no sequence sharding (docs/_tutorials/autotp-training.md), no selective
      // recompute key (runtime/activation_checkpointing/config.py).
      if (p.cp > 1) return "DeepSpeed has no ring-attention context parallelism";
      if (p.pp > 1 && p.zero > 1) return "DeepSpeed's pipeline engine allows ZeRO-1 at most";
      if (p.tp > 1 && p.zero == 3) return "DeepSpeed's AutoTP training takes ZeRO-2 at most";
      if (p.tp > 1 && p.sequence_parallel) return "DeepSpeed's AutoTP does not shard the sequence";
      // Tiled attention recomputes its core in the backward, so "flash + selective" is the
      // search's name for flash attention without checkpointing (docs/ranking.md §1), which
      // DeepSpeed runs; selective recompute without it is not a DeepSpeed option.
      if ((p.recompute == Recompute::selective && !p.flash_attention) ||
          p.recompute == Recompute::op) {
        return "DeepSpeed recomputes whole layers only";
      }
      if (p.virtual_stages > 1) return "DeepSpeed's pipeline engine runs plain 1F1B, not interleaved";
      if (p.tables_in_pipeline_split) {
        return "DeepSpeed's pipeline engine does not count the embedding and loss as layers";
      }
      // MiCS (runtime/zero/mics.py, zero_optimization.mics_shard_size) is a stage-3 engine.
      if (state_replicas(p) > 1 && p.zero != 3) {
        return "DeepSpeed shards in groups (MiCS) at stage 3 only";
      }
      return {};
  }
  return {};
}

/// Why `f` cannot launch `p`'s rank order; empty when it can.
[[nodiscard]] inline std::string_view framework_placement_violation(Framework f,
                                                                    const Plan& p) noexcept {
  switch (f) {
    case Framework::unrestricted: return {};
    case Framework::any: return any_framework_placement_violation(p);
    case Framework::megatron:
      if (placement_follows(p, default_placement)) return {};
      if (p.cp <= 1 && placement_follows(p, megatron_tp_pp_dp)) return {};
      return "Megatron-LM orders ranks tp-cp-dp-pp (or tp-pp-dp without cp)";
    case Framework::torchtitan:
      // The device mesh ["pp", "dp_replicate", "dp_shard", "cp", "tp"], outermost first.
      if (placement_follows(p, default_placement)) return {};
      return "torchtitan's mesh orders ranks tp-cp-dp-pp";
    case Framework::deepspeed:
      // PipeModelDataParallelTopology: axes ['pipe', 'data', 'model'], the last fastest.
      if (placement_follows(p, default_placement)) return {};
      return "DeepSpeed orders ranks model-data-pipe";
  }
  return {};
}

/// The dimensions the enumeration decides at `step`, one bit per Dim.
[[nodiscard]] constexpr std::uint32_t decided_at(Decided step) noexcept {
  std::uint32_t out = 0;
  for (const SpaceDim& row : dimensions) {
    if (row.decided == step) out |= 1u << static_cast<unsigned>(row.dim);
  }
  return out;
}

/// The user's bounds on the dimensions in `dims` (bits of Dim; inputs/space.hpp): each checked
/// as soon as the enumeration knows its value, so a pinned degree prunes whole factorisations
/// and a micro-batch bound the micro-batch list.
[[nodiscard]] inline bool within(const Constraints& c, const Plan& p, std::uint32_t dims) noexcept {
  while (dims != 0) {
    const auto i = static_cast<std::size_t>(std::countr_zero(dims));
    dims &= dims - 1;
    const SpaceDim& row = dimensions[i];
    if (row.applies != nullptr && !row.applies(p)) continue;
    if (!c.holds(row.dim, row.value(p))) return false;
  }
  return true;
}

/// The user's bounds on the degrees alone (`placed_only`: the placed axes' alone, before the
/// search chooses the folded ones), of the dimensions `narrowed` names (narrowed_dims).
[[nodiscard]] inline bool within_degrees(const Constraints& c, const Plan& p,
                                         std::uint32_t narrowed,
                                         bool placed_only = false) noexcept {
  const std::uint32_t steps =
      decided_at(Decided::placed) | (placed_only ? 0u : decided_at(Decided::folded));
  return within(c, p, narrowed & steps);
}

/// The user's bounds and the framework's rules on everything but the degrees, the
/// micro-batch and the rank order: the row settings, the hybrid shard group and the
/// interleaving depth (fixed per group; the enumeration also prunes on it as it lists them).
[[nodiscard]] inline bool within_settings(const Constraints& c, const Plan& p,
                                          std::uint32_t narrowed) noexcept {
  constexpr std::uint32_t steps =
      decided_at(Decided::row) | decided_at(Decided::hybrid) | decided_at(Decided::interleave);
  if (!within(c, p, narrowed & steps)) return false;
  return framework_config_violation(c.framework, p).empty();
}

/// The same, with the narrowed dimensions found here (for a caller outside the search).
[[nodiscard]] inline bool within_settings(const Constraints& c, const Plan& p) noexcept {
  return within_settings(c, p, narrowed_dims(c));
}

}  // namespace planner

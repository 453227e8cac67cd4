#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"

/// Which plans are legal: the one list of rules the loader (a pinned plan), the CLI (`memory`
/// flags) and the search (its factorisations) apply. It returns the first rule broken as
/// facts; each caller words them (io/scenario_json.cpp, search/search.cpp).

namespace planner {

enum class ViolationKind {
  not_positive,          ///< a degree, micro_batch or grad_accum below 1
  zero_stage,            ///< ZeRO stage outside 0–3
  placement,             ///< not a permutation of the axes
  world_size,            ///< the degrees' product is not the cluster's GPU count
  tp_heads,              ///< tp does not divide the attention heads
  tp_kv_heads,           ///< tp and kv_heads do not divide one another
  sequence_parallel,     ///< sequence parallelism without tp
  pp_layers,             ///< more stages than layers
  cp_seq_len,            ///< cp does not divide the sequence
  cp_flash,              ///< ring attention without tiled attention
  serving_cp,            ///< serving: cp must be 1
  serving_zero,          ///< serving: no ZeRO
  serving_grad_accum,    ///< serving: no accumulation
  virtual_stages_pp,     ///< virtual stages without a pipeline (pp = 1)
  virtual_stages_layers, ///< pp·virtual_stages does not divide the layers
  virtual_stages_accum,  ///< interleaved: pp does not divide grad_accum (Megatron-LM's rule)
  tables_split_pp,       ///< the tables in the pipeline split without a pipeline (pp = 1)
  recompute_op_flash,    ///< op-level checkpointing without tiled attention
  recompute_op_moe,      ///< op-level checkpointing on a mixture-of-experts model
  ep_dense,              ///< ep > 1 on a model without experts
  ep_experts,            ///< ep does not divide the routed experts
  ep_dp_cp,              ///< ep does not divide dp·cp, the ranks the MoE layers fold it into
                         ///< (serving: dp, the replicas)
  etp_dense,             ///< etp set on a model without experts
  etp_tp,                ///< etp does not divide tp
  ep_etp_world,          ///< ep·etp does not divide tp·dp·cp, the MoE layers' ranks of a stage
  etp_serving,           ///< serving: etp other than tp
  dp_shard_dp,           ///< dp_shard below 0 or not dividing dp
  dp_shard_zero,         ///< hybrid sharding (dp_shard < dp) with nothing sharded (ZeRO 0)
  dp_shard_moe,          ///< hybrid sharding on a mixture-of-experts model (not modelled)
  dp_shard_serving,      ///< serving: hybrid sharding (there is no state to shard)
};

struct Violation {
  ViolationKind kind;
  std::string_view field;  ///< the plan's key ("" for the plan as a whole)
  std::int64_t value = 0;  ///< the offending value
};

/// Which rules to apply: all of them (a pinned plan), or those of the axes' degrees alone
/// (the search's factorisations, before it chooses ZeRO, recompute and the batch split).
enum class LegalityScope { plan, degrees };

/// Expert parallelism (Megatron-LM parallel_state.py, MoE parallel folding: a stage's
/// tp·cp·dp ranks regrouped as etp × ep × edp, so ep·etp divides tp·dp·cp; each ep rank holds
/// experts / ep experts, so ep divides the experts). The planner takes etp from the divisors
/// of tp (etp = tp is Megatron-LM's default, etp = 1 the common alternative); with etp = tp
/// the rule reads "ep divides dp·cp".
[[nodiscard]] inline std::optional<Violation> expert_violation(const Model& m,
                                                               const Plan& p) noexcept {
  using K = ViolationKind;
  const std::int64_t etp = expert_tp(p);
  if (p.etp < 0) return Violation{K::not_positive, "etp", p.etp};
  if (p.etp > 0 && m.moe.experts == 0 && p.etp != p.tp) {
    return Violation{K::etp_dense, "etp", p.etp};
  }
  if (p.ep == 1 && etp == p.tp) return std::nullopt;
  if (m.moe.experts == 0) return Violation{K::ep_dense, "ep", p.ep};
  if (m.moe.experts % p.ep != 0) return Violation{K::ep_experts, "ep", p.ep};
  if (p.tp % etp != 0) return Violation{K::etp_tp, "etp", p.etp};
  if (etp == p.tp) {
    if ((p.dp * p.cp) % p.ep != 0) return Violation{K::ep_dp_cp, "ep", p.ep};
  } else if ((p.tp * p.dp * p.cp) % (p.ep * etp) != 0) {
    return Violation{K::ep_etp_world, "ep", p.ep};
  }
  return std::nullopt;
}

/// The expert rules that depend on the model alone, not on the world size: ep on a dense
/// model, ep not dividing the experts, etp set on a dense model or not dividing tp.
[[nodiscard]] inline std::optional<Violation> expert_model_violation(const Model& m,
                                                                     const Plan& p) noexcept {
  using K = ViolationKind;
  const std::optional<Violation> v = expert_violation(m, p);
  if (v && (v->kind == K::ep_dense || v->kind == K::ep_experts || v->kind == K::etp_dense ||
            v->kind == K::etp_tp)) {
    return v;
  }
  return std::nullopt;
}

[[nodiscard]] inline std::optional<Violation> first_violation(const Model& m, const Cluster& c,
                                                              WorkloadKind kind, const Plan& p,
                                                              LegalityScope scope) noexcept {
  using K = ViolationKind;
  if (scope == LegalityScope::plan) {
    for (const AxisInfo& row : axes) {
      if (p.*row.degree < 1) return Violation{K::not_positive, row.name, p.*row.degree};
    }
    if (p.micro_batch < 1) return Violation{K::not_positive, "micro_batch", p.micro_batch};
    if (p.grad_accum < 1) return Violation{K::not_positive, "grad_accum", p.grad_accum};
    if (p.virtual_stages < 1) {
      return Violation{K::not_positive, "virtual_stages", p.virtual_stages};
    }
    if (p.zero < 0 || p.zero > 3) return Violation{K::zero_stage, "zero", p.zero};
    // Hybrid sharding: shard groups of dp_shard of the dp ranks, so dp_shard divides dp; it
    // shards ZeRO's state, so it needs a stage that shards some; the expert-data-parallel
    // group's split into shard groups is not modelled (docs/model.md §3).
    if (p.dp_shard < 0 || (p.dp_shard > 0 && p.dp % p.dp_shard != 0)) {
      return Violation{K::dp_shard_dp, "dp_shard", p.dp_shard};
    }
    if (state_replicas(p) > 1) {
      if (kind == WorkloadKind::serving) {
        return Violation{K::dp_shard_serving, "dp_shard", p.dp_shard};
      }
      if (p.zero == 0) return Violation{K::dp_shard_zero, "dp_shard", p.dp_shard};
      if (is_moe(m)) return Violation{K::dp_shard_moe, "dp_shard", p.dp_shard};
    }
    std::uint32_t seen = 0;
    for (const Axis a : p.placement) {
      const auto bit = static_cast<std::uint32_t>(a);
      if (bit >= placed_axis_count || (seen >> bit & 1U) != 0) {
        return Violation{K::placement, "placement", 0};
      }
      seen |= 1U << bit;
    }
    std::int64_t product = 1;
    bool overflow = false;
    for (const AxisInfo& row : axes) {
      if (row.folded) continue;
      overflow = overflow || __builtin_mul_overflow(product, p.*row.degree, &product);
    }
    if (overflow || product != world_size(c)) return Violation{K::world_size, "", product};
    if (kind == WorkloadKind::serving) {
      if (p.cp != 1) return Violation{K::serving_cp, "cp", p.cp};
      if (p.zero != 0) return Violation{K::serving_zero, "zero", p.zero};
      if (p.grad_accum != 1) return Violation{K::serving_grad_accum, "grad_accum", p.grad_accum};
      if (expert_tp(p) != p.tp) return Violation{K::etp_serving, "etp", p.etp};
    }
  }
  if (std::optional<Violation> v = expert_violation(m, p)) return v;
  if (m.heads % p.tp != 0) return Violation{K::tp_heads, "tp", p.tp};
  if (m.kv_heads > 0 && m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    return Violation{K::tp_kv_heads, "tp", p.tp};
  }
  if (scope == LegalityScope::plan && p.sequence_parallel && p.tp == 1) {
    return Violation{K::sequence_parallel, "sequence_parallel", 1};
  }
  if (p.pp > m.layers) return Violation{K::pp_layers, "pp", p.pp};
  // op-level checkpointing is torchtitan's (SDPA attention; modelled for dense layers).
  if (scope == LegalityScope::plan && p.recompute == Recompute::op) {
    if (!p.flash_attention) return Violation{K::recompute_op_flash, "recompute", 0};
    if (is_moe(m)) return Violation{K::recompute_op_moe, "recompute", 0};
  }
  if (scope == LegalityScope::plan && p.tables_in_pipeline_split && p.pp == 1) {
    return Violation{K::tables_split_pp, "tables_in_pipeline_split", 1};
  }
  if (scope == LegalityScope::plan && p.virtual_stages > 1) {
    // Megatron-LM: interleaving needs a pipeline; layers divisible by pp·v (the layers and
    // the two tables when they count in the split); the interleaved schedule needs m % pp == 0.
    if (p.pp == 1) return Violation{K::virtual_stages_pp, "virtual_stages", p.virtual_stages};
    const std::int64_t units = m.layers + (p.tables_in_pipeline_split ? 2 : 0);
    if (units % (p.pp * p.virtual_stages) != 0) {
      return Violation{K::virtual_stages_layers, "virtual_stages", p.virtual_stages};
    }
    if (p.grad_accum % p.pp != 0) {
      return Violation{K::virtual_stages_accum, "grad_accum", p.grad_accum};
    }
  }
  if (m.seq_len % p.cp != 0) return Violation{K::cp_seq_len, "cp", p.cp};
  if (scope == LegalityScope::plan && p.cp > 1 && !p.flash_attention) {
    return Violation{K::cp_flash, "flash_attention", p.cp};
  }
  return std::nullopt;
}

}  // namespace planner

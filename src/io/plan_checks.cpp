// The pinned plan's checks and their messages (docs/errors.md): the world-size sum and each
// broken rule of model/legality.hpp in words, with the fix.
#include "planner/io/scenario_json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <numeric>

#include "planner/io/constraints.hpp"
#include "planner/io/presets.hpp"
#include "planner/base/one_line.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/read_input.hpp"
#include "planner/io/resilience_json.hpp"
#include "planner/model/legality.hpp"
#include "scenario_rules.hpp"
#include "scenario_sections.hpp"

namespace planner {
namespace {

using namespace json_input;

// ---- Plan checks --------------------------------------------------------------------------

/// "world size is 64 GPUs (8 nodes × 8) but dp·tp·pp·cp = ...; set dp to 16".
std::string world_size_message(const Scenario& s, const Plan& p) {
  const std::int64_t world = world_size(s.cluster);
  std::int64_t rest = 1;  // the product of the degrees other than dp
  bool overflow = false;
  for (const AxisInfo& row : axes) {
    if (row.axis != Axis::dp && !row.folded) {
      overflow = overflow || __builtin_mul_overflow(rest, p.*row.degree, &rest);
    }
  }
  std::int64_t product = 0;
  overflow = overflow || __builtin_mul_overflow(rest, p.dp, &product);
  std::string fix = fmt::format("the product must equal {}", world);
  if (!overflow && world % rest == 0) fix = fmt::format("set dp to {}", world / rest);
  return fmt::format(
      "world size is {} GPUs ({} nodes × {}) but dp·tp·pp·cp = {}·{}·{}·{} = {}; {}", world,
      s.cluster.nodes, s.cluster.gpus_per_node, p.dp, p.tp, p.pp, p.cp,
      overflow ? std::string("more than 2^63") : std::to_string(product), fix);
}

/// The words for a broken rule of model/legality.hpp, with the fix.
std::string violation_message(const Scenario& s, const Plan& p, const Violation& v) {
  const Model& m = s.model;
  switch (v.kind) {
    case ViolationKind::not_positive:
      return fmt::format("expected a positive integer, got {}", v.value);
    case ViolationKind::zero_stage:
      return fmt::format("expected an integer from 0 to 3, got {}", v.value);
    case ViolationKind::placement:
      return "expected a permutation of [\"tp\", \"cp\", \"dp\", \"pp\"], innermost axis first";
    case ViolationKind::world_size:
      return world_size_message(s, p);
    case ViolationKind::tp_heads:
      return fmt::format("tp ({}) must divide heads ({}); try {}", p.tp, m.heads,
                         first_few(divisors(m.heads)));
    case ViolationKind::tp_kv_heads: {
      std::vector<std::int64_t> fits;
      for (const std::int64_t t : divisors(m.heads)) {
        if (m.kv_heads % t == 0 || t % m.kv_heads == 0) fits.push_back(t);
      }
      return fmt::format("tp ({}) and kv_heads ({}) must divide one another, so that KV heads "
                         "are either split or replicated evenly across tp ranks; try {}",
                         p.tp, m.kv_heads, first_few(fits));
    }
    case ViolationKind::sequence_parallel:
      return "sequence_parallel needs tp > 1 (it splits activations across the tp ranks); set "
             "it to false or raise tp";
    case ViolationKind::pp_layers:
      return fmt::format(
          "pp ({}) exceeds layers ({}); each pipeline stage needs at least one layer", p.pp,
          m.layers);
    case ViolationKind::cp_seq_len:
      return fmt::format("cp ({}) must divide seq_len ({}); try {}", p.cp, m.seq_len,
                         first_few(divisors(m.seq_len)));
    case ViolationKind::cp_flash:
      return fmt::format("cp = {} needs flash_attention: true (ring attention computes "
                         "attention in tiles, as flash attention does)",
                         p.cp);
    case ViolationKind::serving_cp:
      return fmt::format("a serving plan needs cp = 1 (context parallelism is modelled for "
                         "training only), got {}",
                         p.cp);
    case ViolationKind::serving_zero:
      return fmt::format("a serving plan needs zero = 0 (there are no gradients or optimizer "
                         "states to shard), got {}",
                         p.zero);
    case ViolationKind::serving_grad_accum:
      return fmt::format(
          "a serving plan needs grad_accum = 1 (there is no optimizer step), got {}",
          p.grad_accum);
    case ViolationKind::virtual_stages_pp:
      return fmt::format("virtual_stages = {} needs pp > 1 (interleaving splits each pipeline "
                         "stage into chunks); set it to 1 or raise pp",
                         p.virtual_stages);
    case ViolationKind::virtual_stages_layers:
      if (p.tables_in_pipeline_split) {
        return fmt::format("pp·virtual_stages ({}·{}) must divide layers + 2 ({}: the "
                           "embedding and the loss count as layers); each virtual stage holds "
                           "the same number of them",
                           p.pp, p.virtual_stages, m.layers + 2);
      }
      return fmt::format("pp·virtual_stages ({}·{}) must divide layers ({}); each virtual "
                         "stage holds the same number of layers",
                         p.pp, p.virtual_stages, m.layers);
    case ViolationKind::recompute_op_flash:
      return "recompute \"op\" (torchtitan's op-level checkpointing) needs flash_attention: "
             "true (its attention is always tiled, PyTorch SDPA)";
    case ViolationKind::recompute_op_moe:
      return "recompute \"op\" (torchtitan's op-level checkpointing) is modelled for dense "
             "layers only; choose none, selective or full for a mixture-of-experts model";
    case ViolationKind::tables_split_pp:
      return "tables_in_pipeline_split needs pp > 1 (it moves a layer off each end stage of "
             "the pipeline); set it to false or raise pp";
    case ViolationKind::virtual_stages_accum:
      return fmt::format("virtual_stages = {} needs grad_accum ({}) divisible by pp ({}), as "
                         "Megatron-LM's interleaved schedule requires",
                         p.virtual_stages, p.grad_accum, p.pp);
    case ViolationKind::ep_dense:
      return fmt::format("ep = {} needs a mixture-of-experts model (model.moe.experts); set "
                         "ep to 1",
                         p.ep);
    case ViolationKind::ep_experts:
      return fmt::format("ep ({}) must divide the {} routed experts (each ep rank holds "
                         "experts / ep of them); try {}",
                         p.ep, m.moe.experts, first_few(divisors(m.moe.experts)));
    case ViolationKind::ep_dp_cp:
      return fmt::format("ep ({}) must divide dp·cp = {} (the MoE layers fold ep into the "
                         "data- and context-parallel ranks, as Megatron-LM does); try {}",
                         p.ep, p.dp * p.cp, first_few(divisors(std::gcd(p.dp * p.cp, m.moe.experts))));
    case ViolationKind::etp_dense:
      return fmt::format("etp = {} needs a mixture-of-experts model (model.moe.experts); "
                         "remove etp",
                         p.etp);
    case ViolationKind::etp_tp:
      return fmt::format("etp ({}) must divide tp ({}) (each expert's matrices split over "
                         "etp of the tp ranks); try {}",
                         p.etp, p.tp, first_few(divisors(p.tp)));
    case ViolationKind::ep_etp_world: {
      const std::int64_t ranks = p.tp * p.dp * p.cp;
      return fmt::format("ep·etp ({}·{}) must divide tp·dp·cp = {} (a stage's MoE layers "
                         "regroup its ranks as etp × ep × expert-data-parallel, as "
                         "Megatron-LM does); try ep in {}",
                         p.ep, expert_tp(p), ranks,
                         first_few(divisors(std::gcd(ranks / expert_tp(p), m.moe.experts))));
    }
    case ViolationKind::etp_serving:
      return fmt::format("a serving plan needs etp equal to tp ({}), got {}; remove etp",
                         p.tp, p.etp);
    case ViolationKind::dp_shard_dp:
      return fmt::format("dp_shard ({}) must divide dp ({}) (each shard group holds dp_shard "
                         "of the data-parallel ranks); try {}",
                         p.dp_shard, p.dp, first_few(divisors(p.dp)));
    case ViolationKind::dp_shard_zero:
      return fmt::format("dp_shard = {} (hybrid sharding) needs zero >= 1 (it shards ZeRO's "
                         "state in groups); raise zero or remove dp_shard",
                         p.dp_shard);
    case ViolationKind::dp_shard_serving:
      return fmt::format("a serving plan has no training state to shard: remove dp_shard ({}) "
                         "or set it to dp ({})",
                         p.dp_shard, p.dp);
    case ViolationKind::dp_shard_moe:
      return fmt::format("dp_shard = {} (hybrid sharding) is modelled for dense models only; "
                         "remove dp_shard or set it to dp ({})",
                         p.dp_shard, p.dp);
  }
  return "not a legal plan";
}

}  // namespace

void validate_plan(const Scenario& s, const Plan& p, const std::string& origin,
                   const std::string& pointer_prefix) {
  const std::optional<Violation> v =
      first_violation(s.model, s.cluster, s.workload.kind, p, LegalityScope::plan);
  if (!v) return;
  const std::string pointer =
      v->field.empty() ? pointer_prefix : pointer_prefix + "/" + std::string(v->field);
  fail(origin, pointer, violation_message(s, p, *v));
}

}  // namespace planner

#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "planner/base/named.hpp"

/// One parallel configuration: the degrees of the axes, the memory-saving switches, the batch
/// split and the placement of the axes on the machine. The axes are a table (`axes` below):
/// every loop over axes (placements, rank key, search, loader, CLI flags, output) reads it, so
/// adding an axis is one row plus its cost model.

namespace planner {

/// Activation recompute, least to most: none; selective (Korthikanti et al. 2022 §5: the
/// attention core); op, torchtitan's selective op-level checkpointing (the outputs of
/// attention and of every other matmul saved, the rest of each layer recomputed;
/// activations.hpp op_saved_width); full (each layer's forward again).
enum class Recompute { none, selective, op, full };

/// Recompute's names, least to most, as scenarios, flags, constraints and output spell them:
/// the one list every parser and writer reads.
inline constexpr std::array<Named<Recompute>, 4> recompute_names{{
    {"none", Recompute::none},
    {"selective", Recompute::selective},
    {"op", Recompute::op},
    {"full", Recompute::full},
}};

[[nodiscard]] constexpr std::string_view to_string(Recompute r) noexcept {
  for (const Named<Recompute>& n : recompute_names) {
    if (n.value == r) return n.name;
  }
  return "none";
}

/// The Recompute a name spells, if any.
[[nodiscard]] constexpr std::optional<Recompute> recompute_named(std::string_view name) noexcept {
  for (const Named<Recompute>& n : recompute_names) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

/// The axes, in the table's order. Placement lists them innermost first: the innermost axis
/// gets consecutive ranks, so it is the one most likely to stay inside a node.
/// ep is folded: it splits the dp·cp ranks of the MoE layers rather than the world, so it has
/// no place of its own in the placement (the placed axes come first in the enum).
enum class Axis { tp, cp, dp, pp, ep };
inline constexpr std::size_t axis_count = 5;
inline constexpr std::size_t placed_axis_count = 4;

using Placement = std::array<Axis, placed_axis_count>;

/// Megatron-LM's default order (tp innermost, then cp, dp, pp).
inline constexpr Placement default_placement{Axis::tp, Axis::cp, Axis::dp, Axis::pp};

struct Plan {
  std::int64_t dp = 1;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t cp = 1;
  /// Expert-parallel degree: each MoE layer's routed experts split over ep of the dp·cp ranks
  /// (docs/moe.md §3); 1 for a dense model.
  std::int64_t ep = 1;
  /// Expert tensor-parallel degree: each routed expert's matrices split over etp ranks
  /// (Megatron-LM --expert-tensor-parallel-size); 0 means tp, Megatron-LM's default. Read it
  /// through expert_tp().
  std::int64_t etp = 0;
  int zero = 0;  ///< ZeRO stage 0–3, sharding over the dp·cp ranks that hold the same weights
  /// Hybrid sharding (HSDP): the data-parallel ranks of one shard group. ZeRO shards the state
  /// over the innermost dp_shard of the dp ranks (with every cp rank) and replicates it across
  /// the dp / dp_shard groups, whose gradients are all-reduced once per step (PyTorch FSDP
  /// HYBRID_SHARD and torchtitan's data_parallel_shard_degree; DeepSpeed MiCS, Zhang et al.
  /// 2022, arXiv 2205.00119, §3; Megatron-LM --num-distributed-optimizer-instances). 0 means
  /// dp: one group, no replicas. Read it through shard_dp(); only with zero ≥ 1.
  std::int64_t dp_shard = 0;
  Recompute recompute = Recompute::none;
  bool flash_attention = false;
  bool sequence_parallel = false;
  std::int64_t micro_batch = 1;  ///< sequences per micro-batch per model replica
  std::int64_t grad_accum = 1;   ///< micro-batches per optimizer step per replica
  /// Virtual pipeline stages per stage (interleaved 1F1B, Narayanan et al. 2021 §2.2.2):
  /// each stage holds v chunks of L/(pp·v) layers; 1 is plain 1F1B.
  std::int64_t virtual_stages = 1;
  /// The tp collectives run inside the GEMMs next to them (Megatron-LM --tp-comm-overlap,
  /// Transformer Engine userbuffers; needs sequence parallelism): micro_batch_time.hpp
  /// layer_tp_overlap. Set for every candidate by workload.tp_comm_overlap.
  bool tp_comm_overlap = false;
  /// Interleaved 1F1B's stage-boundary sends run beside the next chunk's compute (Megatron-LM
  /// --overlap-p2p-communication, NeMo overlap_p2p_comm; only with virtual_stages > 1):
  /// micro_batch_time.hpp add_pipeline. Set for every candidate by workload.pp_comm_overlap.
  bool pp_comm_overlap = false;
  /// The input embedding and the loss (output layer) each take a layer's place in the
  /// pipeline split, so the end stages hold one layer fewer (Megatron-LM
  /// --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split; Llama 3,
  /// arXiv 2407.21783, §3.3.2): activations.hpp stage_layers. Only with pp > 1.
  bool tables_in_pipeline_split = false;
  /// ZeRO-3's collectives per layer and whether its gathers block (data_parallel_time.hpp
  /// fill_sharded_state_traffic); set for every candidate by the workload's settings of the
  /// same names (inputs/workload.hpp).
  std::int64_t zero3_collectives_per_layer = 1;
  bool zero3_blocking_gathers = false;
  /// ZeRO-2 with the gradients accumulated unsharded over the micro-batches and reduced once
  /// after the last backward (Training::unsharded_gradient_accumulation).
  bool unsharded_gradient_accumulation = false;
  /// Eager PyTorch's elementwise kernels, one per operation, instead of fused ones
  /// (elementwise.hpp eager_layer_bytes); set for every candidate by the workload's
  /// elementwise_kernels "eager".
  bool eager_elementwise = false;
  /// The column-parallel GEMMs under sequence parallelism keep their gathered input, not
  /// their shard (Training::tp_saves_gathered_inputs; activations.hpp); set for every
  /// candidate by the workload's tp_saved_inputs "gathered".
  bool tp_saves_gathered_inputs = false;
  Placement placement = default_placement;
};

/// One row of the axis table.
struct AxisInfo {
  Axis axis;
  std::string_view name;           ///< as the scenario file, the flags and the output spell it
  std::int64_t Plan::*degree;      ///< the plan's field
  std::string_view splits;         ///< what the axis divides among its ranks
  std::string_view flag_help;      ///< the CLI flag's description
  /// The axes whose ranks form this axis's communication group (the data-parallel group is
  /// every rank holding the same weights: dp × cp, Megatron-LM's data-parallel-with-context
  /// group).
  std::array<Axis, 2> group;
  std::size_t group_size;
  bool splits_model;  ///< a model-parallel axis: it divides the weights or the sequence
  bool enumerated;    ///< searched over the world's divisors; the one that is not fills the rest
  /// Folded into the dp·cp ranks (Megatron-LM's MoE parallel folding, parallel_state.py:
  /// expert_data_parallel_size = world / (etp·ep·pp)): not a factor of the world, not placed.
  bool folded = false;
};

inline constexpr std::array<AxisInfo, axis_count> axes{{
    {Axis::tp, "tp", &Plan::tp, "each layer's weight matrices (Megatron-LM tensor parallelism)",
     "Tensor-parallel degree", {Axis::tp, Axis::tp}, 1, true, true, false},
    {Axis::cp, "cp", &Plan::cp, "the sequence (ring attention)", "Context-parallel degree",
     {Axis::cp, Axis::cp}, 1, true, true, false},
    {Axis::dp, "dp", &Plan::dp, "the batch (data parallelism; ZeRO shards state over dp x cp)",
     "Data-parallel degree (default: fill the GPUs)", {Axis::dp, Axis::cp}, 2, false, false, false},
    {Axis::pp, "pp", &Plan::pp, "the layers (pipeline stages)", "Pipeline stages",
     {Axis::pp, Axis::pp}, 1, true, true, false},
    {Axis::ep, "ep", &Plan::ep, "the routed experts of each MoE layer (expert parallelism)",
     "Expert-parallel degree (MoE models; divides dp x cp and the experts)",
     {Axis::ep, Axis::ep}, 1, true, false, true},
}};

[[nodiscard]] constexpr const AxisInfo& info(Axis a) noexcept {
  return axes[static_cast<std::size_t>(a)];
}

[[nodiscard]] constexpr std::string_view to_string(Axis a) noexcept { return info(a).name; }

/// The axis a name spells, if any.
[[nodiscard]] constexpr std::optional<Axis> axis_named(std::string_view name) noexcept {
  for (const AxisInfo& row : axes) {
    if (row.name == name) return row.axis;
  }
  return std::nullopt;
}

[[nodiscard]] inline std::int64_t degree(const Plan& p, Axis a) noexcept {
  return p.*info(a).degree;
}

/// The expert tensor-parallel degree in effect: etp when the plan sets it, else tp.
[[nodiscard]] inline std::int64_t expert_tp(const Plan& p) noexcept {
  return p.etp > 0 ? p.etp : p.tp;
}

/// The data-parallel ranks of a shard group (Plan::dp_shard): dp unless the plan sets fewer.
[[nodiscard]] inline std::int64_t shard_dp(const Plan& p) noexcept {
  return p.dp_shard > 0 && p.dp_shard < p.dp ? p.dp_shard : p.dp;
}

/// Copies of the sharded state under hybrid sharding (dp / dp_shard); 1 without it.
[[nodiscard]] inline std::int64_t state_replicas(const Plan& p) noexcept {
  return p.dp / shard_dp(p);
}

[[nodiscard]] inline std::int64_t gpus(const Plan& p) noexcept {
  std::int64_t n = 1;
  for (const AxisInfo& row : axes) {
    if (!row.folded) n *= p.*row.degree;
  }
  return n;
}

}  // namespace planner

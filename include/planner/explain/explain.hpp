#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "planner/model/activations.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/triage.hpp"
#include "planner/search/rank.hpp"
#include "planner/search/search.hpp"

/// The explanation of a recommended plan, in the five parts of the worked solution
/// (docs/output.md): binding constraint, axes, tiers and bandwidth, failure mode accepted,
/// plus the simpler answers and why they lose. It holds facts only (kinds as enums, the
/// figures the model computed, and the figures of what-if evaluations); the report layer
/// (report/explain_text.hpp) turns them into sentences. "What would change the answer" is
/// explain/thresholds.hpp, independent of this header.

namespace planner {

/// The share of compute the worked solution allows communication (scenario A: "a 20 % comm
/// budget"). Used only to state a bandwidth requirement in the explanation, never to rank.
inline constexpr double comm_budget = 0.20;

enum class BindingKind { state_memory, activation_memory, throughput, decode_latency, weight_memory };

/// The name the JSON, CSV and text output use.
[[nodiscard]] constexpr std::string_view to_string(BindingKind k) noexcept {
  switch (k) {
    case BindingKind::state_memory: return "state memory";
    case BindingKind::activation_memory: return "activation memory";
    case BindingKind::throughput: return "throughput";
    case BindingKind::decode_latency: return "decode latency";
    case BindingKind::weight_memory: return "weight memory";
  }
  return "throughput";
}

/// What binds before any search. Training figures are those of one GPU holding the whole
/// model at one sequence per micro-batch; serving figures those of the whole model's weights.
struct BindingConstraint {
  BindingKind kind = BindingKind::throughput;
  bool quadratic_dominates = false;  ///< activation memory: the s² term outweighs the rest
  double usable_bytes = 0;           ///< one GPU's memory less the reserve
  // Training.
  double params = 0;                 ///< all parameters
  MemoryLedger selective;            ///< one GPU, selective recompute
  MemoryLedger no_recompute;         ///< one GPU, nothing recomputed
  LayerActivationTerms terms;        ///< one layer, one sequence of seq_len tokens
  double layer_bytes = 0;            ///< the largest layer's parameters at training bytes
  Triage triage;
  double one_gpu_step_seconds = 0;   ///< one GPU's compute for the target batch
  // Serving.
  double weights_bytes = 0;          ///< every weight at the serving bytes per parameter
  double weight_read_seconds = 0;    ///< reading them once at peak HBM bandwidth
  bool weights_exceed_gpu = false;
};

/// The simpler or alternative answers the explanation times, each one restriction of the
/// search space.
enum class AlternativeKind {
  pure_data_parallel,  ///< training: tp = pp = cp = 1, any ZeRO stage
  one_gpu_per_engine,  ///< serving: tp = pp = 1
  fsdp,                ///< ZeRO-3 over every GPU
  without_tp,
  without_pp,
  without_cp,
  tp_filling_node,     ///< tp = GPUs per node, inside the node
  with_pipeline,
  with_context,
  without_flash,
  full_recompute,
  without_ep,          ///< serving an MoE model: ep = 1
  with_ep,             ///< serving an MoE model: ep > 1
  whole_group_sharding,  ///< training: ZeRO over the whole dp·cp group (no hybrid sharding)
  hybrid_sharding,       ///< training: hybrid sharding (Plan::dp_shard)
};

/// One axis of the recommendation: its degree, tier, and the alternative that justifies it.
struct AxisNote {
  Axis axis = Axis::dp;
  std::int64_t degree = 1;
  bool used = false;
  std::string tier;  ///< tier_name of its group, "" when unused or independent
  /// The alternative whose verdict says why (tp: the answer without it; unused axes: the
  /// answer with it); none when that alternative was not timed.
  std::optional<AlternativeKind> alternative;
};

/// Which traffic a note describes (its "axis" in the output).
enum class TrafficAxis { tp, cp, pp, dp, dp_cp, memory, token, ep };

/// tp traffic of one micro-batch on its tier and, as a what-if, on the other tier.
struct TpFigures {
  std::int64_t micro_batch = 1;
  std::int64_t messages = 0;
  double message_bytes = 0;
  CollectiveCost collective;       ///< the model's pick, one message
  double seconds = 0;              ///< all messages of a micro-batch
  double dense_seconds = 0;
  double compute_seconds = 0;
  std::string tier, other_tier;
  double tier_bandwidth = 0, other_bandwidth = 0;
  CollectiveCost other;            ///< the cheapest collective on the other tier
  double other_seconds = 0;        ///< all messages there
};

struct TpTrainingFacts {
  bool sequence_parallel = false;  ///< reduce-scatter + all-gather instead of all-reduce
  /// With tp_comm_overlap: what the GEMMs leave exposed per micro-batch, and of it the GEMM
  /// time lost to the collectives' SMs; 0 when the collectives are not overlapped.
  double overlap_exposed_seconds = 0;
  double overlap_cost_seconds = 0;
  TpFigures plan;
  std::optional<TpFigures> micro_batch_1;  ///< the same at one sequence per micro-batch
};

struct CpFacts {
  double passes = 0;               ///< the model's ring passes per layer (TrainingTime::cp_passes)
  double tier_bandwidth = 0;
  double attention_per_layer_seconds = 0;
  std::string other_tier;
  double other_bandwidth = 0;
  double other_step_seconds = 0;   ///< one ring step on the other tier
};

struct PpFacts {};  ///< everything is in the plan and its TrainingTime
struct EpFacts {};  ///< the same (TrainingTime::ep, expert_dp; docs/moe.md §5)
struct ServingEpFacts {};  ///< everything is in the ServingTime (decode.ep; docs/moe.md §6)

struct DpFacts {
  std::int64_t zero = 0;
  double tier_bandwidth = 0;
  bool edge_buckets_only = false;  ///< only the first and last buckets are exposed
  double processor_usage = 0;      ///< the tier's share of the GPU a hidden bucket takes
  /// Multi-rail only: the bus bandwidth of the group's rings, min(node fabric, ranks per node
  /// × the tier's per-GPU rate) (collectives.hpp multi_rail_cost); 0 otherwise.
  double rail_bandwidth = 0;
  std::int64_t collectives_per_layer = 1;  ///< ZeRO-3's (Plan::zero3_collectives_per_layer)
  bool blocking_gathers = false;           ///< ZeRO-3's gathers block (no overlap)
  /// ZeRO-3 only: the buffers of one micro-batch at line rate against its dense compute.
  double fsdp_bytes_per_micro_batch = 0;
  double fsdp_wire_seconds = 0;
  double dense_one_sequence_seconds = 0;
  /// Hybrid sharding only (DataParallelTraffic::replicas > 1): the tier the replicas'
  /// all-reduce pays and its bandwidth; empty and 0 otherwise.
  std::string replica_tier;
  double replica_bandwidth = 0;
};

struct ServingReadFacts {
  double peak_read_seconds = 0;    ///< the weights at peak HBM bandwidth
};

struct ServingTpFacts {
  CollectiveCost ring;             ///< the model's ring figure
  /// Every available all-reduce algorithm on the group's tier, one message (a fixed-capacity
  /// list: GCC 12 warns falsely on a std::vector inside the variant below).
  std::array<CollectiveCost, all_algorithms.size()> algorithms{};
  std::size_t algorithm_count = 0;
};

struct ServingTokenFacts {};  ///< everything is in the ServingTime

/// One axis's traffic: what it moves, on which tier, whether it hides, and the bandwidth it
/// needs, with the facts its sentence quotes.
struct TrafficNote {
  TrafficAxis axis = TrafficAxis::tp;
  std::string tier;
  std::string algorithm;           ///< "" where no collective algorithm applies
  double message_bytes = 0;
  double messages_per_step = 0;
  double seconds_per_step = 0;     ///< all of this axis's traffic in one step
  /// The same traffic with one latency per buffer instead of one per bucket (data
  /// parallelism's bucketed collectives); 0 for the other axes, whose JSON prints
  /// seconds_per_step here.
  double whole_buffer_seconds_per_step = 0;
  double compute_seconds_per_step = 0;
  double exposed_seconds_per_step = 0;
  bool critical_path = false;      ///< cannot overlap compute (tp, pp)
  double hide_bandwidth = 0;       ///< lowest bandwidth (bytes/s) at which it still hides; 0 = n/a
  double budget_bandwidth = 0;     ///< lowest bandwidth within comm_budget of compute; 0 = n/a
  std::variant<TpTrainingFacts, CpFacts, PpFacts, DpFacts, ServingReadFacts, ServingTpFacts,
               ServingTokenFacts, EpFacts, ServingEpFacts>
      facts;
};

/// A risk the recommendation accepts.
enum class FailureMode {
  serving_tp_critical_path,
  serving_stage_latency,
  serving_one_gpu,
  cp_causal_imbalance,
  tp_fate_sharing,
  pipeline_bubble,
  critical_batch,
  expert_imbalance,  ///< ep > 1: every rank waits for the busiest expert rank
};

/// The time component by which an alternative loses most per token.
enum class TimeComponent { compute, tp, cp_exposed, pp_and_bubble, dp_exposed };

/// The rank-key field that puts a tied alternative behind (rank.hpp's order).
enum class Criterion { throughput, model_axes, pipeline, crossing_axes, inter_node_bytes, memory,
                       canonical };

enum class AlternativeOutcome {
  slower,      ///< fits, and loses on time
  ties,        ///< fits, ties on time and loses on a later criterion
  misses_slo,  ///< fits, but misses the SLO
  no_fit,      ///< nothing fits; `rejection` is the closest memory rejection
  not_legal,   ///< nothing fits and none ran out of memory; `rejection` is the first
  none_legal,  ///< no configuration at all
};

/// A simpler or alternative answer and the number that rejects it.
struct Alternative {
  AlternativeKind kind = AlternativeKind::pure_data_parallel;
  std::optional<Evaluation> best;  ///< its best fitting plan, if any fits
  AlternativeOutcome outcome = AlternativeOutcome::none_legal;
  double slower = 0;               ///< seconds per unit over the recommendation's, less 1
  Criterion criterion = Criterion::canonical;  ///< ties: the deciding rank-key field
  RankKey key, best_key;           ///< rank keys of `best` and of the recommendation
  /// Training: the losing component's seconds per step here, scaled to the recommendation's
  /// tokens per step (`same_work_scale`: the recommendation's sequences per step over this
  /// plan's), and in the recommendation; the component is the one with the largest difference.
  TimeComponent losing = TimeComponent::compute;
  double losing_seconds = 0, recommended_seconds = 0;
  double same_work_scale = 1;
  std::optional<Rejection> rejection;
  std::vector<TrafficNote> traffic;  ///< the traffic of its best plan
};

struct Explanation {
  BindingConstraint binding;
  std::vector<AxisNote> axes;
  std::vector<TrafficNote> traffic;
  std::vector<FailureMode> failure_modes;
  std::vector<Alternative> alternatives;

  /// The alternative of that kind, if it was timed.
  [[nodiscard]] const Alternative* find(AlternativeKind k) const noexcept {
    for (const Alternative& a : alternatives) {
      if (a.kind == k) return &a;
    }
    return nullptr;
  }
};

[[nodiscard]] BindingConstraint binding_constraint(const Context& ctx);
[[nodiscard]] std::vector<TrafficNote> traffic_notes(const Context& ctx, const Evaluation& e);
[[nodiscard]] std::vector<FailureMode> failure_modes(const Context& ctx, const Evaluation& e);

/// Which alternatives explain() searches, each a search of its own: `all`, or `quoted`, those a
/// brief account shows (the first, the simplest answer, and those the axis notes name; brief
/// text, report/render_text.cpp). The alternatives both list come out the same, in the same
/// order.
enum class AlternativeScope { all, quoted };

/// Explanation of the winner of `result` (empty past the binding constraint when nothing
/// fits).
[[nodiscard]] Explanation explain(const Context& ctx, const SearchResult& result,
                                  AlternativeScope scope = AlternativeScope::all);

}  // namespace planner

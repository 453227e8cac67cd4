#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>

#include "planner/model/activations.hpp"
#include "planner/inputs/cluster.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/elementwise.hpp"
#include "planner/model/expert_traffic.hpp"
#include "planner/model/memory.hpp"
#include "planner/inputs/model.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/schedule.hpp"
#include "planner/model/serving/serving_time.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/base/units.hpp"
#include "planner/inputs/workload.hpp"

/// Time of one optimizer step of a pinned plan (docs/model.md §7; serving: §8,
/// model/serving/). Every component is kept so the explanation can quote it.

namespace planner {

/// The data-parallel (gradient and ZeRO) traffic of one optimizer step.
struct DataParallelTraffic {
  std::int64_t ranks = 1;       ///< dp · cp ranks holding the same weights
  std::int64_t ranks_per_node = 1;  ///< of them in one node: the rails a multi-rail collective uses
  std::size_t tier = 0;         ///< which tier the group pays (cluster.hpp)
  bool inside_node = true;      ///< tier 0
  double gradient_bytes = 0;    ///< the gradient buffer per rank, reduced (gradients' dtype)
  /// The parameter buffer per rank the all-gathers move, in the weights' dtype: the gradient
  /// buffer's size at equal dtypes; half of it under Megatron-LM's fp32 main gradients
  /// (precision.gradients "fp32": reduced in fp32, parameters gathered in bf16).
  double gather_bytes = 0;
  /// The stage's buffer-sized collective, the one its traffic is named by: the all-reduce
  /// (ZeRO-0), the reduce-scatter (ZeRO-1, 2) or the all-gather (ZeRO-3).
  CollectiveCost buffer;
  double comm_seconds = 0;      ///< all DP collectives of the step, each bucket its own latency
  /// The same collectives with one latency each, every buffer moved as one collective: the
  /// α–β figure of the worked solution (its "630 ms + 1.9 ms = 632 ms" for A).
  double whole_buffer_seconds = 0;
  double exposed_seconds = 0;   ///< what the windows cannot hide, overlap_cost_seconds included
  /// In exposed_seconds: the compute the hidden part slows, its time × the tier's
  /// processor_usage (cluster.hpp Tier; 0 on a GPU given by numbers).
  double overlap_cost_seconds = 0;
  /// In exposed_seconds: the host's issue cost of blocking per-tensor gathers per step
  /// (blocking_gather_issue_seconds; 0 for every other plan).
  double issue_seconds = 0;
  double bytes_per_step = 0;    ///< buffer bytes the rank's collectives carry per step
  /// Buffer-sized collectives per step (an all-reduce, a reduce-scatter or an all-gather of
  /// gradient_bytes): ZeRO-0 1, ZeRO-1 2, ZeRO-2 m + 1, ZeRO-3 3·m.
  double collectives_per_step = 0;
  double forward_window_seconds = 0;   ///< one micro-batch's forward: what hides a gather
  double backward_window_seconds = 0;  ///< one micro-batch's backward: what hides a reduction
  /// The collectives one micro-batch's backward carries: the all-reduce (ZeRO-0), the
  /// reduce-scatter, and under ZeRO-3 the gather too unless gathers block.
  double backward_comm_seconds = 0;
  // Hybrid sharding (Plan::dp_shard): the fields above are the shard group's; its replicas
  // all-reduce the reduced gradient shard once per step (fill_replica_all_reduce). 1 replica
  // and zeros without it.
  std::int64_t replicas = 1;             ///< copies of the sharded state (dp / dp_shard)
  std::int64_t replica_ranks_per_node = 1;
  std::size_t replica_tier = 0;          ///< the tier the replica group pays
  CollectiveCost replica_all_reduce;     ///< the whole shard's all-reduce, one collective
  double replica_seconds = 0;            ///< in comm_seconds: its buckets, each its latency
  double replica_exposed_seconds = 0;    ///< in exposed_seconds: what the backward leaves
  double replica_overlap_cost_seconds = 0;  ///< in both exposed figures: its hidden part's cost
  double replica_bytes_per_step = 0;     ///< in bytes_per_step: what each rank sends in it
};

struct TrainingTime {
  // Per micro-batch, on one GPU of the largest stage.
  double dense_seconds = 0;
  double attention_seconds = 0;
  double recompute_seconds = 0;
  double scores_io_seconds = 0;  ///< HBM traffic of a materialised score matrix (no flash)
  /// Norms, activation functions, residual adds, the loss, FP8 casts, MoE permutation at HBM
  /// bandwidth (model/elementwise.hpp); 0 when the GPU's rate is an effective one.
  double elementwise_seconds = 0;
  std::int64_t tp_messages = 0;  ///< all-reduces (or SP's RS+AG pairs) per micro-batch
  double tp_message_bytes = 0;
  CollectiveCost tp_collective;  ///< one of those messages
  double tp_seconds = 0;         ///< all of them; on the critical path (exposed part with overlap)
  /// With tp_comm_overlap: the same collectives back to back, before the GEMMs hide them
  /// (0 without overlap, where tp_seconds is that figure).
  double tp_unoverlapped_seconds = 0;
  /// In tp_seconds: the GEMM time lost to the SMs the overlapped collectives occupy.
  double tp_overlap_cost_seconds = 0;
  double cp_block_bytes = 0;     ///< one K/V block passed around the ring
  CollectiveCost cp_step;        ///< one ring step
  double cp_passes = 0;          ///< ring passes per layer: 3 (forward, backward K/V and grads), 4 with full recompute
  double cp_seconds = 0;         ///< ring traffic per micro-batch
  double cp_exposed_seconds = 0; ///< what attention compute does not hide, cost included
  /// In cp_exposed_seconds: the attention time the hidden ring steps slow (their time × the
  /// tier's processor_usage, as for the data-parallel buckets).
  double cp_overlap_cost_seconds = 0;
  double pp_message_bytes = 0;
  double pp_seconds = 0;         ///< stage-boundary sends per micro-batch
  // Per optimizer step.
  std::int64_t micro_batches = 1;
  double bubble_seconds = 0;
  DataParallelTraffic dp;
  double inter_node_bytes = 0;  ///< bytes per GPU per step that cross nodes (all axes)
  double step_seconds = 0;
  double straggler_seconds = 0;  ///< in step_seconds: the wait for the slowest rank (0 unless given)
  double global_sequences = 0;
  double tokens_per_second = 0;
  /// Model FLOP/s per GPU ÷ the effective FLOP/s the time model uses, the attention square
  /// counted at the share the kernels compute (compute.hpp executed_model_flops_per_sequence),
  /// the count the effective rate is measured on, so a plan all compute is at most 1.
  double mfu = 0;
  /// Model FLOP/s per GPU as the field counts them (the whole attention square, PaLM
  /// Appendix B): the numerator of MFU against a datasheet peak (report/moe_text.hpp).
  double model_flops_per_second = 0;
  // Mixture of experts (docs/moe.md §5); zero for a dense model.
  ExpertTraffic ep;               ///< token dispatch and combine, per micro-batch
  /// Expert gradients over the expert-data-parallel group; empty for a dense model (so that
  /// a dense model's evaluation need not zero it: issue 8's speed bound).
  std::optional<DataParallelTraffic> expert_dp;

  [[nodiscard]] double expert_dp_exposed_seconds() const noexcept {
    return expert_dp ? expert_dp->exposed_seconds : 0.0;
  }
  [[nodiscard]] double compute_seconds() const noexcept {
    return dense_seconds + attention_seconds + recompute_seconds + scores_io_seconds +
           elementwise_seconds;
  }
  [[nodiscard]] double micro_batch_seconds() const noexcept {
    return compute_seconds() + tp_seconds + cp_exposed_seconds + pp_seconds + ep.exposed_seconds;
  }
};

/// Exposure of an overlapped, bucketed collective: a collective issued bucket by bucket
/// (one layer each) behind compute hides all but its first or last bucket, and all of what
/// outlasts the window (Li et al. 2020, arXiv 2006.15704, §3.2.3: PyTorch DDP's last bucket).
[[nodiscard]] inline double exposed_seconds(double comm_seconds, double one_bucket_seconds,
                                            double window_seconds) noexcept {
  if (comm_seconds <= 0) return 0;
  return std::max(std::min(one_bucket_seconds, comm_seconds), comm_seconds - window_seconds);
}

/// The ranks of the dp·cp group one node holds (placement.hpp group_ranks_per_domain).
[[nodiscard]] inline std::int64_t dense_group_ranks_per_node(const Plan& p,
                                                             const Cluster& c) noexcept {
  const std::array<Axis, 2> group{Axis::dp, Axis::cp};
  return group_ranks_per_domain(p, group, 2, domain_gpus(c, 0));
}

/// The ranks of the expert-data-parallel group one node holds: the stage's tp·dp·cp ranks in
/// the node, less the factors over which the experts differ (the etp and ep ranks in it).
[[nodiscard]] inline std::int64_t expert_group_ranks_per_node(const Plan& p,
                                                              const Cluster& c) noexcept {
  const std::int64_t node = domain_gpus(c, 0);
  const std::array<Axis, 3> stage{Axis::tp, Axis::dp, Axis::cp};
  const std::array<Axis, 1> tp{Axis::tp};
  const std::int64_t held = group_ranks_per_domain(p, stage, 3, node);
  const std::int64_t tp_held = group_ranks_per_domain(p, tp, 1, node);
  const std::int64_t differ = std::min(expert_tp(p), tp_held) * ep_ranks_per_domain(p, node);
  return std::max<std::int64_t>(1, held / std::max<std::int64_t>(1, differ));
}

/// The host's cost of issuing one blocking per-tensor ZeRO-3 gather (Plan::zero3_blocking_gathers,
/// DeepSpeed's stage 3 of 2021): 130 µs of pre-launch plus 250 µs of launch, measured on 8 A100
/// with DeepSpeed 0.3.16 and PyTorch 1.8.0, before a torch.cuda.synchronize() (DeepSpeed issue
/// #1069, comment of 2021-06-21; ../shared/calibration microbenchmarks-and-single-node.json
/// `deepspeed-zero3-2021-per-param-allgather-a100-8gpu`, a single-node microbenchmark the
/// calibration rule admits). The synchronize puts it on the critical path: the host cannot
/// issue ahead of the device. The device's own part (the rest of the 500 µs it measured: the
/// synchronize and a 5 KiB gather) is the collective's α–β cost, counted apart.
inline constexpr double blocking_gather_issue_seconds = 380e-6;

/// Collectives each layer's data-parallel buffer is issued as: one bucket per layer, or under
/// ZeRO-3 the plan's count (Plan::zero3_collectives_per_layer: DeepSpeed's stage 3 of 2021
/// gathers each parameter tensor alone).
[[nodiscard]] inline std::int64_t dp_collectives_per_layer(const Plan& p) noexcept {
  return p.zero == 3 ? std::max<std::int64_t>(1, p.zero3_collectives_per_layer) : 1;
}

/// One collective of a sharded-state group (fill_sharded_state_traffic): flat or multi-rail
/// on the group's tier, the node inside. Always inlined, as cheapest_collective is
/// (collectives.hpp): its `op` is a constant at every call.
[[nodiscard, gnu::always_inline]] inline CollectiveCost sharded_collective(
    Collective op, const DataParallelTraffic& t, std::int64_t inside, const Cluster& c,
    double bytes) noexcept {
  return group_collective(op, t.ranks, inside, bytes, c.tiers[0], c.tiers[t.tier]);
}

/// Data-parallel traffic per ZeRO stage (Rajbhandari et al. 2020 §7, Table 1 and §5):
/// - ZeRO-0 all-reduces the gradient once per step, behind the last micro-batch's backward;
/// - ZeRO-1 reduce-scatters it there and all-gathers the updated parameters behind the next
///   step's first forward (Megatron-LM's distributed optimizer);
/// - ZeRO-2 keeps no full gradient, so it reduce-scatters after every micro-batch's backward
///   (DeepSpeed stage 2 with accumulation), and all-gathers once;
/// - ZeRO-3 gathers the parameters for every forward and every backward and reduce-scatters
///   every backward: 3 buffers per micro-batch (the worked solution's 3·Ψ).
/// The traffic of `ranks` ranks sharding the state of `params` parameters per rank, `inside`
/// of them in a node, on the dp·cp group's tier (data_parallel_traffic,
/// expert_data_parallel_traffic below); each collective the cheaper of flat and multi-rail
/// (collectives.hpp group_collective).
/// Fills `t`, which must be zero (a member of a fresh TrainingTime: filling it in place
/// spares the step-time function a copy, issue 8's speed bound).
inline void fill_sharded_state_traffic(const Model& m, const Cluster& c, const Plan& p,
                                       std::int64_t ranks, std::int64_t inside,
                                       std::size_t group_tier, double params,
                                       double forward_seconds, double backward_seconds,
                                       DataParallelTraffic& t) noexcept {
  t.ranks = ranks;
  t.ranks_per_node = inside;
  t.forward_window_seconds = forward_seconds;
  t.backward_window_seconds = backward_seconds;
  t.tier = group_tier;
  t.inside_node = t.tier == 0;
  const Tier& tier = c.tiers[t.tier];
  t.gradient_bytes = bytes_of(m.precision.gradients) * params;
  t.gather_bytes = bytes_of(m.precision.weights) * params;
  if (t.ranks <= 1) return;
  // One bucket per layer of the stage, or ZeRO-3's count per layer (dp_collectives_per_layer);
  // comm_seconds pays each bucket's latency.
  const double buckets = static_cast<double>(stage_layers(m, p)) *
                         static_cast<double>(dp_collectives_per_layer(p));
  const double bucket_bytes = t.gradient_bytes / buckets;
  const double n = static_cast<double>(p.grad_accum);
  const double share = static_cast<double>(t.ranks - 1) / static_cast<double>(t.ranks);
  // Only the collectives the stage runs: the all-reduce for ZeRO-0, else the pair. A buffer
  // is issued bucket by bucket, and every bucket is a collective of its own that pays the
  // algorithm's latency (issue 9 cause 1: one layer's all-gather over 2,048 ranks is ~20 ms
  // of latency alone), so a buffer costs `buckets` bucket collectives; `whole` keeps the
  // one-collective figure the explanation quotes beside it.
  double ar = 0, rs = 0, ag = 0, ar_bucket = 0, rs_bucket = 0, ag_bucket = 0;
  double ar_whole = 0, rs_whole = 0, ag_whole = 0;
  if (p.zero == 0) {
    t.buffer = sharded_collective(Collective::all_reduce, t, inside, c, t.gradient_bytes);
    ar_whole = t.buffer.seconds();
    ar_bucket =
        sharded_collective(Collective::all_reduce, t, inside, c, bucket_bytes).seconds();
    ar = buckets * ar_bucket;
  } else {
    const CollectiveCost reduce_scatter =
        sharded_collective(Collective::reduce_scatter, t, inside, c, t.gradient_bytes);
    const CollectiveCost all_gather =
        sharded_collective(Collective::all_gather, t, inside, c, t.gather_bytes);
    t.buffer = p.zero < 3 ? reduce_scatter : all_gather;
    rs_whole = reduce_scatter.seconds();
    ag_whole = all_gather.seconds();
    rs_bucket =
        sharded_collective(Collective::reduce_scatter, t, inside, c, bucket_bytes).seconds();
    ag_bucket = sharded_collective(Collective::all_gather, t, inside, c, t.gather_bytes / buckets)
                    .seconds();
    rs = buckets * rs_bucket;
    ag = buckets * ag_bucket;
  }
  // Written as before when the two buffers are one size, so a plan's figures do not move by a
  // rounding.
  const bool same_dtype = t.gather_bytes == t.gradient_bytes;
  t.backward_comm_seconds =
      p.zero == 0 ? ar : (p.zero == 3 && !p.zero3_blocking_gathers ? ag + rs : rs);
  switch (p.zero) {
    case 0:
      t.collectives_per_step = 1.0;
      t.comm_seconds = ar;
      t.whole_buffer_seconds = ar_whole;
      t.exposed_seconds = exposed_seconds(ar, ar_bucket, backward_seconds);
      t.bytes_per_step = 2.0 * share * t.gradient_bytes;
      break;
    case 1:
      t.collectives_per_step = 2.0;
      t.comm_seconds = rs + ag;
      t.whole_buffer_seconds = rs_whole + ag_whole;
      t.exposed_seconds = exposed_seconds(rs, rs_bucket, backward_seconds) +
                          exposed_seconds(ag, ag_bucket, forward_seconds);
      t.bytes_per_step = same_dtype ? 2.0 * share * t.gradient_bytes
                                    : share * (t.gradient_bytes + t.gather_bytes);
      break;
    case 2:
      t.collectives_per_step = n + 1.0;
      t.comm_seconds = n * rs + ag;
      t.whole_buffer_seconds = n * rs_whole + ag_whole;
      t.exposed_seconds = n * exposed_seconds(rs, rs_bucket, backward_seconds) +
                          exposed_seconds(ag, ag_bucket, forward_seconds);
      t.bytes_per_step = same_dtype ? (n + 1.0) * share * t.gradient_bytes
                                    : share * (n * t.gradient_bytes + t.gather_bytes);
      break;
    default:
      t.collectives_per_step = 3.0 * n;
      t.comm_seconds = n * (2.0 * ag + rs);
      t.whole_buffer_seconds = n * (2.0 * ag_whole + rs_whole);
      // Blocking gathers (Plan::zero3_blocking_gathers: DeepSpeed 2021 synchronizes the
      // device before each) run between the kernels, never beside them; the reduce-scatters
      // still hide behind the backward.
      // Each blocking gather also pays its host issue cost (blocking_gather_issue_seconds).
      t.issue_seconds =
          p.zero3_blocking_gathers ? n * 2.0 * buckets * blocking_gather_issue_seconds : 0.0;
      t.exposed_seconds =
          p.zero3_blocking_gathers
              ? n * (2.0 * ag + exposed_seconds(rs, rs_bucket, backward_seconds)) +
                    t.issue_seconds
              : n * (exposed_seconds(ag, ag_bucket, forward_seconds) +
                     exposed_seconds(ag + rs, ag_bucket + rs_bucket, backward_seconds));
      t.bytes_per_step = same_dtype ? 3.0 * n * t.gradient_bytes
                                    : n * (t.gradient_bytes + 2.0 * t.gather_bytes);
      break;
  }
  // What the windows hide still slows them: NCCL's kernels take a share of the GPU while
  // they run (Calculon calculon/llm/llm.py, the hidden DP chunks' comm × processor_usage).
  t.overlap_cost_seconds = tier.processor_usage * (t.comm_seconds - t.exposed_seconds);
  t.exposed_seconds += t.overlap_cost_seconds;
}

/// Hybrid sharding's second level (Plan::dp_shard; MiCS, Zhang et al. 2022, arXiv 2205.00119,
/// §3.3 "2-hop gradient synchronization"): once per step, after the shard group has
/// reduce-scattered the last micro-batch's gradients, each rank all-reduces its reduced shard
/// (the gradient over the shard group's ranks) with the ranks that hold the same shard in the
/// other replicas, bucket by bucket (the shard group's buckets, each its own latency), behind
/// what the last backward leaves after the shard group's own collectives. The replicas hold
/// the same shard of the state, so nothing else crosses them. FSDP2 without
/// set_requires_all_reduce(False) all-reduces every micro-batch instead: the planner models
/// the once-per-step schedule (MiCS's, Megatron-LM's distributed-optimizer instances').
inline void fill_replica_all_reduce(const Model& m, const Cluster& c, const Plan& p,
                                    DataParallelTraffic& t) noexcept {
  const HybridGroup g = replica_group(p, c);
  t.replicas = state_replicas(p);
  t.replica_ranks_per_node = g.ranks_per_node;
  t.replica_tier = g.tier;
  const double shard_bytes = t.gradient_bytes / static_cast<double>(t.ranks);
  const double buckets = static_cast<double>(stage_layers(m, p)) *
                         static_cast<double>(dp_collectives_per_layer(p));
  t.replica_all_reduce = group_collective(Collective::all_reduce, t.replicas, g.ranks_per_node,
                                          shard_bytes, c.tiers[0], c.tiers[g.tier]);
  const CollectiveCost bucket =
      group_collective(Collective::all_reduce, t.replicas, g.ranks_per_node,
                       shard_bytes / buckets, c.tiers[0], c.tiers[g.tier]);
  t.replica_seconds = buckets * bucket.seconds();
  // The last backward's window, less the shard group's collectives that run in it: the
  // reduce-scatter, and under ZeRO-3 without blocking gathers the backward's gather too.
  const double window = std::max(0.0, t.backward_window_seconds - t.backward_comm_seconds);
  const double exposed = exposed_seconds(t.replica_seconds, bucket.seconds(), window);
  const double cost = c.tiers[g.tier].processor_usage * (t.replica_seconds - exposed);
  t.replica_exposed_seconds = exposed + cost;
  t.replica_overlap_cost_seconds = cost;
  t.comm_seconds += t.replica_seconds;
  t.whole_buffer_seconds += t.replica_all_reduce.seconds();
  t.overlap_cost_seconds += cost;
  t.exposed_seconds += t.replica_exposed_seconds;
  const double r = static_cast<double>(t.replicas);
  t.replica_bytes_per_step = 2.0 * (r - 1.0) / r * shard_bytes;
  t.bytes_per_step += t.replica_bytes_per_step;
}

/// The dense data-parallel traffic: the dp·cp group's (fill_sharded_state_traffic), or under
/// hybrid sharding its shard group's and the replicas' all-reduce (fill_replica_all_reduce).
inline void fill_data_parallel_traffic(const Model& m, const Cluster& c, const Plan& p,
                                       double forward_seconds, double backward_seconds,
                                       DataParallelTraffic& t) noexcept {
  const double params = gpu_params(m, p).replicated;
  if (state_replicas(p) == 1) {
    fill_sharded_state_traffic(m, c, p, state_shard_ranks(p), dense_group_ranks_per_node(p, c),
                               axis_tier(p, c, Axis::dp), params, forward_seconds,
                               backward_seconds, t);
    return;
  }
  const HybridGroup shard = shard_group(p, c);
  fill_sharded_state_traffic(m, c, p, state_shard_ranks(p), shard.ranks_per_node, shard.tier,
                             params, forward_seconds, backward_seconds, t);
  fill_replica_all_reduce(m, c, p, t);
}

[[nodiscard]] inline DataParallelTraffic data_parallel_traffic(const Model& m, const Cluster& c,
                                                               const Plan& p,
                                                               double forward_seconds,
                                                               double backward_seconds) noexcept {
  DataParallelTraffic t;
  fill_data_parallel_traffic(m, c, p, forward_seconds, backward_seconds, t);
  return t;
}

/// MoE: the routed experts' gradients (the rank's etp·ep share) over the tp·dp·cp/(etp·ep)
/// ranks that hold the same experts (Megatron-LM's expert-data-parallel group), with the same ZeRO
/// schedule; its tier is taken as the dp·cp group's (the group is a subset of it).
[[nodiscard]] inline DataParallelTraffic expert_data_parallel_traffic(
    const Model& m, const Cluster& c, const Plan& p, double forward_seconds,
    double backward_seconds) noexcept {
  DataParallelTraffic t;
  if (!is_moe(m)) return t;
  fill_sharded_state_traffic(m, c, p, expert_data_parallel_ranks(p),
                             expert_group_ranks_per_node(p, c), axis_tier(p, c, Axis::dp),
                             gpu_params(m, p).experts, forward_seconds, backward_seconds, t);
  return t;
}

/// The shapes one stage's micro-batch works on, shared by the per-axis costs below.
struct StageShape {
  double layers = 0;        ///< layers on the largest stage
  double local_tokens = 0;  ///< s / cp
  double micro_batch = 0;   ///< b
  double accum = 0;         ///< micro-batches per step
};

/// HBM bytes an untiled attention core moves per element of its score matrix (one query-key
/// pair of one head), kernel by kernel, for `e`-byte activations and 1-byte dropout masks:
/// Megatron-LM's CoreAttention (megatron/core/transformer/dot_product_attention.py; 2021's
/// megatron/model/transformer.py ParallelAttention) runs baddbmm(Q, Kᵀ), the fused
/// scale-mask-softmax, dropout and bmm(·, V) as four kernels, each reading its input from HBM
/// and writing its output there (Dao et al. 2022 §2.2, Algorithm 0, the standard
/// implementation FlashAttention replaces):
///
/// | kernel | forward | backward |
/// |---|---|---|
/// | QKᵀ GEMM | write scores e | read dScores twice (dQ, dK) 2e |
/// | softmax | read e, write e | read P and dP, write dScores 3e |
/// | dropout | read e, write e and the mask 1 | read dP' and the mask, write dP 2e + 1 |
/// | ·V GEMM | read e | write dP' e, read P' for dV e |
/// | total | 6e + 1 | 9e + 1 |
///
/// (13 and 19 bytes at bf16.) Selective or full recompute runs the forward kernels once more.
/// Korthikanti et al.'s 5e/2·… stored term (`scores_bytes`) is what stays in memory between
/// the passes; this is what flows through HBM. Q, K, V and the context (s·h per token, not s²)
/// are left out.
struct ScoreTraffic {
  double forward_bytes_per_element = 0;
  double backward_bytes_per_element = 0;
};
[[nodiscard]] constexpr ScoreTraffic score_traffic(double e) noexcept {
  return {6.0 * e + 1.0, 9.0 * e + 1.0};
}

/// Standard (untiled) attention moves its score matrices through HBM (Dao et al. 2022 §3.2,
/// Theorem 2: Θ(Nd + N²) HBM accesses against tiled attention's Θ(N²d²/M)), at the GPU's
/// memory bandwidth, kernel by kernel (score_traffic); tiled attention avoids this traffic.
inline void add_scores_io(const Model& m, const Cluster& c, const Plan& p, const StageShape& g,
                          TrainingTime& t) noexcept {
  if (p.flash_attention) return;
  const double elements = static_cast<double>(m.heads) * g.local_tokens *
                          static_cast<double>(m.seq_len) * g.micro_batch /
                          static_cast<double>(p.tp);
  const ScoreTraffic k = score_traffic(bytes_of(m.precision.activations));
  const double forwards = p.recompute == Recompute::none ? 1.0 : 2.0;
  const double bytes = elements * (forwards * k.forward_bytes_per_element +
                                   k.backward_bytes_per_element);
  t.scores_io_seconds = bytes * g.layers / c.gpu.memory_bandwidth_bytes_per_second;
}

/// MoE layers whose MLP runs without tp collectives: with etp = 1 the routed experts take
/// the tokens as sequence parallelism left them, split over the tp ranks, and send them to
/// the ep group directly (Megatron-LM MoEAlltoAllTokenDispatcher gathers and scatters only
/// over the expert tensor-parallel group); a shared expert is a tp-split MLP (Megatron-LM
/// SharedExpertMLP) and keeps them. A 1 < etp < tp group is charged as tp's (an upper bound).
[[nodiscard]] inline double layers_without_mlp_tp(const Model& m, const Plan& p) noexcept {
  if (!is_moe(m) || expert_tp(p) != 1 || m.moe.shared_experts > 0) return 0;
  return static_cast<double>(stage_moe_layers(m, p));
}

/// The four GEMMs of one layer's forward on one tp rank, in seconds at `flops_per_second`: 2
/// FLOPs per weight (layer_gemm_weights) and token, for the s/cp·b tokens sequence parallelism
/// gathers (MoE: f the routed copies' and shared experts' width per token, model/experts.hpp).
[[nodiscard]] inline LayerGemms layer_gemm_seconds(const Model& m, const Plan& p,
                                                      double tokens,
                                                      double flops_per_second) noexcept {
  const LayerGemms w = layer_gemm_weights(m, mlp_f_per_token(m));
  const double per_weight = 2.0 * tokens / static_cast<double>(p.tp) / flops_per_second;
  return {per_weight * w.qkv, per_weight * w.proj, per_weight * w.fc1, per_weight * w.fc2};
}

/// How Transformer Engine's userbuffers run a collective inside a GEMM (TE
/// pytorch/module/base.py initialize_ub, the default `methods`): ring exchange passes the tp
/// chunks peer to peer while the GEMM works on the chunk it has, so one chunk of the
/// collective stays exposed; pipeline splits the GEMM in 4 and reduce-scatters each piece
/// behind the next; bulk runs the whole collective beside an independent GEMM.
enum class OverlapMethod { ring_exchange, pipeline, bulk };

/// One collective of `c` seconds hidden behind a GEMM of `g` seconds: what stays exposed, and
/// the overlap's cost. Pipeline and bulk collectives are kernels on TE's default 16 SMs
/// (`num_sm = 16`), which the GEMM beside them does not have while they run: the GEMM slows
/// by 16/SMs of the overlapped time. Ring exchange copies with the copy engines (NeMo's
/// userbuffers configurations give it one SM): no cost. A GPU whose SM count is unknown
/// (given by numbers) pays none.
struct OverlappedCollective {
  double exposed_seconds = 0;  ///< what the GEMM does not hide
  double cost_seconds = 0;     ///< GEMM time lost to the collective's SMs
  [[nodiscard]] double seconds() const noexcept { return exposed_seconds + cost_seconds; }
};
[[nodiscard]] inline OverlappedCollective overlapped_collective(double c, double g,
                                                                OverlapMethod how,
                                                                std::int64_t tp,
                                                                double sms) noexcept {
  constexpr double comm_sms = 16.0;  // TE initialize_ub add_ub(num_sm = 16)
  const double cost = sms > 0 ? std::min(c, g) * comm_sms / sms : 0.0;
  switch (how) {
    case OverlapMethod::ring_exchange: return {std::max(c / static_cast<double>(tp), c - g), 0.0};
    case OverlapMethod::pipeline: return {std::max(c / 4.0, c - g), cost};  // num_splits = 4
    case OverlapMethod::bulk: return {std::max(0.0, c - g), cost};
  }
  return {c, 0.0};
}

/// Exposed tp time of one layer under tp_comm_overlap, `c` one reduce-scatter or all-gather
/// of the layer's message, TE's default pairing (base.py `methods`): forward, the attention
/// input's all-gather inside QKV (ring exchange), the attention output's reduce-scatter
/// inside the projection (pipeline), the same for FC1 and FC2; backward, the output
/// gradients' all-gathers inside the projection's and FC2's data-gradient GEMMs (ring
/// exchange) and the input gradients' reduce-scatters beside the QKV and FC1 weight-gradient
/// GEMMs (bulk). `forwards` counts the forward passes (2 with full recompute); `mlp` is false
/// for MoE layers whose MLP runs without tp collectives (layers_without_mlp_tp).
struct TpOverlap {
  double exposed_seconds = 0;  ///< collectives the GEMMs do not hide, cost included
  double cost_seconds = 0;     ///< of which: GEMM time lost to the collectives' SMs
};
[[nodiscard]] inline TpOverlap layer_tp_overlap(const LayerGemms& g, double c,
                                                double forwards, bool mlp, std::int64_t tp,
                                                double sms) noexcept {
  using M = OverlapMethod;
  TpOverlap o;
  auto add = [&](double times, double gemm, M how) {
    const OverlappedCollective x = overlapped_collective(c, gemm, how, tp, sms);
    o.exposed_seconds += times * x.seconds();
    o.cost_seconds += times * x.cost_seconds;
  };
  add(forwards, g.qkv, M::ring_exchange);
  add(forwards, g.proj, M::pipeline);
  add(1.0, g.proj, M::ring_exchange);
  add(1.0, g.qkv, M::bulk);
  if (mlp) {
    add(forwards, g.fc1, M::ring_exchange);
    add(forwards, g.fc2, M::pipeline);
    add(1.0, g.fc2, M::ring_exchange);
    add(1.0, g.fc1, M::bulk);
  }
  return o;
}

/// Tensor parallel: 2 all-reduces of s·b·h in the forward and 2 in the backward of every
/// layer (Narayanan et al. 2021 §3.2; with SP an equal-volume reduce-scatter + all-gather,
/// Korthikanti §4.2.2); full recompute repeats the forward pair. Half of them are the MLP's.
/// With tp_comm_overlap and SP each reduce-scatter and all-gather runs inside a GEMM
/// (layer_tp_overlap) and only what the GEMMs do not hide is on the critical path, where the
/// tp group's tier has peer memory: Transformer Engine's userbuffers exchange through CUDA IPC
/// or multicast peer mappings ("Tensor-parallel GPUs must be on a single node, and connected
/// over NVLink/NVSwitch", TE examples/pytorch/comm_gemm_overlap/README.md, Requirements).
/// Across the network every tp collective stays on the critical path.
inline void add_tensor_parallel(const Model& m, const Cluster& c, const Plan& p,
                                const StageShape& g, double flops_per_second,
                                TrainingTime& t) noexcept {
  if (p.tp <= 1) return;
  const std::size_t k = axis_tier(p, c, Axis::tp);
  t.tp_message_bytes = g.local_tokens * g.micro_batch * static_cast<double>(m.hidden) *
                       bytes_of(m.precision.activations);
  t.tp_collective =
      cheapest_collective(Collective::all_reduce, p.tp, t.tp_message_bytes, c.tiers[k]);
  // Full recompute repeats the forward pair; op-level checkpointing its two all-gathers
  // (torchtitan saves reduce-scatter outputs, not all-gather ones: `_save_list`), half a pair.
  const double per_layer = p.recompute == Recompute::full ? 6.0
                           : p.recompute == Recompute::op ? 5.0
                                                          : 4.0;
  const double plain_mlp_layers = layers_without_mlp_tp(m, p);
  t.tp_messages = static_cast<std::int64_t>(per_layer * g.layers -
                                            per_layer / 2.0 * plain_mlp_layers);
  t.tp_seconds = static_cast<double>(t.tp_messages) * t.tp_collective.seconds();
  if (p.tp_comm_overlap && p.sequence_parallel && c.tiers[k].peer_memory) {
    const double half =
        cheapest_collective(Collective::all_gather, p.tp, t.tp_message_bytes, c.tiers[k])
            .seconds();
    const LayerGemms gemm =
        layer_gemm_seconds(m, p, g.local_tokens * g.micro_batch, flops_per_second);
    const double forwards = p.recompute == Recompute::full ? 2.0 : 1.0;
    const double sms = c.gpu.compute_units;
    const TpOverlap with_mlp = layer_tp_overlap(gemm, half, forwards, true, p.tp, sms);
    const TpOverlap without = layer_tp_overlap(gemm, half, forwards, false, p.tp, sms);
    t.tp_unoverlapped_seconds = t.tp_seconds;
    t.tp_seconds = (g.layers - plain_mlp_layers) * with_mlp.exposed_seconds +
                   plain_mlp_layers * without.exposed_seconds;
    t.tp_overlap_cost_seconds = (g.layers - plain_mlp_layers) * with_mlp.cost_seconds +
                                plain_mlp_layers * without.cost_seconds;
  }
  if (k == c.network_index()) {
    const double n = static_cast<double>(p.tp);
    t.inter_node_bytes += g.accum * static_cast<double>(t.tp_messages) * 2.0 * (n - 1.0) / n *
                          t.tp_message_bytes;
  }
}

/// Context parallel (ring attention, Liu et al. 2023, arXiv 2310.01889): cp − 1 K/V blocks of
/// 2·(s/cp)·b·h_kv·2 bytes per layer forward; the backward passes K/V and their gradients
/// again (2×); each layer's ring overlaps that layer's attention compute.
inline void add_context_parallel(const Model& m, const Cluster& c, const Plan& p,
                                 const StageShape& g, TrainingTime& t) noexcept {
  if (p.cp <= 1) return;
  const std::size_t k = axis_tier(p, c, Axis::cp);
  t.cp_block_bytes =
      2.0 * g.local_tokens * g.micro_batch * kv_hidden(m) * bytes_of(m.precision.activations);
  t.cp_step = cheapest_collective(Collective::point_to_point, 2, t.cp_block_bytes, c.tiers[k]);
  const double passes = p.recompute == Recompute::full ? 4.0 : 3.0;
  t.cp_passes = passes;
  // Each ring step is its own send/recv launch (collective_launch_seconds): at short
  // sequences, where a step's block is small, the fixed cost is most of it.
  const double per_layer = passes * static_cast<double>(p.cp - 1) *
                           (t.cp_step.seconds() + collective_launch_seconds);
  const double attention_per_layer = t.attention_seconds / g.layers;
  t.cp_seconds = per_layer * g.layers;
  t.cp_exposed_seconds = std::max(0.0, per_layer - attention_per_layer) * g.layers;
  t.cp_overlap_cost_seconds = c.tiers[k].processor_usage * (t.cp_seconds - t.cp_exposed_seconds);
  t.cp_exposed_seconds += t.cp_overlap_cost_seconds;
  if (k == c.network_index()) {
    t.inter_node_bytes +=
        g.accum * passes * static_cast<double>(p.cp - 1) * t.cp_block_bytes * g.layers;
  }
}

/// Pipeline: one activation send forward and one gradient send backward per micro-batch per
/// boundary, s·b·h·2 bytes, split by tp with scatter/gather (Narayanan et al. 2021 §4.1).
/// With pp_comm_overlap and virtual stages (Megatron-LM --overlap-p2p-communication) each send
/// runs beside the next chunk's pass, a forward chunk (1/3 of the micro-batch's compute, over
/// v) or a backward one (2/3, over v), and only what outlasts that chunk stays exposed.
inline void add_pipeline(const Model& m, const Cluster& c, const Plan& p, const StageShape& g,
                         TrainingTime& t) noexcept {
  if (p.pp <= 1) return;
  const std::size_t k = axis_tier(p, c, Axis::pp);
  t.pp_message_bytes = g.local_tokens * g.micro_batch * static_cast<double>(m.hidden) *
                       bytes_of(m.precision.activations) / static_cast<double>(p.tp);
  // Each send is its own launch (collective_launch_seconds): v virtual stages pay v times as
  // many (Narayanan et al. 2021 §2.2.2), so interleaving deeper is not free.
  const double send = cheapest_collective(Collective::point_to_point, 2, t.pp_message_bytes,
                                          c.tiers[k]).seconds() +
                      collective_launch_seconds;
  t.pp_seconds = p2p_messages_per_micro_batch(p) * send;
  if (p.pp_comm_overlap && p.virtual_stages > 1) {
    const double v = static_cast<double>(p.virtual_stages);
    const double chunk = t.compute_seconds() / v;
    t.pp_seconds =
        v * (std::max(0.0, send - chunk / 3.0) + std::max(0.0, send - 2.0 * chunk / 3.0));
  }
  if (k == c.network_index()) {
    t.inter_node_bytes += g.accum * p2p_messages_per_micro_batch(p) * t.pp_message_bytes;
  }
}

/// Expert parallelism: the token dispatch and combine of the stage's MoE layers, exposed as
/// far as the overlap option allows (model/expert_traffic.hpp; docs/moe.md §5).
/// A shared expert's GEMMs are split over tp like the MLP and see the micro-batch's b·s/cp
/// tokens: 2 · shared params / (tp · cp) · b·s FLOPs forward per MoE layer, at the compute rate.
inline void add_expert_traffic(const Model& m, const Cluster& c, const Plan& p,
                               const StageShape& g, double flops_per_second,
                               TrainingTime& t) noexcept {
  t.ep = expert_traffic(m, c, p);
  const double shared_forward_seconds =
      2.0 * static_cast<double>(m.moe.shared_experts) * expert_params(m) *
      static_cast<double>(m.seq_len) * static_cast<double>(p.micro_batch) /
      (static_cast<double>(p.tp) * static_cast<double>(p.cp)) / flops_per_second;
  t.ep.exposed_seconds =
      exposed_all_to_all_seconds(m, p, t.ep, t.compute_seconds(), shared_forward_seconds);
  if (t.ep.tier == c.network_index()) t.inter_node_bytes += g.accum * t.ep.inter_node_bytes;
}

/// The rate of the work that stays in bf16 when the GEMMs run in another format (FP8): the
/// attention core (Transformer Engine's DotProductAttention runs in bf16 unless
/// fp8_dot_product_attention, off by default in Megatron-LM --fp8-dot-product-attention and
/// NeMo) and the output layer (Megatron-LM's GPTModel output_layer is a
/// tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so not FP8). It is
/// the GPU's bf16 effective rate; `flops_per_second` itself when the GEMMs are bf16/fp16.
[[nodiscard]] inline double high_precision_flops_per_second(const Model& m, const Cluster& c,
                                                            double flops_per_second) noexcept {
  const Dtype d = m.precision.compute;
  if (d == Dtype::bf16 || d == Dtype::fp16 || !(c.gpu.flops_per_second > 0)) {
    return flops_per_second;
  }
  return std::min(flops_per_second, c.gpu.flops_per_second);
}

/// Per-GPU time of one optimizer step of a training plan at `flops_per_second`.
/// Step = (m + pp − 1) micro-batch slots of the largest stage (1F1B; the pp − 1 extra slots
/// are the bubble, Narayanan et al. 2021 §2.2) plus the exposed data-parallel traffic.
[[nodiscard]] inline TrainingTime training_time(const Model& m, const Cluster& c,
                                                const Plan& p,
                                                double flops_per_second) noexcept {
  TrainingTime t;
  const MicroBatchFlops f = micro_batch_flops(m, p);
  const double high_precision = high_precision_flops_per_second(m, c, flops_per_second);
  double forward_seconds = f.forward() / flops_per_second;
  double backward_seconds = f.backward() / flops_per_second;
  if (high_precision == flops_per_second) {
    t.dense_seconds = f.dense / flops_per_second;
    t.attention_seconds = f.attention / flops_per_second;
    t.recompute_seconds = f.recompute / flops_per_second;
  } else {
    t.dense_seconds = (f.dense - f.dense_high_precision) / flops_per_second +
                      f.dense_high_precision / high_precision;
    t.attention_seconds = f.attention / high_precision;
    t.recompute_seconds = (f.recompute - f.recompute_high_precision) / flops_per_second +
                          f.recompute_high_precision / high_precision;
    forward_seconds = (t.dense_seconds + t.attention_seconds) / 3.0;
    backward_seconds = 2.0 * forward_seconds + t.recompute_seconds;
  }
  if (const double bandwidth = c.gpu.elementwise_bytes_per_second; bandwidth > 0) {
    const ElementwiseBytes e = elementwise_bytes(m, p);
    t.elementwise_seconds = e.total() / bandwidth;
    forward_seconds += e.forward / bandwidth;
    backward_seconds += e.backward / bandwidth;
  }
  const StageShape g{static_cast<double>(stage_layers(m, p)),
                     static_cast<double>(m.seq_len) / static_cast<double>(p.cp),
                     static_cast<double>(p.micro_batch), static_cast<double>(p.grad_accum)};
  add_scores_io(m, c, p, g, t);
  add_tensor_parallel(m, c, p, g, flops_per_second, t);
  add_context_parallel(m, c, p, g, t);
  add_pipeline(m, c, p, g, t);
  if (is_moe(m)) add_expert_traffic(m, c, p, g, flops_per_second, t);

  t.micro_batches = p.grad_accum;
  const double slot = t.micro_batch_seconds();
  t.bubble_seconds = bubble_slots(p) * slot;
  fill_data_parallel_traffic(m, c, p, forward_seconds, backward_seconds, t.dp);
  if (t.dp.tier == c.network_index()) {
    t.inter_node_bytes += t.dp.bytes_per_step - t.dp.replica_bytes_per_step;
  }
  if (t.dp.replica_tier == c.network_index()) t.inter_node_bytes += t.dp.replica_bytes_per_step;
  if (is_moe(m)) {  // a dense model's expert terms stay zero without being computed
    t.expert_dp = expert_data_parallel_traffic(m, c, p, forward_seconds, backward_seconds);
    if (t.expert_dp->tier == c.network_index()) t.inter_node_bytes += t.expert_dp->bytes_per_step;
  }
  t.step_seconds = static_cast<double>(p.grad_accum) * slot + t.bubble_seconds +
                   t.dp.exposed_seconds + t.expert_dp_exposed_seconds();
  t.global_sequences = static_cast<double>(p.dp * p.micro_batch * p.grad_accum);
  const double tokens = t.global_sequences * static_cast<double>(m.seq_len);
  t.tokens_per_second = tokens / t.step_seconds;
  const double gpus = static_cast<double>(world_size(c));
  t.model_flops_per_second =
      t.global_sequences * model_flops_per_sequence(m) / (t.step_seconds * gpus);
  t.mfu = t.global_sequences * executed_model_flops_per_sequence(m, p) /
          (t.step_seconds * gpus * flops_per_second);
  return t;
}

}  // namespace planner

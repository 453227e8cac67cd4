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

/// The data-parallel (gradient and ZeRO) traffic of one optimizer step and what the backward
/// and forward windows hide of it (docs/model.md §7): the buffer-sized collectives of each ZeRO
/// stage, bucketed, their exposure, hybrid sharding's replica all-reduce, and the expert-data-
/// parallel group's. Part of the step time (step_time.hpp), which holds them in TrainingTime.

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

/// Each rank's slice of a list-based collective: PyTorch 1.8's ProcessGroupNCCL copies every
/// output tensor of allgather out of the flat NCCL buffer, and every input of reduce_scatter
/// into it, one copy_ per rank issued from a C++ loop (the flat-buffer _all_gather_base only
/// came later), and DeepSpeed's stage 3 of 2021 gathers and reduce-scatters through that API
/// (the same software as Plan::zero3_blocking_gathers). 6.7 µs of host time per copy: the
/// slope of N copy_ calls issued from a TorchScript loop against N = 8 … 2,240 on our H200 host
/// (validation/microbench/h200/copy_loop.csv, PyTorch 2.11; a launch microbenchmark the
/// calibration rule admits, on a 2026 host rather than 2021's). With the host synchronised
/// before every gather it cannot run ahead, so the copies are on the critical path; the
/// 8-rank measurement behind blocking_gather_issue_seconds holds its gather's first 8.
inline constexpr double list_collective_copy_seconds = 6.7e-6;

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
      if (p.unsharded_gradient_accumulation) {
        // One reduce-scatter a step, issued after the last backward has finished
        // (pipelining/stage.py runs FSDP2's post-backward by hand then), so no backward is
        // left to hide it; the gather once, before the first forward, as ZeRO-2 does.
        t.collectives_per_step = 2.0;
        t.comm_seconds = rs + ag;
        t.whole_buffer_seconds = rs_whole + ag_whole;
        t.exposed_seconds = rs + exposed_seconds(ag, ag_bucket, forward_seconds);
        t.bytes_per_step = same_dtype ? 2.0 * share * t.gradient_bytes
                                      : share * (t.gradient_bytes + t.gather_bytes);
        break;
      }
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
      // And each of its collectives, two gathers and a reduce-scatter a bucket, copies one
      // slice per rank (list_collective_copy_seconds) beyond the 8 that measurement held.
      if (p.zero3_blocking_gathers) {
        const double ranks = static_cast<double>(t.ranks);
        const double copies = 2.0 * std::max(0.0, ranks - 8.0) + ranks;
        t.issue_seconds = n * buckets *
                          (2.0 * blocking_gather_issue_seconds +
                           copies * list_collective_copy_seconds);
      }
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

}  // namespace planner

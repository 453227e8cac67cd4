#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "planner/base/dtype.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/resilience.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/memory.hpp"

/// Checkpoints of a training plan: the state they hold, the time to move it, the Young–Daly
/// interval and Daly's goodput. Formulas and sources: docs/resilience.md §4–§6.

namespace planner {

/// The complete training state of a plan, per rank (the most-loaded rank, as the memory ledger)
/// and for the whole job (one copy of each parameter's state plus every rank's own state).
struct CheckpointState {
  // Per rank, from the ledger's state lines.
  double weights_bytes = 0;     ///< weights in their dtype (bf16): the ledger's weights line
  double master_bytes = 0;      ///< fp32 master weights: 4 of the ledger's optimizer bytes/param
  double moments_bytes = 0;     ///< the rest of the optimizer line (Adam's m and v)
  double gradients_bytes = 0;   ///< the ledger's gradients line, when saved
  double rng_bytes = 0;
  double data_loader_bytes = 0;
  // Whole job.
  double total_bytes = 0;
  [[nodiscard]] double rank_bytes() const noexcept {
    return weights_bytes + master_bytes + moments_bytes + gradients_bytes + rng_bytes +
           data_loader_bytes;
  }
};

/// Splits the ledger's state lines into the checkpoint's items. The optimizer line holds
/// bytes_per_param minus the weight and gradient dtypes' bytes per parameter (12 of 16 for
/// bf16 mixed-precision Adam): the first 4 are the fp32 master copy, the rest
/// the moments (Rajbhandari et al. 2020, arXiv 1910.02054, §3.1: K = 12 = 4 + 4 + 4 for Adam).
/// The job total keeps one copy of every parameter's state (data-parallel replicas hold the
/// same values and write once), plus each rank's RNG and data-loader state.
[[nodiscard]] inline CheckpointState checkpoint_state(const Model& m, const Training& w,
                                                      const Plan& p, const MemoryLedger& ledger,
                                                      const CheckpointPolicy& policy) noexcept {
  CheckpointState s;
  const double weight_b = bytes_of(m.precision.weights);
  const double grad_b = bytes_of(m.precision.gradients);
  const double optimizer_per_param = std::max(0.0, w.bytes_per_param - weight_b - grad_b);
  const double master_share =
      optimizer_per_param > 0 ? std::min(4.0, optimizer_per_param) / optimizer_per_param : 0.0;
  s.weights_bytes = ledger.weights_bytes;
  s.master_bytes = ledger.optimizer_bytes * master_share;
  s.moments_bytes = ledger.optimizer_bytes - s.master_bytes;
  s.gradients_bytes = policy.gradients ? ledger.gradients_bytes : 0.0;
  s.rng_bytes = policy.rng_state_bytes;
  s.data_loader_bytes = policy.data_loader_state_bytes;
  const double params = total_params(m);
  const double per_param = weight_b + optimizer_per_param + (policy.gradients ? grad_b : 0.0);
  s.total_bytes = params * per_param + static_cast<double>(gpus(p)) *
                                           (policy.rng_state_bytes + policy.data_loader_state_bytes);
  return s;
}

/// Time to move `total_bytes` spread evenly over `nodes` nodes: the slower of the aggregate
/// limit and one node's limit (distributed checkpointing writes every node's shards in
/// parallel, e.g. PyTorch Distributed Checkpoint, Megatron-LM dist_checkpointing).
[[nodiscard]] inline double transfer_seconds(double total_bytes, std::int64_t nodes,
                                             double aggregate_bytes_per_second,
                                             double node_bytes_per_second) noexcept {
  double t = total_bytes / aggregate_bytes_per_second;
  if (node_bytes_per_second > 0) {
    t = std::max(t, total_bytes / static_cast<double>(nodes) / node_bytes_per_second);
  }
  return t;
}

/// Young's first-order optimum checkpoint interval sqrt(2·δ·M) for checkpoint cost δ and mean
/// time between failures M (Young 1974, CACM 17(9):530–531; the leading term of Daly 2006,
/// FGCS 22(3):303–312, whose higher-order estimate adds terms in sqrt(δ/2M)).
[[nodiscard]] inline double young_daly_interval_seconds(double checkpoint_seconds,
                                                        double mtbf_seconds) noexcept {
  return std::sqrt(2.0 * checkpoint_seconds * mtbf_seconds);
}

/// Expected fraction of wall time that is useful training, for compute segments of τ between
/// checkpoints of cost δ, restart R and exponential failures of mean M: Daly 2006 gives the
/// expected wall time T_w = M·e^{R/M}·(e^{(τ+δ)/M} − 1)·T_s/τ for T_s of work, so
/// goodput = T_s/T_w = τ / (M·e^{R/M}·(e^{(τ+δ)/M} − 1)). To first order in 1/M this is
/// τ/(τ+δ) · (1 − (R + (τ+δ)/2)/M): checkpoint overhead, restart, half a segment lost.
[[nodiscard]] inline double goodput(double interval_seconds, double checkpoint_seconds,
                                    double restart_seconds, double mtbf_seconds) noexcept {
  const double m = mtbf_seconds;
  return interval_seconds /
         (m * std::exp(restart_seconds / m) *
          std::expm1((interval_seconds + checkpoint_seconds) / m));
}

}  // namespace planner

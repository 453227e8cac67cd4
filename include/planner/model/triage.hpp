#pragma once

/// The first read of a memory ledger, before any search: which remedy the overflowing
/// resource calls for (seed 004, "Choose data, sharded, tensor, or pipeline parallelism":
/// DDP when a replica fits, sharding when total state does not, tensor parallelism when one
/// layer does not fit, pipelining when activations outweigh parameters).

namespace planner {

struct Triage {
  double replica_bytes = 0;         ///< parameters + gradients + optimizer + activations
  bool replica_fits = false;        ///< plain data parallelism (DDP) is possible
  bool shard_state = false;         ///< the replicated state must be sharded (ZeRO/FSDP)
  bool split_tensor = false;        ///< the largest layer alone overflows: tensor parallelism
  bool pipeline_candidate = false;  ///< activations outweigh parameters
};

[[nodiscard]] constexpr Triage triage(double parameter_bytes, double gradient_bytes,
                                      double optimizer_bytes, double activation_bytes,
                                      double largest_layer_bytes, double capacity_bytes) noexcept {
  Triage t;
  t.replica_bytes = parameter_bytes + gradient_bytes + optimizer_bytes + activation_bytes;
  t.replica_fits = t.replica_bytes <= capacity_bytes;
  t.shard_state = !t.replica_fits;
  t.split_tensor = largest_layer_bytes > capacity_bytes;
  t.pipeline_candidate = activation_bytes > parameter_bytes;
  return t;
}

}  // namespace planner

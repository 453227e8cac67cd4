#pragma once
#include <cstdint>

/// The hardware: identical GPUs in identical nodes, two network tiers.

namespace planner {

/// One level of the network, as an α–β model: `latency_seconds` per hop (α) and
/// `bandwidth_bytes_per_second` per GPU (1/β).
struct Tier {
  double bandwidth_bytes_per_second = 0;
  double latency_seconds = 0;
};

struct Gpu {
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0;
  double flops_per_second = 0;  ///< effective dense bf16, not the datasheet peak
  double reserve_bytes = 0;     ///< kept back for the framework, CUDA context, fragmentation
};

struct Cluster {
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  Gpu gpu;
  Tier intra_node;
  Tier inter_node;
};

[[nodiscard]] inline std::int64_t world_size(const Cluster& c) noexcept {
  return c.nodes * c.gpus_per_node;
}

}  // namespace planner

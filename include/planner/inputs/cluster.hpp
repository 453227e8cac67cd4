#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/base/dtype.hpp"
#include "planner/inputs/attention_kernel.hpp"

/// The hardware: identical GPUs in identical nodes, joined by a list of network tiers
/// (docs/model.md §5). Tier 0 is the node's fabric (NVLink/NVSwitch, xGMI); the last tier is
/// the network between the outermost domains (InfiniBand, RoCE); tiers in between are larger
/// domains (an NVL72 rack of 18 four-GPU trays, say). A group of ranks pays the innermost tier
/// whose domain holds all of it.

namespace planner {

/// One level of the network, as an α–β model: `latency_seconds` per hop (α) and
/// `bandwidth_bytes_per_second` per GPU (1/β).
struct Tier {
  double bandwidth_bytes_per_second = 0;
  double latency_seconds = 0;
  /// GPUs one domain of this tier spans, in consecutive ranks: tier 0's is the node; the
  /// last tier's is the whole cluster (filled in by `world_domain`).
  std::int64_t domain_gpus = 0;
  /// The GPUs of one domain can address each other's memory (NVLink/NVSwitch), which the
  /// one-shot all-reduce kernels need (collectives.hpp `available`).
  bool peer_memory = false;
  std::string name;  ///< as the scenario file and the output spell it
  /// Share of the GPU's compute that a collective on this tier takes while it runs hidden
  /// behind the GEMMs: NCCL's kernels occupy SMs and HBM bandwidth beside them. The hidden
  /// part of an overlapped data- or context-parallel collective costs its time × this
  /// (Calculon's per-network processor_usage, calculon/llm/llm.py; docs/model.md §7). 0 =
  /// free overlap, a GPU given by numbers; a catalog GPU's fabric gives it.
  double processor_usage = 0;
  /// A group with several ranks in each node may run its all-reduce, reduce-scatter and
  /// all-gather node-aware across this tier, as NCCL does: a ring or tree with one channel per
  /// NIC, so the node's ranks cross on their own rails at once (collectives.hpp
  /// multi_rail_collective). false: flat only, every collective at one GPU's share of this
  /// tier (the worked scenarios' stated ring model, docs/model.md §4).
  bool hierarchical = true;
};

struct Gpu {
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0;
  double flops_per_second = 0;  ///< effective dense rate at bf16/fp16, not the datasheet peak
  /// Effective dense rates of other compute dtypes; 0 = not given (docs/scenario-format.md).
  DtypeRates flops_by_dtype{};
  /// Datasheet dense peaks by dtype, from the catalog entry the scenario names; 0 = not known
  /// (a GPU given by numbers). MFU is reported against them (docs/output.md).
  DtypeRates peak_flops_by_dtype{};
  double reserve_bytes = 0;     ///< kept back for the framework, CUDA context, fragmentation
  /// reserve_bytes is the catalog's runtime default (CUDA context, NCCL, cuBLAS workspaces),
  /// not the scenario's: the scenario named a catalog GPU and gave no `reserve`.
  bool reserve_default = false;
  /// Training: the caching allocator's reserved memory over what it has allocated at the
  /// peak, as a share of the ledger's tensors (0 when the scenario's `reserve` covers it).
  double allocator_fraction = 0;
  /// Eager PyTorch's elementwise temporaries as a share of the activations (the same default).
  double eager_activation_fraction = 0;
  /// HBM bandwidth at which training times the memory-bound operations apart from the GEMMs
  /// (model/elementwise.hpp): the catalog's when the FLOP rate is its bf16 peak times an
  /// efficiency, a GEMM rate. 0 when the scenario types `flops`, an effective rate that
  /// already covers them (the seed's "400 TFLOP/s effective").
  double elementwise_bytes_per_second = 0;
  /// The rate is the catalog's bf16 peak times its fitted default efficiency (neither `flops`
  /// nor `efficiency` typed): the rate whose measured error `plan` quotes (report/accuracy.hpp).
  bool fitted_rate = false;
  /// The fp8 rate is the catalog's FP8 peak at the bf16 efficiency (not typed in
  /// flops_by_dtype): the loader scales it by the FP8 recipe's fitted ratio (io/catalog.hpp).
  bool fp8_rate_from_efficiency = false;
  /// Streaming multiprocessors (AMD: compute units), from the catalog; 0 = not known. The
  /// share of them an overlapped collective's kernels take is the overlap's cost
  /// (micro_batch_time.hpp overlapped_collective).
  double compute_units = 0;
  /// The catalog's attention-rate curve of each kernel (none for a GPU without a
  /// measurement, or whose FLOP rate the scenario types: an effective rate covers attention),
  /// and the one the workload's kernel selects, which training times attention at.
  std::array<AttentionRate, attention_kernel_count> attention_rates{};
  AttentionRate attention_rate{};
};

struct Cluster {
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  Gpu gpu;
  /// Innermost first; at least two (the node and the network).
  std::vector<Tier> tiers{Tier{0, 0, 0, true, "intra_node"}, Tier{0, 0, 0, false, "inter_node"}};

  [[nodiscard]] Tier& node_tier() noexcept { return tiers.front(); }
  [[nodiscard]] const Tier& node_tier() const noexcept { return tiers.front(); }
  [[nodiscard]] Tier& network_tier() noexcept { return tiers.back(); }
  [[nodiscard]] const Tier& network_tier() const noexcept { return tiers.back(); }
  [[nodiscard]] std::size_t network_index() const noexcept { return tiers.size() - 1; }
};

[[nodiscard]] inline std::int64_t world_size(const Cluster& c) noexcept {
  return c.nodes * c.gpus_per_node;
}

/// GPUs in one domain of tier `k`: the node for tier 0, the world for the last tier.
[[nodiscard]] inline std::int64_t domain_gpus(const Cluster& c, std::size_t k) noexcept {
  if (k == 0) return c.gpus_per_node;
  if (k + 1 >= c.tiers.size()) return world_size(c);
  return c.tiers[k].domain_gpus;
}

/// The effective FLOP rate of a compute dtype: its own rate when given, else bf16's (the
/// `flops` figure) for the 16-bit dtypes; 0 when the scenario gives none (the loader refuses).
[[nodiscard]] inline double flops_for(const Gpu& g, Dtype compute) noexcept {
  const double own = g.flops_by_dtype[static_cast<std::size_t>(compute)];
  if (own > 0) return own;
  return compute == Dtype::bf16 || compute == Dtype::fp16 ? g.flops_per_second : 0.0;
}

}  // namespace planner

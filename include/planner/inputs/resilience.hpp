#pragma once
#include <optional>

/// The scenario's "resilience" input: storage, checkpoint policy, failure rate and restart
/// times, each default with its source (docs/resilience.md §3–§5). The functions over them
/// are model/checkpoint.hpp.

namespace planner {

/// Per-GPU mean time between unexpected job interruptions, from the Llama 3 405B pre-training
/// report (Dubey et al. 2024, arXiv 2407.21783, §3.3.4 and Table 5): 419 unexpected
/// interruptions in a 54-day snapshot on 16,384 H100 GPUs, so 54·24 h · 16384 / 419
/// = 50,677 GPU-hours per interruption (one every 3.09 h for the whole job).
inline constexpr double llama3_gpu_mtbf_seconds = 54.0 * 86400.0 * 16384.0 / 419.0;

/// Where checkpoints go. Rates in bytes/s; 0 for node_bytes_per_second means no per-node limit.
struct Storage {
  double write_bytes_per_second = 0;  ///< aggregate over the job
  double read_bytes_per_second = 0;   ///< aggregate; the loader defaults it to the write rate
  double node_bytes_per_second = 0;   ///< one node's own limit (its NICs or local disks)
};

struct CheckpointPolicy {
  std::optional<double> interval_seconds;  ///< compute time between checkpoints; none: Young–Daly
  bool asynchronous = false;  ///< copy to host memory on the critical path, write behind
  /// Device-to-host copy rate of an asynchronous snapshot: PCIe 5.0 ×16 per direction,
  /// 32 GT/s · 16 lanes · 128/130 / 8 bits = 63.0 GB/s (PCI-SIG PCIe 5.0 base specification).
  double host_copy_bytes_per_second = 32e9 * 16.0 * 128.0 / 130.0 / 8.0;
  bool gradients = false;  ///< also save the gradient buffers (not needed at a step boundary)
  /// RNG states per rank: Python's and NumPy's MT19937 (624 32-bit words = 2,496 bytes each,
  /// Matsumoto & Nishimura 1998), torch's CPU generator (5,056 bytes as torch.get_rng_state()
  /// returns it) and the CUDA Philox seed and offset (16 bytes): 10,064 bytes.
  double rng_state_bytes = 2496.0 + 2496.0 + 5056.0 + 16.0;
  /// Data-loader position per rank: epoch and consumed samples, two 64-bit integers (what
  /// Megatron-LM's checkpoint keeps, consumed_train_samples with the iteration).
  double data_loader_state_bytes = 16.0;
};

/// The parts of a restart other than loading the checkpoint, in seconds. Defaults:
/// docs/resilience.md §5 (the detection default is PyTorch's ProcessGroupNCCL timeout).
struct RestartTimes {
  double detect_seconds = 600.0;      ///< collective timeout that notices a dead or hung rank
  double reschedule_seconds = 120.0;  ///< scheduler replaces the node and requeues the job
  double start_seconds = 120.0;       ///< process start, framework import, NCCL communicators
  double warmup_seconds = 60.0;       ///< first steps at low speed (allocator, compile, caches)
};

/// The scenario's "resilience" object.
struct Resilience {
  double gpu_mtbf_seconds = llama3_gpu_mtbf_seconds;
  Storage storage;
  CheckpointPolicy checkpoint;
  RestartTimes restart;
  std::optional<double> budget_seconds;  ///< "restart under N minutes", lost work included
};

}  // namespace planner

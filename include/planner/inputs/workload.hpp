#pragma once
#include <cstdint>

/// What the cluster is asked to do: train to a global-batch target, or serve under a
/// per-token latency SLO.

namespace planner {

enum class WorkloadKind { training, serving };

struct Training {
  double global_batch_tokens = 0;  ///< target tokens per optimizer step
  std::int64_t micro_batch = 1;    ///< default micro-batch (sequences) for pinned plans
  double step_time_per_micro_batch_seconds = 0;  ///< measured; 0 = use the FLOP model
  double bytes_per_param = 16;  ///< 2 weights + 2 grads + rest optimizer (mixed-precision Adam)
};

struct Serving {
  std::int64_t batch = 1;             ///< concurrent sequences per engine
  std::int64_t context_tokens = 0;    ///< tokens of KV cache per sequence
  double slo_per_token_seconds = 0;   ///< time-per-output-token target
  double memory_bandwidth_efficiency = 1.0;  ///< achieved / peak HBM bandwidth in decode
  double bytes_per_param = 2;        ///< weight bytes (bf16)
};

struct Workload {
  WorkloadKind kind = WorkloadKind::training;
  Training training;
  Serving serving;
};

}  // namespace planner

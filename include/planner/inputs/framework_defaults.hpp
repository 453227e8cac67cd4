#pragma once
#include "planner/base/dtype.hpp"
#include "planner/inputs/constraints.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/workload.hpp"

/// What the framework a scenario names (`constraints.framework`, `--framework`, `export
/// --to`) allocates where the scenario says nothing: the framework's own default, so the
/// ledger is the one the launched job will have (docs/constraints.md).

namespace planner {

/// Megatron-LM under bf16 keeps its main gradients in fp32 and reduces them in fp32
/// (megatron/training/arguments.py validate_args: "bfloat16 requires gradient accumulation and
/// all-reduce to be done in fp32", accumulate_allreduce_grads_in_fp32 set unless
/// --grad-reduce-in-bf16): where the scenario does not state the gradients' dtype, fp32, and
/// bytes_per_param 2 more (16 → 18: 2 bf16 weights + 4 fp32 main gradients + 12 fp32 master,
/// m and v; the optimizer's share, bytes_per_param − weights − gradients, is kept). A stated
/// dtype is the user's (a stated bf16 is exported as --grad-reduce-in-bf16); fp16 weights keep
/// fp16 gradients, as Megatron-LM does.
inline void apply_framework_defaults(Framework f, Model& m, Workload& w) noexcept {
  if (f != Framework::megatron || w.kind != WorkloadKind::training) return;
  if (m.precision.gradients_stated) return;
  if (m.precision.weights != Dtype::bf16) return;  // unstated gradients are the default bf16
  m.precision.gradients = Dtype::fp32;
  w.training.bytes_per_param += bytes_of(Dtype::fp32) - bytes_of(Dtype::bf16);
}

}  // namespace planner

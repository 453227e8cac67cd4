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
///
/// Megatron-LM's usual overlaps, where the scenario does not state them: the interleaved
/// schedule's sends beside compute (megatron/training/arguments.py `--no-overlap-p2p-
/// communication`, action store_false, dest overlap_p2p_comm: on unless switched off), and the
/// tp collectives inside the GEMMs (`--tp-comm-overlap`, off in arguments.py but set by the
/// NVIDIA recipes the validation records use: dgxc gpt3_175b_hydra.yaml ub_tp_comm_overlap
/// true; timed only where the tp group has peer memory, micro_batch_time.hpp). The export writes both.
///
/// torchtitan reduces in fp32 (job_config.py `mixed_precision_reduce`, "float32" its default;
/// FSDP2's MixedPrecisionPolicy reduce_dtype), and under pipelining its FSDP2 stages
/// accumulate the gradients unsharded until the last micro-batch (pipelining/stage.py
/// backward_maybe_with_nosync): where the scenario does not state the gradients' dtype, fp32,
/// with `bytes_per_param` unchanged (FSDP2's sharded state is fp32 weights, fp32 gradients and
/// Adam's two moments, 16 bytes, which the ledger's 2 + 4 + 10 matches), and
/// `unsharded_gradient_accumulation` on (it acts on ZeRO-2, torchtitan's pipelined FSDP2).
/// Its tensor parallelism is PyTorch's DTensor one (parallelisms/parallelize_llama.py at
/// 9dec370: ColwiseParallel after PrepareModuleInput to Replicate()), whose column-parallel
/// GEMMs keep the gathered input: `tp_saves_gathered_inputs` on.
/// fp32 gradients where the scenario leaves bf16 weights' gradients unstated (the default
/// bf16); true when it set them.
inline bool fp32_gradients_unless_stated(Model& m) noexcept {
  if (m.precision.gradients_stated || m.precision.weights != Dtype::bf16) return false;
  m.precision.gradients = Dtype::fp32;
  return true;
}

inline void apply_framework_defaults(Framework f, Model& m, Workload& w) noexcept {
  if (w.kind != WorkloadKind::training) return;
  if (f == Framework::torchtitan) {
    w.training.unsharded_gradient_accumulation = true;
    w.training.tp_saves_gathered_inputs = true;
    (void)fp32_gradients_unless_stated(m);
    return;
  }
  if (f != Framework::megatron) return;
  if (!w.training.tp_comm_overlap_stated) w.training.tp_comm_overlap = true;
  if (!w.training.pp_comm_overlap_stated) w.training.pp_comm_overlap = true;
  if (fp32_gradients_unless_stated(m)) {
    w.training.bytes_per_param += bytes_of(Dtype::fp32) - bytes_of(Dtype::bf16);
  }
}

}  // namespace planner

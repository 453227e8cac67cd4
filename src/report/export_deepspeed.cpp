#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "planner/report/explain_text.hpp"
#include "planner/report/export.hpp"
#include "planner/report/report.hpp"

/// DeepSpeed config keys, DeepSpeed 0.19.6 (commit edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
/// deepspeed/runtime/constants.py (train_batch_size, train_micro_batch_size_per_gpu,
/// gradient_accumulation_steps, bf16.enabled), deepspeed/runtime/zero/config.py
/// (zero_optimization.stage, stage3_max_live_parameters),
/// deepspeed/runtime/tensor_parallel/config.py (tensor_parallel.autotp_size),
/// deepspeed/runtime/config.py get_pipeline_config (pipeline.stages,
/// pipeline.activation_checkpoint_interval), and
/// deepspeed/runtime/activation_checkpointing/config.py (activation_checkpointing.
/// partition_activations, contiguous_memory_optimization, cpu_checkpointing). DeepSpeed checks
/// train_batch_size = micro-batch · accumulation · data-parallel size (runtime/config.py
/// _batch_assertion). DeepSpeedConfig reads the keys it knows and ignores other top-level
/// keys, so the "planner" object (which plan this encodes, and what the config cannot switch
/// on by itself) travels with the file.

namespace planner {

std::string deepspeed_json(const Context& ctx, const Plan& p) {
  nlohmann::ordered_json c;
  nlohmann::ordered_json about{{"gpus", gpus(p)}, {"plan", describe(ctx, p)}};
  // activation_checkpointing only configures deepspeed.checkpointing; the model's forward
  // must call deepspeed.checkpointing.checkpoint on each layer for recompute to happen.
  if (p.recompute == Recompute::full) {
    about["recompute"] = "full: wrap each transformer layer's forward in "
                         "deepspeed.checkpointing.checkpoint (this config only configures it)";
  }
  // DeepSpeed-MoE takes the expert-parallel degree in the model code
  // (deepspeed/moe/layer.py MoE(..., ep_size=...)), not in the config.
  if (is_moe(ctx.model) && p.ep > 1) {
    about["experts"] = "ep " + std::to_string(p.ep) + ": deepspeed.moe.layer.MoE(ep_size=" +
                       std::to_string(p.ep) + ") in the model code";
  }
  c["planner"] = about;
  c["train_batch_size"] = p.dp * p.micro_batch * p.grad_accum;
  c["train_micro_batch_size_per_gpu"] = p.micro_batch;
  c["gradient_accumulation_steps"] = p.grad_accum;
  c["bf16"] = {{"enabled", true}};
  c["zero_optimization"] = {{"stage", p.zero}};
  // zero/config.py mics_shard_size: MiCS (Zhang et al. 2022) shards stage 3's state over
  // groups of this many ranks and replicates it across them (hybrid sharding, Plan::dp_shard).
  if (p.zero == 3 && state_replicas(p) > 1) {
    c["zero_optimization"]["mics_shard_size"] = state_shard_ranks(p);
  }
  // zero/config.py: stage3_max_live_parameters (the ledger's ZeRO-3 gather limit).
  if (p.zero == 3 && ctx.workload.training.zero3_live_parameters > 0) {
    c["zero_optimization"]["stage3_max_live_parameters"] =
        static_cast<std::int64_t>(ctx.workload.training.zero3_live_parameters);
  }
  if (p.tp > 1) c["tensor_parallel"] = {{"autotp_size", p.tp}};
  if (p.pp > 1) {
    // The engine takes its stage count from PipelineModule(num_stages=...) (runtime/pipe/
    // engine.py: grid.pipe_parallel_size); "stages" records it for the launch script.
    c["pipeline"] = {{"stages", p.pp},
                     {"activation_checkpoint_interval", p.recompute == Recompute::full ? 1 : 0}};
  }
  if (p.recompute == Recompute::full) {
    c["activation_checkpointing"] = {{"partition_activations", false},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false}};
  }
  return dump_json(c);
}

}  // namespace planner

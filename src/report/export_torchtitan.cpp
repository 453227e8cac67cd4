#include <fmt/format.h>

#include <string>

#include "planner/report/explain_text.hpp"
#include "planner/report/export.hpp"

/// torchtitan job-config keys, torchtitan v0.2.2 (commit 73a0e6979dd10b6b1904098eb3c8f62c18ab87ce,
/// the last release read from TOML), torchtitan/config/job_config.py: class Training
/// (local_batch_size, global_batch_size, seq_len, mixed_precision_param), class Parallelism
/// (data_parallel_replicate_degree, data_parallel_shard_degree, tensor_parallel_degree,
/// pipeline_parallel_degree, context_parallel_degree, pipeline_parallel_schedule,
/// pipeline_parallel_microbatch_size, pipeline_parallel_layers_per_stage,
/// pipeline_parallel_first_stage_less_layers, pipeline_parallel_last_stage_less_layers), class
/// ActivationCheckpoint (mode, selective_ac_option), class Compile (enable), and class
/// Parallelism's expert_parallel_degree and expert_tensor_parallel_degree. The batch
/// semantics are torchtitan/train.py's: gradient accumulation steps = global_batch_size /
/// (local_batch_size · dp), and with stages torchtitan/distributed/pipeline_parallel.py cuts
/// local_batch_size into micro-batches of pipeline_parallel_microbatch_size.

namespace planner {

namespace {

/// torchtitan's activation_checkpoint.mode for a plan's recompute. torchtitan's attention is
/// tiled (SDPA), and with tiled attention the planner's selective recompute (Korthikanti's:
/// the attention core) is what tiled attention's backward does anyway, so it is "none";
/// torchtitan's "selective" with selective_ac_option "op" is the planner's "op".
std::string_view checkpoint_mode(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "none";
    case Recompute::op: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

}  // namespace

std::string torchtitan_toml(const Context& ctx, const Plan& p) {
  const Model& m = ctx.model;
  // With stages, a rank's micro-batches are the pipeline's: local_batch_size holds them all.
  const std::int64_t local = p.pp > 1 ? p.micro_batch * p.grad_accum : p.micro_batch;
  std::string out = fmt::format(
      "# torchtitan job config (v0.2.2 torchtitan/config/job_config.py), NGPU={}: {}\n", gpus(p),
      describe(ctx, p));
  out += "[training]\n";
  out += fmt::format("local_batch_size = {}\n", local);
  out += fmt::format("global_batch_size = {}\n", p.dp * p.micro_batch * p.grad_accum);
  out += fmt::format("seq_len = {}\n", m.seq_len);
  out += "mixed_precision_param = \"bfloat16\"\n";
  out += "\n[parallelism]\n";
  // ZeRO-3 is FSDP2 over dp_shard × cp (parallel_dims.py fsdp_enabled), replicated over
  // dp_replicate under hybrid sharding (HSDP: Plan::dp_shard); ZeRO-0 is DDP. ZeRO-2 is FSDP2
  // under pipelining, where torchtitan keeps the parameters gathered (constraints.hpp).
  const bool shard = p.zero >= 2;
  out += fmt::format("data_parallel_replicate_degree = {}\n", shard ? state_replicas(p) : p.dp);
  out += fmt::format("data_parallel_shard_degree = {}\n", shard ? shard_dp(p) : 1);
  out += fmt::format("tensor_parallel_degree = {}\n", p.tp);
  out += fmt::format("pipeline_parallel_degree = {}\n", p.pp);
  out += fmt::format("context_parallel_degree = {}\n", p.cp);
  // class Parallelism fsdp_reshard_after_forward: "default" reshards after the forward only
  // without pipelining, which is the plan's ZeRO-2 (pp > 1) or ZeRO-3.
  if (shard) out += "fsdp_reshard_after_forward = \"default\"\n";
  // class Parallelism expert_parallel_degree, expert_tensor_parallel_degree (both default 1:
  // without them a pasted config would put every expert on every rank).
  if (is_moe(m)) {
    out += fmt::format("expert_parallel_degree = {}\n", p.ep);
    out += fmt::format("expert_tensor_parallel_degree = {}\n", expert_tp(p));
  }
  if (p.pp > 1) {
    out += fmt::format("pipeline_parallel_schedule = \"{}\"\n",
                       p.virtual_stages > 1 ? "Interleaved1F1B" : "1F1B");
    out += fmt::format("pipeline_parallel_microbatch_size = {}\n", p.micro_batch);
    if (p.virtual_stages > 1) {
      out += fmt::format("pipeline_parallel_layers_per_stage = {}\n",
                         m.layers / (p.pp * p.virtual_stages));
    }
    // The model splits the layers evenly (docs/model.md); torchtitan's default lightens the
    // first and last stage by one layer each.
    out += "pipeline_parallel_first_stage_less_layers = 0\n";
    out += "pipeline_parallel_last_stage_less_layers = 0\n";
  }
  out += "\n[activation_checkpoint]\n";
  out += fmt::format("mode = \"{}\"\n", checkpoint_mode(p.recompute));
  if (p.recompute == Recompute::op) out += "selective_ac_option = \"op\"\n";
  // class Compile: the plan was timed with fused elementwise kernels, which torch.compile
  // gives torchtitan, or with eager PyTorch's (workload.elementwise_kernels "eager").
  out += "\n[compile]\n";
  out += fmt::format("enable = {}\n", p.eager_elementwise ? "false" : "true");
  return out;
}

}  // namespace planner

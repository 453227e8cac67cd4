#include <fmt/format.h>

#include <string>
#include <vector>

#include "planner/report/explain_text.hpp"
#include "planner/report/export.hpp"
#include "planner/search/constraints.hpp"

/// Megatron-LM argument names, megatron/training/arguments.py (core_r0.12):
/// _add_distributed_args (--tensor-model-parallel-size, --pipeline-model-parallel-size,
/// --context-parallel-size, --sequence-parallel, --use-distributed-optimizer,
/// --use-tp-pp-dp-mapping), _add_training_args (--micro-batch-size, --global-batch-size,
/// --recompute-granularity, --recompute-method, --recompute-num-layers, --attention-backend),
/// _add_network_size_args (--num-layers, --hidden-size, --ffn-hidden-size,
/// --num-attention-heads, --group-query-attention, --num-query-groups, --swiglu,
/// --untie-embeddings-and-output-weights, --seq-length, --max-position-embeddings,
/// --normalization, --position-embedding-type, --disable-bias-linear, --add-qkv-bias,
/// --hidden-dropout, --attention-dropout),
/// _add_distributed_args (--overlap-grad-reduce, --overlap-param-gather), _add_moe_args
/// (--moe-token-dispatcher-type, choices allgather, alltoall, flex; default allgather),
/// _add_mixed_precision_args (--fp8-format, choices e4m3 and hybrid; --fp8-recipe, choices
/// tensorwise, delayed, mxfp8 and blockwise). tests/report/test_export.cpp holds the list.

namespace planner {

/// arguments.py --position-embedding-type (choices learned_absolute, rope, mrope, relative,
/// none); "" for ALiBi, which Megatron-LM's GPT model does not offer (the header says so).
static std::string_view megatron_position(Position p) {
  switch (p) {
    case Position::rotary: return "rope";
    case Position::learned: return "learned_absolute";
    case Position::none: return "none";
    case Position::alibi: return "";
  }
  return "";
}

std::string megatron_arguments(const Context& ctx, const Plan& p) {
  const Model& m = ctx.model;
  std::vector<std::string> args;
  auto add = [&](std::string a) { args.push_back(std::move(a)); };
  add(fmt::format("--tensor-model-parallel-size {}", p.tp));
  add(fmt::format("--pipeline-model-parallel-size {}", p.pp));
  if (p.virtual_stages > 1 && p.tables_in_pipeline_split) {
    // arguments.py: with the tables in the split a chunk's layers are not L/(pp·v), so the
    // virtual pipeline is given by its chunks per rank.
    add(fmt::format("--num-virtual-stages-per-pipeline-rank {}", p.virtual_stages));
  } else if (p.virtual_stages > 1) {
    // arguments.py: layers per model chunk; the virtual pipeline size is L/(pp·this).
    add(fmt::format("--num-layers-per-virtual-pipeline-stage {}",
                    ctx.model.layers / (p.pp * p.virtual_stages)));
  }
  if (p.tables_in_pipeline_split) {
    // arguments.py _add_distributed_args: the input embedding and the loss each treated "as
    // a standard transformer layer in the context of partition and placement".
    add("--account-for-embedding-in-pipeline-split");
    add("--account-for-loss-in-pipeline-split");
  }
  add(fmt::format("--context-parallel-size {}", p.cp));
  if (is_moe(m)) {
    // megatron/core/transformer/moe/README.md (its table of MoE arguments); expert tensor
    // parallelism is given only when it differs from tp, Megatron-LM's default (docs/moe.md §3).
    add(fmt::format("--num-experts {}", m.moe.experts));
    add(fmt::format("--moe-router-topk {}", m.moe.top_k));
    add(fmt::format("--moe-ffn-hidden-size {}", m.moe.expert_ffn_hidden));
    if (m.moe.shared_experts > 0) {
      add(fmt::format("--moe-shared-expert-intermediate-size {}",
                      m.moe.shared_experts * m.moe.expert_ffn_hidden));
    }
    add(fmt::format("--expert-model-parallel-size {}", p.ep));
    // The model times the token exchange as all-to-alls (model/expert_traffic.hpp);
    // Megatron-LM's default dispatcher is allgather.
    if (p.ep > 1) add("--moe-token-dispatcher-type alltoall");
    if (expert_tp(p) != p.tp) add(fmt::format("--expert-tensor-parallel-size {}", expert_tp(p)));
  }
  if (p.tp > 1 && p.sequence_parallel) add("--sequence-parallel");
  // arguments.py: --tp-comm-overlap, beside --profile-ranks (Transformer Engine userbuffers).
  if (p.tp > 1 && p.sequence_parallel && p.tp_comm_overlap) add("--tp-comm-overlap");
  // arguments.py _add_distributed_args: --overlap-p2p-communication (dest overlap_p2p_comm).
  if (p.virtual_stages > 1 && p.pp_comm_overlap) add("--overlap-p2p-communication");
  if (p.zero == 1) add("--use-distributed-optimizer");
  // The time model hides the gradient reduce-scatter (and, with the distributed optimizer,
  // the parameter all-gather) behind the backward in one-layer buckets (docs/model.md §7);
  // Megatron-LM does so only when asked (both default to off in arguments.py).
  if (p.dp * p.cp > 1) add("--overlap-grad-reduce");
  if (p.zero == 1 && p.dp * p.cp > 1) add("--overlap-param-gather");
  // arguments.py _add_distributed_args: --num-distributed-optimizer-instances, "Number of
  // Distributed Optimizer copies across Data Parallel domain" (hybrid sharding's replicas).
  if (p.zero == 1 && state_replicas(p) > 1) {
    add(fmt::format("--num-distributed-optimizer-instances {}", state_replicas(p)));
  }
  if (!placement_follows(p, default_placement)) add("--use-tp-pp-dp-mapping");
  add(fmt::format("--micro-batch-size {}", p.micro_batch));
  add(fmt::format("--global-batch-size {}", p.dp * p.micro_batch * p.grad_accum));
  if (p.recompute == Recompute::selective) add("--recompute-granularity selective");
  if (p.recompute == Recompute::full) {
    add("--recompute-granularity full");
    add("--recompute-method uniform");
    add("--recompute-num-layers 1");
  }
  // arguments.py --attention-backend (AttnBackend: flash, fused, unfused, local, auto): the
  // kernel the time model timed (workload attention_kernel, docs/model.md §6b): fused is
  // Transformer Engine's cuDNN attention, flash the flash-attn package.
  if (!p.flash_attention) {
    add("--attention-backend unfused");
  } else {
    add(ctx.workload.training.attention_kernel == AttentionKernel::flash2
            ? "--attention-backend flash"
            : "--attention-backend fused");
  }
  add(fmt::format("--num-layers {}", m.layers));
  add(fmt::format("--hidden-size {}", m.hidden));
  add(fmt::format("--ffn-hidden-size {}", m.ffn_hidden));
  add(fmt::format("--num-attention-heads {}", m.heads));
  if (m.kv_heads != m.heads) {
    add("--group-query-attention");
    add(fmt::format("--num-query-groups {}", m.kv_heads));
  }
  if (m.gated_mlp) add("--swiglu");
  if (!m.tied_embeddings) add("--untie-embeddings-and-output-weights");
  // The architecture as timed, since arguments.py's defaults are GPT-2's (LayerNorm, learned
  // absolute positions, biases on every linear layer, hidden and attention dropout 0.1).
  add(m.norm == Norm::rms ? "--normalization RMSNorm" : "--normalization LayerNorm");
  if (const auto position = megatron_position(m.position); !position.empty()) {
    add(fmt::format("--position-embedding-type {}", position));
  }
  if (m.linear_bias != LinearBias::all) add("--disable-bias-linear");
  if (m.linear_bias == LinearBias::qkv) add("--add-qkv-bias");
  if (!m.dropout) {
    add("--hidden-dropout 0");
    add("--attention-dropout 0");
  }
  add(fmt::format("--seq-length {}", m.seq_len));
  add(fmt::format("--max-position-embeddings {}", m.seq_len));
  add("--bf16");
  // FP8 GEMMs as timed (data/gpus.json fp8_efficiency_ratio by recipe): E4M3 forward, E5M2
  // gradients ("hybrid", Transformer Engine's usual format). Row-wise scaling has no
  // Megatron-LM recipe (torchao's); the header says so.
  if (m.precision.compute == Dtype::fp8 && m.precision.fp8_recipe != Fp8Recipe::rowwise) {
    add("--fp8-format hybrid");
    add(fmt::format("--fp8-recipe {}", fp8_recipe_names[static_cast<std::size_t>(
                                           m.precision.fp8_recipe)]));
  }
  // arguments.py: under --bf16 Megatron-LM accumulates and reduces fp32 main gradients unless
  // --grad-reduce-in-bf16 (inputs/framework_defaults.hpp); a plan timed with bf16 gradients
  // asks for them.
  if (m.precision.gradients == Dtype::bf16) add("--grad-reduce-in-bf16");
  std::string out = fmt::format("# Megatron-LM pretrain_gpt.py arguments ({} GPUs): {}\n",
                                gpus(p), describe(ctx, p));
  if (m.precision.compute == Dtype::fp8 && m.precision.fp8_recipe == Fp8Recipe::rowwise) {
    out += "# timed with row-wise FP8 scaling (torchao), which Megatron-LM has no recipe for: "
           "these arguments run bf16 GEMMs\n";
  }
  if (m.position == Position::alibi) {
    out += "# the model uses ALiBi, which Megatron-LM's GPT model has no option for: these "
           "arguments build it with learned absolute positions\n";
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    out += args[i] + (i + 1 < args.size() ? " \\\n" : "\n");
  }
  return out;
}

}  // namespace planner

#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/inputs/attention_kernel.hpp"

/// What the cluster is asked to do: train to a global-batch target, or serve under a
/// per-token latency SLO.

namespace planner {

enum class WorkloadKind { training, serving };

struct Training {
  double global_batch_tokens = 0;  ///< target tokens per optimizer step
  std::int64_t micro_batch = 1;    ///< default micro-batch (sequences) for pinned plans
  double step_time_per_micro_batch_seconds = 0;  ///< measured; 0 = use the FLOP model
  double bytes_per_param = 16;  ///< 2 weights + 2 grads + rest optimizer (mixed-precision Adam)
  /// The framework overlaps tp collectives with GEMMs (Megatron-LM --tp-comm-overlap): every
  /// candidate with tp > 1 and sequence parallelism is timed so (Plan::tp_comm_overlap).
  bool tp_comm_overlap = false;
  /// The framework overlaps interleaved 1F1B's stage-boundary sends with compute (Megatron-LM
  /// --overlap-p2p-communication): every candidate with virtual stages (Plan::pp_comm_overlap).
  bool pp_comm_overlap = false;
  /// Whether the scenario states each overlap (a named framework's defaults fill the rest,
  /// inputs/framework_defaults.hpp).
  bool tp_comm_overlap_stated = false;
  bool pp_comm_overlap_stated = false;
  /// The framework counts the input embedding and the loss as a layer each in the pipeline
  /// split (Megatron-LM --account-for-embedding-in-pipeline-split
  /// --account-for-loss-in-pipeline-split): every candidate with pp > 1
  /// (Plan::tables_in_pipeline_split).
  bool tables_in_pipeline_split = false;
  /// The loss is a fused cross-entropy on the logits (Megatron-LM's vocab-parallel
  /// cross-entropy: the fp32 logits, Korthikanti et al. 2022 §4.3). false: PyTorch's
  /// cross_entropy on an fp32 copy of the logits (torchtitan train.py loss_fn), whose
  /// backward holds three fp32 tensors of the logits' size at once, under tp PyTorch's loss
  /// parallel with four (activations.hpp logits_activation_bytes).
  bool fused_cross_entropy = true;
  /// What a column-parallel GEMM under sequence parallelism keeps for its weight gradient
  /// (workload.tp_saved_inputs): false, "shard", its sequence-parallel shard, gathered again
  /// in the backward (Megatron-LM, Transformer Engine); true, "gathered", the input gathered
  /// to every tp rank before the GEMM (PyTorch's DTensor tensor parallelism, torchtitan).
  /// activations.hpp tp_gathered_input_bytes (Plan::tp_saves_gathered_inputs).
  bool tp_saves_gathered_inputs = false;
  /// The tiled attention kernel (inputs/attention_kernel.hpp): its rate against the GEMMs.
  AttentionKernel attention_kernel = AttentionKernel::cudnn;
  /// ZeRO-3: parameters the framework keeps gathered at once (DeepSpeed
  /// stage3_max_live_parameters); 0 = two layers, the layer computed and the one prefetched
  /// (the worked solution's "two buffers"; FSDP's current and next unit). memory.hpp
  /// zero3_gathered_params.
  double zero3_live_parameters = 0;
  /// ZeRO-3: collectives each layer's all-gather and reduce-scatter is issued as. 1: one
  /// bucket per layer (FSDP's unit, Megatron-LM's buckets); DeepSpeed's stage 3 of 2021
  /// gathers and reduces each parameter tensor on its own (partition_parameters.py
  /// _allgather_param, _reduce_scatter_gradient), 12 per layer of Megatron's GPT (Plan).
  std::int64_t zero3_collectives_per_layer = 1;
  /// ZeRO-3: the host synchronizes the device before each gather (DeepSpeed 2021's
  /// _allgather_param calls torch.cuda.synchronize()), so no gather overlaps compute (Plan).
  bool zero3_blocking_gathers = false;
  /// ZeRO-3 as PyTorch FSDP wraps a transformer (each block its own unit, then the model as the
  /// root: torchtitan's apply_fsdp, fms-fsdp's auto-wrap policy): the root unit, the embedding
  /// and output tables, is not resharded after the forward (FSDP2 _fsdp_state.py _lazy_init,
  /// "For the root, do not reshard after forward since for training, the parameters would be
  /// freed and all-gathered immediately"; FSDP1 the same for its root handle), so the tables
  /// stay gathered through the backward, and their unsharded gradients wait for the root's
  /// reduce-scatter at the backward's end (memory.hpp fsdp_root_unit_bytes).
  bool fsdp_root_unit = false;
  /// ZeRO-2: the micro-batches' gradients accumulate unsharded in the gradients' dtype and are
  /// reduce-scattered once, after the step's last backward (Plan; memory.hpp training_ledger,
  /// data_parallel_time.hpp). PyTorch's pipeline schedules do this to FSDP2 stages
  /// (torch/distributed/pipelining/stage.py backward_maybe_with_nosync: gradient sync and
  /// resharding off until the last micro-batch, then the post-backward run by hand), and
  /// FSDP2 then keeps the unsharded gradient in its reduce dtype (_fsdp_param.py
  /// to_accumulated_grad_if_needed).
  bool unsharded_gradient_accumulation = false;
  /// The framework runs each elementwise operation (norms, rotary embeddings, the MLP's
  /// activation) as its own kernel: PyTorch in eager mode, without torch.compile (torchtitan's
  /// and fms-fsdp's defaults), where Megatron-LM and Transformer Engine fuse them
  /// (Plan::eager_elementwise; elementwise.hpp). Scenario key elementwise_kernels "eager".
  bool eager_elementwise = false;
};

/// How the KV cache is laid out when tp exceeds the KV heads (docs/model.md §8.3): each rank
/// keeps a copy of its head (vLLM and TensorRT-LLM replicate KV heads), or the ranks split the
/// requests between them (SGLang's data-parallel attention), so each holds 1/tp of the cache.
enum class KvSharding { replicate, batch };

/// How the decode attention kernel reads the KV cache of a grouped-query model (docs/model.md
/// §8.2): once per KV head, its query heads sharing the load (FlashAttention's and
/// FlashInfer's decode kernels, TensorRT-LLM's XQA from v0.8), or once per query head, one
/// thread block per head each loading its group's K and V (TensorRT-LLM's masked multi-head
/// attention kernel before XQA, docs/source/advanced/gpt-attention.md; vLLM's PagedAttention
/// v1/v2 kernel, one block per query head). Equal for a model without grouping.
enum class DecodeAttention { grouped, per_query_head };

/// How a fixed concurrency's users time their requests (docs/model.md §8.4): independently,
/// so their prompts spread over time (real users, and benchmarks once lengths vary), or in
/// lockstep: identical requests, all users starting together, so every round's prompts
/// arrive at once and finish together (LMDeploy's profile_generation, a static batch).
enum class ClosedLoop { staggered, lockstep };

/// Which forward yields a request's first token (docs/model.md §8.1): the prefill, whose last
/// position is sampled (vLLM; TensorRT-LLM's context phase), or the next decode step: the
/// engine prefills all of the prompt but its last token, which goes through the decode step
/// with the running batch (TurboMind v0.1, LMDeploy's engine: LlamaBatch::ContextDecode
/// "subtract input/context len by 1 to skip last input token (will process with decoder
/// later)", then Generate).
enum class FirstToken { prefill, decode_step };

/// Where a prompt's prefill runs (docs/model.md §8.4): in forwards of its own that stall the
/// running batch (vLLM's V0 scheduler without chunked prefill, SGLang's default; Agrawal et
/// al. 2024, Sarathi-Serve, §2.3), or, the default, inside the running batch's decode
/// iteration, one forward over the decode tokens and the prompts' tokens (iteration-level
/// scheduling with selective batching, Yu et al. 2022, Orca, §4; TensorRT-LLM's in-flight
/// batching, vLLM V1, Sarathi-Serve's stall-free batching): the weights are read and each
/// layer's fixed costs paid once for both.
enum class Batching { separate, mixed };

struct Serving {
  std::int64_t batch = 1;             ///< concurrent sequences per engine
  std::int64_t concurrency = 0;       ///< concurrent sequences over all replicas; 0 = use batch
  std::int64_t context_tokens = 0;    ///< tokens of KV cache reserved per sequence
  std::int64_t input_tokens = 0;      ///< prompt tokens per request (prefill)
  std::int64_t output_tokens = 0;     ///< generated tokens per request; 0 = not modelled
  std::int64_t prefill_chunk_tokens = 0;  ///< chunked prefill's chunk; 0 = whole prompt
  double slo_per_token_seconds = 0;   ///< time-per-output-token target
  double slo_ttft_seconds = 0;        ///< time-to-first-token target; 0 = none
  double slo_percentile = 0.5;        ///< the quantile the TTFT target applies to
  double request_rate_per_second = 0;  ///< arrivals over all replicas; 0 = closed loop
  /// Achieved / datasheet HBM bandwidth at which a decode step reads the weights, and at
  /// which attention reads the KV cache; the scenario's memory_bandwidth_efficiency sets both,
  /// else the catalog's fitted fractions (io/catalog.hpp serving_read).
  double memory_bandwidth_efficiency = 1.0;
  double kv_bandwidth_efficiency = 0;  ///< 0: as memory_bandwidth_efficiency
  /// Fixed cost of one layer in one forward step (decode step or prefill chunk): its kernels'
  /// floors and launch gaps, from the catalog (io/catalog.hpp serving_read).
  double layer_step_seconds = 0;
  /// The reads and the layer floor are the catalog's fitted ones (neither typed): the figures
  /// whose measured error `plan` quotes (report/serving_accuracy.hpp).
  bool catalog_reads = false;
  double bytes_per_param = 2;        ///< weight bytes (bf16)
  KvSharding kv_sharding = KvSharding::replicate;
  DecodeAttention decode_attention = DecodeAttention::grouped;
  ClosedLoop closed_loop = ClosedLoop::staggered;
  FirstToken first_token = FirstToken::prefill;
  std::int64_t kv_block_tokens = 1;  ///< paged-cache block (vLLM: 16); 1 = token granular
  Batching batching = Batching::mixed;
  /// The engine's most concurrent sequences (TensorRT-LLM max_batch_size, vLLM max_num_seqs,
  /// SGLang max_running_requests) when a concurrency's users are more; 0 = what memory holds.
  std::int64_t max_batch = 0;
};

/// Concurrent sequences one engine decodes together: the total spread over the replicas and
/// rounded up when the scenario gives `concurrency`, else `batch`.
[[nodiscard]] inline std::int64_t engine_batch(const Serving& w, std::int64_t replicas) noexcept {
  if (w.concurrency <= 0) return w.batch;
  return (w.concurrency + replicas - 1) / replicas;
}

/// The fraction of the datasheet bandwidth at which attention reads the KV cache.
[[nodiscard]] inline double kv_read_efficiency(const Serving& w) noexcept {
  return w.kv_bandwidth_efficiency > 0 ? w.kv_bandwidth_efficiency
                                       : w.memory_bandwidth_efficiency;
}

/// Prompt tokens of a request: `input_tokens`, else the whole context.
[[nodiscard]] inline std::int64_t prompt_tokens(const Serving& w) noexcept {
  return w.input_tokens > 0 ? w.input_tokens : w.context_tokens;
}

/// Prompt tokens the prefill forward runs: all of them, or all but the last when the first
/// token comes from a decode step (FirstToken::decode_step; none for a one-token prompt).
[[nodiscard]] inline std::int64_t prefilled_tokens(const Serving& w) noexcept {
  const std::int64_t prompt = prompt_tokens(w);
  return w.first_token == FirstToken::decode_step ? std::max<std::int64_t>(prompt - 1, 0) : prompt;
}

struct Workload {
  WorkloadKind kind = WorkloadKind::training;
  Training training;
  Serving serving;
};

}  // namespace planner

#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "planner/model/activations.hpp"
#include "planner/model/serving/kv_cache.hpp"
#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/base/units.hpp"
#include "planner/inputs/workload.hpp"

/// The per-GPU memory ledger: every line in bytes, the total and the capacity
/// (docs/model.md §3). Training and serving use the same shape; lines that do not apply are 0.

namespace planner {

struct MemoryLedger {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;        ///< layers' activations kept for backward
  double logits_bytes = 0;             ///< embedding and output-layer activations
  double recompute_working_bytes = 0;  ///< one layer re-materialised during backward
  double zero3_gather_bytes = 0;       ///< ZeRO-3 parameter gather buffers
  double fp8_weights_bytes = 0;        ///< FP8 GEMMs: the cached FP8 weights and scaling state
  double kv_cache_bytes = 0;           ///< serving only
  /// Eager PyTorch's unfused elementwise temporaries (Plan::eager_elementwise, training on a
  /// catalog GPU without a stated reserve; data/gpus.json runtime_memory): a share of the
  /// activations and recompute working set.
  double eager_temporaries_bytes = 0;
  /// The caching allocator's reserved memory over the tensors above, at the peak (training
  /// on a catalog GPU without a stated reserve; data/gpus.json runtime_memory).
  double allocator_bytes = 0;
  double reserve_bytes = 0;            ///< framework, CUDA/ROCm context, fragmentation
  bool reserve_default = false;        ///< reserve_bytes is the catalog's runtime default
  double capacity_bytes = 0;           ///< the GPU's memory

  [[nodiscard]] double state_bytes() const noexcept {
    return weights_bytes + gradients_bytes + optimizer_bytes;
  }
  /// The tensors the framework allocates (every line but the allocator's and the reserve).
  [[nodiscard]] double allocated_bytes() const noexcept {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + logits_bytes +
           recompute_working_bytes + zero3_gather_bytes + fp8_weights_bytes + kv_cache_bytes +
           eager_temporaries_bytes;
  }
  /// What the caching allocator holds: the tensors and its reserve over them (PyTorch's
  /// torch.cuda.max_memory_reserved, the figure torchtitan logs as its peak memory).
  [[nodiscard]] double allocator_reserved_bytes() const noexcept {
    return allocated_bytes() + allocator_bytes;
  }
  [[nodiscard]] double total_bytes() const noexcept {
    return allocator_reserved_bytes() + reserve_bytes;
  }
  [[nodiscard]] bool fits() const noexcept { return total_bytes() <= capacity_bytes; }
};

/// One named line of the ledger, for printing and JSON.
struct LedgerLine {
  std::string_view name;
  double MemoryLedger::*bytes;
};

inline constexpr std::array<LedgerLine, 12> ledger_lines{{
    {"weights", &MemoryLedger::weights_bytes},
    {"gradients", &MemoryLedger::gradients_bytes},
    {"optimizer", &MemoryLedger::optimizer_bytes},
    {"activations", &MemoryLedger::activations_bytes},
    {"logits", &MemoryLedger::logits_bytes},
    {"recompute_working", &MemoryLedger::recompute_working_bytes},
    {"zero3_gather", &MemoryLedger::zero3_gather_bytes},
    {"fp8_weights", &MemoryLedger::fp8_weights_bytes},
    {"kv_cache", &MemoryLedger::kv_cache_bytes},
    {"eager_temporaries", &MemoryLedger::eager_temporaries_bytes},
    {"allocator", &MemoryLedger::allocator_bytes},
    {"reserve", &MemoryLedger::reserve_bytes},
}};

/// What a line assumed where the ledger, not the scenario, supplied it (printed beside it).
[[nodiscard]] inline std::string_view ledger_line_note(const MemoryLedger& l,
                                                       double MemoryLedger::*line) noexcept {
  if (line == &MemoryLedger::allocator_bytes) {
    return "(the caching allocator's share over the tensors, fitted)";
  }
  if (line == &MemoryLedger::eager_temporaries_bytes) {
    return "(eager PyTorch's unfused elementwise temporaries, fitted)";
  }
  if (line == &MemoryLedger::reserve_bytes && l.reserve_default) {
    return "(runtime default: CUDA context, NCCL, cuBLAS; cluster.gpu.reserve replaces it)";
  }
  return "";
}

/// Embedding and output-table parameters on the largest stage: all of them (embedding_params)
/// with pp = 1, else one V·h table (the first stage's embedding or the last's output layer);
/// none when the tables take a layer's place in the split and a middle stage, without one,
/// is the largest (activations.hpp stage_layers).
[[nodiscard]] inline double stage_table_params(const Model& m, const Plan& p) noexcept {
  if (p.pp == 1) return embedding_params(m);
  if (p.tables_in_pipeline_split && !end_stage_largest(m)) return 0;
  return static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
}

/// Parameters held by the largest pipeline stage before the tp split: ⌈L/pp⌉ layers plus the
/// embeddings. With pp = 1 the stage holds all of them; with pp > 1 the first stage holds the
/// input embedding and the last the output layer, so the largest end stage carries one V·h
/// table (Megatron-LM theoretical_memory_usage.py, "most loaded shard is the first stage").
[[nodiscard]] inline double stage_params(const Model& m, const Plan& p) noexcept {
  const double layers = static_cast<double>(stage_layers(m, p));
  if (p.pp == 1) return total_params(m);
  return layers * layer_params(m) + stage_table_params(m, p);
}

/// Routed-expert parameters on the largest stage before any split: the model's, times the
/// stage's share of the layers (all of them with pp = 1; Megatron-LM
/// theoretical_memory_usage.py divides expert_sharded_params_in_transformer_block by pp).
[[nodiscard]] inline double stage_expert_params(const Model& m, const Plan& p) noexcept {
  if (!is_moe(m)) return 0;
  if (p.pp == 1) return routed_expert_params(m);
  return routed_expert_params(m) * static_cast<double>(stage_layers(m, p)) /
         static_cast<double>(blocks(m));
}

/// Parameters of one GPU of the largest stage: the rest split by tp, the routed experts by
/// etp·ep (expert tensor parallelism, tp by default as in Megatron-LM;
/// theoretical_memory_usage.py expert_sharded_params_on_most_loaded_shard / (etp·ep)).
struct GpuParams {
  double replicated = 0;  ///< held by every rank of the dp·cp group
  double experts = 0;     ///< routed experts, held by every rank of the expert-dp group
};

[[nodiscard]] inline GpuParams gpu_params(const Model& m, const Plan& p) noexcept {
  const double tp = static_cast<double>(p.tp);
  const double experts = stage_expert_params(m, p);
  if (experts == 0) return {stage_params(m, p) / tp, 0};  // dense: nothing split by etp·ep
  const double etp = static_cast<double>(expert_tp(p));
  return {(stage_params(m, p) - experts) / tp, experts / (etp * static_cast<double>(p.ep))};
}

/// Ranks that shard model state between them: the data- and context-parallel ranks of one
/// model shard, which hold identical weights (ZeRO, Rajbhandari et al. 2020,
/// arXiv 1910.02054, §5; Megatron-LM shards the distributed optimizer over dp×cp); under
/// hybrid sharding only one shard group's dp_shard·cp of them (Plan::dp_shard).
[[nodiscard]] inline std::int64_t state_shard_ranks(const Plan& p) noexcept {
  return shard_dp(p) * p.cp;
}

/// Parameters of one transformer layer on one GPU: the rest split by tp, its routed experts
/// by etp·ep (the ZeRO-3 working set of one layer).
[[nodiscard]] inline double gpu_layer_params(const Model& m, const Plan& p) noexcept {
  if (!is_moe(m)) return layer_params(m) / static_cast<double>(p.tp);
  const double experts = routed_expert_params(m) / static_cast<double>(blocks(m));
  return (layer_params(m) - experts) / static_cast<double>(p.tp) +
         experts / (static_cast<double>(expert_tp(p)) * static_cast<double>(p.ep));
}

/// One figure per GEMM of a layer (weights, or seconds in micro_batch_time.hpp layer_gemm_seconds).
/// The weights of a layer's four GEMMs for an MLP of width `f`: QKV h·(q + 2·h_kv) (fused in
/// Megatron-LM), the output projection q·h, the first MLP GEMM h·f (2·h·f gated: gate and up
/// fused) and the second f·h (Megatron-LM transformer layer; attention_layer_params less
/// the norms).
struct LayerGemms {
  double qkv = 0, proj = 0, fc1 = 0, fc2 = 0;
};
[[nodiscard]] inline LayerGemms layer_gemm_weights(const Model& m, double f) noexcept {
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.heads) * head_dim(m);
  return {h * (q + 2.0 * kv_hidden(m)), q * h, h * f * (m.gated_mlp ? 2.0 : 1.0), f * h};
}

/// The largest weight matrix of a layer on one GPU: DeepSpeed's ZeRO-3 gathers module by
/// module (an nn.Linear at a time), so one is always whole (layer_gemm_weights, split by tp).
[[nodiscard]] inline double largest_matrix_params(const Model& m, const Plan& p) noexcept {
  const LayerGemms w = layer_gemm_weights(m, static_cast<double>(m.ffn_hidden));
  return std::max({w.qkv, w.proj, w.fc1, w.fc2}) / static_cast<double>(p.tp);
}

/// Parameters gathered at once under ZeRO-3. Without a limit: two layers, the one computed and
/// the one prefetched (DeepSpeed's prefetch; the worked solution's "two buffers", 3.0 GiB for
/// B). With `live` (DeepSpeed stage3_max_live_parameters, docs: "the maximum number of
/// parameters resident per GPU before releasing", 1e9 by default) DeepSpeed releases gathered
/// modules past the limit, but the module being computed stays whole: max(live, the largest
/// matrix), and never more than the two layers.
[[nodiscard]] inline double zero3_gathered_params(const Model& m, const Plan& p,
                                                  double live) noexcept {
  const double two_layers = 2.0 * gpu_layer_params(m, p);
  if (!(live > 0)) return two_layers;
  return std::min(two_layers, std::max(live, largest_matrix_params(m, p)));
}

/// PyTorch FSDP's root unit under ZeRO-3 (Training::fsdp_root_unit): the stage's tables,
/// gathered in the weights' dtype from the forward through the backward, and the output
/// layer's unsharded gradient (autograd's, in the same dtype), computed first in the backward
/// and held until the root's reduce-scatter at its end. The input embedding's gradient comes
/// last, when the activations are gone, so the peak holds one table's gradient. The final
/// norm (h parameters) is not counted.
[[nodiscard]] inline double fsdp_root_unit_bytes(const Model& m, const Plan& p,
                                                 double weight_bytes) noexcept {
  const double tp = static_cast<double>(p.tp);
  const double tables = stage_table_params(m, p) / tp;
  const double one_table = std::min(stage_table_params(m, p),
                                    static_cast<double>(m.vocab) * static_cast<double>(m.hidden)) /
                           tp;
  return (tables + one_table) * weight_bytes;
}

/// FP8 training (model.precision.compute "fp8", docs/moe.md §7): Transformer Engine casts each
/// GEMM weight to FP8 once per step and keeps the cast and its transpose across micro-batches
/// (transformer_engine/pytorch/module/linear.py: weight_fp8 / weight_t_fp8 cached when
/// is_first_microbatch is given; Megatron-LM extensions/transformer_engine.py passes it unless
/// disable_parameter_transpose_cache), 2 bytes per GEMM parameter on the GPU: all but the
/// embedding and output tables, which stay in bf16 (Megatron-LM's output layer is not a TE
/// module). Under ZeRO-3 only the gathered layers' (two, as the gather buffers). Plus the
/// delayed-scaling state: an amax history of 1024 fp32 values (TE recipe.DelayedScaling
/// amax_history_len default) for each of the 5 FP8 tensors (input, weight, output forward;
/// two gradients backward) of the 4 GEMMs a layer runs, 80 KiB a layer.
[[nodiscard]] inline double fp8_weight_bytes(const Model& m, const Plan& p) noexcept {
  if (m.precision.compute != Dtype::fp8) return 0;
  const double layers = static_cast<double>(stage_layers(m, p));
  const double scaling = layers * 4.0 * 5.0 * 1024.0 * 4.0;
  if (p.zero >= 3) return 2.0 * 2.0 * gpu_layer_params(m, p) + scaling;
  const GpuParams psi = gpu_params(m, p);
  const double gemm =
      psi.replicated + psi.experts - stage_table_params(m, p) / static_cast<double>(p.tp);
  return 2.0 * std::max(0.0, gemm) + scaling;
}

/// Mixed-precision Adam state per parameter: the weights' and gradients' dtypes (2 bytes each
/// in bf16) and the rest of `bytes_per_param` (12 of the default 16: fp32 master, m, v) optimizer state (Rajbhandari et al. 2020 §3.1,
/// "16Ψ"). ZeRO stage k shards optimizer (k ≥ 1), gradients (k ≥ 2) and weights (k = 3) over
/// the dp·cp ranks (§5.1–5.3; Table 1).
/// The lines of training_ledger that the micro-batch does not change: the model state
/// (weights, gradients, optimizer), ZeRO-3's gathered layers, the FP8 weight cache, the
/// reserve and the capacity. The search computes them once per configuration and adds each
/// micro-batch's lines (add_training_activations), the same arithmetic as training_ledger.
[[nodiscard]] inline MemoryLedger training_state_ledger(const Model& m, const Cluster& c,
                                                        const Training& w,
                                                        const Plan& p) noexcept {
  MemoryLedger l;
  const GpuParams psi = gpu_params(m, p);
  const double shards = static_cast<double>(state_shard_ranks(p));
  // Expert state is sharded over the expert-data-parallel group (model/experts.hpp).
  const double expert_shards = static_cast<double>(expert_data_parallel_ranks(p));
  const double weight_b = bytes_of(m.precision.weights);
  const double grad_b = bytes_of(m.precision.gradients);
  const double optimizer_b = std::max(0.0, w.bytes_per_param - weight_b - grad_b);
  auto state = [&](double bytes, bool sharded) {
    const double replicated = psi.replicated * bytes / (sharded ? shards : 1.0);
    if (psi.experts == 0) return replicated;  // dense: no expert state
    return replicated + psi.experts * bytes / (sharded ? expert_shards : 1.0);
  };
  l.weights_bytes = state(weight_b, p.zero >= 3);
  // ZeRO-2 whose gradients accumulate unsharded until the step's last backward
  // (Plan::unsharded_gradient_accumulation: PyTorch's pipeline schedules with FSDP2) holds the
  // whole gradient of its part of the model at the peak.
  l.gradients_bytes =
      state(grad_b, p.zero >= 3 || (p.zero == 2 && !p.unsharded_gradient_accumulation));
  l.optimizer_bytes = state(optimizer_b, p.zero >= 1);
  if (p.zero >= 3) {
    // The layer being computed and the one being prefetched, gathered in bf16
    // (DeepSpeed stage3 prefetch; the worked solution's "two buffers").
    // MoE: a layer's routed experts are gathered as the rank's ep share (docs/moe.md §4).
    l.zero3_gather_bytes = zero3_gathered_params(m, p, w.zero3_live_parameters) * weight_b;
    if (w.fsdp_root_unit) l.zero3_gather_bytes += fsdp_root_unit_bytes(m, p, weight_b);
  }
  l.fp8_weights_bytes = fp8_weight_bytes(m, p);
  l.reserve_bytes = c.gpu.reserve_bytes;
  l.reserve_default = c.gpu.reserve_default;
  l.capacity_bytes = c.gpu.memory_bytes;
  return l;
}

/// The lines of training_ledger that follow the micro-batch, added to `l` (its state lines
/// from training_state_ledger of the same configuration): the activations, the logits, the
/// recompute working set, eager temporaries and the caching allocator's share of it all.
inline void add_training_activations(const Model& m, const Cluster& c, const Training& w,
                                     const Plan& p, MemoryLedger& l) noexcept {
  const LayerActivationTerms terms = plan_activation_terms(m, p);
  l.activations_bytes = stage_activation_bytes(m, p, terms);
  l.logits_bytes = logits_activation_bytes(m, p, w.fused_cross_entropy);
  l.recompute_working_bytes = recompute_working_bytes(m, p, terms);
  // Eager PyTorch keeps each unfused elementwise operation's output (and fp32 upcasts) live
  // beside the activations: a share of them, fitted to the eager/compiled pair of single-node
  // peaks (data/gpus.json runtime_memory, docs/model.md §3).
  l.eager_temporaries_bytes = p.eager_elementwise
                                  ? c.gpu.eager_activation_fraction *
                                        (l.activations_bytes + l.recompute_working_bytes)
                                  : 0.0;
  // The caching allocator rounds and splits blocks and keeps freed ones cached, so at the
  // peak it holds more than the live tensors; a share fitted to single-node peak-memory runs
  // (data/gpus.json runtime_memory, docs/model.md §3).
  l.allocator_bytes = c.gpu.allocator_fraction * l.allocated_bytes();
}

[[nodiscard]] inline MemoryLedger training_ledger(const Model& m, const Cluster& c,
                                                  const Training& w, const Plan& p) noexcept {
  MemoryLedger l = training_state_ledger(m, c, w, p);
  add_training_activations(m, c, w, p, l);
  return l;
}

/// KV cache per GPU per cached token with the KV heads replicated past kv_heads
/// (model/serving/kv_cache.hpp has the sharding choices; docs/model.md §8.3).
[[nodiscard]] inline double kv_cache_bytes_per_token(const Model& m, const Plan& p) noexcept {
  return kv_bytes_per_token(m, p, KvSharding::replicate);
}

/// Sequences one engine holds at once (docs/model.md §8.4): the engine's users (`batch`, or
/// its share of `concurrency`), except that when the users are a concurrency and their caches
/// do not all fit beside the weights and the reserve (`free_bytes`), as many as fit, at least
/// one: vLLM's and LMDeploy's schedulers admit a request only while cache blocks are free, and
/// the other users wait for a slot. A `batch` is the user's engine batch and is kept whole.
[[nodiscard]] inline double serving_slots(const Serving& w, const Plan& p, double free_bytes,
                                          double per_sequence_bytes) noexcept {
  const double users = static_cast<double>(p.micro_batch);
  if (w.concurrency <= 0 || !(per_sequence_bytes > 0)) return users;
  // The engine's own limit (Serving::max_batch) caps what its memory would hold.
  const double most = w.max_batch > 0 ? std::min(users, static_cast<double>(w.max_batch)) : users;
  const double fit = std::floor(free_bytes / per_sequence_bytes);
  return std::clamp(fit, 1.0, most);
}

/// Serving ledger: the stage's weights split by tp, the KV cache of the sequences the engine
/// holds (serving_slots: the plan's micro-batch, or what fits of a concurrency's users) × the
/// reserved context, and the reserve. Decode activations (b·h per
/// layer) are negligible and not listed. Under ep the routed experts are split by tp·ep and
/// the rest by tp (gpu_params; docs/moe.md §6.1).
[[nodiscard]] inline MemoryLedger serving_ledger(const Model& m, const Cluster& c,
                                                 const Serving& w, const Plan& p) noexcept {
  MemoryLedger l;
  const GpuParams psi = gpu_params(m, p);
  l.weights_bytes = (psi.replicated + psi.experts) * w.bytes_per_param;
  l.reserve_bytes = c.gpu.reserve_bytes;
  l.reserve_default = c.gpu.reserve_default;
  l.capacity_bytes = c.gpu.memory_bytes;
  const double per_sequence =
      kv_bytes_per_token(m, p, w.kv_sharding) * static_cast<double>(reserved_tokens(w));
  l.kv_cache_bytes = per_sequence * serving_slots(w, p, l.capacity_bytes - l.total_bytes(),
                                                  per_sequence);
  return l;
}

/// serving_slots of a ledger: the sequences whose caches it holds.
[[nodiscard]] inline double serving_slots(const Model& m, const Serving& w, const Plan& p,
                                          const MemoryLedger& l) noexcept {
  const double per_sequence =
      kv_bytes_per_token(m, p, w.kv_sharding) * static_cast<double>(reserved_tokens(w));
  return per_sequence > 0 ? std::round(l.kv_cache_bytes / per_sequence)
                          : static_cast<double>(p.micro_batch);
}

}  // namespace planner

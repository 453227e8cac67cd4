#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>

#include "planner/model/activations.hpp"
#include "planner/inputs/cluster.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/elementwise.hpp"
#include "planner/model/expert_traffic.hpp"
#include "planner/model/memory.hpp"
#include "planner/inputs/model.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/schedule.hpp"
#include "planner/model/serving/serving_time.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/base/units.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/data_parallel_time.hpp"
#include "planner/model/micro_batch_time.hpp"

/// Time of one optimizer step of a pinned plan (docs/model.md §7; serving: §8,
/// model/serving/). Every component is kept so the explanation can quote it: the data-parallel
/// traffic (data_parallel_time.hpp) and each micro-batch's pieces (micro_batch_time.hpp).

namespace planner {

/// The rate of the work that stays in bf16 when the GEMMs run in another format (FP8): the
/// attention core (Transformer Engine's DotProductAttention runs in bf16 unless
/// fp8_dot_product_attention, off by default in Megatron-LM --fp8-dot-product-attention and
/// NeMo) and the output layer (Megatron-LM's GPTModel output_layer is a
/// tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so not FP8). It is
/// the GPU's bf16 effective rate; `flops_per_second` itself when the GEMMs are bf16/fp16.
[[nodiscard]] inline double high_precision_flops_per_second(const Model& m, const Cluster& c,
                                                            double flops_per_second) noexcept {
  const Dtype d = m.precision.compute;
  if (d == Dtype::bf16 || d == Dtype::fp16 || !(c.gpu.flops_per_second > 0)) {
    return flops_per_second;
  }
  return std::min(flops_per_second, c.gpu.flops_per_second);
}

/// The shapes one stage's micro-batch works on (micro_batch_time.hpp StageShape).
[[nodiscard]] inline StageShape stage_shape(const Model& m, const Plan& p) noexcept {
  return {static_cast<double>(stage_layers(m, p)),
          static_cast<double>(m.seq_len) / static_cast<double>(p.cp),
          static_cast<double>(p.micro_batch), static_cast<double>(p.grad_accum)};
}

/// A micro-batch's compute, the terms of TrainingTime::compute_seconds(): the GEMMs, the
/// attention core, recompute, the score matrices' traffic and the elementwise kernels. No
/// network term enters, so the search bounds every placement's step with them before it
/// times the traffic (search/enumerate.hpp time_candidates); `forward_seconds` and `backward_seconds` get the compute
/// of each pass, what the data-parallel buckets hide behind (add_step_terms).
inline void add_compute_terms(const Model& m, const Cluster& c, const Plan& p,
                              double flops_per_second, const StageShape& g, TrainingTime& t,
                              double& forward_seconds, double& backward_seconds) noexcept {
  const MicroBatchFlops f = micro_batch_flops(m, p);
  const double high_precision = high_precision_flops_per_second(m, c, flops_per_second);
  if (high_precision == flops_per_second) {
    t.dense_seconds = f.dense / flops_per_second;
    t.attention_seconds = f.attention / flops_per_second;
    t.recompute_seconds = f.recompute / flops_per_second;
  } else {
    t.dense_seconds = (f.dense - f.dense_high_precision) / flops_per_second +
                      f.dense_high_precision / high_precision;
    t.attention_seconds = f.attention / high_precision;
    t.recompute_seconds = (f.recompute - f.recompute_high_precision) / flops_per_second +
                          f.recompute_high_precision / high_precision;
  }
  // A tiled kernel runs the attention core at its measured share of the GEMM rate, by the
  // tokens one call attends over: the sequence over cp, as ring attention calls the kernel
  // per block (inputs/attention_kernel.hpp; docs/model.md §6b). Its recompute too.
  if (p.flash_attention) {
    const double share = attention_rate_share(
        c.gpu.attention_rate, static_cast<double>(m.seq_len) / static_cast<double>(p.cp));
    const double slower = 1.0 / share - 1.0;
    t.attention_seconds *= 1.0 / share;
    t.recompute_seconds += slower * f.attention_recompute / high_precision;
  }
  forward_seconds = (t.dense_seconds + t.attention_seconds) / 3.0;
  backward_seconds = 2.0 * forward_seconds + t.recompute_seconds;
  if (const double bandwidth = c.gpu.elementwise_bytes_per_second; bandwidth > 0) {
    const ElementwiseBytes e = elementwise_bytes(m, p);
    t.elementwise_seconds = e.total() / bandwidth;
    forward_seconds += e.forward / bandwidth;
    backward_seconds += e.backward / bandwidth;
  }
  add_scores_io(m, c, p, g, t);
}

/// The micro-batch's step figures once its terms are in: the bubble and the global batch.
inline void finish_micro_batch(const Plan& p, TrainingTime& t) noexcept {
  t.micro_batches = p.grad_accum;
  t.bubble_seconds = bubble_slots(p) * t.micro_batch_seconds();
  t.global_sequences = static_cast<double>(p.dp * p.micro_batch * p.grad_accum);
}

/// The micro-batch's tp, cp and pp traffic: every term but the expert traffic. Each reads the
/// compute terms alone, none another's, so the search can bound an MoE micro-batch by its
/// compute and expert traffic before it adds these (search/enumerate.hpp; only
/// inter_node_bytes then adds its parts in another order).
inline void add_non_expert_traffic(const Model& m, const Cluster& c, const Plan& p,
                                   double flops_per_second, const StageShape& g,
                                   TrainingTime& t) noexcept {
  add_tensor_parallel(m, c, p, g, flops_per_second, t);
  add_context_parallel(m, c, p, g, t);
  add_pipeline(m, c, p, g, t);
}

/// Completes `t`, whose compute terms add_compute_terms filled, with the micro-batch's tp, cp,
/// pp and expert traffic, the bubble and the global batch.
inline void add_traffic_terms(const Model& m, const Cluster& c, const Plan& p,
                              double flops_per_second, const StageShape& g,
                              TrainingTime& t) noexcept {
  add_non_expert_traffic(m, c, p, flops_per_second, g, t);
  if (is_moe(m)) add_expert_traffic(m, c, p, g, flops_per_second, t);
  finish_micro_batch(p, t);
}

/// One micro-batch of a training plan, the part of training_time that does not depend on
/// the ZeRO stage: compute, the tp, cp, pp and expert traffic, the bubble and the global
/// batch; `forward_seconds` and `backward_seconds` are what the data-parallel buckets hide
/// behind (add_step_terms). The search's bounds read it alone (search/enumerate.hpp).
[[nodiscard]] inline TrainingTime micro_batch_part(const Model& m, const Cluster& c, const Plan& p,
                                                   double flops_per_second,
                                                   double& forward_seconds,
                                                   double& backward_seconds) noexcept {
  TrainingTime t;
  const StageShape g = stage_shape(m, p);
  add_compute_terms(m, c, p, flops_per_second, g, t, forward_seconds, backward_seconds);
  add_traffic_terms(m, c, p, flops_per_second, g, t);
  return t;
}

/// Completes `t`, micro_batch_part's result for `p` up to its ZeRO stage, with the per-step
/// terms: the data-parallel traffic of `p`'s stage, the step and the rates.
inline void add_step_terms(const Model& m, const Cluster& c, const Plan& p,
                           double flops_per_second, double forward_seconds,
                           double backward_seconds, TrainingTime& t) noexcept {
  const double slot = t.micro_batch_seconds();
  fill_data_parallel_traffic(m, c, p, forward_seconds, backward_seconds, t.dp);
  if (t.dp.tier == c.network_index()) {
    t.inter_node_bytes += t.dp.bytes_per_step - t.dp.replica_bytes_per_step;
  }
  if (t.dp.replica_tier == c.network_index()) t.inter_node_bytes += t.dp.replica_bytes_per_step;
  if (is_moe(m)) {  // a dense model's expert terms stay zero without being computed
    t.expert_dp = expert_data_parallel_traffic(m, c, p, forward_seconds, backward_seconds);
    if (t.expert_dp->tier == c.network_index()) t.inter_node_bytes += t.expert_dp->bytes_per_step;
  }
  t.step_seconds = static_cast<double>(p.grad_accum) * slot + t.bubble_seconds +
                   t.dp.exposed_seconds + t.expert_dp_exposed_seconds();
  const double tokens = t.global_sequences * static_cast<double>(m.seq_len);
  t.tokens_per_second = tokens / t.step_seconds;
  const double gpus = static_cast<double>(world_size(c));
  t.model_flops_per_second =
      t.global_sequences * model_flops_per_sequence(m) / (t.step_seconds * gpus);
  t.mfu = t.global_sequences * executed_model_flops_per_sequence(m, p) /
          (t.step_seconds * gpus * flops_per_second);
}

/// Per-GPU time of one optimizer step of a training plan at `flops_per_second`.
/// Step = (m + pp − 1) micro-batch slots of the largest stage (1F1B; the pp − 1 extra slots
/// are the bubble, Narayanan et al. 2021 §2.2) plus the exposed data-parallel traffic.
[[nodiscard]] inline TrainingTime training_time(const Model& m, const Cluster& c,
                                                const Plan& p,
                                                double flops_per_second) noexcept {
  double forward_seconds = 0;
  double backward_seconds = 0;
  TrainingTime t = micro_batch_part(m, c, p, flops_per_second, forward_seconds, backward_seconds);
  add_step_terms(m, c, p, flops_per_second, forward_seconds, backward_seconds, t);
  return t;
}

}  // namespace planner

#pragma once
#include <algorithm>
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/gemm_rows.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/serving/expert_serving.hpp"
#include "planner/model/serving/kv_cache.hpp"
#include "planner/model/serving/prefill.hpp"

/// One decode iteration of a tp × pp engine (docs/model.md §8.2).

namespace planner {

struct DecodeStep {
  double batch = 0;                ///< sequences decoded together
  double weight_read_bytes = 0;    ///< per GPU of the largest stage: MoE, the experts touched
  double expert_read_fraction = 1; ///< of one GPU's routed experts, those the step touches
  double weight_read_seconds = 0;  ///< all stages
  double kv_read_seconds = 0;      ///< all stages
  double kv_reads = 1;  ///< loads of each cached element per step (kv_reads_per_element)
  double flops = 0;                ///< per GPU of the largest stage
  double compute_seconds = 0;      ///< all stages, at the compute dtype's effective rate
  double gemm_seconds = 0;         ///< of compute_seconds, the GEMMs' (the rest is attention's)
  /// The GEMM kernels' time, max(weight read, GEMM FLOPs), and the attention kernels',
  /// max(KV read, attention FLOPs), all stages: kernels that run one after another.
  double gemm_kernel_seconds = 0;
  double attention_kernel_seconds = 0;
  bool compute_bound = false;      ///< all FLOPs exceed all reads (weights and cache)
  bool gemm_compute_bound = false; ///< the GEMMs' FLOPs exceed the weight read
  double fixed_seconds = 0;        ///< all stages: each layer's kernel floors and launch gaps
  std::int64_t tp_messages = 0;
  double tp_message_bytes = 0;
  CollectiveCost tp_collective;
  CollectiveCost tp_ring;  ///< the ring figure, for comparison with what was picked
  double tp_seconds = 0;
  double pp_seconds = 0;
  ServingAllToAll ep;  ///< the MoE token all-to-alls of ep > 1, all stages
  double seconds = 0;
  double inter_node_bytes = 0;  ///< bytes per GPU per step that cross the network tier
};

/// Tokens of cache a decoding sequence reads on average: the whole context, or, when the
/// output length is known, the prompt plus half the output (the cache grows by one token per
/// step).
[[nodiscard]] inline double decode_context_tokens(const Serving& w) noexcept {
  if (w.output_tokens <= 0) return static_cast<double>(w.context_tokens);
  return static_cast<double>(prompt_tokens(w)) + 0.5 * static_cast<double>(w.output_tokens);
}

/// Each stage reads its weights and its batch's KV cache once per step (Pope et al. 2022,
/// arXiv 2211.05102, §3: decode is memory-bound at small batch) and computes 2 FLOPs per
/// parameter per sequence plus 4·h per cached token per layer of attention; the GEMMs take
/// the larger of their weight read and their FLOPs, the attention kernels the larger of the
/// cache read and theirs (a roofline per kernel: Williams et al. 2009), so at large batch the
/// GEMMs bind while the cache read still adds. The tp group all-reduces b·h activations twice
/// per layer (after attention and after the MLP); stages run one after another for a token and
/// add a send per boundary. Each layer
/// adds a fixed cost, its kernels' floors and launch gaps (Serving::layer_step_seconds,
/// fitted to batch-1 decode sweeps over tp: docs/model.md §8.2); weights and KV cache are
/// read at their own achieved fractions of the datasheet bandwidth, the cache once per query
/// head when the engine's decode kernel does not share a KV head's load (kv_cache.hpp). An MoE
/// model reads only the experts the step's tokens touch, and under ep every MoE layer adds
/// its dispatch and combine all-to-alls (model/serving/expert_serving.hpp, docs/moe.md §6).
[[nodiscard]] inline DecodeStep decode_step(const Model& m, const Cluster& c, const Serving& w,
                                            const Plan& p, double batch, double weights_bytes,
                                            double flops_per_second) noexcept {
  DecodeStep t;
  t.batch = batch;
  const double bandwidth = c.gpu.memory_bandwidth_bytes_per_second * w.memory_bandwidth_efficiency;
  const double kv_bandwidth = c.gpu.memory_bandwidth_bytes_per_second * kv_read_efficiency(w);
  const double stages = static_cast<double>(p.pp);
  const double h = static_cast<double>(m.hidden);
  const double context = decode_context_tokens(w);
  const double kv_bytes = kv_bytes_per_token(m, p, w.kv_sharding) * batch * context;
  t.weight_read_bytes = decode_weight_read_bytes(m, w, p, batch, weights_bytes);
  t.expert_read_fraction = expert_read_fraction(m, p, batch);
  t.weight_read_seconds = stages * t.weight_read_bytes / bandwidth;
  t.kv_reads = kv_reads_per_element(m, p, w.decode_attention);
  t.kv_read_seconds = stages * kv_bytes * t.kv_reads / kv_bandwidth;
  t.fixed_seconds = stages * static_cast<double>(stage_layers(m, p)) * w.layer_step_seconds;
  const double tp = static_cast<double>(p.tp);
  const double gemm_params = stage_layer_params(m, p) + static_cast<double>(m.vocab) * h;
  const double gemm_flops = 2.0 * gemm_params * batch / tp;
  const double attention_flops =
      4.0 * h * context * batch * static_cast<double>(stage_layers(m, p)) / tp;
  t.flops = gemm_flops + attention_flops;
  // The GEMMs have one row per sequence, so a small batch runs them below the large-GEMM
  // rate (gemm_rows.hpp; an MoE layer's experts see fewer rows each, not modelled).
  t.gemm_seconds = stages * gemm_flops / (flops_per_second * gemm_row_share(batch));
  t.compute_seconds = t.gemm_seconds + stages * attention_flops / flops_per_second;
  // A roofline per kernel class (Williams et al. 2009, applied operator by operator as in
  // LLM-Viewer, Yuan et al. 2024, arXiv 2402.16363, §3): the GEMMs stream the weights and the
  // attention kernels the cache, one after the other, so a step is the sum of the two
  // kernels' own max(bytes/bandwidth, FLOPs/rate). (One roofline over both, max(weights +
  // cache, all FLOPs), let the GEMMs' compute hide the attention's cache read: at a large
  // batch, where the GEMMs turn compute-bound, it read TensorRT-LLM's 128/2048 throughput
  // 10-50 % fast; docs/model.md §8.2.)
  t.gemm_kernel_seconds = std::max(t.weight_read_seconds, t.gemm_seconds);
  t.attention_kernel_seconds = std::max(t.kv_read_seconds, t.compute_seconds - t.gemm_seconds);
  t.compute_bound = t.compute_seconds > t.weight_read_seconds + t.kv_read_seconds;
  t.gemm_compute_bound = t.gemm_seconds > t.weight_read_seconds;
  t.tp_message_bytes = batch * h * bytes_of(m.precision.activations);
  const std::size_t network = c.network_index();
  if (p.tp > 1) {
    const std::size_t k = axis_tier(p, c, Axis::tp);
    const Tier& tier = c.tiers[k];
    t.tp_collective = cheapest_collective(Collective::all_reduce, p.tp, t.tp_message_bytes, tier);
    t.tp_ring = collective_cost(Collective::all_reduce, Algorithm::ring, p.tp, t.tp_message_bytes,
                                tier);
    t.tp_messages = 2 * m.layers;
    t.tp_seconds = static_cast<double>(t.tp_messages) * t.tp_collective.seconds();
    if (k == network) {
      t.inter_node_bytes +=
          static_cast<double>(t.tp_messages) * 2.0 * (tp - 1.0) / tp * t.tp_message_bytes;
    }
  }
  if (p.pp > 1) {
    const std::size_t k = axis_tier(p, c, Axis::pp);
    if (k == network) t.inter_node_bytes += (stages - 1.0) * t.tp_message_bytes;
    t.pp_seconds = (stages - 1.0) * cheapest_collective(Collective::point_to_point, 2,
                                                         t.tp_message_bytes, c.tiers[k])
                                        .seconds();
  }
  t.ep = serving_all_to_all(m, c, p, batch, moe_layer_count(m));
  t.inter_node_bytes += t.ep.inter_node_bytes;
  t.seconds = t.gemm_kernel_seconds + t.attention_kernel_seconds + t.fixed_seconds +
              t.tp_seconds + t.pp_seconds + t.ep.seconds;
  return t;
}

}  // namespace planner

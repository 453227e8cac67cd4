#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/expert_traffic.hpp"
#include "planner/model/experts.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/placement.hpp"

/// Mixture-of-experts terms of a serving engine (docs/moe.md §6): which expert weights a
/// decode step reads, and the token all-to-all of expert parallelism. Under ep the dp
/// replicas keep their own attention and batch, and each MoE layer's experts are split over
/// ep of them (the folding of docs/moe.md §3, with cp = 1).

namespace planner {

/// Expected distinct experts, of E, that `tokens` tokens touch when each is routed to k of
/// them: under uniform routing an expert is in one token's top-k with probability k/E, so it
/// is untouched by all of them with probability (1 − k/E)^tokens (tokens routed
/// independently), and by linearity of expectation E·(1 − (1 − k/E)^tokens) are touched
/// (derivation: docs/moe.md §6.2). Uniform routing is the largest value: the expression is
/// concave in each expert's probability, so a skewed router touches fewer.
[[nodiscard]] inline double expected_experts_touched(double experts, double top_k,
                                                     double tokens) noexcept {
  if (experts <= 0) return 0;
  return experts * (1.0 - std::pow(1.0 - top_k / experts, tokens));
}

/// Tokens routed through one MoE layer of one GPU's experts in a decode step: every replica
/// of the ep group decodes `batch` sequences, one token each, and dispatches them to the
/// group's experts.
[[nodiscard]] inline double expert_group_tokens(const Plan& p, double batch) noexcept {
  return batch * static_cast<double>(p.ep);
}

/// The fraction of one GPU's routed-expert weights a decode step reads: of the E/ep experts
/// the GPU holds, each is touched with probability 1 − (1 − k/E)^(ep·B), the same for all.
/// 1 for a dense model.
[[nodiscard]] inline double expert_read_fraction(const Model& m, const Plan& p,
                                                 double batch) noexcept {
  if (!is_moe(m)) return 1.0;
  const double experts = static_cast<double>(m.moe.experts);
  return expected_experts_touched(experts, static_cast<double>(m.moe.top_k),
                                  expert_group_tokens(p, batch)) /
         experts;
}

/// Routed-expert weight bytes on one GPU of the largest stage: the stage's experts split by
/// tp·ep (model/memory.hpp gpu_params), at the serving weights' bytes per parameter.
[[nodiscard]] inline double gpu_expert_weight_bytes(const Model& m, const Serving& w,
                                                    const Plan& p) noexcept {
  return gpu_params(m, p).experts * w.bytes_per_param;
}

/// Weight bytes one GPU reads per decode step: all of `weights_bytes` (the ledger's) but the
/// routed experts no token of the step touches.
[[nodiscard]] inline double decode_weight_read_bytes(const Model& m, const Serving& w,
                                                     const Plan& p, double batch,
                                                     double weights_bytes) noexcept {
  if (!is_moe(m)) return weights_bytes;
  const double idle = 1.0 - expert_read_fraction(m, p, batch);
  return weights_bytes - idle * gpu_expert_weight_bytes(m, w, p);
}

/// The token all-to-alls of one pass (a decode step, or a prefill chunk) on one GPU.
struct ServingAllToAll {
  std::int64_t layers = 0;         ///< MoE layers the pass crosses
  std::size_t tier = 0;            ///< the innermost tier holding each ep group
  std::int64_t ranks_in_node = 1;  ///< ep ranks sharing a node
  double message_bytes = 0;        ///< what one GPU sends in one dispatch (or combine), M
  CollectiveCost all_to_all;       ///< one dispatch (or combine)
  double all_to_alls = 0;          ///< 2 per MoE layer: dispatch and combine
  double seconds = 0;              ///< all of them, on the critical path
  double inter_node_bytes = 0;     ///< bytes one GPU sends off its node
};

/// Dispatch and combine of `tokens` tokens per replica across `layers` MoE layers (Lepikhin
/// et al. 2021, GShard, arXiv 2006.16668: one all-to-all each way per MoE layer; a forward
/// pass only, so 2 per layer against training's 4). Each tp rank sends its tokens/tp share
/// (the split training uses, model/expert_traffic.hpp) to k experts: M = tokens/tp · k · h ·
/// bytes(activations) · λ, λ the busiest rank's load (model/experts.hpp). One all-to-all is
/// the pairwise exchange of model/expert_traffic.hpp on the ep group's tiers, so a decode
/// step's small M pays (ep − 1) latencies. Nothing else overlaps it in a decode step.
[[nodiscard]] inline ServingAllToAll serving_all_to_all(const Model& m, const Cluster& c,
                                                        const Plan& p, double tokens,
                                                        std::int64_t layers) noexcept {
  ServingAllToAll t;
  if (!is_moe(m) || p.ep <= 1) return t;
  t.layers = layers;
  const EpExchange x = ep_exchange(m, c, p, tokens / static_cast<double>(p.tp));
  t.tier = x.tier;
  t.ranks_in_node = x.ranks_in_node;
  t.message_bytes = x.message_bytes;
  t.all_to_all = x.all_to_all;
  t.all_to_alls = 2.0 * static_cast<double>(layers);
  t.seconds = t.all_to_alls * t.all_to_all.seconds();
  t.inter_node_bytes = t.all_to_alls * x.far_fraction * t.message_bytes;
  return t;
}

}  // namespace planner

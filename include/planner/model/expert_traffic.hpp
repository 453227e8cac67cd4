#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/activations.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/experts.hpp"
#include "planner/model/placement.hpp"

/// Expert parallelism's token traffic (docs/moe.md §5): each MoE layer dispatches every token
/// to its top-k experts and combines their outputs back, one all-to-all each way in the
/// forward pass and again (the gradients) in the backward (Lepikhin et al. 2021, GShard,
/// arXiv 2006.16668; Megatron-LM MoEAlltoAllTokenDispatcher).

namespace planner {

struct ExpertTraffic {
  std::int64_t layers = 0;       ///< MoE layers on the largest stage; 0 for a dense model
  std::size_t tier = 0;          ///< the innermost tier holding each ep group
  std::int64_t ranks_in_node = 1;  ///< ep ranks sharing a node (tier 0 domain)
  double message_bytes = 0;      ///< what one rank sends in one all-to-all (its M)
  CollectiveCost all_to_all;     ///< one dispatch (or combine)
  double all_to_alls = 0;        ///< per micro-batch: 4 per MoE layer, 6 with full recompute
  double seconds = 0;            ///< per micro-batch
  double exposed_seconds = 0;    ///< of those, on the critical path (all unless overlapped)
  double inter_node_bytes = 0;   ///< per micro-batch, bytes a rank sends off its node
};

/// Pairwise-exchange all-to-all over n ranks with M bytes per rank (Thakur et al. 2005,
/// "Optimization of collective communication operations in MPICH", pairwise exchange: n − 1 steps, each
/// sending M/n to one peer): a step to a peer on the same node costs α₀ + (M/n)/B₀, a step
/// to a peer on another node α_t + (M/n)/B_t on the group's tier t. With every peer on one
/// tier this is collectives.hpp's (n−1)α + (n−1)/n·M/B.
[[nodiscard]] inline CollectiveCost hierarchical_all_to_all(std::int64_t ranks,
                                                            std::int64_t ranks_in_node,
                                                            double bytes, const Tier& node,
                                                            const Tier& outer) noexcept {
  CollectiveCost c;
  c.algorithm = Algorithm::pairwise;
  if (ranks <= 1) return c;
  const double n = static_cast<double>(ranks);
  const double near = static_cast<double>(ranks_in_node - 1);
  const double far = n - static_cast<double>(ranks_in_node);
  const double chunk = bytes / n;
  c.latency_seconds = near * node.latency_seconds + far * outer.latency_seconds;
  c.wire_seconds = near * chunk / node.bandwidth_bytes_per_second +
                   far * chunk / outer.bandwidth_bytes_per_second;
  return c;
}

/// MoE layers on the largest stage: all of them with pp = 1, else the stage's share of the
/// layers, rounded to the nearest (training and serving alike).
[[nodiscard]] inline std::int64_t stage_moe_layers(const Model& m, const Plan& p) noexcept {
  if (!is_moe(m)) return 0;
  if (p.pp == 1) return moe_layer_count(m);
  const double fraction = static_cast<double>(stage_layers(m, p)) / static_cast<double>(blocks(m));
  return static_cast<std::int64_t>(static_cast<double>(moe_layer_count(m)) * fraction + 0.5);
}

/// One dispatch (or combine) on the ep group of a plan with ep > 1, for `tokens` tokens per
/// rank: each sends them to k experts, M = tokens·k·h·bytes times the busiest rank's load
/// λ (model/experts.hpp), by the pairwise exchange above on the group's tiers.
struct EpExchange {
  std::size_t tier = 0;            ///< the innermost tier holding each ep group
  std::int64_t ranks_in_node = 1;  ///< ep ranks sharing a node (tier 0 domain)
  double message_bytes = 0;        ///< M
  CollectiveCost all_to_all;
  double far_fraction = 0;         ///< of M, what goes to ranks on other nodes
};

[[nodiscard]] inline EpExchange ep_exchange(const Model& m, const Cluster& c, const Plan& p,
                                            double tokens) noexcept {
  EpExchange x;
  x.tier = axis_tier(p, c, Axis::ep);
  x.ranks_in_node = x.tier == 0 ? p.ep : ep_ranks_per_domain(p, domain_gpus(c, 0));
  x.message_bytes = tokens * static_cast<double>(m.moe.top_k) * static_cast<double>(m.hidden) *
                    bytes_of(m.precision.activations) * expert_load_factor(m);
  x.all_to_all = hierarchical_all_to_all(p.ep, x.ranks_in_node, x.message_bytes, c.tiers[0],
                                         c.tiers[x.tier]);
  x.far_fraction = static_cast<double>(p.ep - x.ranks_in_node) / static_cast<double>(p.ep);
  return x;
}

/// The all-to-alls of one micro-batch on one GPU. Each rank routes its s·b/(cp·tp) tokens
/// (tokens split over tp as with sequence parallelism) to k experts: M = tokens·k·h·bytes,
/// times the load of the busiest rank (model/experts.hpp), which every rank waits for.
/// Dispatch and combine forward, their gradients backward: 4 per MoE layer; full recompute
/// repeats the forward pair. Not overlapped with compute (DeepSeek-V3's dual micro-batch
/// overlap is not modelled).
[[nodiscard]] inline ExpertTraffic expert_traffic(const Model& m, const Cluster& c,
                                                  const Plan& p) noexcept {
  ExpertTraffic t;
  if (!is_moe(m)) return t;
  t.layers = stage_moe_layers(m, p);
  if (p.ep <= 1) return t;
  const double tokens = static_cast<double>(m.seq_len) * static_cast<double>(p.micro_batch) /
                        (static_cast<double>(p.cp) * static_cast<double>(p.tp));
  const EpExchange x = ep_exchange(m, c, p, tokens);
  t.tier = x.tier;
  t.ranks_in_node = x.ranks_in_node;
  t.message_bytes = x.message_bytes;
  t.all_to_all = x.all_to_all;
  t.all_to_alls = (p.recompute == Recompute::full ? 6.0 : 4.0) * static_cast<double>(t.layers);
  t.seconds = t.all_to_alls * t.all_to_all.seconds();
  t.exposed_seconds = t.seconds;
  t.inter_node_bytes = t.all_to_alls * x.far_fraction * t.message_bytes;
  return t;
}

/// With `shared_expert_overlap` (Megatron-LM --moe-shared-expert-overlap) each all-to-all
/// runs beside a shared-expert GEMM on another stream: the dispatch beside fc1 (gate and up
/// projections, 2/3 of a gated expert's FLOPs, 1/2 of an ungated one's), the combine beside
/// fc2, the backward's pair beside the same GEMMs' gradients (twice the forward's FLOPs), and
/// full recompute's second forward beside the forward's. Each hides up to its GEMM's time:
/// what one all-to-all of `a` seconds leaves exposed beside a GEMM of `g` is max(0, a − g).
/// `shared_forward_seconds`: one MoE layer's shared experts' forward on this GPU.
[[nodiscard]] inline double shared_overlap_exposed_seconds(const Model& m, const Plan& p,
                                                           const ExpertTraffic& t,
                                                           double shared_forward_seconds) noexcept {
  const double a = t.all_to_all.seconds();
  const double fc1 = m.gated_mlp ? 2.0 / 3.0 : 0.5;
  auto pass = [&](double gemm_seconds) {
    return std::max(0.0, a - fc1 * gemm_seconds) + std::max(0.0, a - (1.0 - fc1) * gemm_seconds);
  };
  const double forwards = p.recompute == Recompute::full ? 2.0 : 1.0;
  return static_cast<double>(t.layers) *
         (forwards * pass(shared_forward_seconds) + pass(2.0 * shared_forward_seconds));
}

/// With `overlap_all_to_all`, a micro-batch's all-to-alls run while another micro-batch
/// computes (the 1F1B steady state pairs one forward with one backward; DeepSeek-AI 2024,
/// arXiv 2412.19437, §3.2.1, DualPipe): what exceeds one micro-batch's compute stays exposed.
/// Megatron-LM refuses the overlap with full recompute (transformer_config.py: "disable full
/// recomputation when enabling overlap_moe_expert_parallel_comm"), so it is then all exposed.
/// With shared experts overlapped as well, what they leave exposed is what the other
/// micro-batch's compute may hide.
[[nodiscard]] inline double exposed_all_to_all_seconds(const Model& m, const Plan& p,
                                                       const ExpertTraffic& t,
                                                       double compute_seconds,
                                                       double shared_forward_seconds) noexcept {
  const double left = m.moe.shared_expert_overlap && m.moe.shared_experts > 0
                          ? shared_overlap_exposed_seconds(m, p, t, shared_forward_seconds)
                          : t.seconds;
  if (!m.moe.overlap_all_to_all || p.recompute == Recompute::full) return left;
  return std::max(0.0, left - compute_seconds);
}

}  // namespace planner

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
#include "planner/model/serving/kv_cache.hpp"
#include "planner/model/serving/serving_time.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/base/units.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/data_parallel_time.hpp"

/// One micro-batch's time on one GPU of the largest stage, piece by piece (docs/model.md §7):
/// TrainingTime, which the step time (step_time.hpp) fills and the explanation quotes, and the
/// per-axis costs added to it: the score matrix's HBM traffic, the tensor-parallel collectives
/// and their overlap with the GEMMs, the context-parallel ring, the pipeline's stage-boundary
/// sends and the expert-parallel all-to-all.

namespace planner {

struct TrainingTime {
  // Per micro-batch, on one GPU of the largest stage.
  double dense_seconds = 0;
  double attention_seconds = 0;
  double recompute_seconds = 0;
  double scores_io_seconds = 0;  ///< HBM traffic of a materialised score matrix (no flash)
  /// Norms, activation functions, residual adds, the loss, FP8 casts, MoE permutation at HBM
  /// bandwidth (model/elementwise.hpp); 0 when the GPU's rate is an effective one.
  double elementwise_seconds = 0;
  std::int64_t tp_messages = 0;  ///< all-reduces (or SP's RS+AG pairs) per micro-batch
  double tp_message_bytes = 0;
  CollectiveCost tp_collective;  ///< one of those messages
  double tp_seconds = 0;         ///< all of them; on the critical path (exposed part with overlap)
  /// With tp_comm_overlap: the same collectives back to back, before the GEMMs hide them
  /// (0 without overlap, where tp_seconds is that figure).
  double tp_unoverlapped_seconds = 0;
  /// In tp_seconds: the GEMM time lost to the SMs the overlapped collectives occupy.
  double tp_overlap_cost_seconds = 0;
  double cp_block_bytes = 0;     ///< one K/V block passed around the ring
  CollectiveCost cp_step;        ///< one ring step
  double cp_passes = 0;          ///< ring passes per layer: 3 (forward, backward K/V and grads), 4 with full recompute
  double cp_seconds = 0;         ///< ring traffic per micro-batch
  double cp_exposed_seconds = 0; ///< what attention compute does not hide, cost included
  /// In cp_exposed_seconds: the attention time the hidden ring steps slow (their time × the
  /// tier's processor_usage, as for the data-parallel buckets).
  double cp_overlap_cost_seconds = 0;
  double pp_message_bytes = 0;
  double pp_seconds = 0;         ///< stage-boundary sends per micro-batch
  // Per optimizer step.
  std::int64_t micro_batches = 1;
  double bubble_seconds = 0;
  DataParallelTraffic dp;
  double inter_node_bytes = 0;  ///< bytes per GPU per step that cross nodes (all axes)
  double step_seconds = 0;
  double straggler_seconds = 0;  ///< in step_seconds: the wait for the slowest rank (0 unless given)
  double global_sequences = 0;
  double tokens_per_second = 0;
  /// Model FLOP/s per GPU ÷ the effective FLOP/s the time model uses, the attention square
  /// counted at the share the kernels compute (compute.hpp executed_model_flops_per_sequence),
  /// the count the effective rate is measured on, so a plan all compute is at most 1.
  double mfu = 0;
  /// Model FLOP/s per GPU as the field counts them (the whole attention square, PaLM
  /// Appendix B): the numerator of MFU against a datasheet peak (report/moe_text.hpp).
  double model_flops_per_second = 0;
  // Mixture of experts (docs/moe.md §5); zero for a dense model.
  ExpertTraffic ep;               ///< token dispatch and combine, per micro-batch
  /// Expert gradients over the expert-data-parallel group; empty for a dense model (so that
  /// a dense model's evaluation need not zero it: issue 8's speed bound).
  std::optional<DataParallelTraffic> expert_dp;

  [[nodiscard]] double expert_dp_exposed_seconds() const noexcept {
    return expert_dp ? expert_dp->exposed_seconds : 0.0;
  }
  [[nodiscard]] double compute_seconds() const noexcept {
    return dense_seconds + attention_seconds + recompute_seconds + scores_io_seconds +
           elementwise_seconds;
  }
  [[nodiscard]] double micro_batch_seconds() const noexcept {
    return compute_seconds() + tp_seconds + cp_exposed_seconds + pp_seconds + ep.exposed_seconds;
  }
};

/// The shapes one stage's micro-batch works on, shared by the per-axis costs below.
struct StageShape {
  double layers = 0;        ///< layers on the largest stage
  double local_tokens = 0;  ///< s / cp
  double micro_batch = 0;   ///< b
  double accum = 0;         ///< micro-batches per step
};

/// HBM bytes an untiled attention core moves per element of its score matrix (one query-key
/// pair of one head), kernel by kernel, for `e`-byte activations and 1-byte dropout masks:
/// Megatron-LM's CoreAttention (megatron/core/transformer/dot_product_attention.py; 2021's
/// megatron/model/transformer.py ParallelAttention) runs baddbmm(Q, Kᵀ), the fused
/// scale-mask-softmax, dropout and bmm(·, V) as four kernels, each reading its input from HBM
/// and writing its output there (Dao et al. 2022 §2.2, Algorithm 0, the standard
/// implementation FlashAttention replaces):
///
/// | kernel | forward | backward |
/// |---|---|---|
/// | QKᵀ GEMM | write scores e | read dScores twice (dQ, dK) 2e |
/// | softmax | read e, write e | read P and dP, write dScores 3e |
/// | dropout | read e, write e and the mask 1 | read dP' and the mask, write dP 2e + 1 |
/// | ·V GEMM | read e | write dP' e, read P' for dV e |
/// | total | 6e + 1 | 9e + 1 |
///
/// (13 and 19 bytes at bf16.) Selective or full recompute runs the forward kernels once more.
/// Korthikanti et al.'s 5e/2·… stored term (`scores_bytes`) is what stays in memory between
/// the passes; this is what flows through HBM. Q, K, V and the context (s·h per token, not s²)
/// are left out.
struct ScoreTraffic {
  double forward_bytes_per_element = 0;
  double backward_bytes_per_element = 0;
};
[[nodiscard]] constexpr ScoreTraffic score_traffic(double e) noexcept {
  return {6.0 * e + 1.0, 9.0 * e + 1.0};
}

/// Standard (untiled) attention moves its score matrices through HBM (Dao et al. 2022 §3.2,
/// Theorem 2: Θ(Nd + N²) HBM accesses against tiled attention's Θ(N²d²/M)), at the GPU's
/// memory bandwidth, kernel by kernel (score_traffic); tiled attention avoids this traffic.
inline void add_scores_io(const Model& m, const Cluster& c, const Plan& p, const StageShape& g,
                          TrainingTime& t) noexcept {
  if (p.flash_attention) return;
  const double elements = static_cast<double>(m.heads) * g.local_tokens *
                          static_cast<double>(m.seq_len) * g.micro_batch /
                          static_cast<double>(p.tp);
  const ScoreTraffic k = score_traffic(bytes_of(m.precision.activations));
  const double forwards = p.recompute == Recompute::none ? 1.0 : 2.0;
  const double bytes = elements * (forwards * k.forward_bytes_per_element +
                                   k.backward_bytes_per_element);
  t.scores_io_seconds = bytes * g.layers / c.gpu.memory_bandwidth_bytes_per_second;
}

/// MoE layers whose MLP runs without tp collectives: with etp = 1 the routed experts take
/// the tokens as sequence parallelism left them, split over the tp ranks, and send them to
/// the ep group directly (Megatron-LM MoEAlltoAllTokenDispatcher gathers and scatters only
/// over the expert tensor-parallel group); a shared expert is a tp-split MLP (Megatron-LM
/// SharedExpertMLP) and keeps them. A 1 < etp < tp group is charged as tp's (an upper bound).
[[nodiscard]] inline double layers_without_mlp_tp(const Model& m, const Plan& p) noexcept {
  if (!is_moe(m) || expert_tp(p) != 1 || m.moe.shared_experts > 0) return 0;
  return static_cast<double>(stage_moe_layers(m, p));
}

/// The four GEMMs of one layer's forward on one tp rank, in seconds at `flops_per_second`: 2
/// FLOPs per weight (layer_gemm_weights) and token, for the s/cp·b tokens sequence parallelism
/// gathers (MoE: f the routed copies' and shared experts' width per token, model/experts.hpp).
[[nodiscard]] inline LayerGemms layer_gemm_seconds(const Model& m, const Plan& p,
                                                      double tokens,
                                                      double flops_per_second) noexcept {
  const LayerGemms w = layer_gemm_weights(m, mlp_f_per_token(m));
  const double per_weight = 2.0 * tokens / static_cast<double>(p.tp) / flops_per_second;
  return {per_weight * w.qkv, per_weight * w.proj, per_weight * w.fc1, per_weight * w.fc2};
}

/// How Transformer Engine's userbuffers run a collective inside a GEMM (TE
/// pytorch/module/base.py initialize_ub, the default `methods`): ring exchange passes the tp
/// chunks peer to peer while the GEMM works on the chunk it has, so one chunk of the
/// collective stays exposed; pipeline splits the GEMM in 4 and reduce-scatters each piece
/// behind the next; bulk runs the whole collective beside an independent GEMM.
enum class OverlapMethod { ring_exchange, pipeline, bulk };

/// One collective of `c` seconds hidden behind a GEMM of `g` seconds: what stays exposed, and
/// the overlap's cost. Pipeline and bulk collectives are kernels on TE's default 16 SMs
/// (`num_sm = 16`), which the GEMM beside them does not have while they run: the GEMM slows
/// by 16/SMs of the overlapped time. Ring exchange copies with the copy engines (NeMo's
/// userbuffers configurations give it one SM): no cost. A GPU whose SM count is unknown
/// (given by numbers) pays none.
struct OverlappedCollective {
  double exposed_seconds = 0;  ///< what the GEMM does not hide
  double cost_seconds = 0;     ///< GEMM time lost to the collective's SMs
  [[nodiscard]] double seconds() const noexcept { return exposed_seconds + cost_seconds; }
};
[[nodiscard]] inline OverlappedCollective overlapped_collective(double c, double g,
                                                                OverlapMethod how,
                                                                std::int64_t tp,
                                                                double sms) noexcept {
  constexpr double comm_sms = 16.0;  // TE initialize_ub add_ub(num_sm = 16)
  const double cost = sms > 0 ? std::min(c, g) * comm_sms / sms : 0.0;
  switch (how) {
    case OverlapMethod::ring_exchange: return {std::max(c / static_cast<double>(tp), c - g), 0.0};
    case OverlapMethod::pipeline: return {std::max(c / 4.0, c - g), cost};  // num_splits = 4
    case OverlapMethod::bulk: return {std::max(0.0, c - g), cost};
  }
  return {c, 0.0};
}

/// Exposed tp time of one layer under tp_comm_overlap, `c` one reduce-scatter or all-gather
/// of the layer's message, TE's default pairing (base.py `methods`): forward, the attention
/// input's all-gather inside QKV (ring exchange), the attention output's reduce-scatter
/// inside the projection (pipeline), the same for FC1 and FC2; backward, the output
/// gradients' all-gathers inside the projection's and FC2's data-gradient GEMMs (ring
/// exchange) and the input gradients' reduce-scatters beside the QKV and FC1 weight-gradient
/// GEMMs (bulk). `forwards` counts the forward passes (2 with full recompute); `mlp` is false
/// for MoE layers whose MLP runs without tp collectives (layers_without_mlp_tp).
struct TpOverlap {
  double exposed_seconds = 0;  ///< collectives the GEMMs do not hide, cost included
  double cost_seconds = 0;     ///< of which: GEMM time lost to the collectives' SMs
};
[[nodiscard]] inline TpOverlap layer_tp_overlap(const LayerGemms& g, double c,
                                                double forwards, bool mlp, std::int64_t tp,
                                                double sms) noexcept {
  using M = OverlapMethod;
  TpOverlap o;
  auto add = [&](double times, double gemm, M how) {
    const OverlappedCollective x = overlapped_collective(c, gemm, how, tp, sms);
    o.exposed_seconds += times * x.seconds();
    o.cost_seconds += times * x.cost_seconds;
  };
  add(forwards, g.qkv, M::ring_exchange);
  add(forwards, g.proj, M::pipeline);
  add(1.0, g.proj, M::ring_exchange);
  add(1.0, g.qkv, M::bulk);
  if (mlp) {
    add(forwards, g.fc1, M::ring_exchange);
    add(forwards, g.fc2, M::pipeline);
    add(1.0, g.fc2, M::ring_exchange);
    add(1.0, g.fc1, M::bulk);
  }
  return o;
}

/// Tensor parallel: 2 all-reduces of s·b·h in the forward and 2 in the backward of every
/// layer (Narayanan et al. 2021 §3.2; with SP an equal-volume reduce-scatter + all-gather,
/// Korthikanti §4.2.2); full recompute repeats the forward pair. Half of them are the MLP's.
/// With tp_comm_overlap and SP each reduce-scatter and all-gather runs inside a GEMM
/// (layer_tp_overlap) and only what the GEMMs do not hide is on the critical path, where the
/// tp group's tier has peer memory: Transformer Engine's userbuffers exchange through CUDA IPC
/// or multicast peer mappings ("Tensor-parallel GPUs must be on a single node, and connected
/// over NVLink/NVSwitch", TE examples/pytorch/comm_gemm_overlap/README.md, Requirements).
/// Across the network every tp collective stays on the critical path.
inline void add_tensor_parallel(const Model& m, const Cluster& c, const Plan& p,
                                const StageShape& g, double flops_per_second,
                                TrainingTime& t) noexcept {
  if (p.tp <= 1) return;
  const std::size_t k = axis_tier(p, c, Axis::tp);
  t.tp_message_bytes = g.local_tokens * g.micro_batch * static_cast<double>(m.hidden) *
                       bytes_of(m.precision.activations);
  t.tp_collective =
      cheapest_collective(Collective::all_reduce, p.tp, t.tp_message_bytes, c.tiers[k]);
  // Full recompute repeats the forward pair; op-level checkpointing its two all-gathers
  // (torchtitan saves reduce-scatter outputs, not all-gather ones: `_save_list`), half a pair.
  const double per_layer = p.recompute == Recompute::full ? 6.0
                           : p.recompute == Recompute::op ? 5.0
                                                          : 4.0;
  const double plain_mlp_layers = layers_without_mlp_tp(m, p);
  t.tp_messages = static_cast<std::int64_t>(per_layer * g.layers -
                                            per_layer / 2.0 * plain_mlp_layers);
  t.tp_seconds = static_cast<double>(t.tp_messages) * t.tp_collective.seconds();
  if (p.tp_comm_overlap && p.sequence_parallel && c.tiers[k].peer_memory) {
    const double half =
        cheapest_collective(Collective::all_gather, p.tp, t.tp_message_bytes, c.tiers[k])
            .seconds();
    const LayerGemms gemm =
        layer_gemm_seconds(m, p, g.local_tokens * g.micro_batch, flops_per_second);
    const double forwards = p.recompute == Recompute::full ? 2.0 : 1.0;
    const double sms = c.gpu.compute_units;
    const TpOverlap with_mlp = layer_tp_overlap(gemm, half, forwards, true, p.tp, sms);
    const TpOverlap without = layer_tp_overlap(gemm, half, forwards, false, p.tp, sms);
    t.tp_unoverlapped_seconds = t.tp_seconds;
    t.tp_seconds = (g.layers - plain_mlp_layers) * with_mlp.exposed_seconds +
                   plain_mlp_layers * without.exposed_seconds;
    t.tp_overlap_cost_seconds = (g.layers - plain_mlp_layers) * with_mlp.cost_seconds +
                                plain_mlp_layers * without.cost_seconds;
  }
  if (k == c.network_index()) {
    const double n = static_cast<double>(p.tp);
    t.inter_node_bytes += g.accum * static_cast<double>(t.tp_messages) * 2.0 * (n - 1.0) / n *
                          t.tp_message_bytes;
  }
}

/// Context parallel (ring attention, Liu et al. 2023, arXiv 2310.01889): cp − 1 K/V blocks of
/// 2·(s/cp)·b·h_kv·2/t bytes per GPU per layer forward; the backward passes K/V and their
/// gradients again (2×); each layer's ring overlaps that layer's attention compute. Each GPU
/// passes only its own heads' K/V: tensor parallelism splits the attention by heads
/// (Megatron-LM megatron/core/transformer/attention.py: num_query_groups_per_partition =
/// groups / tp; a tp wider than the groups keeps one group per GPU), and each tp rank rings
/// with the same tp rank of the other cp groups (docs/model.md §7).
inline void add_context_parallel(const Model& m, const Cluster& c, const Plan& p,
                                 const StageShape& g, TrainingTime& t) noexcept {
  if (p.cp <= 1) return;
  const std::size_t k = axis_tier(p, c, Axis::cp);
  const double kv_width = kv_heads_per_rank(m, p.tp, KvSharding::replicate) * head_dim(m);
  t.cp_block_bytes =
      2.0 * g.local_tokens * g.micro_batch * kv_width * bytes_of(m.precision.activations);
  t.cp_step = cheapest_collective(Collective::point_to_point, 2, t.cp_block_bytes, c.tiers[k]);
  const double passes = p.recompute == Recompute::full ? 4.0 : 3.0;
  t.cp_passes = passes;
  // Each ring step is its own send/recv launch (collective_launch_seconds): at short
  // sequences, where a step's block is small, the fixed cost is most of it.
  const double per_layer = passes * static_cast<double>(p.cp - 1) *
                           (t.cp_step.seconds() + collective_launch_seconds);
  const double attention_per_layer = t.attention_seconds / g.layers;
  t.cp_seconds = per_layer * g.layers;
  t.cp_exposed_seconds = std::max(0.0, per_layer - attention_per_layer) * g.layers;
  t.cp_overlap_cost_seconds = c.tiers[k].processor_usage * (t.cp_seconds - t.cp_exposed_seconds);
  t.cp_exposed_seconds += t.cp_overlap_cost_seconds;
  if (k == c.network_index()) {
    t.inter_node_bytes +=
        g.accum * passes * static_cast<double>(p.cp - 1) * t.cp_block_bytes * g.layers;
  }
}

/// Pipeline: one activation send forward and one gradient send backward per micro-batch per
/// boundary, s·b·h·2 bytes, split by tp with scatter/gather (Narayanan et al. 2021 §4.1).
/// With pp_comm_overlap and virtual stages (Megatron-LM --overlap-p2p-communication) each send
/// runs beside the next chunk's pass, a forward chunk (1/3 of the micro-batch's compute, over
/// v) or a backward one (2/3, over v), and only what outlasts that chunk stays exposed.
inline void add_pipeline(const Model& m, const Cluster& c, const Plan& p, const StageShape& g,
                         TrainingTime& t) noexcept {
  if (p.pp <= 1) return;
  const std::size_t k = axis_tier(p, c, Axis::pp);
  t.pp_message_bytes = g.local_tokens * g.micro_batch * static_cast<double>(m.hidden) *
                       bytes_of(m.precision.activations) / static_cast<double>(p.tp);
  // Each send is its own launch (collective_launch_seconds): v virtual stages pay v times as
  // many (Narayanan et al. 2021 §2.2.2), so interleaving deeper is not free.
  const double send = cheapest_collective(Collective::point_to_point, 2, t.pp_message_bytes,
                                          c.tiers[k]).seconds() +
                      collective_launch_seconds;
  t.pp_seconds = p2p_messages_per_micro_batch(p) * send;
  if (p.pp_comm_overlap && p.virtual_stages > 1) {
    const double v = static_cast<double>(p.virtual_stages);
    const double chunk = t.compute_seconds() / v;
    t.pp_seconds =
        v * (std::max(0.0, send - chunk / 3.0) + std::max(0.0, send - 2.0 * chunk / 3.0));
  }
  if (k == c.network_index()) {
    t.inter_node_bytes += g.accum * p2p_messages_per_micro_batch(p) * t.pp_message_bytes;
  }
}

/// Expert parallelism: the token dispatch and combine of the stage's MoE layers, exposed as
/// far as the overlap option allows (model/expert_traffic.hpp; docs/moe.md §5).
/// A shared expert's GEMMs are split over tp like the MLP and see the micro-batch's b·s/cp
/// tokens: 2 · shared params / (tp · cp) · b·s FLOPs forward per MoE layer, at the compute rate.
inline void add_expert_traffic(const Model& m, const Cluster& c, const Plan& p,
                               const StageShape& g, double flops_per_second,
                               TrainingTime& t) noexcept {
  t.ep = expert_traffic(m, c, p);
  const double shared_forward_seconds =
      2.0 * static_cast<double>(m.moe.shared_experts) * expert_params(m) *
      static_cast<double>(m.seq_len) * static_cast<double>(p.micro_batch) /
      (static_cast<double>(p.tp) * static_cast<double>(p.cp)) / flops_per_second;
  t.ep.exposed_seconds =
      exposed_all_to_all_seconds(m, p, t.ep, t.compute_seconds(), shared_forward_seconds);
  if (t.ep.tier == c.network_index()) t.inter_node_bytes += g.accum * t.ep.inter_node_bytes;
}

}  // namespace planner

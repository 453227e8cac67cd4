#include <fmt/format.h>

#include <cmath>
#include <type_traits>

#include "planner/io/text.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/report/moe_text.hpp"

/// The traffic notes in words: one sentence per note with the figures it holds and those of
/// the plan's TrainingTime or ServingTime.

namespace planner {

std::string traffic_axis_name(TrafficAxis a) {
  switch (a) {
    case TrafficAxis::tp: return "tp";
    case TrafficAxis::cp: return "cp";
    case TrafficAxis::pp: return "pp";
    case TrafficAxis::dp: return "dp";
    case TrafficAxis::dp_cp: return "dp x cp";
    case TrafficAxis::memory: return "memory";
    case TrafficAxis::token: return "token";
    case TrafficAxis::ep: return "ep";
  }
  return "";
}

std::string traffic_collective(const TrafficNote& n) {
  switch (n.axis) {
    case TrafficAxis::tp: {
      const auto* f = std::get_if<TpTrainingFacts>(&n.facts);
      return f && f->sequence_parallel ? "reduce-scatter + all-gather (sequence parallel)"
                                       : "all-reduce";
    }
    case TrafficAxis::cp: return "ring K/V exchange (point-to-point)";
    case TrafficAxis::pp: return "point-to-point activations and gradients";
    case TrafficAxis::dp:
    case TrafficAxis::dp_cp: {
      const int zero = std::get<DpFacts>(n.facts).zero;
      if (zero == 0) return "all-reduce";
      if (zero < 3) return "reduce-scatter + all-gather";
      return "all-gather (forward) + all-gather and reduce-scatter (backward)";
    }
    case TrafficAxis::memory: return "weight and KV-cache read";
    case TrafficAxis::ep: return "all-to-all (token dispatch and combine)";
    case TrafficAxis::token: break;
  }
  return "";
}

namespace {

std::string tp_text(const TpFigures& f) {
  return fmt::format(
      "{} all-reduces of {} per micro-batch of {} on {} ({}): {:.3f} ms each ({}), {} = {:.0f} % "
      "of the {} of 6*P*D compute ({:.0f} % of all compute); on {} ({}) {:.3f} ms each, {} = "
      "{:.0f} %",
      f.messages, bytes_text(f.message_bytes), f.micro_batch, f.tier, gb_per_s(f.tier_bandwidth),
      f.collective.seconds() * 1e3, to_string(f.collective.algorithm), seconds_text(f.seconds),
      100 * f.seconds / f.dense_seconds, seconds_text(f.dense_seconds),
      100 * f.seconds / f.compute_seconds, f.other_tier, gb_per_s(f.other_bandwidth),
      f.other.seconds() * 1e3, seconds_text(f.other_seconds),
      100 * f.other_seconds / f.dense_seconds);
}

std::string tp_summary(const Evaluation& e, const TpTrainingFacts& f) {
  std::string out =
      f.overlap_exposed_seconds > 0
          ? fmt::format("tp {}: {}; overlapped with the GEMMs beside them (tp_comm_overlap): "
                        "{} per micro-batch stays exposed, {} of it the GEMMs' lost SMs",
                        e.plan.tp, tp_text(f.plan), seconds_text(f.overlap_exposed_seconds),
                        seconds_text(f.overlap_cost_seconds))
          : fmt::format("tp {}: {}; on the critical path", e.plan.tp, tp_text(f.plan));
  if (f.micro_batch_1) out += "; at micro-batch 1: " + tp_text(*f.micro_batch_1);
  return out;
}

std::string cp_summary(const Evaluation& e, const TrafficNote& n, const CpFacts& f) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  const double steps = static_cast<double>(p.cp - 1);
  return fmt::format(
      "cp {}: ring attention passes {} K/V blocks of {:.0f} MB per layer forward ({:g} passes "
      "with the backward) on {} ({}): {} per block, {} per forward ring; {} behind {} of "
      "attention per layer, down to {}. On {} ({}): {} per block, {} per ring",
      p.cp, p.cp - 1, t.cp_block_bytes / 1e6, f.passes, n.tier, gb_per_s(f.tier_bandwidth),
      seconds_text(t.cp_step.seconds()), seconds_text(steps * t.cp_step.seconds()),
      t.cp_exposed_seconds > 0 ? "not hidden" : "hidden",
      seconds_text(f.attention_per_layer_seconds), gb_per_s(n.hide_bandwidth), f.other_tier,
      gb_per_s(f.other_bandwidth), seconds_text(f.other_step_seconds),
      seconds_text(steps * f.other_step_seconds));
}

std::string pp_summary(const Context& ctx, const Evaluation& e, const TrafficNote& n) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  // Interleaved, the bubble is (p − 1)/(v·m) (Narayanan et al. 2021 §2.2.2); the text said
  // (p − 1)/m with v·m's value hidden (issue 31).
  const std::string bubble =
      p.virtual_stages > 1
          ? fmt::format("(p-1)/(v*m) = {}/({}*{})", p.pp - 1, p.virtual_stages, p.grad_accum)
          : fmt::format("(p-1)/m = {}/{}", p.pp - 1, p.grad_accum);
  return fmt::format(
      "pp {}: {} per micro-batch each way on {}, {} per micro-batch; bubble {} = "
      "{:.1f} % of the step ({}); the largest stage holds {} of {}",
      p.pp, bytes_text(t.pp_message_bytes), n.tier, seconds_text(t.pp_seconds), bubble,
      100.0 * bubble_fraction(p), seconds_text(t.bubble_seconds), stage_layers(ctx.model, p),
      layers_text(ctx.model));
}

/// The compute a hidden collective slows (Tier::processor_usage), or nothing when free.
static std::string overlap_cost_text(double seconds, double usage) {
  if (!(seconds > 0)) return "";
  return fmt::format(", of it {} of compute slowed while the hidden buckets run ({:.0f} % of "
                     "the GPU)",
                     seconds_text(seconds), 100.0 * usage);
}

std::string dp_summary(const Evaluation& e, const TrafficNote& n, const DpFacts& f) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  const DataParallelTraffic& d = t.dp;
  std::string fsdp;
  if (f.zero == 3) {
    // 3 buffers per micro-batch at line rate against the dense
    // compute of one micro-batch, here and at one sequence per micro-batch.
    fsdp = fmt::format(
        "; it moves 3 x {} = {} per micro-batch: {} at {} against {} of 6*P*D "
        "compute for a micro-batch of {} ({:.2f}x; {:.2f}x at micro-batch 1, {})",
        bytes_text(d.gradient_bytes), bytes_text(f.fsdp_bytes_per_micro_batch), seconds_text(f.fsdp_wire_seconds),
        gb_per_s(f.tier_bandwidth), seconds_text(t.dense_seconds), p.micro_batch,
        f.fsdp_wire_seconds / t.dense_seconds, f.fsdp_wire_seconds / f.dense_one_sequence_seconds,
        seconds_text(f.dense_one_sequence_seconds));
    if (is_multi_rail(d.buffer.algorithm)) {
      // The worked solution's figure is the whole volume at one GPU's share; a multi-rail
      // ring carries it across nodes on every rail of the node at once (docs/model.md §4).
      fsdp += fmt::format("; on {} rails per node it crosses at {}: {}", d.ranks_per_node,
                          gb_per_s(f.rail_bandwidth),
                          seconds_text(f.fsdp_bytes_per_micro_batch / f.rail_bandwidth));
    }
  }
  // Under hybrid sharding (Plan::dp_shard; data_parallel_time.hpp fill_replica_all_reduce) the main
  // sentence is the shard group's and the replicas' all-reduce has its own.
  const double group_seconds = d.comm_seconds - d.replica_seconds;
  const double group_whole_seconds = d.whole_buffer_seconds - d.replica_all_reduce.seconds();
  const double group_exposed_seconds = d.exposed_seconds - d.replica_exposed_seconds;
  if (d.replicas > 1) {
    fsdp += fmt::format(
        "; hybrid sharding: {} replicas of the state all-reduce each rank's {} shard once per "
        "step on {} ({}, {} ranks per node): {}, exposed {}",
        d.replicas, bytes_text(d.gradient_bytes / static_cast<double>(d.ranks)), f.replica_tier,
        gb_per_s(f.replica_bandwidth), d.replica_ranks_per_node, seconds_text(d.replica_seconds),
        seconds_text(d.replica_exposed_seconds));
  }
  std::string levels;
  if (is_multi_rail(d.buffer.algorithm)) {
    levels = fmt::format(" as a {} ({} ranks per node, each crossing on its own rail: {} in "
                         "all)",
                         to_string(d.buffer.algorithm), d.ranks_per_node,
                         gb_per_s(f.rail_bandwidth));
  }
  // ZeRO-3 issued per parameter tensor (DeepSpeed 2021) says so, and that its gathers block.
  const std::string buckets =
      f.collectives_per_layer > 1
          ? fmt::format("{} collectives per layer", f.collectives_per_layer)
          : std::string("buckets of one layer");
  const std::string exposure = f.edge_buckets_only ? " (the first and last buckets)"
                               : f.blocking_gathers
                                   ? " (the gathers block: the host waits for the device "
                                     "before each, so none overlaps compute)"
                                   : "";
  return fmt::format(
      "{} {}: {} of the {} gradient over {} ranks on {} ({}){}, {} per step in {} ({} with one "
      "collective per buffer) = {:.1f} % of "
      "the {} of compute in a step; exposed {}{}{}; hides down to {}; within a {:.0f} % "
      "communication budget down to {}{}",
      traffic_axis_name(n.axis), d.ranks, traffic_collective(n), bytes_text(d.gradient_bytes),
      d.ranks,
      n.tier, gb_per_s(f.tier_bandwidth), levels, seconds_text(group_seconds), buckets,
      seconds_text(group_whole_seconds),
      100 * group_seconds / n.compute_seconds_per_step, seconds_text(n.compute_seconds_per_step),
      seconds_text(group_exposed_seconds), exposure,
      overlap_cost_text(d.overlap_cost_seconds - d.replica_overlap_cost_seconds,
                        f.processor_usage),
      f.blocking_gathers       ? std::string("no bandwidth (its gathers block)")
      : n.hide_bandwidth > 0 ? gb_per_s(n.hide_bandwidth)
                             : std::string("no bandwidth (latency-bound)"),
      comm_budget * 100, n.budget_bandwidth > 0 ? gb_per_s(n.budget_bandwidth) : "none", fsdp);
}

std::string read_summary(const Context& ctx, const Evaluation& e, const ServingReadFacts& f) {
  const DecodeStep& t = e.serving.decode;
  return fmt::format(
      "decode reads {} of weights per GPU ({} at {:.0f} % of {:.1f} TB/s; {} at peak) and {} of "
      "KV cache ({}) per token",
      bytes_text(t.weight_read_bytes), seconds_text(t.weight_read_seconds),
      100 * ctx.workload.serving.memory_bandwidth_efficiency,
      ctx.cluster.gpu.memory_bandwidth_bytes_per_second / 1e12, seconds_text(f.peak_read_seconds),
      bytes_text(e.memory.kv_cache_bytes), seconds_text(t.kv_read_seconds));
}

std::string serving_tp_summary(const Evaluation& e, const TrafficNote& n,
                               const ServingTpFacts& f) {
  const DecodeStep& t = e.serving.decode;
  std::string others;
  for (std::size_t i = 0; i < f.algorithm_count; ++i) {
    const CollectiveCost& k = f.algorithms[i];
    others += fmt::format("{}{} {:.3f} ms each, {:.2f} ms per token", others.empty() ? "" : "; ",
                          to_string(k.algorithm), k.seconds() * 1e3,
                          k.seconds() * 1e3 * static_cast<double>(t.tp_messages));
  }
  return fmt::format(
      "tp {}: {} all-reduces of b*h*2 = {:.0f} B per token on {}; single message {:.2f} MiB: "
      "{:.3f} ms (latency {:.1f} us + wire {:.3f} ms) on a ring; the planner picks {}: {} per "
      "token ({}). Latency-bound: small-message latency, not bandwidth, sets this cost",
      e.plan.tp, t.tp_messages, t.tp_message_bytes, n.tier, t.tp_message_bytes / mib,
      f.ring.seconds() * 1e3, f.ring.latency_seconds * 1e6, f.ring.wire_seconds * 1e3,
      n.algorithm, seconds_text(t.tp_seconds), others);
}

std::string token_summary(const Context& ctx, const Evaluation& e) {
  const ServingTime& s = e.serving;
  const DecodeStep& t = s.decode;
  std::string step = fmt::format("weights {} + KV cache {}", seconds_text(t.weight_read_seconds),
                                 seconds_text(t.kv_read_seconds));
  if (t.gemm_compute_bound) {
    step = fmt::format("GEMMs at batch {:.0f} {} (above the {} weight read) + KV cache {}",
                       t.batch, seconds_text(t.gemm_seconds),
                       seconds_text(t.weight_read_seconds),
                       seconds_text(t.attention_kernel_seconds));
  }
  if (t.fixed_seconds > 0) {
    step += fmt::format(" + layer fixed costs {}", seconds_text(t.fixed_seconds));
  }
  // Prefills stretch the time per token only where they interrupt the decodes (a lockstep
  // round prefills before its decodes: the time per token is the step itself).
  std::string interference;
  if (s.prefill_share > 0 && s.per_token_seconds > t.seconds * (1 + 1e-9)) {
    interference = fmt::format(", over 1 - {:.3f} for the prefills sharing the engine",
                               s.prefill_share);
  }
  return fmt::format(
      "per token {} = {} + collectives {}{}{}{}: {} the {} SLO by {}",
      seconds_text(s.per_token_seconds), step, seconds_text(t.tp_seconds),
      e.plan.pp > 1 ? fmt::format(" + stage sends {}", seconds_text(t.pp_seconds)) : std::string(),
      t.ep.seconds > 0 ? fmt::format(" + ep all-to-alls {}", seconds_text(t.ep.seconds))
                       : std::string(),
      interference, s.slo_margin_seconds >= 0 ? "inside" : "misses",
      seconds_text(ctx.workload.serving.slo_per_token_seconds),
      seconds_text(std::abs(s.slo_margin_seconds)));
}

}  // namespace

std::string traffic_summary(const Context& ctx, const Evaluation& e, const TrafficNote& n) {
  return std::visit(
      [&](const auto& f) -> std::string {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, TpTrainingFacts>) {
          return tp_summary(e, f);
        } else if constexpr (std::is_same_v<F, CpFacts>) {
          return cp_summary(e, n, f);
        } else if constexpr (std::is_same_v<F, PpFacts>) {
          return pp_summary(ctx, e, n);
        } else if constexpr (std::is_same_v<F, DpFacts>) {
          return dp_summary(e, n, f);
        } else if constexpr (std::is_same_v<F, ServingReadFacts>) {
          return read_summary(ctx, e, f);
        } else if constexpr (std::is_same_v<F, ServingTpFacts>) {
          return serving_tp_summary(e, n, f);
        } else if constexpr (std::is_same_v<F, EpFacts>) {
          return expert_traffic_summary(ctx, e);
        } else if constexpr (std::is_same_v<F, ServingEpFacts>) {
          return serving_expert_traffic_summary(ctx, e);
        } else {
          static_assert(std::is_same_v<F, ServingTokenFacts>);
          return token_summary(ctx, e);
        }
      },
      n.facts);
}

}  // namespace planner

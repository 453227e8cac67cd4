#include "planner/explain/explain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "planner/io/text.hpp"
#include "planner/explain/thresholds.hpp"
#include "planner/model/triage.hpp"

namespace planner {

namespace {

double usable_bytes(const Cluster& c) { return c.gpu.memory_bytes - c.gpu.reserve_bytes; }

}  // namespace

std::string describe(const Context& ctx, const Plan& p) {
  const Cluster& c = ctx.cluster;
  std::vector<std::string> parts;
  auto axis = [&](Axis a, std::initializer_list<Axis> group) {
    const std::int64_t d = degree(p, a);
    if (d > 1) {
      parts.push_back(fmt::format("{} {} ({})", to_string(a), d,
                                  inside_node(p, c, group) ? "intra" : "inter"));
    }
  };
  axis(Axis::tp, {Axis::tp});
  axis(Axis::cp, {Axis::cp});
  axis(Axis::pp, {Axis::pp});
  axis(Axis::dp, {Axis::dp});
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? " x " : "") + parts[i];
  if (out.empty()) out = "1 GPU";
  if (ctx.workload.kind == WorkloadKind::serving) return out;
  out += fmt::format(", ZeRO-{}", p.zero);
  if (p.sequence_parallel) out += ", SP";
  if (p.flash_attention) out += ", flash";
  out += fmt::format(", {} recompute", to_string(p.recompute));
  out += fmt::format(", micro-batch {} x {}", p.micro_batch, p.grad_accum);
  return out;
}

bool same_answer(const Context& ctx, const Plan& a, const Plan& b) {
  const Cluster& c = ctx.cluster;
  auto tiers = [&](const Plan& p) {
    return std::array<bool, 4>{inside_node(p, c, {Axis::tp}), inside_node(p, c, {Axis::cp}),
                               inside_node(p, c, {Axis::pp}),
                               inside_node(p, c, {Axis::dp, Axis::cp})};
  };
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.zero == b.zero &&
         a.recompute == b.recompute && a.flash_attention == b.flash_attention &&
         a.sequence_parallel == b.sequence_parallel && tiers(a) == tiers(b);
}

BindingConstraint binding_constraint(const Context& ctx) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  BindingConstraint b;
  if (ctx.workload.kind == WorkloadKind::serving) {
    const Serving& w = ctx.workload.serving;
    const double weights = total_params(m) * w.bytes_per_param;
    const double peak_read = weights / c.gpu.memory_bandwidth_bytes_per_second;
    const bool too_big = weights > usable_bytes(c);
    const bool too_slow = peak_read > w.slo_per_token_seconds;
    b.kind = too_slow ? "decode latency" : (too_big ? "weight memory" : "throughput");
    b.detail = fmt::format(
        "weights {} ({} one GPU's {}); reading them once per token at {:.1f} TB/s takes {}, "
        "{:.1f}x the {} SLO",
        bytes_text(weights), too_big ? "exceed" : "fit", bytes_text(c.gpu.memory_bytes),
        c.gpu.memory_bandwidth_bytes_per_second / 1e12, seconds_text(peak_read),
        peak_read / w.slo_per_token_seconds, seconds_text(w.slo_per_token_seconds));
    return b;
  }
  const Training& w = ctx.workload.training;
  Plan one;
  one.recompute = Recompute::selective;
  const MemoryLedger selective = training_ledger(m, c, w, one);
  one.recompute = Recompute::none;
  const MemoryLedger none = training_ledger(m, c, w, one);
  const LayerActivationTerms terms = layer_activation_terms(m, 1.0, static_cast<double>(m.seq_len));
  const double linear = terms.replicated_bytes + terms.tp_split_bytes;
  const double state = selective.state_bytes();
  const double usable = usable_bytes(c);
  const bool quadratic = terms.scores_bytes > linear;
  const Triage tri = triage(selective.weights_bytes, selective.gradients_bytes,
                            selective.optimizer_bytes, selective.activations_bytes,
                            layer_params(m) * w.bytes_per_param, usable);
  const std::string triage_text = fmt::format(
      "; triage (seed 004): a DDP replica needs {} ({}), shard model state: {}, tensor split "
      "needed for the largest layer ({}): {}, pipeline candidate (activations > parameters): {}",
      bytes_text(tri.replica_bytes), tri.replica_fits ? "fits" : "does not fit",
      tri.shard_state ? "yes" : "no", bytes_text(layer_params(m) * w.bytes_per_param),
      tri.split_tensor ? "yes" : "no", tri.pipeline_candidate ? "yes" : "no");
  const std::string activations = fmt::format(
      "activations per replica {} without recompute, {} with selective recompute (the s^2 "
      "attention term is {:.1f}x the rest)",
      bytes_text(none.activations_bytes), bytes_text(selective.activations_bytes),
      terms.scores_bytes / linear);
  if (state > usable) {
    b.kind = "state memory";
    b.detail = fmt::format("model state {:.3g} params x {:g} B = {} is {:.2f}x one GPU's {}; {}",
                           total_params(m), w.bytes_per_param, bytes_text(state),
                           state / c.gpu.memory_bytes, bytes_text(c.gpu.memory_bytes),
                           activations) + triage_text;
  } else if (state + selective.activations_bytes > usable) {
    b.kind = "activation memory";
    b.quadratic_dominates = quadratic;
    b.detail = fmt::format("model state {} fits one GPU, but {}; {} usable per GPU{}",
                           bytes_text(state), activations, bytes_text(usable),
                           quadratic ? "; the quadratic attention term dominates" : "") +
               triage_text;
  } else {
    b.kind = "throughput";
    const double step = target_sequences(ctx) *
                        micro_batch_flops(m, [] {
                          Plan p;
                          p.recompute = Recompute::selective;
                          return p;
                        }()).total() /
                        ctx.flops_per_second;
    b.detail = fmt::format(
        "one replica fits: state {} + selective activations {} + reserve {} = {} <= {} "
        "(without recompute {}); but one GPU would need {} per {:.0f}-sequence step",
        bytes_text(state), bytes_text(selective.activations_bytes),
        bytes_text(c.gpu.reserve_bytes),
        bytes_text(state + selective.activations_bytes + c.gpu.reserve_bytes),
        bytes_text(c.gpu.memory_bytes),
        bytes_text(state + none.activations_bytes + c.gpu.reserve_bytes), seconds_text(step),
        std::ceil(target_sequences(ctx))) + triage_text;
  }
  return b;
}

namespace {

/// Lowest bandwidth at which `bytes` of ring wire volume plus `latency_seconds` fit in
/// `window_seconds`; 0 when no bandwidth does (the latency alone exceeds the window).
double bandwidth_for(double wire_bytes, double latency_seconds, double window_seconds) {
  const double room = window_seconds - latency_seconds;
  return room > 0 ? wire_bytes / room : 0;
}

/// The tp traffic of one micro-batch, on its tier and on the other one.
std::string tp_figures(const Context& ctx, const Plan& p, const TrainingTime& t) {
  const Cluster& c = ctx.cluster;
  const bool inside = inside_node(p, c, {Axis::tp});
  const Tier& other = tier_of(c, !inside);
  const CollectiveCost there = cheapest_collective(Collective::all_reduce, p.tp,
                                                   t.tp_message_bytes, other, !inside);
  const double there_total = there.seconds() * static_cast<double>(t.tp_messages);
  return fmt::format(
      "{} all-reduces of {} per micro-batch of {} on {} ({}): {:.3f} ms each ({}), {} = {:.0f} % "
      "of the {} of 6*P*D compute ({:.0f} % of all compute); on {} ({}) {:.3f} ms each, {} = "
      "{:.0f} %",
      t.tp_messages, bytes_text(t.tp_message_bytes), p.micro_batch, tier_name(inside),
      gb_per_s(tier_of(c, inside).bandwidth_bytes_per_second), t.tp_collective.seconds() * 1e3,
      to_string(t.tp_collective.algorithm), seconds_text(t.tp_seconds),
      100 * t.tp_seconds / t.dense_seconds, seconds_text(t.dense_seconds),
      100 * t.tp_seconds / t.compute_seconds(), tier_name(!inside),
      gb_per_s(other.bandwidth_bytes_per_second), there.seconds() * 1e3, seconds_text(there_total),
      100 * there_total / t.dense_seconds);
}

TrafficNote tp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  const TrainingTime& t = e.training;
  const bool inside = inside_node(p, c, {Axis::tp});
  TrafficNote n;
  n.axis = "tp";
  n.tier = tier_name(inside);
  n.collective = p.sequence_parallel ? "reduce-scatter + all-gather (sequence parallel)"
                                     : "all-reduce";
  n.algorithm = std::string(to_string(t.tp_collective.algorithm));
  n.message_bytes = t.tp_message_bytes;
  const double accum = static_cast<double>(p.grad_accum);
  n.messages_per_step = static_cast<double>(t.tp_messages) * accum;
  n.seconds_per_step = t.tp_seconds * accum;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = n.seconds_per_step;
  n.critical_path = true;
  n.summary = fmt::format("tp {}: {}; on the critical path", p.tp, tp_figures(ctx, p, t));
  if (p.micro_batch > 1) {
    // The same at one sequence per micro-batch, where latency weighs most.
    Plan one = p;
    one.micro_batch = 1;
    const TrainingTime t1 = training_time(ctx.model, c, one, ctx.flops_per_second);
    n.summary += "; at micro-batch 1: " + tp_figures(ctx, one, t1);
  }
  return n;
}

TrafficNote cp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  const TrainingTime& t = e.training;
  const bool inside = inside_node(p, c, {Axis::cp});
  const double layers = static_cast<double>(stage_layers(ctx.model, p));
  const double steps = static_cast<double>(p.cp - 1);
  const double passes = t.cp_seconds / (layers * steps * t.cp_step.seconds());
  const double accum = static_cast<double>(p.grad_accum);
  TrafficNote n;
  n.axis = "cp";
  n.tier = tier_name(inside);
  n.collective = "ring K/V exchange (point-to-point)";
  n.algorithm = "ring";
  n.message_bytes = t.cp_block_bytes;
  n.messages_per_step = passes * steps * layers * accum;
  n.seconds_per_step = t.cp_seconds * accum;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = t.cp_exposed_seconds * accum;
  const double attention_per_layer = t.attention_seconds / layers;
  const Tier& tier = tier_of(c, inside);
  n.hide_bandwidth = bandwidth_for(passes * steps * t.cp_block_bytes,
                                   passes * steps * tier.latency_seconds, attention_per_layer);
  const Tier& other = tier_of(c, !inside);
  const double other_step = collective_cost(Collective::point_to_point, Algorithm::direct, 2,
                                            t.cp_block_bytes, other)
                                .seconds();
  n.summary = fmt::format(
      "cp {}: ring attention passes {} K/V blocks of {:.0f} MB per layer forward ({:g} passes "
      "with the backward) on {} ({}): {} per block, {} per forward ring; {} behind {} of "
      "attention per layer, down to {}. On {} ({}): {} per block, {} per ring",
      p.cp, p.cp - 1, t.cp_block_bytes / 1e6, passes, n.tier,
      gb_per_s(tier.bandwidth_bytes_per_second), seconds_text(t.cp_step.seconds()),
      seconds_text(steps * t.cp_step.seconds()),
      t.cp_exposed_seconds > 0 ? "not hidden" : "hidden", seconds_text(attention_per_layer),
      gb_per_s(n.hide_bandwidth), tier_name(!inside), gb_per_s(other.bandwidth_bytes_per_second),
      seconds_text(other_step), seconds_text(steps * other_step));
  return n;
}

TrafficNote pp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  const bool inside = inside_node(p, ctx.cluster, {Axis::pp});
  const double accum = static_cast<double>(p.grad_accum);
  TrafficNote n;
  n.axis = "pp";
  n.tier = tier_name(inside);
  n.collective = "point-to-point activations and gradients";
  n.algorithm = "direct";
  n.message_bytes = t.pp_message_bytes;
  n.messages_per_step = 2.0 * accum;
  n.seconds_per_step = t.pp_seconds * accum + t.bubble_seconds;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = n.seconds_per_step;
  n.critical_path = true;
  n.summary = fmt::format(
      "pp {}: {} per micro-batch each way on {}, {} per micro-batch; bubble (p-1)/m = {}/{} = "
      "{:.1f} % of the step ({}); the largest stage holds {} of {} layers",
      p.pp, bytes_text(t.pp_message_bytes), n.tier, seconds_text(t.pp_seconds), p.pp - 1,
      p.grad_accum, 100.0 * static_cast<double>(p.pp - 1) / accum,
      seconds_text(t.bubble_seconds), stage_layers(ctx.model, p), ctx.model.layers);
  return n;
}

TrafficNote dp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  const TrainingTime& t = e.training;
  const DataParallelTraffic& d = t.dp;
  const Tier& tier = tier_of(c, d.inside_node);
  const double accum = static_cast<double>(p.grad_accum);
  const double n_ranks = static_cast<double>(d.ranks);
  const double share = (n_ranks - 1) / n_ranks;
  const MicroBatchFlops f = micro_batch_flops(ctx.model, p);
  const double fwd = f.forward() / ctx.flops_per_second;
  const double bwd = f.backward() / ctx.flops_per_second;
  TrafficNote n;
  n.axis = d.ranks == p.dp ? "dp" : "dp x cp";
  n.tier = tier_name(d.inside_node);
  n.message_bytes = d.gradient_bytes;
  n.seconds_per_step = d.comm_seconds;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = d.exposed_seconds;
  const double alpha = tier.latency_seconds;
  const double ring_latency = (n_ranks - 1) * alpha;  // one ring RS or AG
  // Ring volumes per step and the windows they must fit (step_time.hpp's overlap model).
  double wire = 0, latency = 0;
  switch (p.zero) {
    case 0:
      n.collective = "all-reduce";
      n.algorithm = std::string(to_string(d.all_reduce.algorithm));
      n.messages_per_step = 1;
      wire = 2 * share * d.gradient_bytes;
      latency = 2 * ring_latency;
      n.hide_bandwidth = bandwidth_for(wire, latency, bwd);
      break;
    case 1:
    case 2:
      n.collective = "reduce-scatter + all-gather";
      n.algorithm = std::string(to_string(d.reduce_scatter.algorithm));
      n.messages_per_step = (p.zero == 1 ? 1.0 : accum) + 1.0;
      wire = n.messages_per_step * share * d.gradient_bytes;
      latency = n.messages_per_step * ring_latency;
      n.hide_bandwidth = std::max(bandwidth_for(share * d.gradient_bytes, ring_latency, bwd),
                                  bandwidth_for(share * d.gradient_bytes, ring_latency, fwd));
      break;
    default:
      n.collective = "all-gather (forward) + all-gather and reduce-scatter (backward)";
      n.algorithm = std::string(to_string(d.all_gather.algorithm));
      n.messages_per_step = 3.0 * accum;
      wire = n.messages_per_step * share * d.gradient_bytes;
      latency = n.messages_per_step * ring_latency;
      n.hide_bandwidth = std::max(bandwidth_for(share * d.gradient_bytes, ring_latency, fwd),
                                  bandwidth_for(2 * share * d.gradient_bytes, 2 * ring_latency, bwd));
      break;
  }
  n.budget_bandwidth = bandwidth_for(wire, latency, comm_budget * n.compute_seconds_per_step);
  std::string fsdp;
  if (p.zero == 3) {
    // The worked solution's figure: 3 buffers per micro-batch at line rate against the dense
    // compute of one micro-batch, here and at one sequence per micro-batch.
    const double per_mb = d.bytes_per_step / accum;
    const double wire = per_mb / tier.bandwidth_bytes_per_second;
    const double dense_one = t.dense_seconds / static_cast<double>(p.micro_batch);
    fsdp = fmt::format(
        "; it moves 3 x {:.4g} = {:.4g} B per micro-batch: {} at {} against {} of 6*P*D "
        "compute for a micro-batch of {} ({:.2f}x; {:.2f}x at micro-batch 1, {})",
        d.gradient_bytes, per_mb, seconds_text(wire), gb_per_s(tier.bandwidth_bytes_per_second),
        seconds_text(t.dense_seconds), p.micro_batch, wire / t.dense_seconds, wire / dense_one,
        seconds_text(dense_one));
  }
  n.summary = fmt::format(
      "{} {}: {} of the {:.4g} B gradient over {} ranks on {} ({}), {} per step = {:.1f} % of "
      "the {} of compute in a step; exposed {}{}; hides down to {}; within the worked "
      "solution's {:.0f} % budget down to {}{}",
      n.axis, d.ranks, n.collective, d.gradient_bytes, d.ranks, n.tier,
      gb_per_s(tier.bandwidth_bytes_per_second), seconds_text(d.comm_seconds),
      100 * d.comm_seconds / n.compute_seconds_per_step, seconds_text(n.compute_seconds_per_step),
      seconds_text(d.exposed_seconds),
      d.exposed_seconds > 2 * std::max(d.comm_seconds / static_cast<double>(stage_layers(ctx.model, p)), 0.0)
          ? ""
          : " (the first and last buckets)",
      n.hide_bandwidth > 0 ? gb_per_s(n.hide_bandwidth) : "no bandwidth (latency-bound)",
      comm_budget * 100, n.budget_bandwidth > 0 ? gb_per_s(n.budget_bandwidth) : "none", fsdp);
  return n;
}

std::vector<TrafficNote> serving_notes(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  const ServingTime& t = e.serving;
  const Serving& w = ctx.workload.serving;
  std::vector<TrafficNote> out;
  TrafficNote read;
  read.axis = "memory";
  read.tier = "hbm";
  read.collective = "weight and KV-cache read";
  read.seconds_per_step = t.weight_read_seconds + t.kv_read_seconds;
  read.summary = fmt::format(
      "decode reads {} of weights per GPU ({} at {:.0f} % of {:.1f} TB/s; {} at peak) and {} of "
      "KV cache ({}) per token",
      bytes_text(e.memory.weights_bytes), seconds_text(t.weight_read_seconds),
      100 * w.memory_bandwidth_efficiency, c.gpu.memory_bandwidth_bytes_per_second / 1e12,
      seconds_text(e.memory.weights_bytes / c.gpu.memory_bandwidth_bytes_per_second),
      bytes_text(e.memory.kv_cache_bytes), seconds_text(t.kv_read_seconds));
  out.push_back(read);
  if (p.tp > 1) {
    const bool inside = inside_node(p, c, {Axis::tp});
    const Tier& tier = tier_of(c, inside);
    TrafficNote n;
    n.axis = "tp";
    n.tier = tier_name(inside);
    n.collective = "all-reduce";
    n.algorithm = std::string(to_string(t.tp_collective.algorithm));
    n.message_bytes = t.tp_message_bytes;
    n.messages_per_step = static_cast<double>(t.tp_messages);
    n.seconds_per_step = t.tp_seconds;
    n.exposed_seconds_per_step = t.tp_seconds;
    n.critical_path = true;
    std::string others;
    for (Algorithm a : all_algorithms) {
      if (!available(Collective::all_reduce, a, inside)) continue;
      const CollectiveCost k = collective_cost(Collective::all_reduce, a, p.tp, t.tp_message_bytes, tier);
      others += fmt::format("{}{} {:.3f} ms each, {:.2f} ms per token", others.empty() ? "" : "; ",
                            to_string(a), k.seconds() * 1e3,
                            k.seconds() * 1e3 * static_cast<double>(t.tp_messages));
    }
    n.summary = fmt::format(
        "tp {}: {} all-reduces of b*h*2 = {:.0f} B per token on {}; single message {:.2f} MiB: "
        "{:.3f} ms (latency {:.1f} us + wire {:.3f} ms) on a ring; the planner picks {}: {} per "
        "token ({}). Latency-bound: small-message latency, not bandwidth, sets this cost",
        p.tp, t.tp_messages, t.tp_message_bytes, n.tier, t.tp_message_bytes / mib,
        t.tp_ring.seconds() * 1e3, t.tp_ring.latency_seconds * 1e6, t.tp_ring.wire_seconds * 1e3,
        n.algorithm, seconds_text(t.tp_seconds), others);
    out.push_back(n);
  }
  TrafficNote total;
  total.axis = "token";
  total.seconds_per_step = t.per_token_seconds;
  total.summary = fmt::format(
      "per token {} = weights {} + KV cache {} + collectives {}{}: {} the {} SLO by {}",
      seconds_text(t.per_token_seconds), seconds_text(t.weight_read_seconds),
      seconds_text(t.kv_read_seconds), seconds_text(t.tp_seconds),
      p.pp > 1 ? fmt::format(" + stage sends {}", seconds_text(t.pp_seconds)) : std::string(),
      t.slo_margin_seconds >= 0 ? "inside" : "misses", seconds_text(w.slo_per_token_seconds),
      seconds_text(std::abs(t.slo_margin_seconds)));
  out.push_back(total);
  return out;
}

}  // namespace

std::vector<TrafficNote> traffic_notes(const Context& ctx, const Evaluation& e) {
  if (ctx.workload.kind == WorkloadKind::serving) return serving_notes(ctx, e);
  std::vector<TrafficNote> out;
  if (e.plan.tp > 1) out.push_back(tp_note(ctx, e));
  if (e.plan.cp > 1) out.push_back(cp_note(ctx, e));
  if (e.plan.pp > 1) out.push_back(pp_note(ctx, e));
  if (state_shard_ranks(e.plan) > 1) out.push_back(dp_note(ctx, e));
  return out;
}

std::string failure_mode(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  std::vector<std::string> modes;
  if (ctx.workload.kind == WorkloadKind::serving) {
    if (p.tp > 1) {
      modes.push_back(fmt::format(
          "the tp all-reduce sits on the critical path of every layer of every decode step, so "
          "fabric jitter lands directly in p99 time per output token; tp cannot grow past the "
          "node ({} GPUs) without small-message latency collapsing it",
          c.gpus_per_node));
    }
    if (p.pp > 1) {
      modes.push_back("a token traverses every pipeline stage, so stage latencies add up");
    }
    if (modes.empty()) modes.push_back("one GPU per engine: its HBM bandwidth is the whole budget");
  } else {
    if (p.cp > 1) {
      modes.push_back(
          "causal masking makes a contiguous context-parallel split uneven: the rank holding the "
          "last tokens attends over the whole history while the first idles; use a striped or "
          "zig-zag token assignment (symptom: per-rank attention time rising with rank index)");
    }
    if (p.tp > 1) {
      modes.push_back(fmt::format(
          "a tp group of {} is a fate-sharing unit: one lost GPU fails the group's step, and its "
          "{:.0f} % traffic overhead is structural (symptom: step time scaling worse than "
          "linearly as tp widens)",
          p.tp, 100 * e.training.tp_seconds / e.training.compute_seconds()));
    }
    if (p.pp > 1) {
      modes.push_back(fmt::format(
          "pipeline bubble and stage imbalance: {:.1f} % bubble, and the largest stage holds {} of "
          "{} layers",
          100.0 * static_cast<double>(p.pp - 1) / static_cast<double>(p.grad_accum),
          stage_layers(ctx.model, p), ctx.model.layers));
    }
    const double tokens = e.training.global_sequences * static_cast<double>(ctx.model.seq_len);
    modes.push_back(fmt::format(
        "the critical batch size: dp = {} sets a global batch of {:.0f} sequences ({:.3g} "
        "tokens); past the critical batch size, extra tokens per step stop buying convergence "
        "(symptom: loss against wall-clock improves while loss against tokens worsens)",
        p.dp, e.training.global_sequences, tokens));
  }
  std::string out;
  for (std::size_t i = 0; i < modes.size(); ++i) out += (i ? "; " : "") + modes[i];
  return out;
}

namespace {

/// The component by which `alt` loses most time per unit of work against `best`.
std::string losing_component(const Context& ctx, const Evaluation& best, const Evaluation& alt) {
  if (ctx.workload.kind == WorkloadKind::serving) {
    return fmt::format("{} per token against {}, {:.0f} tokens/s against {:.0f} ({} replicas "
                       "against {})",
                       seconds_text(alt.serving.per_token_seconds),
                       seconds_text(best.serving.per_token_seconds), alt.serving.tokens_per_second,
                       best.serving.tokens_per_second, alt.serving.replicas,
                       best.serving.replicas);
  }
  auto per_token = [&](const Evaluation& e, double step_part) {
    return step_part / (e.training.global_sequences / static_cast<double>(e.plan.dp) *
                        static_cast<double>(ctx.model.seq_len));
  };
  struct Part {
    const char* name;
    double best, alt, step_alt;
  };
  auto parts_of = [&](const Evaluation& e) {
    const TrainingTime& t = e.training;
    const double m = static_cast<double>(e.plan.grad_accum);
    return std::array<double, 5>{t.compute_seconds() * m, t.tp_seconds * m,
                                 t.cp_exposed_seconds * m, t.pp_seconds * m + t.bubble_seconds,
                                 t.dp.exposed_seconds};
  };
  const auto a = parts_of(best), b = parts_of(alt);
  const char* names[] = {"compute", "tensor-parallel traffic", "exposed ring traffic",
                         "pipeline sends and bubble", "exposed data-parallel traffic"};
  std::size_t worst = 0;
  double worst_gap = -1e300;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double gap = per_token(alt, b[i]) - per_token(best, a[i]);
    if (gap > worst_gap) {
      worst_gap = gap;
      worst = i;
    }
  }
  return fmt::format("its {} is {} per step ({} in the recommendation)", names[worst],
                     seconds_text(b[worst]), a[worst] > 0 ? seconds_text(a[worst]) : "none");
}

/// Which field of the rank key puts `alt` behind `best` (rank.hpp's order).
std::string deciding_criterion(const RankKey& best, const RankKey& alt) {
  if (alt.throughput != best.throughput) return "fewer tokens per second over all replicas";
  if (alt.model_axes != best.model_axes) return "more model-parallel axes";
  if (alt.pipeline != best.pipeline) return "a pipeline";
  if (alt.crossing_axes != best.crossing_axes) return "more axes crossing nodes";
  if (alt.inter_node_bytes != best.inter_node_bytes) {
    return fmt::format("more inter-node traffic ({:.0f} against {:.0f} B per token)",
                       alt.inter_node_bytes, best.inter_node_bytes);
  }
  if (alt.memory_bytes != best.memory_bytes) {
    return fmt::format("more memory ({} against {} per GPU)", bytes_text(alt.memory_bytes),
                       bytes_text(best.memory_bytes));
  }
  return "the canonical order";
}

Alternative alternative(const Context& ctx, const SearchResult& result, std::string name,
                        const SearchFilter& filter) {
  Alternative alt;
  alt.name = std::move(name);
  SearchOptions options;
  options.keep = 1;
  options.filter = filter;
  const SearchResult r = search(ctx, options);
  const Evaluation& best = result.ranked.front();
  if (r.found()) {
    alt.best = r.ranked.front();
    const double slower = seconds_per_unit(ctx, *alt.best) / seconds_per_unit(ctx, best) - 1.0;
    const RankKey key = rank_key(ctx, *alt.best);
    std::string how;
    if (key.misses_slo) {
      how = fmt::format("misses the SLO: {}", losing_component(ctx, best, *alt.best));
    } else if (key.time == result.keys.front().time) {
      how = fmt::format("ties on time within the model's 1 % resolution ({:+.1f} %) and loses "
                        "on {}",
                        100 * slower, deciding_criterion(result.keys.front(), key));
    } else {
      how = fmt::format("{:.1f} % slower: {}", 100 * slower, losing_component(ctx, best, *alt.best));
    }
    alt.verdict = fmt::format("{} fits ({} per GPU) but {}", describe(ctx, alt.best->plan),
                              bytes_text(alt.best->memory.total_bytes()), how);
    alt.traffic = traffic_notes(ctx, *alt.best);
    return alt;
  }
  for (const Rejection& rej : r.rejected) {
    if (rej.kind == "memory") {
      alt.verdict = fmt::format("does not fit: the closest, {}, {}", describe(ctx, rej.plan),
                                rej.reason);
      return alt;
    }
  }
  alt.verdict = r.rejected.empty() ? "no legal configuration"
                                   : fmt::format("not legal: {}", r.rejected.front().reason);
  return alt;
}

std::vector<Alternative> alternatives(const Context& ctx, const SearchResult& result) {
  std::vector<Alternative> out;
  const Plan& p = result.ranked.front().plan;
  const bool training = ctx.workload.kind == WorkloadKind::training;
  if (p.tp > 1 || p.pp > 1 || p.cp > 1) {
    SearchFilter f;
    f.tp = 1;
    f.pp = 1;
    f.cp = 1;
    out.push_back(alternative(ctx, result, training ? "pure data parallel (any ZeRO stage, FSDP included)"
                                                    : "one GPU per engine", f));
  }
  if (training && !(p.zero == 3 && p.tp == 1 && p.pp == 1 && p.cp == 1)) {
    SearchFilter f;
    f.tp = 1;
    f.pp = 1;
    f.cp = 1;
    f.zero = 3;
    out.push_back(alternative(ctx, result, "FSDP (ZeRO-3) over every GPU", f));
  }
  auto without = [&](const char* axis, SearchFilter f) {
    out.push_back(alternative(ctx, result, fmt::format("without {}", axis), f));
  };
  if (p.tp > 1 && (p.pp > 1 || p.cp > 1)) without("tp", [] { SearchFilter f; f.tp = 1; return f; }());
  if (p.pp > 1 && (p.tp > 1 || p.cp > 1)) without("pp", [] { SearchFilter f; f.pp = 1; return f; }());
  if (p.cp > 1 && (p.tp > 1 || p.pp > 1)) without("cp", [] { SearchFilter f; f.cp = 1; return f; }());
  const std::int64_t node = ctx.cluster.gpus_per_node;
  if (p.tp != node && ctx.model.heads % node == 0 && world_size(ctx.cluster) % node == 0) {
    SearchFilter f;
    f.tp = node;
    f.tp_inside_node = true;
    out.push_back(alternative(ctx, result, fmt::format("tp = {} filling the node", node), f));
  }
  if (p.pp == 1) {
    SearchFilter f;
    f.pp_min = 2;
    out.push_back(alternative(ctx, result, "with pipeline stages", f));
  }
  if (training && p.cp == 1 && ctx.model.seq_len % 2 == 0) {
    SearchFilter f;
    f.cp_min = 2;
    out.push_back(alternative(ctx, result, "with context parallelism", f));
  }
  if (training && p.flash_attention) {
    SearchFilter f;
    f.flash_attention = false;
    out.push_back(alternative(ctx, result, "without tiled (flash) attention", f));
  }
  if (training && p.recompute != Recompute::full) {
    SearchFilter f;
    f.recompute = Recompute::full;
    out.push_back(alternative(ctx, result, "full recompute", f));
  }
  return out;
}

}  // namespace

Explanation explain(const Context& ctx, const SearchResult& result, bool with_thresholds) {
  Explanation x;
  x.binding = binding_constraint(ctx);
  if (!result.found()) return x;
  const Evaluation& best = result.ranked.front();
  const Plan& p = best.plan;
  const Cluster& c = ctx.cluster;
  const bool training = ctx.workload.kind == WorkloadKind::training;
  auto note = [&](Axis a, std::initializer_list<Axis> group, std::string why) {
    AxisNote n;
    n.axis = std::string(to_string(a));
    n.degree = degree(p, a);
    n.used = n.degree > 1;
    // Serving replicas never talk to each other, so their axis pays no tier.
    const bool independent = !training && a == Axis::dp;
    if (n.used && !independent) n.tier = tier_name(inside_node(p, c, group));
    n.why = n.used || why.empty() ? std::move(why) : "not used; " + why;
    x.axes.push_back(std::move(n));
  };
  x.traffic = traffic_notes(ctx, best);
  x.failure_mode = failure_mode(ctx, best);
  x.alternatives = alternatives(ctx, result);
  auto verdict_of = [&](const std::string& prefix) {
    for (const Alternative& a : x.alternatives) {
      if (a.name.rfind(prefix, 0) == 0) return a.name + ": " + a.verdict;
    }
    return std::string();
  };
  note(Axis::dp, {Axis::dp},
       training ? fmt::format("{} replicas, each {} sequences per step ({} x {}), for throughput "
                              "toward the {:.1f}-sequence target ({:g} tokens / {})",
                              p.dp, p.micro_batch * p.grad_accum, p.micro_batch, p.grad_accum,
                              target_sequences(ctx), ctx.workload.training.global_batch_tokens,
                              ctx.model.seq_len)
                : fmt::format("{} replicas of the engine for queries per second", p.dp));
  note(Axis::tp, {Axis::tp},
       p.tp > 1 ? fmt::format("splits every layer {} ways; {}", p.tp,
                              verdict_of(p.pp > 1 || p.cp > 1 ? "without tp" : training ? "pure data" : "one GPU"))
                : verdict_of("tp ="));
  note(Axis::pp, {Axis::pp},
       p.pp > 1 ? fmt::format("{} stages of at most {} layers", p.pp, stage_layers(ctx.model, p))
                : verdict_of("with pipeline"));
  if (training) {
    note(Axis::cp, {Axis::cp},
         p.cp > 1 ? fmt::format("splits each sequence {} ways: {}", p.cp,
                                verdict_of(p.tp > 1 || p.pp > 1 ? "without cp" : "pure data"))
                  : verdict_of("with context"));
  }
  if (with_thresholds) {
    x.thresholds =
        find_thresholds(ctx, best.plan, 0, &x.thresholds_not_searched, result.work);
  }
  return x;
}

}  // namespace planner

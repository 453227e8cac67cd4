#include <algorithm>
#include <cmath>

#include "planner/explain/explain.hpp"

/// The traffic notes: per axis, the figures of the model's TrainingTime or ServingTime, and
/// the what-ifs the report quotes next to them (the other tier, one sequence per micro-batch,
/// the lowest bandwidth that still hides the traffic).

namespace planner {

namespace {

/// Lowest bandwidth at which `bytes` of ring wire volume plus `latency_seconds` fit in
/// `window_seconds`; 0 when no bandwidth does (the latency alone exceeds the window).
double bandwidth_for(double wire_bytes, double latency_seconds, double window_seconds) {
  const double room = window_seconds - latency_seconds;
  return room > 0 ? wire_bytes / room : 0;
}

/// The tp traffic of one micro-batch, on its tier and on the other one.
TpFigures tp_figures(const Context& ctx, const Plan& p, const TrainingTime& t) {
  const Cluster& c = ctx.cluster;
  const std::size_t k = axis_tier(p, c, Axis::tp);
  const Tier& other = c.tiers[compared_tier(k)];
  TpFigures f;
  f.micro_batch = p.micro_batch;
  f.messages = t.tp_messages;
  f.message_bytes = t.tp_message_bytes;
  f.collective = t.tp_collective;
  // The traffic itself: with tp_comm_overlap the collectives back to back, before the GEMMs
  // hide them (tp_note quotes what stays exposed).
  f.seconds = t.tp_unoverlapped_seconds > 0 ? t.tp_unoverlapped_seconds : t.tp_seconds;
  f.dense_seconds = t.dense_seconds;
  f.compute_seconds = t.compute_seconds();
  f.tier = tier_name(c, k);
  f.other_tier = other.name;
  f.tier_bandwidth = c.tiers[k].bandwidth_bytes_per_second;
  f.other_bandwidth = other.bandwidth_bytes_per_second;
  f.other = cheapest_collective(Collective::all_reduce, p.tp, t.tp_message_bytes, other);
  f.other_seconds = f.other.seconds() * static_cast<double>(t.tp_messages);
  return f;
}

TrafficNote tp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  TrafficNote n;
  n.axis = TrafficAxis::tp;
  n.tier = tier_name(ctx.cluster, axis_tier(p, ctx.cluster, Axis::tp));
  n.algorithm = std::string(to_string(t.tp_collective.algorithm));
  n.message_bytes = t.tp_message_bytes;
  const double accum = static_cast<double>(p.grad_accum);
  n.messages_per_step = static_cast<double>(t.tp_messages) * accum;
  const bool overlapped = t.tp_unoverlapped_seconds > 0;
  n.seconds_per_step = (overlapped ? t.tp_unoverlapped_seconds : t.tp_seconds) * accum;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = t.tp_seconds * accum;
  n.critical_path = !overlapped;
  TpTrainingFacts f;
  f.sequence_parallel = p.sequence_parallel;
  if (overlapped) {
    f.overlap_exposed_seconds = t.tp_seconds;
    f.overlap_cost_seconds = t.tp_overlap_cost_seconds;
  }
  f.plan = tp_figures(ctx, p, t);
  if (p.micro_batch > 1) {
    // The same at one sequence per micro-batch, where latency weighs most.
    Plan one = p;
    one.micro_batch = 1;
    f.micro_batch_1 = tp_figures(ctx, one, training_time(ctx.model, ctx.cluster, one,
                                                          ctx.flops_per_second));
  }
  n.facts = std::move(f);
  return n;
}

TrafficNote cp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  const TrainingTime& t = e.training;
  const std::size_t k = axis_tier(p, c, Axis::cp);
  const double layers = static_cast<double>(stage_layers(ctx.model, p));
  const double steps = static_cast<double>(p.cp - 1);
  const double passes = static_cast<double>(t.cp_passes);
  const double accum = static_cast<double>(p.grad_accum);
  TrafficNote n;
  n.axis = TrafficAxis::cp;
  n.tier = tier_name(c, k);
  n.algorithm = "ring";
  n.message_bytes = t.cp_block_bytes;
  n.messages_per_step = passes * steps * layers * accum;
  n.seconds_per_step = t.cp_seconds * accum;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = t.cp_exposed_seconds * accum;
  CpFacts f;
  f.passes = passes;
  f.attention_per_layer_seconds = t.attention_seconds / layers;
  const Tier& tier = c.tiers[k];
  f.tier_bandwidth = tier.bandwidth_bytes_per_second;
  n.hide_bandwidth = bandwidth_for(passes * steps * t.cp_block_bytes,
                                   passes * steps * tier.latency_seconds,
                                   f.attention_per_layer_seconds);
  const Tier& other = c.tiers[compared_tier(k)];
  f.other_tier = other.name;
  f.other_bandwidth = other.bandwidth_bytes_per_second;
  f.other_step_seconds = collective_cost(Collective::point_to_point, Algorithm::direct, 2,
                                         t.cp_block_bytes, other)
                             .seconds();
  n.facts = f;
  return n;
}

TrafficNote pp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  const double accum = static_cast<double>(p.grad_accum);
  TrafficNote n;
  n.axis = TrafficAxis::pp;
  n.tier = tier_name(ctx.cluster, axis_tier(p, ctx.cluster, Axis::pp));
  n.algorithm = "direct";
  n.message_bytes = t.pp_message_bytes;
  n.messages_per_step = p2p_messages_per_micro_batch(p) * accum;
  n.seconds_per_step = t.pp_seconds * accum + t.bubble_seconds;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = n.seconds_per_step;
  n.critical_path = true;
  n.facts = PpFacts{};
  return n;
}

/// MoE token all-to-all (docs/moe.md §5): on the critical path of every MoE layer.
TrafficNote ep_note(const Context& ctx, const Evaluation& e) {
  const TrainingTime& t = e.training;
  const double accum = static_cast<double>(e.plan.grad_accum);
  TrafficNote n;
  n.axis = TrafficAxis::ep;
  n.tier = tier_name(ctx.cluster, t.ep.tier);
  n.algorithm = std::string(to_string(t.ep.all_to_all.algorithm));
  n.message_bytes = t.ep.message_bytes;
  n.messages_per_step = t.ep.all_to_alls * accum;
  n.seconds_per_step = t.ep.seconds * accum;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = t.ep.exposed_seconds * accum;
  n.critical_path = !ctx.model.moe.overlap_all_to_all;
  n.facts = EpFacts{};
  return n;
}

/// The lowest bandwidths at which the step's dp collectives hide behind their windows and fit
/// the comm budget, on ring costs (data_parallel_time.hpp's overlap model), per GPU on the group's tier.
/// On the node's rails (collectives.hpp multi_rail_ring_cost) a ring pass counts NCCL's steps,
/// n − o inside the nodes and o − 1 across, and its bus bandwidth is the node's i rails
/// together, so each GPU's link needs 1/i of it (while the node's fabric carries the bus).
void dp_bandwidths(const Plan& p, const DataParallelTraffic& d, const Tier& node,
                   const Tier& tier, TrafficNote& n) {
  const double n_ranks = static_cast<double>(d.ranks);
  const double share = (n_ranks - 1) / n_ranks;
  const bool rails = is_multi_rail(d.buffer.algorithm);
  const double per_node = rails ? static_cast<double>(d.ranks_per_node) : 1.0;
  const double nodes = n_ranks / per_node;
  const double ring_latency =  // one ring RS or AG
      rails ? (n_ranks - nodes) * node.latency_seconds + (nodes - 1) * tier.latency_seconds
            : (n_ranks - 1) * tier.latency_seconds;
  const double fwd = d.forward_window_seconds;
  const double bwd = d.backward_window_seconds;
  double wire = 0, latency = 0;
  if (p.zero == 0) {
    wire = 2 * share * d.gradient_bytes;
    latency = 2 * ring_latency;
    n.hide_bandwidth = bandwidth_for(wire, latency, bwd);
  } else {
    wire = n.messages_per_step * share * d.gradient_bytes;
    latency = n.messages_per_step * ring_latency;
    n.hide_bandwidth =
        p.zero < 3
            ? std::max(bandwidth_for(share * d.gradient_bytes, ring_latency, bwd),
                       bandwidth_for(share * d.gradient_bytes, ring_latency, fwd))
            : std::max(bandwidth_for(share * d.gradient_bytes, ring_latency, fwd),
                       bandwidth_for(2 * share * d.gradient_bytes, 2 * ring_latency, bwd));
  }
  n.budget_bandwidth = bandwidth_for(wire, latency, comm_budget * n.compute_seconds_per_step);
  n.hide_bandwidth /= per_node;
  n.budget_bandwidth /= per_node;
}

TrafficNote dp_note(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  const DataParallelTraffic& d = t.dp;
  const Tier& tier = ctx.cluster.tiers[d.tier];
  const double accum = static_cast<double>(p.grad_accum);
  TrafficNote n;
  n.axis = p.cp == 1 ? TrafficAxis::dp : TrafficAxis::dp_cp;
  n.tier = tier_name(ctx.cluster, d.tier);
  n.message_bytes = d.gradient_bytes;
  n.seconds_per_step = d.comm_seconds;
  n.whole_buffer_seconds_per_step = d.whole_buffer_seconds;
  n.compute_seconds_per_step = t.compute_seconds() * accum;
  n.exposed_seconds_per_step = d.exposed_seconds;
  n.messages_per_step = d.collectives_per_step;
  n.algorithm = std::string(to_string(d.buffer.algorithm));
  dp_bandwidths(p, d, ctx.cluster.tiers[0], tier, n);
  DpFacts f;
  f.zero = p.zero;
  f.tier_bandwidth = tier.bandwidth_bytes_per_second;
  f.collectives_per_layer = dp_collectives_per_layer(p);
  f.blocking_gathers = p.zero == 3 && p.zero3_blocking_gathers;
  const double buckets = static_cast<double>(stage_layers(ctx.model, p)) *
                         static_cast<double>(f.collectives_per_layer);
  f.edge_buckets_only = !f.blocking_gathers &&
                        !(d.exposed_seconds - d.overlap_cost_seconds >
                          2 * std::max(d.comm_seconds / buckets, 0.0));
  f.processor_usage = tier.processor_usage;
  if (is_multi_rail(d.buffer.algorithm)) {
    f.rail_bandwidth = rail_bus_bandwidth(d.ranks_per_node, ctx.cluster.tiers[0], tier);
  }
  if (p.zero == 3) {
    // The worked solution's figure: 3 buffers per micro-batch at line rate against the dense
    // compute of one micro-batch, here and at one sequence per micro-batch.
    f.fsdp_bytes_per_micro_batch = d.bytes_per_step / accum;
    f.fsdp_wire_seconds = f.fsdp_bytes_per_micro_batch / tier.bandwidth_bytes_per_second;
    f.dense_one_sequence_seconds = t.dense_seconds / static_cast<double>(p.micro_batch);
  }
  if (d.replicas > 1) {
    f.replica_tier = tier_name(ctx.cluster, d.replica_tier);
    f.replica_bandwidth = ctx.cluster.tiers[d.replica_tier].bandwidth_bytes_per_second;
  }
  n.facts = f;
  return n;
}

/// Serving's MoE token all-to-all (docs/moe.md §6): on the critical path of every decode step.
TrafficNote serving_ep_note(const Context& ctx, const Evaluation& e) {
  const ServingAllToAll& a = e.serving.decode.ep;
  TrafficNote n;
  n.axis = TrafficAxis::ep;
  n.tier = tier_name(ctx.cluster, a.tier);
  n.algorithm = std::string(to_string(a.all_to_all.algorithm));
  n.message_bytes = a.message_bytes;
  n.messages_per_step = a.all_to_alls;
  n.seconds_per_step = a.seconds;
  n.exposed_seconds_per_step = a.seconds;
  n.critical_path = true;
  n.facts = ServingEpFacts{};
  return n;
}

std::vector<TrafficNote> serving_notes(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const Cluster& c = ctx.cluster;
  const DecodeStep& t = e.serving.decode;
  std::vector<TrafficNote> out;
  TrafficNote read;
  read.axis = TrafficAxis::memory;
  read.tier = "hbm";
  read.seconds_per_step = t.weight_read_seconds + t.kv_read_seconds;
  read.facts = ServingReadFacts{t.weight_read_bytes / c.gpu.memory_bandwidth_bytes_per_second};
  out.push_back(read);
  if (p.tp > 1) {
    const std::size_t k = axis_tier(p, c, Axis::tp);
    const Tier& tier = c.tiers[k];
    TrafficNote n;
    n.axis = TrafficAxis::tp;
    n.tier = tier_name(c, k);
    n.algorithm = std::string(to_string(t.tp_collective.algorithm));
    n.message_bytes = t.tp_message_bytes;
    n.messages_per_step = static_cast<double>(t.tp_messages);
    n.seconds_per_step = t.tp_seconds;
    n.exposed_seconds_per_step = t.tp_seconds;
    n.critical_path = true;
    ServingTpFacts f;
    f.ring = t.tp_ring;
    for (Algorithm a : all_algorithms) {
      if (!available(Collective::all_reduce, a, tier.peer_memory)) continue;
      f.algorithms[f.algorithm_count++] =
          collective_cost(Collective::all_reduce, a, p.tp, t.tp_message_bytes, tier);
    }
    n.facts = f;
    out.push_back(n);
  }
  if (p.ep > 1) out.push_back(serving_ep_note(ctx, e));
  TrafficNote total;
  total.axis = TrafficAxis::token;
  total.seconds_per_step = e.serving.per_token_seconds;
  total.facts = ServingTokenFacts{};
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
  if (e.plan.dp * e.plan.cp > 1) out.push_back(dp_note(ctx, e));
  if (e.plan.ep > 1) out.push_back(ep_note(ctx, e));
  return out;
}

}  // namespace planner

#include "planner/explain/explain.hpp"

#include <algorithm>
#include <numeric>
#include <array>
#include <cmath>

/// The explanation's facts: the binding constraint, the axes, the failure modes accepted and
/// the alternatives (traffic notes: traffic.cpp). No sentence is built here; the report layer
/// renders these records (report/explain_text.hpp).

namespace planner {

BindingConstraint binding_constraint(const Context& ctx) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  BindingConstraint b;
  // What the tensors may take: the memory less the reserve, and less the caching allocator's
  // share over them where the ledger counts one (model/memory.hpp allocator_bytes).
  b.usable_bytes = (c.gpu.memory_bytes - c.gpu.reserve_bytes) /
                   (1.0 + (ctx.workload.kind == WorkloadKind::training ? c.gpu.allocator_fraction : 0.0));
  if (ctx.workload.kind == WorkloadKind::serving) {
    const Serving& w = ctx.workload.serving;
    b.weights_bytes = total_params(m) * w.bytes_per_param;
    b.weight_read_seconds = b.weights_bytes / c.gpu.memory_bandwidth_bytes_per_second;
    b.weights_exceed_gpu = b.weights_bytes > b.usable_bytes;
    const bool too_slow = b.weight_read_seconds > w.slo_per_token_seconds;
    b.kind = too_slow ? BindingKind::decode_latency
                      : (b.weights_exceed_gpu ? BindingKind::weight_memory : BindingKind::throughput);
    return b;
  }
  const Training& w = ctx.workload.training;
  Plan one;
  one.recompute = Recompute::selective;
  b.selective = training_ledger(m, c, w, one);
  one.recompute = Recompute::none;
  b.no_recompute = training_ledger(m, c, w, one);
  b.terms = layer_activation_terms(m, 1.0, static_cast<double>(m.seq_len));
  b.params = total_params(m);
  b.layer_bytes = layer_params(m) * w.bytes_per_param;
  const MemoryLedger& s = b.selective;
  b.triage = triage(s.weights_bytes, s.gradients_bytes, s.optimizer_bytes, s.activations_bytes,
                    b.layer_bytes, b.usable_bytes);
  const double state = s.state_bytes();
  if (state > b.usable_bytes) {
    b.kind = BindingKind::state_memory;
  } else if (state + s.activations_bytes > b.usable_bytes) {
    b.kind = BindingKind::activation_memory;
    b.quadratic_dominates =
        b.terms.scores_bytes > b.terms.replicated_bytes + b.terms.tp_split_bytes;
  } else {
    b.kind = BindingKind::throughput;
    Plan selective;
    selective.recompute = Recompute::selective;
    b.one_gpu_step_seconds =
        target_sequences(ctx) * micro_batch_flops(m, selective).total() / ctx.flops_per_second;
  }
  return b;
}

std::vector<FailureMode> failure_modes(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  std::vector<FailureMode> modes;
  if (ctx.workload.kind == WorkloadKind::serving) {
    if (p.tp > 1) modes.push_back(FailureMode::serving_tp_critical_path);
    if (p.pp > 1) modes.push_back(FailureMode::serving_stage_latency);
    if (p.ep > 1) modes.push_back(FailureMode::expert_imbalance);
    if (modes.empty()) modes.push_back(FailureMode::serving_one_gpu);
    return modes;
  }
  if (p.cp > 1) modes.push_back(FailureMode::cp_causal_imbalance);
  if (p.tp > 1) modes.push_back(FailureMode::tp_fate_sharing);
  if (p.pp > 1) modes.push_back(FailureMode::pipeline_bubble);
  if (p.ep > 1) modes.push_back(FailureMode::expert_imbalance);
  modes.push_back(FailureMode::critical_batch);
  return modes;
}

namespace {

/// The component by which `alt` loses most time against `best` (training). Both are compared on
/// the same work: the alternative's seconds per step are scaled to the recommendation's tokens
/// per step (all replicas), so the ranked quantity (seconds per token) splits into these parts
/// and the figures chosen by are the figures kept (issue 13: the choice was once made per
/// replica's token and the figures kept per step, so a part with less time could "lose").
void losing_component(const Evaluation& best, Alternative& alt) {
  const Evaluation& e = *alt.best;
  auto parts_of = [](const Evaluation& x) {
    const TrainingTime& t = x.training;
    const double m = static_cast<double>(x.plan.grad_accum);
    return std::array<double, 5>{t.compute_seconds() * m, t.tp_seconds * m,
                                 t.cp_exposed_seconds * m, t.pp_seconds * m + t.bubble_seconds,
                                 t.dp.exposed_seconds};
  };
  const double same_work = best.training.global_sequences / e.training.global_sequences;
  const auto a = parts_of(best);
  auto b = parts_of(e);
  for (double& part : b) part *= same_work;
  std::size_t worst = 0;
  for (std::size_t i = 1; i < a.size(); ++i) {
    if (b[i] - a[i] > b[worst] - a[worst]) worst = i;
  }
  alt.losing = static_cast<TimeComponent>(worst);
  alt.losing_seconds = b[worst];
  alt.recommended_seconds = a[worst];
  alt.same_work_scale = same_work;
}

/// Which field of the rank key puts `alt` behind `best` (rank.hpp's order).
Criterion deciding_criterion(const RankKey& best, const RankKey& alt) {
  if (alt.throughput != best.throughput) return Criterion::throughput;
  if (alt.model_axes != best.model_axes) return Criterion::model_axes;
  if (alt.pipeline != best.pipeline) return Criterion::pipeline;
  if (alt.crossing_axes != best.crossing_axes) return Criterion::crossing_axes;
  if (alt.inter_node_bytes != best.inter_node_bytes) return Criterion::inter_node_bytes;
  if (alt.memory_bytes != best.memory_bytes) return Criterion::memory;
  return Criterion::canonical;
}

Alternative alternative(const Context& ctx, const SearchResult& result, AlternativeKind kind,
                        const SearchFilter& filter) {
  Alternative alt;
  alt.kind = kind;
  SearchOptions options;
  options.keep = 1;
  options.filter = filter;
  // The winner-only search first (its ranked list is the accounted one's,
  // tests/search/test_pruning.cpp); the rejections are counted only when nothing fits.
  options.accounting = false;
  SearchResult r = search(ctx, options);
  if (!r.found()) {
    options.accounting = true;
    r = search(ctx, options);
  }
  const Evaluation& best = result.ranked.front();
  if (r.found()) {
    alt.best = r.ranked.front();
    alt.slower = seconds_per_unit(ctx, *alt.best) / seconds_per_unit(ctx, best) - 1.0;
    alt.key = with_band(rank_key(ctx, *alt.best), ctx.workload.kind, result.band_limit);
    alt.best_key = result.keys.front();
    if (alt.key.misses_slo) {
      alt.outcome = AlternativeOutcome::misses_slo;
    } else if (alt.key.band == alt.best_key.band && alt.key.time == alt.best_key.time) {
      alt.outcome = AlternativeOutcome::ties;
      alt.criterion = deciding_criterion(alt.best_key, alt.key);
    } else {
      alt.outcome = AlternativeOutcome::slower;
    }
    if (ctx.workload.kind == WorkloadKind::training) losing_component(best, alt);
    alt.traffic = traffic_notes(ctx, *alt.best);
    return alt;
  }
  for (const Rejection& rej : r.rejected) {
    if (rej.kind == "memory") {
      alt.outcome = AlternativeOutcome::no_fit;
      alt.rejection = rej;
      return alt;
    }
  }
  if (!r.rejected.empty()) {
    alt.outcome = AlternativeOutcome::not_legal;
    alt.rejection = r.rejected.front();
  }
  return alt;
}

/// The space restricted to these model-parallel degrees (unset: free).
SearchFilter model_axes(std::optional<std::int64_t> tp, std::optional<std::int64_t> pp,
                        std::optional<std::int64_t> cp) {
  SearchFilter f;
  f.degrees[static_cast<std::size_t>(Axis::tp)] = tp;
  f.degrees[static_cast<std::size_t>(Axis::pp)] = pp;
  f.degrees[static_cast<std::size_t>(Axis::cp)] = cp;
  return f;
}

/// `quoted`: the kinds the axis notes name; with it, only the first alternative and those
/// are searched (AlternativeScope::quoted).
std::vector<Alternative> alternatives(const Context& ctx, const SearchResult& result,
                                      const std::vector<AxisNote>* quoted) {
  std::vector<Alternative> out;
  const Plan& p = result.ranked.front().plan;
  const bool training = ctx.workload.kind == WorkloadKind::training;
  const auto wanted = [&](AlternativeKind kind) {
    if (quoted == nullptr || out.empty()) return true;
    return std::any_of(quoted->begin(), quoted->end(),
                       [&](const AxisNote& n) { return n.alternative == kind; });
  };
  auto add = [&](AlternativeKind kind, const SearchFilter& f) {
    if (wanted(kind)) out.push_back(alternative(ctx, result, kind, f));
  };
  const auto free = std::nullopt;
  if (p.tp > 1 || p.pp > 1 || p.cp > 1) {
    add(training ? AlternativeKind::pure_data_parallel : AlternativeKind::one_gpu_per_engine,
        model_axes(1, 1, 1));
  }
  // ZeRO-3 over the data-parallel ranks alone: FSDP, whole-group or hybrid.
  const bool pure_fsdp = p.zero == 3 && p.tp == 1 && p.pp == 1 && p.cp == 1;
  if (training && !(pure_fsdp && state_replicas(p) == 1)) {
    SearchFilter f = model_axes(1, 1, 1);
    f.zero = 3;
    f.hybrid = false;  // over every GPU, as the name says
    add(AlternativeKind::fsdp, f);
  }
  // Hybrid sharding the other way: the whole group when the answer shards in groups, groups
  // when it does not and the search may try them (dense training, the constraints allowing a
  // second copy of the state, more than one data-parallel rank).
  if (training && state_replicas(p) > 1 && !pure_fsdp) {  // else the FSDP answer above says it
    SearchFilter f;
    f.hybrid = false;
    add(AlternativeKind::whole_group_sharding, f);
  } else if (training && !is_moe(ctx.model) && p.dp > 1 &&
             ctx.constraints.bound(Dim::replicas).max > 1) {
    SearchFilter f;
    f.hybrid = true;
    add(AlternativeKind::hybrid_sharding, f);
  }
  if (p.tp > 1 && (p.pp > 1 || p.cp > 1)) add(AlternativeKind::without_tp, model_axes(1, free, free));
  if (p.pp > 1 && (p.tp > 1 || p.cp > 1)) add(AlternativeKind::without_pp, model_axes(free, 1, free));
  if (p.cp > 1 && (p.tp > 1 || p.pp > 1)) add(AlternativeKind::without_cp, model_axes(free, free, 1));
  const std::int64_t node = ctx.cluster.gpus_per_node;
  if (p.tp != node && ctx.model.heads % node == 0 && world_size(ctx.cluster) % node == 0) {
    SearchFilter f = model_axes(node, free, free);
    f.tp_inside_node = true;
    add(AlternativeKind::tp_filling_node, f);
  }
  SearchFilter f;
  if (p.pp == 1) {
    f = {};
    f.require(Axis::pp);
    add(AlternativeKind::with_pipeline, f);
  }
  // An odd seq_len may still share a divisor with the world (4095 tokens on 24 GPUs: cp 3).
  if (training && p.cp == 1 &&
      (ctx.model.seq_len % 2 == 0 || std::gcd(ctx.model.seq_len, world_size(ctx.cluster)) > 1)) {
    f = {};
    f.require(Axis::cp);
    add(AlternativeKind::with_context, f);
  }
  if (training && p.flash_attention) {
    f = {};
    f.flash_attention = false;
    add(AlternativeKind::without_flash, f);
  }
  if (training && p.recompute != Recompute::full) {
    f = {};
    f.recompute = Recompute::full;
    add(AlternativeKind::full_recompute, f);
  }
  if (!training && is_moe(ctx.model)) {
    // Serving an MoE model: the answer with the expert axis the other way (docs/moe.md §6).
    f = {};
    if (p.ep > 1) {
      f.pin(Axis::ep, 1);
      add(AlternativeKind::without_ep, f);
    } else {
      f.require(Axis::ep);
      add(AlternativeKind::with_ep, f);
    }
  }
  return out;
}

/// The axis notes of `p`: its degree and tier, and which alternative says why.
std::vector<AxisNote> axis_notes(const Context& ctx, const Plan& p) {
  const bool training = ctx.workload.kind == WorkloadKind::training;
  const AlternativeKind simplest =
      training ? AlternativeKind::pure_data_parallel : AlternativeKind::one_gpu_per_engine;
  std::vector<AxisNote> out;
  auto note = [&](Axis a, std::optional<AlternativeKind> alternative) {
    AxisNote n;
    n.axis = a;
    n.degree = degree(p, a);
    n.used = n.degree > 1;
    // Serving replicas never talk to each other, so their axis pays no tier.
    const bool independent = !training && a == Axis::dp;
    if (n.used && !independent) n.tier = tier_name(ctx.cluster, axis_tier(p, ctx.cluster, a));
    n.alternative = alternative;
    out.push_back(std::move(n));
  };
  note(Axis::dp, std::nullopt);
  note(Axis::tp,
       p.tp > 1 ? (p.pp > 1 || p.cp > 1 ? AlternativeKind::without_tp : simplest)
                : AlternativeKind::tp_filling_node);
  note(Axis::pp,
       p.pp > 1 ? std::nullopt : std::optional(AlternativeKind::with_pipeline));
  if (training) {
    note(Axis::cp,
         p.cp > 1 ? (p.tp > 1 || p.pp > 1 ? AlternativeKind::without_cp : simplest)
                  : AlternativeKind::with_context);
    if (is_moe(ctx.model)) note(Axis::ep, std::nullopt);
  } else if (is_moe(ctx.model)) {
    note(Axis::ep, p.ep > 1 ? AlternativeKind::without_ep : AlternativeKind::with_ep);
  }
  return out;
}

}  // namespace

Explanation explain(const Context& ctx, const SearchResult& result, AlternativeScope scope) {
  Explanation x;
  x.binding = binding_constraint(ctx);
  if (!result.found()) return x;
  const Evaluation& best = result.ranked.front();
  x.traffic = traffic_notes(ctx, best);
  x.failure_modes = failure_modes(ctx, best);
  x.axes = axis_notes(ctx, best.plan);
  x.alternatives =
      alternatives(ctx, result, scope == AlternativeScope::quoted ? &x.axes : nullptr);
  return x;
}

}  // namespace planner

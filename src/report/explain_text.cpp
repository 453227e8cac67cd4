#include "planner/report/explain_text.hpp"

#include <fmt/format.h>

#include <numeric>

#include <cmath>

#include "planner/io/text.hpp"
#include "planner/report/moe_text.hpp"

/// The explanation's records in words (traffic notes: traffic_text.cpp).

namespace planner {

std::string describe(const Context& ctx, const Plan& p) {
  const Cluster& c = ctx.cluster;
  std::vector<std::string> parts;
  auto axis = [&](Axis a) {
    const std::int64_t d = degree(p, a);
    if (d <= 1) return;
    // Two tiers read "intra" and "inter" (node); a domain between them reads its own name.
    const std::size_t k = axis_tier(p, c, a);
    const std::string tier = k == 0 ? "intra" : k == c.network_index() ? "inter" : tier_name(c, k);
    parts.push_back(fmt::format("{} {} ({})", to_string(a), d, tier));
  };
  axis(Axis::tp);
  axis(Axis::cp);
  axis(Axis::pp);
  axis(Axis::dp);
  axis(Axis::ep);
  // Expert tensor parallelism other than tp, after ep: "ep 8 (intra), etp 1".
  if (expert_tp(p) != p.tp && !parts.empty()) parts.back() += fmt::format(", etp {}", expert_tp(p));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? " x " : "") + parts[i];
  if (out.empty()) out = "1 GPU";
  if (ctx.workload.kind == WorkloadKind::serving) return out;
  out += fmt::format(", ZeRO-{}", p.zero);
  if (state_replicas(p) > 1) {
    out += fmt::format(" sharded over {} ranks x {} replicas (HSDP)", state_shard_ranks(p),
                       state_replicas(p));
  }
  if (p.sequence_parallel) out += ", SP";
  if (p.sequence_parallel && p.tp_comm_overlap) out += " with tp overlap";
  if (p.flash_attention) out += ", flash";
  out += p.recompute == Recompute::none ? std::string(", no recompute")
         : p.recompute == Recompute::op ? std::string(", op-level recompute")
                                        : fmt::format(", {} recompute", to_string(p.recompute));
  out += fmt::format(", micro-batch {} x {}", p.micro_batch, p.grad_accum);
  if (p.virtual_stages > 1) out += fmt::format(", interleaved 1F1B v={}", p.virtual_stages);
  if (p.virtual_stages > 1 && p.pp_comm_overlap) out += " with overlapped sends";
  if (p.tables_in_pipeline_split) out += ", embedding and loss as stage layers";
  return out;
}

namespace {

std::string serving_binding_detail(const Context& ctx, const BindingConstraint& b) {
  const Cluster& c = ctx.cluster;
  const double slo = ctx.workload.serving.slo_per_token_seconds;
  return fmt::format(
      "weights {} ({} one GPU's {}); reading them once per token at {:.1f} TB/s takes {}, "
      "{:.1f}x the {} SLO",
      bytes_text(b.weights_bytes), b.weights_exceed_gpu ? "exceed" : "fit",
      bytes_text(c.gpu.memory_bytes), c.gpu.memory_bandwidth_bytes_per_second / 1e12,
      seconds_text(b.weight_read_seconds), b.weight_read_seconds / slo, seconds_text(slo));
}

}  // namespace

std::string binding_detail(const Context& ctx, const BindingConstraint& b) {
  if (ctx.workload.kind == WorkloadKind::serving) return serving_binding_detail(ctx, b);
  const Cluster& c = ctx.cluster;
  const Triage& tri = b.triage;
  const std::string triage_text = fmt::format(
      "; triage: a DDP replica needs {} ({}), shard model state: {}, tensor split "
      "needed for the largest layer ({}): {}, pipeline candidate (activations > parameters): {}",
      bytes_text(tri.replica_bytes), tri.replica_fits ? "fits" : "does not fit",
      tri.shard_state ? "yes" : "no", bytes_text(b.layer_bytes), tri.split_tensor ? "yes" : "no",
      tri.pipeline_candidate ? "yes" : "no");
  const double linear = b.terms.replicated_bytes + b.terms.tp_split_bytes;
  const std::string activations = fmt::format(
      "activations per replica {} without recompute, {} with selective recompute (the s^2 "
      "attention term is {:.1f}x the rest)",
      bytes_text(b.no_recompute.activations_bytes), bytes_text(b.selective.activations_bytes),
      b.terms.scores_bytes / linear);
  const double state = b.selective.state_bytes();
  const double reserve = c.gpu.reserve_bytes;
  switch (b.kind) {
    case BindingKind::state_memory:
      return fmt::format("model state {} params x {:g} B = {} is {:.2f}x one GPU's {}; {}",
                         count_text(b.params), ctx.workload.training.bytes_per_param, bytes_text(state),
                         state / c.gpu.memory_bytes, bytes_text(c.gpu.memory_bytes),
                         activations) +
             triage_text;
    case BindingKind::activation_memory:
      return fmt::format("model state {} fits one GPU, but {}; {} usable per GPU{}",
                         bytes_text(state), activations, bytes_text(b.usable_bytes),
                         b.quadratic_dominates ? "; the quadratic attention term dominates"
                                               : "") +
             triage_text;
    default:
    {
      // The caching allocator's share over the tensors, where the ledger counts one.
      const double f = c.gpu.allocator_fraction;
      const double selective = (state + b.selective.activations_bytes) * (1 + f);
      const std::string allocator =
          f > 0 ? fmt::format(" + allocator {}", bytes_text(selective * f / (1 + f))) : "";
      return fmt::format(
                 "one replica fits: state {} + selective activations {}{} + reserve {} = {} <= {} "
                 "(without recompute {}); but one GPU would need {} per {:.0f}-sequence step",
                 bytes_text(state), bytes_text(b.selective.activations_bytes), allocator,
                 bytes_text(reserve), bytes_text(selective + reserve),
                 bytes_text(c.gpu.memory_bytes),
                 bytes_text((state + b.no_recompute.activations_bytes) * (1 + f) + reserve),
                 seconds_text(b.one_gpu_step_seconds), std::ceil(target_sequences(ctx))) +
             triage_text;
    }
  }
}

/// Why an unused axis has no answer with it to compare (explain.cpp times one only where a
/// degree above 1 can exist): said in the model's terms, so that no axis line is left empty
/// ("cp = 1: " for a prime seq_len).
static std::string unused_axis_reason(const Context& ctx, Axis axis) {
  const std::int64_t world = world_size(ctx.cluster);
  const std::int64_t node = ctx.cluster.gpus_per_node;
  switch (axis) {
    case Axis::cp:
      if (std::gcd(ctx.model.seq_len, world) == 1) {
        return fmt::format("no cp above 1 divides both seq_len ({}) and the {} GPUs, as a "
                           "context-parallel split must",
                           ctx.model.seq_len, world);
      }
      break;
    case Axis::tp:
      if (node == 1) return "each node holds one GPU, so no tp group fits inside a node";
      if (ctx.model.heads % node != 0) {
        return fmt::format("a tp group filling the {}-GPU node would have to divide the {} "
                           "attention heads, and does not",
                           node, ctx.model.heads);
      }
      break;
    default:
      break;
  }
  return "no legal degree above 1 to compare with";
}

std::string axis_why(const Context& ctx, const Explanation& x, const Evaluation& best,
                     const AxisNote& a) {
  const Plan& p = best.plan;
  const bool training = ctx.workload.kind == WorkloadKind::training;
  std::string verdict;
  if (a.alternative) {
    if (const Alternative* alt = x.find(*a.alternative)) {
      verdict = alternative_name(ctx, alt->kind) + ": " + alternative_verdict(ctx, best, *alt);
    }
  }
  std::string why;
  switch (a.axis) {
    case Axis::dp:
      why = training ? fmt::format("{}, each {} per step ({} x {}), for "
                                   "throughput toward the {:.1f}-sequence target ({} tokens / {})",
                                   plural(p.dp, "replica"),
                                   plural(p.micro_batch * p.grad_accum, "sequence"), p.micro_batch, p.grad_accum,
                                   target_sequences(ctx),
                                   count_text(ctx.workload.training.global_batch_tokens),
                                   ctx.model.seq_len)
                     : fmt::format("{} of the engine for queries per second",
                                   plural(p.dp, "replica"));
      break;
    case Axis::tp:
      why = p.tp > 1 ? fmt::format("splits every layer {} ways; {}", p.tp, verdict) : verdict;
      break;
    case Axis::pp:
      why = p.pp > 1 ? fmt::format("{} stages of at most {} layers", p.pp,
                                   stage_layers(ctx.model, p))
                     : verdict;
      break;
    case Axis::cp:
      why = p.cp > 1 ? fmt::format("splits each sequence {} ways: {}", p.cp, verdict) : verdict;
      break;
    case Axis::ep:
      why = training ? expert_axis_text(ctx, best) : serving_expert_axis_text(ctx, best, verdict);
      break;
  }
  if (!a.used && why.empty()) why = unused_axis_reason(ctx, a.axis);
  return a.used || why.empty() ? why : "not used; " + why;
}

std::string failure_mode_text(const Context& ctx, const Evaluation& e,
                              const std::vector<FailureMode>& modes) {
  const Plan& p = e.plan;
  auto text = [&](FailureMode m) -> std::string {
    switch (m) {
      case FailureMode::serving_tp_critical_path:
        return fmt::format(
            "the tp all-reduce sits on the critical path of every layer of every decode step, so "
            "fabric jitter lands directly in p99 time per output token; tp cannot grow past the "
            "node ({} GPUs) without small-message latency collapsing it",
            ctx.cluster.gpus_per_node);
      case FailureMode::serving_stage_latency:
        return "a token traverses every pipeline stage, so stage latencies add up";
      case FailureMode::serving_one_gpu:
        return "one GPU per engine: its HBM bandwidth is the whole budget";
      case FailureMode::cp_causal_imbalance:
        return "causal masking makes a contiguous context-parallel split uneven: the rank holding "
               "the last tokens attends over the whole history while the first idles; use a "
               "striped or zig-zag token assignment (symptom: per-rank attention time rising with "
               "rank index)";
      case FailureMode::tp_fate_sharing:
        return fmt::format(
            "a tp group of {} is a fate-sharing unit: one lost GPU fails the group's step, and "
            "its {:.0f} % traffic overhead is structural (symptom: step time scaling worse than "
            "linearly as tp widens)",
            p.tp, 100 * e.training.tp_seconds / e.training.compute_seconds());
      case FailureMode::pipeline_bubble:
        return fmt::format(
            "pipeline bubble and stage imbalance: {:.1f} % bubble, and the largest stage holds {} "
            "of {}",
            100.0 * bubble_slots(p) / static_cast<double>(p.grad_accum),
            stage_layers(ctx.model, p), layers_text(ctx.model));
      case FailureMode::expert_imbalance: return expert_failure_text(ctx, e);
      case FailureMode::critical_batch:
        break;
    }
    const double tokens = e.training.global_sequences * static_cast<double>(ctx.model.seq_len);
    return fmt::format(
        "the critical batch size: dp = {} sets a global batch of {:.0f} sequences ({} "
        "tokens); past the critical batch size, extra tokens per step stop buying convergence "
        "(symptom: loss against wall-clock improves while loss against tokens worsens)",
        p.dp, e.training.global_sequences, count_text(tokens));
  };
  std::string out;
  for (std::size_t i = 0; i < modes.size(); ++i) out += (i ? "; " : "") + text(modes[i]);
  return out;
}

std::string alternative_name(const Context& ctx, AlternativeKind k) {
  switch (k) {
    case AlternativeKind::pure_data_parallel:
      return "pure data parallel (any ZeRO stage, FSDP included)";
    case AlternativeKind::one_gpu_per_engine: return "one GPU per engine";
    case AlternativeKind::fsdp: return "FSDP (ZeRO-3) over every GPU";
    case AlternativeKind::without_tp: return "without tp";
    case AlternativeKind::without_pp: return "without pp";
    case AlternativeKind::without_cp: return "without cp";
    case AlternativeKind::tp_filling_node:
      return fmt::format("tp = {} filling the node", ctx.cluster.gpus_per_node);
    case AlternativeKind::with_pipeline: return "with pipeline stages";
    case AlternativeKind::with_context: return "with context parallelism";
    case AlternativeKind::without_flash: return "without tiled (flash) attention";
    case AlternativeKind::full_recompute: return "full recompute";
    case AlternativeKind::without_ep: return "without ep (every GPU holds all experts)";
    case AlternativeKind::with_ep: return "with expert parallelism";
    case AlternativeKind::whole_group_sharding:
      return "ZeRO over the whole data-parallel group (no hybrid sharding)";
    case AlternativeKind::hybrid_sharding: return "hybrid sharding (HSDP)";
  }
  return "";
}

namespace {

/// The component by which the alternative loses most (explain.cpp's choice), in words.
std::string losing_text(const Evaluation& best, const Alternative& a, bool serving) {
  if (serving) {
    const ServingTime& s = a.best->serving;
    return fmt::format("{} per token against {}, {:.0f} tokens/s against {:.0f} ({} "
                       "against {})",
                       seconds_text(s.per_token_seconds), seconds_text(best.serving.per_token_seconds),
                       s.tokens_per_second, best.serving.tokens_per_second,
                       plural(s.replicas, "replica"), best.serving.replicas);
  }
  static constexpr const char* names[] = {"compute", "tensor-parallel traffic",
                                          "exposed ring traffic", "pipeline sends and bubble",
                                          "exposed data-parallel traffic"};
  const std::string scaled =
      a.same_work_scale == 1.0
          ? std::string()
          : fmt::format(", scaled to the recommendation's {} per step",
                        plural(static_cast<long long>(best.training.global_sequences), "sequence"));
  return fmt::format("its {} is {} per step{} ({} in the recommendation)",
                     names[static_cast<int>(a.losing)], seconds_text(a.losing_seconds), scaled,
                     a.recommended_seconds > 0 ? seconds_text(a.recommended_seconds) : "none");
}

std::string criterion_text(const Alternative& a) {
  switch (a.criterion) {
    case Criterion::throughput: return "fewer tokens per second over all replicas";
    case Criterion::model_axes: return "more model-parallel axes";
    case Criterion::pipeline: return "a pipeline";
    case Criterion::crossing_axes: return "more axes crossing nodes";
    case Criterion::inter_node_bytes:
      return fmt::format("more inter-node traffic ({:.0f} against {:.0f} B per token)",
                         a.key.inter_node_bytes, a.best_key.inter_node_bytes);
    case Criterion::memory:
      return fmt::format("more memory ({} against {} per GPU)", bytes_text(a.key.memory_bytes),
                         bytes_text(a.best_key.memory_bytes));
    case Criterion::canonical: break;
  }
  return "the canonical order";
}

}  // namespace

std::string alternative_verdict(const Context& ctx, const Evaluation& best, const Alternative& a) {
  const bool serving = ctx.workload.kind == WorkloadKind::serving;
  std::string how;
  switch (a.outcome) {
    case AlternativeOutcome::misses_slo:
      how = fmt::format("misses the SLO: {}", losing_text(best, a, serving));
      break;
    case AlternativeOutcome::ties:
      how = fmt::format("ties on time within the model's 1 % resolution ({:+.1f} %) and loses "
                        "on {}",
                        100 * a.slower, criterion_text(a));
      break;
    case AlternativeOutcome::slower:
      how = fmt::format("{:.1f} % slower: {}", 100 * a.slower, losing_text(best, a, serving));
      break;
    case AlternativeOutcome::no_fit:
      return fmt::format("does not fit: the closest, {}, {}", describe(ctx, a.rejection->plan),
                         a.rejection->reason);
    case AlternativeOutcome::not_legal:
      return fmt::format("not legal: {}", a.rejection->reason);
    case AlternativeOutcome::none_legal:
      // Ranked for trust, the search keeps to the validated envelope (docs/ranking.md §4).
      return ctx.constraints.trusted && !serving
                 ? "no legal configuration inside the regimes published runs validate "
                   "(--rank raw searches the rest)"
                 : "no legal configuration";
  }
  return fmt::format("{} fits ({} per GPU) but {}", describe(ctx, a.best->plan),
                     bytes_text(a.best->memory.total_bytes()), how);
}

std::string threshold_summary(const Context& ctx, const Threshold& t) {
  Context found = ctx;
  found.cluster.gpus_per_node = t.gpus_per_node;
  found.cluster.nodes = world_size(ctx.cluster) / t.gpus_per_node;
  const std::string plan = t.plan ? describe(found, *t.plan) : std::string("no plan fits");
  if (t.world_kept) {
    return fmt::format("{} = {} (now {}, {} GPUs kept): {}", t.parameter,
                       static_cast<std::int64_t>(t.value), static_cast<std::int64_t>(t.base_value),
                       world_size(ctx.cluster), plan);
  }
  const auto [value, now] = count_pair_text(t.value / t.unit_scale, t.base_value / t.unit_scale);
  return fmt::format("{} {} {} {} (now {}): {}", t.parameter,
                     t.side == ThresholdSide::below ? "at or below" : "at or above", value, t.unit,
                     now, plan);
}

}  // namespace planner

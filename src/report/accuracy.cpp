#include "planner/report/accuracy.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "planner/model/placement.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/search/rank.hpp"

namespace planner {

namespace {

/// Features in which two regimes differ, scale counted by its steps (one node to beyond 2,048
/// is three): a regime of another number format, sharding or MoE-ness is further than any
/// difference of scale.
int distance(const Regime& a, const Regime& b) noexcept {
  const int features = (a.fp8 != b.fp8) + (a.sharding != b.sharding) + (a.moe != b.moe);
  return 10 * features + std::abs(static_cast<int>(a.scale) - static_cast<int>(b.scale));
}

std::string_view sharding_text(StateSharding s) noexcept {
  switch (s) {
    case StateSharding::replicated: return "ZeRO-2 or less";
    case StateSharding::zero3: return "ZeRO-3 (FSDP)";
    case StateSharding::zero3_per_tensor: return "per-tensor ZeRO-3 (DeepSpeed 2021)";
  }
  return "ZeRO-2 or less";
}

std::string_view scale_text(Scale s) noexcept {
  switch (s) {
    case Scale::one_node: return "one node";
    case Scale::to_256: return "9-256 GPUs";
    case Scale::to_2048: return "257-2,048 GPUs";
    case Scale::beyond_2048: return "over 2,048 GPUs";
  }
  return "one node";
}

}  // namespace

const ModelAccuracy& nearest_accuracy(const Regime& r) noexcept {
  static const ModelAccuracy none{};
  const ModelAccuracy* best = nullptr;
  for (const ModelAccuracy& row : model_accuracy) {
    if (!best || distance(row.regime, r) < distance(best->regime, r) ||
        (distance(row.regime, r) == distance(best->regime, r) && row.records > best->records)) {
      best = &row;
    }
  }
  return best ? *best : none;
}

std::optional<QuotedAccuracy> plan_accuracy(const Context& ctx, const Plan& p) {
  if (ctx.workload.kind != WorkloadKind::training || ctx.calibrated ||
      !ctx.cluster.gpu.fitted_rate || model_accuracy.empty()) {
    return std::nullopt;
  }
  QuotedAccuracy q;
  q.regime = regime_of(ctx.model, ctx.cluster, p);
  q.row = nearest_accuracy(q.regime);
  q.exact = q.row.regime == q.regime;
  q.outside = outside_envelope_reason(validated_envelope, ctx.model, ctx.cluster, p);
  return q;
}

std::string outside_envelope_reason(const ValidatedEnvelope& e, const Model& m, const Cluster& c,
                                    const Plan& p) {
  switch (outside_envelope_config(e, p, m.seq_len)) {
    case EnvelopeFeature::zero3_shard_group:
      return fmt::format("ZeRO-3 shards over {} ranks; validated runs shard over {} at most",
                         zero3_gather_ranks(p), e.max_zero3_shard_ranks);
    case EnvelopeFeature::interleaving_depth:
      return fmt::format("{} virtual stages per pipeline rank; validated runs interleave {} at "
                         "most",
                         p.virtual_stages, e.max_virtual_stages);
    case EnvelopeFeature::cp_split:
      return fmt::format("context parallelism leaves {} tokens per rank; validated runs keep "
                         "{} or more",
                         m.seq_len / p.cp, e.min_cp_tokens_per_rank);
    case EnvelopeFeature::none: break;
  }
  if (tp_outside_envelope(e, p, c, axis_tier(p, c, Axis::tp))) {
    return fmt::format("tp {} crosses the network; no validated run splits tp across nodes",
                       p.tp);
  }
  return {};
}

std::string regime_text(const Regime& r) {
  return fmt::format("{}, {}, {}, {}", r.fp8 ? "FP8" : "16-bit", sharding_text(r.sharding),
                     r.moe ? "MoE" : "dense", scale_text(r.scale));
}

std::string accuracy_sentence(const QuotedAccuracy& q) {
  const ModelAccuracy& a = q.row;
  // A bias worth naming: the typical record errs one way (the signed median is most of the
  // absolute one), as FP8's all do (docs/validation.md §FP8 records).
  std::string bias;
  if (a.median_error > 0.5 * a.median_abs_error) bias = ", mostly predicting faster than measured";
  if (a.median_error < -0.5 * a.median_abs_error) bias = ", mostly predicting slower than measured";
  const std::string figures =
      fmt::format("{:.1f} % median, {:.1f} % at worst{} (planner validate validation/)",
                  100 * a.median_abs_error, 100 * a.max_abs_error, bias);
  std::string out =
      q.exact ? fmt::format("Error of this time model on {} published runs of this regime ({}): {}",
                            a.records, regime_text(a.regime), figures)
              : fmt::format("No published run validates this regime ({}); the nearest, {} runs "
                            "({}): {}",
                            regime_text(q.regime), a.records, regime_text(a.regime), figures);
  if (!q.outside.empty()) out += "; outside the validated envelope: " + q.outside;
  return out;
}

std::string unvalidated_sentence(const Context& ctx, const Evaluation& best,
                                 const Evaluation& unvalidated) {
  const double gain =
      unvalidated.training.tokens_per_second / best.training.tokens_per_second - 1.0;
  std::string why =
      outside_envelope_reason(validated_envelope, ctx.model, ctx.cluster, unvalidated.plan);
  if (why.empty()) why = "it needs a rank order or combination no framework launches";
  return fmt::format("Faster if the model holds where no published run validates it: {}, "
                     "{:.1f} % faster; {} (--rank raw recommends it)",
                     describe(ctx, unvalidated.plan), 100 * gain, why);
}

std::string memory_headroom_note(const MemoryLedger& l) {
  return fmt::format(
      "with {:.1f} % to spare; measured peaks have run up to {:.1f} % above what the planner "
      "predicts the caching allocator reserves ({} published runs)",
      100 * spare_fraction(l), 100 * memory_accuracy.max_excess, memory_accuracy.records);
}

std::string memory_headroom_clause(const Context& ctx, const Evaluation& best,
                                   const std::optional<Evaluation>& roomy) {
  const std::string out = memory_headroom_note(best.memory) + ": ";
  if (!roomy) return out + "no plan fits with that headroom";
  const double slower =
      1.0 - roomy->training.tokens_per_second / best.training.tokens_per_second;
  // Inside the band the model cannot tell the two apart (search/rank.hpp time_resolution).
  const std::string cost = slower <= time_resolution
                               ? fmt::format("as fast within the model's {:.0f} % resolution",
                                             100 * time_resolution)
                               : fmt::format("{:.1f} % slower", 100 * slower);
  return out + fmt::format("with that headroom, {} ({:.1f} GiB), {}", describe(ctx, roomy->plan),
                           roomy->memory.total_bytes() / gib, cost);
}

std::string envelope_empty_sentence(const Context& ctx, const Plan& best) {
  return fmt::format("No plan fits inside the regimes published runs validate; this one lies "
                     "outside them: {}",
                     outside_envelope_reason(validated_envelope, ctx.model, ctx.cluster, best));
}

}  // namespace planner

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <stdexcept>

#include "planner/io/context.hpp"
#include "planner/report/scaling_report.hpp"
#include "planner/io/text.hpp"
#include "planner/report/headline.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/report/report.hpp"
#include "planner/search/answer.hpp"
#include "planner/search/rank.hpp"
#include "planner/search/disaggregated.hpp"
#include "serving_text.hpp"

namespace planner {

using nlohmann::json;

namespace {

/// The threshold scans that gave up, as "POINTER below" / "POINTER above".
std::vector<std::string> not_searched_names(const PlanReport& r) {
  std::vector<std::string> out;
  for (const ScanGivenUp& g : r.thresholds_not_searched) {
    out.push_back(fmt::format("{} {}", g.parameter, to_string(g.side)));
  }
  return out;
}

const char* bool_text(bool b) { return b ? "true" : "false"; }

/// The name of the tier the group of `a` pays.
const std::string& group_tier_name(const Context& ctx, const Plan& p, Axis a) {
  return tier_name(ctx.cluster, axis_tier(p, ctx.cluster, a));
}

json placement_json(const Context& ctx, const Plan& p) {
  json order = json::array();
  for (Axis a : p.placement) order.push_back(std::string(to_string(a)));
  json j{{"order", order}};
  for (const AxisInfo& row : axes) {
    if (row.folded && degree(p, row.axis) == 1) continue;  // unused on dense models
    j[std::string(row.name)] = group_tier_name(ctx, p, row.axis);
  }
  return j;
}

json memory_json(const MemoryLedger& l) {
  json j = json::object();
  for (const LedgerLine& line : ledger_lines) j[std::string(line.name)] = l.*line.bytes;
  j["total"] = l.total_bytes();
  j["capacity"] = l.capacity_bytes;
  return j;
}

json time_json(const Context& ctx, const Evaluation& e) {
  if (ctx.workload.kind == WorkloadKind::serving) return serving_time_json(e.serving);
  const TrainingTime& t = e.training;
  json j{{"dense", t.dense_seconds},
              {"attention", t.attention_seconds},
              {"recompute", t.recompute_seconds},
              {"scores_io", t.scores_io_seconds},
              {"tp", t.tp_seconds},
              {"tp_algorithm", std::string(to_string(t.tp_collective.algorithm))},
              {"cp", t.cp_seconds},
              {"cp_exposed", t.cp_exposed_seconds},
              {"pp", t.pp_seconds},
              {"per_micro_batch", t.micro_batch_seconds()},
              {"bubble", t.bubble_seconds},
              {"dp_comm", t.dp.comm_seconds},
              {"dp_exposed", t.dp.exposed_seconds},
              {"step", t.step_seconds},
              {"global_sequences", t.global_sequences},
              {"tokens_per_second", t.tokens_per_second},
              {"mfu", t.mfu}};
  // Only with the scenario's "stragglers" (docs/resilience.md §1), so other output is unchanged.
  if (t.straggler_seconds > 0) j["straggler"] = t.straggler_seconds;
  // Only for mixture-of-experts models (docs/moe.md §5), so dense output is unchanged.
  if (t.ep.layers > 0) {
    j["ep_all_to_all"] = t.ep.seconds;
    j["ep_all_to_all_exposed"] = t.ep.exposed_seconds;
    j["expert_dp_exposed"] = t.expert_dp.exposed_seconds;
  }
  if (!bf16_mfu_note(ctx, t.mfu).empty()) {
    j["mfu_bf16_rate"] = t.mfu * ctx.flops_per_second / ctx.cluster.gpu.flops_per_second;
  }
  return j;
}

json plan_fields_json(const Plan& p) {
  json j{{"dp", p.dp},
              {"tp", p.tp},
              {"pp", p.pp},
              {"cp", p.cp},
              {"zero", p.zero},
              {"recompute", std::string(to_string(p.recompute))},
              {"flash_attention", p.flash_attention},
              {"sequence_parallel", p.sequence_parallel},
              {"micro_batch", p.micro_batch},
              {"grad_accum", p.grad_accum}};
  if (p.virtual_stages > 1) j["virtual_stages"] = p.virtual_stages;
  if (p.ep > 1) j["ep"] = p.ep;
  return j;
}

json traffic_json(const Context& ctx, const Evaluation& e, const std::vector<TrafficNote>& notes) {
  json out = json::array();
  for (const TrafficNote& n : notes) {
    out.push_back(json{{"axis", traffic_axis_name(n.axis)},
                       {"tier", n.tier},
                       {"collective", traffic_collective(n)},
                       {"algorithm", n.algorithm},
                       {"message_bytes", n.message_bytes},
                       {"messages_per_step", n.messages_per_step},
                       {"seconds_per_step", n.seconds_per_step},
                       {"compute_seconds_per_step", n.compute_seconds_per_step},
                       {"exposed_seconds_per_step", n.exposed_seconds_per_step},
                       {"critical_path", n.critical_path},
                       {"hide_bandwidth", n.hide_bandwidth},
                       {"budget_bandwidth", n.budget_bandwidth},
                       {"summary", traffic_summary(ctx, e, n)}});
  }
  return out;
}

/// Fails loudly on a non-finite number: the model must never produce one (issue: no NaN or
/// inf may reach the output), and printing null would hide the bug.
void check_finite(const json& j, const std::string& where) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    throw std::logic_error("non-finite number at " + where);
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_finite(it.value(), where + "/" + it.key());
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_finite(j[i], where + "/" + std::to_string(i));
  }
}

std::string describe_memory_lines(const MemoryLedger& l) {
  std::string out;
  for (const LedgerLine& line : ledger_lines) {
    const double bytes = l.*line.bytes;
    if (bytes == 0) continue;
    out += fmt::format("  {:<18} {:>10.1f} GiB {:>20.0f} B\n", line.name, bytes / gib, bytes);
  }
  out += fmt::format("  {:<18} {:>10.1f} GiB {:>20.0f} B   of {} ({})\n", "total",
                     l.total_bytes() / gib, l.total_bytes(), gib_text(l.capacity_bytes),
                     l.fits() ? "fits" : "does not fit");
  return out;
}

std::string describe_time(const Context& ctx, const Evaluation& e) {
  std::string out;
  if (ctx.workload.kind == WorkloadKind::serving) return serving_time_text(ctx, e.serving);
  const TrainingTime& t = e.training;
  out += "  per micro-batch, one GPU of the largest stage:\n";
  out += fmt::format("    dense 6*P*D      {:>12}\n", seconds_text(t.dense_seconds));
  out += fmt::format("    attention        {:>12}\n", seconds_text(t.attention_seconds));
  if (t.recompute_seconds > 0) {
    out += fmt::format("    recompute        {:>12}\n", seconds_text(t.recompute_seconds));
  }
  if (t.scores_io_seconds > 0) {
    out += fmt::format("    score-matrix I/O {:>12}\n", seconds_text(t.scores_io_seconds));
  }
  if (t.tp_seconds > 0) {
    out += fmt::format("    tp traffic       {:>12}   ({} x {}, {})\n", seconds_text(t.tp_seconds),
                       t.tp_messages, seconds_text(t.tp_collective.seconds()),
                       to_string(t.tp_collective.algorithm));
  }
  if (t.cp_seconds > 0) {
    out += fmt::format("    cp ring          {:>12}   (exposed {})\n", seconds_text(t.cp_seconds),
                       seconds_text(t.cp_exposed_seconds));
  }
  if (t.pp_seconds > 0) out += fmt::format("    stage sends      {:>12}\n", seconds_text(t.pp_seconds));
  out += expert_time_lines(t, false);
  out += fmt::format("  per step ({} micro-batches):\n", t.micro_batches);
  if (t.bubble_seconds > 0) {
    out += fmt::format("    pipeline bubble  {:>12}\n", seconds_text(t.bubble_seconds));
  }
  out += fmt::format("    dp traffic       {:>12}   (exposed {})\n", seconds_text(t.dp.comm_seconds),
                     seconds_text(t.dp.exposed_seconds));
  out += expert_time_lines(t, true);
  if (t.straggler_seconds > 0) {
    out += fmt::format("    straggler wait   {:>12}\n", seconds_text(t.straggler_seconds));
  }
  out += fmt::format("    step             {:>12}   {:.0f} sequences, {:.0f} tokens/s, MFU {:.1f} %{}\n",
                     seconds_text(t.step_seconds), t.global_sequences, t.tokens_per_second,
                     100 * t.mfu, bf16_mfu_note(ctx, t.mfu));
  return out;
}

/// The recommended training plan's restart budget, when the scenario has "resilience".
std::optional<RestartBudget> plan_restart_budget(const PlanReport& r) {
  if (!r.scenario->resilience || !r.result.found() ||
      r.context.workload.kind != WorkloadKind::training) {
    return std::nullopt;
  }
  return restart_budget(r.context, r.result.ranked.front(), *r.scenario->resilience);
}

}  // namespace

std::string dump_json(const json& j) {
  check_finite(j, "");
  return j.dump(2) + "\n";
}

std::string headline(const Context& ctx, const Evaluation& e) {
  if (ctx.workload.kind == WorkloadKind::serving) return serving_headline(ctx, e);
  return fmt::format("{:.0f} tokens/s, step {}, MFU {:.1f} %{}, {} of {} per GPU",
                     e.training.tokens_per_second, seconds_text(e.training.step_seconds),
                     100 * e.training.mfu, bf16_mfu_note(ctx, e.training.mfu),
                     gib_text(e.memory.total_bytes()),
                     gib_text(e.memory.capacity_bytes));
}

std::string pinned_verdict(const Context& ctx, const Evaluation& pinned, const Evaluation& best,
                           double band_limit) {
  const double ratio = seconds_per_unit(ctx, pinned) / seconds_per_unit(ctx, best);
  // A plan that does not fit has no speed to compare, and a pinned plan off the searched
  // batch split can be the faster one (both printed "the recommendation is -98.3 % faster").
  if (same_answer(ctx, pinned.plan, best.plan)) return "the same answer";
  if (!pinned.fits()) return "the recommendation fits";
  if (ctx.workload.kind == WorkloadKind::training && ratio * (1 + time_resolution) >= 1 &&
      seconds_per_unit(ctx, pinned) <= band_limit) {
    // Inside the tolerance band (docs/ranking.md §2): one of the plans the model calls equal.
    return fmt::format("tied with the recommendation within {:g} %, the model's resolution "
                       "({:.1f} % {})",
                       100 * time_resolution, 100 * std::abs(ratio - 1),
                       ratio >= 1 ? "slower" : "faster");
  }
  if (ratio < 1) return fmt::format("the recommendation is {:.1f} % slower", 100 * (1 - ratio));
  return fmt::format("the recommendation is {:.1f} % faster", 100 * (ratio - 1));
}

std::string tied_sentence(const SearchResult& r) {
  if (r.tied <= 1) return {};
  return fmt::format("{} plans are within {:g} % of the fastest, the model's resolution; this "
                     "is the simplest of them",
                     r.tied, 100 * time_resolution);
}

std::string pinned_figures(const Context& ctx, const Evaluation& pinned) {
  return pinned.fits() ? headline(ctx, pinned) : "does not fit: " + memory_reason(pinned.memory);
}

namespace {

/// The explanation's parts of the report: axes, traffic, failure mode and alternatives.
void explanation_json(const Context& ctx, const Explanation& x, const Evaluation& best, json& j) {
  json axes = json::array();
  for (const AxisNote& a : x.axes) {
    axes.push_back(json{{"axis", std::string(to_string(a.axis))}, {"degree", a.degree},
                        {"used", a.used}, {"tier", a.tier}, {"why", axis_why(ctx, x, best, a)}});
  }
  j["axes"] = axes;
  j["traffic"] = traffic_json(ctx, best, x.traffic);
  j["failure_mode"] = failure_mode_text(ctx, best, x.failure_modes);
  json alternatives = json::array();
  for (const Alternative& a : x.alternatives) {
    alternatives.push_back(
        json{{"name", alternative_name(ctx, a.kind)},
             {"plan", a.best ? plan_json(ctx, *a.best) : json(nullptr)},
             {"verdict", alternative_verdict(ctx, best, a)},
             {"traffic", a.best ? traffic_json(ctx, *a.best, a.traffic) : json::array()}});
  }
  j["alternatives"] = alternatives;
}

}  // namespace

json plan_json(const Context& ctx, const Evaluation& e) {
  json j = plan_fields_json(e.plan);
  j["placement"] = placement_json(ctx, e.plan);
  j["description"] = describe(ctx, e.plan);
  j["memory"] = memory_json(e.memory);
  j["time"] = time_json(ctx, e);
  return j;
}

json report_json(const PlanReport& r) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  json j;
  j["schema_version"] = schema_version;
  j["scenario"] = json{{"file", r.scenario->origin}, {"name", r.scenario->name}};
  j["workload"] = ctx.workload.kind == WorkloadKind::training ? "training" : "serving";
  j["effective_flops"] = ctx.flops_per_second;
  j["binding_constraint"] = json{{"kind", std::string(to_string(x.binding.kind))},
                                 {"quadratic_dominates", x.binding.quadratic_dominates},
                                 {"detail", binding_detail(ctx, x.binding)}};
  j["best"] = r.result.found() ? plan_json(ctx, r.result.ranked.front()) : json(nullptr);
  if (r.result.found() && ctx.workload.kind == WorkloadKind::serving &&
      ctx.workload.serving.request_rate_per_second > 0) {
    j["best"]["capacity"] = serving_capacity_json(ctx, r.result.ranked.front());
  }
  if (ctx.workload.kind == WorkloadKind::serving && disaggregation_applies(ctx)) {
    j["deployments"] = disaggregation_json(ctx, r.result.ranked);
  }
  json ranked = json::array();
  for (const Evaluation& e : r.result.ranked) ranked.push_back(plan_json(ctx, e));
  j["ranked"] = ranked;
  // Training: how many plans the model cannot tell apart from the fastest (docs/ranking.md §2).
  if (ctx.workload.kind == WorkloadKind::training && r.result.found()) {
    j["tied"] = json{{"plans", r.result.tied}, {"tolerance", time_resolution}};
  }
  if (r.pinned) j["pinned"] = plan_json(ctx, *r.pinned);
  if (const std::optional<RestartBudget> b = plan_restart_budget(r)) {
    j["resilience"] = restart_budget_json(*b);
  }
  j["axes"] = json::array();
  j["traffic"] = json::array();
  j["failure_mode"] = "";
  j["alternatives"] = json::array();
  if (r.result.found()) explanation_json(ctx, x, r.result.ranked.front(), j);
  json thresholds = json::array();
  for (const Threshold& t : r.thresholds) {
    thresholds.push_back(json{{"parameter", t.parameter},
                              {"base_value", t.base_value},
                              {"value", t.value},
                              {"direction", std::string(to_string(t.side))},
                              {"plan", plan_fields_json(t.plan.value_or(Plan{}))},
                              {"summary", threshold_summary(ctx, t)}});
  }
  j["thresholds"] = thresholds;
  // Only present when some scan gave up, so that ordinary output is unchanged.
  if (!r.thresholds_not_searched.empty()) j["thresholds_not_searched"] = not_searched_names(r);
  json rejected = json::array();
  for (const Rejection& rej : r.result.rejected) {
    rejected.push_back(json{{"plan", plan_fields_json(rej.plan)}, {"kind", rej.kind},
                            {"reason", rej.reason}});
  }
  j["rejected"] = rejected;
  json by_kind = json::object();
  for (const auto& [kind, count] : r.result.rejected_by_kind) by_kind[kind] = count;
  j["search"] = json{{"evaluated", r.result.evaluated},
                     {"timed", r.result.timed},
                     {"feasible", r.result.feasible},
                     {"rejected_by_kind", by_kind}};
  return j;
}

namespace {

std::string tied_line(const SearchResult& r) {
  const std::string sentence = tied_sentence(r);
  return sentence.empty() ? sentence : "  " + sentence + "\n";
}

/// The five parts of the explanation and the alternatives, in words.
std::string explanation_text(const PlanReport& r) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  const Evaluation& best = r.result.ranked.front();
  std::string out;
  out += fmt::format("\n1. Binding constraint: {}{}\n   {}\n", to_string(x.binding.kind),
                     x.binding.quadratic_dominates ? " (the quadratic attention term dominates)" : "",
                     binding_detail(ctx, x.binding));
  out += "\n2. Axes\n";
  for (const AxisNote& a : x.axes) {
    out += fmt::format("   {} = {}{}: {}\n", to_string(a.axis), a.degree,
                       a.tier.empty() ? std::string() : fmt::format(" ({})", a.tier),
                       axis_why(ctx, x, best, a));
  }
  out += "\n3. Tiers and bandwidth\n";
  for (const TrafficNote& n : x.traffic) {
    out += fmt::format("   - {}\n", traffic_summary(ctx, best, n));
  }
  out += fmt::format("\n4. Failure mode accepted\n   {}\n",
                     failure_mode_text(ctx, best, x.failure_modes));
  out += "\n5. What would change the answer\n";
  if (r.thresholds.empty()) out += "   (thresholds not computed or none within range)\n";
  for (const Threshold& t : r.thresholds) out += fmt::format("   - {}\n", threshold_summary(ctx, t));
  if (!r.thresholds_not_searched.empty()) {
    out += fmt::format("   (not searched, the search is too large to rerun that often: {})\n",
                       fmt::join(not_searched_names(r), ", "));
  }
  out += "\nSimpler answers and alternatives\n";
  for (const Alternative& a : x.alternatives) {
    out += fmt::format("   - {}: {}\n", alternative_name(ctx, a.kind),
                       alternative_verdict(ctx, best, a));
    for (const TrafficNote& n : a.traffic) {
      if (n.axis == TrafficAxis::tp || n.axis == TrafficAxis::dp || n.axis == TrafficAxis::dp_cp) {
        out += fmt::format("       {}\n", traffic_summary(ctx, *a.best, n));
      }
    }
  }
  return out;
}

}  // namespace

std::string report_text(const PlanReport& r) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  std::string out;
  const std::string title = r.scenario->name.empty() ? r.scenario->origin
                                                     : r.scenario->origin + " - " + r.scenario->name;
  out += fmt::format("planner {}: {}\n\n", PLANNER_VERSION, title);
  if (!r.result.found()) {
    out += "No configuration fits.\n";
    out += fmt::format("Binding constraint: {}: {}\n", to_string(x.binding.kind),
                       binding_detail(ctx, x.binding));
    for (const Rejection& rej : r.result.rejected) {
      out += fmt::format("  rejected ({}): {}: {}\n", rej.kind, describe(ctx, rej.plan), rej.reason);
    }
    return out;
  }
  const Evaluation& best = r.result.ranked.front();
  if (ctx.workload.kind == WorkloadKind::serving) out += slo_missed_line(ctx, best);
  out += fmt::format("Recommendation: {}\n  {}\n", describe(ctx, best.plan), headline(ctx, best));
  out += tied_line(r.result);
  if (r.pinned) {
    out += fmt::format("  your pinned plan ({}): {}; {}\n", describe(ctx, r.pinned->plan),
                       pinned_figures(ctx, *r.pinned), pinned_verdict(ctx, *r.pinned, best, r.result.band_limit));
  }
  out += explanation_text(r);
  out += "\nMemory per GPU\n" + describe_memory_lines(best.memory);
  out += "\nTime\n" + describe_time(ctx, best);
  if (ctx.workload.kind == WorkloadKind::serving) {
    out += serving_capacity_text(ctx, best);
    out += disaggregation_text(ctx, r.result.ranked);
  }
  if (const std::optional<RestartBudget> b = plan_restart_budget(r)) {
    out += "\n" + restart_budget_text(*b, *r.scenario->resilience);
  }
  if (r.result.ranked.size() > 1) {
    out += "\nRunners-up\n";
    for (std::size_t i = 1; i < r.result.ranked.size(); ++i) {
      const Evaluation& e = r.result.ranked[i];
      const std::string rank = i < r.result.tied ? "=1" : std::to_string(i + 1);
      out += fmt::format("  {:>2}. {}: {}\n", rank, describe(ctx, e.plan), headline(ctx, e));
    }
  }
  out += fmt::format("\nSearch: {} configurations evaluated, {} fit", r.result.evaluated,
                     r.result.feasible);
  for (const auto& [kind, count] : r.result.rejected_by_kind) {
    out += fmt::format("; {} rejected for {}", count, kind);
  }
  out += "\n";
  for (const Rejection& rej : r.result.rejected) {
    out += fmt::format("  closest rejected ({}): {}: {}\n", rej.kind, describe(ctx, rej.plan),
                       rej.reason);
  }
  return out;
}

std::string plan_csv_header(WorkloadKind kind) {
  std::string h =
      "dp,tp,pp,cp,zero,recompute,flash_attention,sequence_parallel,micro_batch,grad_accum,"
      "tp_tier,cp_tier,pp_tier,dp_tier,memory_total_bytes,memory_capacity_bytes";
  if (kind == WorkloadKind::training) return h + ",step_seconds,tokens_per_second,mfu";
  return h + ",per_token_seconds,slo_margin_seconds,tokens_per_second";
}

std::string plan_csv_row(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  // The documented column order (docs/output.md §CSV): tiers of tp, cp, pp, dp.
  std::string row = fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.0f}", p.dp, p.tp, p.pp, p.cp, p.zero,
      to_string(p.recompute), bool_text(p.flash_attention), bool_text(p.sequence_parallel),
      p.micro_batch, p.grad_accum, group_tier_name(ctx, p, Axis::tp),
      group_tier_name(ctx, p, Axis::cp), group_tier_name(ctx, p, Axis::pp),
      group_tier_name(ctx, p, Axis::dp), e.memory.total_bytes(),
      e.memory.capacity_bytes);
  if (ctx.workload.kind == WorkloadKind::training) {
    return row + fmt::format(",{:.6g},{:.6g},{:.6g}", e.training.step_seconds,
                             e.training.tokens_per_second, e.training.mfu);
  }
  return row + fmt::format(",{:.6g},{:.6g},{:.6g}", e.serving.per_token_seconds,
                           e.serving.slo_margin_seconds, e.serving.tokens_per_second);
}

std::string report_csv(const PlanReport& r) {
  std::string out = "rank," + plan_csv_header(r.context.workload.kind) + "\n";
  for (std::size_t i = 0; i < r.result.ranked.size(); ++i) {
    out += fmt::format("{},{}\n", i + 1, plan_csv_row(r.context, r.result.ranked[i]));
  }
  return out;
}

json evaluation_report_json(const Scenario& s, const Context& ctx, const Evaluation& e) {
  json j;
  j["schema_version"] = schema_version;
  j["scenario"] = json{{"file", s.origin}, {"name", s.name}};
  j["workload"] = ctx.workload.kind == WorkloadKind::training ? "training" : "serving";
  j["effective_flops"] = ctx.flops_per_second;
  j["plan"] = plan_json(ctx, e);
  j["fits"] = e.fits();
  j["traffic"] = traffic_json(ctx, e, traffic_notes(ctx, e));
  return j;
}

std::string evaluation_report_text(const Scenario& s, const Context& ctx, const Evaluation& e) {
  std::string out = fmt::format("planner {}: {}\n\n", PLANNER_VERSION,
                                s.name.empty() ? s.origin : s.origin + " - " + s.name);
  out += fmt::format("Plan: {}\n", describe(ctx, e.plan));
  if (ctx.calibrated) {
    out += fmt::format("  effective {:.1f} TFLOP/s, from the measured step time\n",
                       ctx.flops_per_second / 1e12);
  }
  out += "\nMemory per GPU\n" + describe_memory_lines(e.memory);
  if (!e.fits()) out += "  " + memory_reason(e.memory) + "\n";
  out += "\nTime\n" + describe_time(ctx, e);
  const std::vector<TrafficNote> notes = traffic_notes(ctx, e);
  if (!notes.empty()) {
    out += "\nTraffic\n";
    for (const TrafficNote& n : notes) out += fmt::format("  - {}\n", traffic_summary(ctx, e, n));
  }
  return out;
}

std::string evaluation_report_csv(const Context& ctx, const Evaluation& e) {
  std::string out = "item,value\n";
  for (const LedgerLine& line : ledger_lines) {
    out += fmt::format("memory.{},{:.0f}\n", line.name, e.memory.*line.bytes);
  }
  out += fmt::format("memory.total,{:.0f}\nmemory.capacity,{:.0f}\n", e.memory.total_bytes(),
                     e.memory.capacity_bytes);
  const json t = time_json(ctx, e);
  for (auto it = t.begin(); it != t.end(); ++it) {
    if (it.value().is_number()) out += fmt::format("time.{},{:.9g}\n", it.key(), it.value().get<double>());
  }
  return out;
}

}  // namespace planner

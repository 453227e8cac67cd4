// The plan report and the evaluation report as text, for people (docs/output.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/serving_accuracy.hpp"
#include "planner/report/scaling_report.hpp"
#include "planner/io/text.hpp"
#include "planner/report/headline.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/report/report.hpp"
#include "planner/search/answer.hpp"
#include "planner/search/rank.hpp"
#include "planner/search/disaggregated.hpp"
#include "render_parts.hpp"
#include "serving_text.hpp"

namespace planner {

using namespace render_detail;

namespace render_detail {

std::string describe_memory_lines(const MemoryLedger& l) {
  std::string out;
  for (const LedgerLine& line : ledger_lines) {
    const double bytes = l.*line.bytes;
    if (bytes == 0) continue;
    const std::string_view note = ledger_line_note(l, line.bytes);
    out += fmt::format("  {:<18} {:>10.1f} GiB {:>20.0f} B{}{}\n", line.name, bytes / gib, bytes,
                       note.empty() ? "" : "   ", note);
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
  if (t.elementwise_seconds > 0) {
    out += fmt::format("    memory-bound ops {:>12}   (norms, activations, loss at HBM bandwidth)\n",
                       seconds_text(t.elementwise_seconds));
  }
  if (t.tp_seconds > 0 && t.tp_unoverlapped_seconds > 0) {
    out += fmt::format("    tp traffic       {:>12}   (exposed of {} overlapped with the GEMMs, "
                       "{} of it their lost SMs)\n",
                       seconds_text(t.tp_seconds), seconds_text(t.tp_unoverlapped_seconds),
                       seconds_text(t.tp_overlap_cost_seconds));
  } else if (t.tp_seconds > 0) {
    out += fmt::format("    tp traffic       {:>12}   ({} x {}, {})\n", seconds_text(t.tp_seconds),
                       t.tp_messages, seconds_text(t.tp_collective.seconds()),
                       to_string(t.tp_collective.algorithm));
  }
  if (t.cp_seconds > 0) {
    out += fmt::format("    cp ring          {:>12}   (exposed {}{})\n", seconds_text(t.cp_seconds),
                       seconds_text(t.cp_exposed_seconds),
                       t.cp_overlap_cost_seconds > 0
                           ? fmt::format(", {} of it attention slowed while hidden",
                                         seconds_text(t.cp_overlap_cost_seconds))
                           : std::string());
  }
  if (t.pp_seconds > 0) out += fmt::format("    stage sends      {:>12}\n", seconds_text(t.pp_seconds));
  out += expert_time_lines(t, false);
  out += fmt::format("  per step ({} micro-batches):\n", t.micro_batches);
  if (t.bubble_seconds > 0) {
    out += fmt::format("    pipeline bubble  {:>12}\n", seconds_text(t.bubble_seconds));
  }
  if (t.dp.overlap_cost_seconds > 0) {
    out += fmt::format("    dp traffic       {:>12}   (exposed {}, {} of it compute slowed while "
                       "hidden)\n",
                       seconds_text(t.dp.comm_seconds), seconds_text(t.dp.exposed_seconds),
                       seconds_text(t.dp.overlap_cost_seconds));
  } else {
    out += fmt::format("    dp traffic       {:>12}   (exposed {})\n",
                       seconds_text(t.dp.comm_seconds), seconds_text(t.dp.exposed_seconds));
  }
  out += expert_time_lines(t, true);
  if (t.straggler_seconds > 0) {
    out += fmt::format("    straggler wait   {:>12}\n", seconds_text(t.straggler_seconds));
  }
  out += fmt::format("    step             {:>12}   {:.0f} sequences, {:.0f} tokens/s, {}\n",
                     seconds_text(t.step_seconds), t.global_sequences, t.tokens_per_second,
                     mfu_text(ctx, t.mfu, t.model_flops_per_second,
                              hardware_flops_per_second(ctx, e)));
  return out;
}

}  // namespace render_detail

namespace {

std::string tied_line(const SearchResult& r) {
  const std::string sentence = tied_sentence(r);
  return sentence.empty() ? sentence : "  " + sentence + "\n";
}

/// Brief text lists this many thresholds, the nearest.
constexpr std::size_t brief_thresholds = 8;

/// The memory ledger in one line, largest first: "69.5 of 79.6 GiB (fits): activations 44.4,
/// optimizer 12.3, ... GiB".
std::string memory_line(const MemoryLedger& l, const std::string& headroom = {}) {
  std::vector<std::pair<double, std::string_view>> lines;
  for (const LedgerLine& line : ledger_lines) {
    if (l.*line.bytes > 0) lines.emplace_back(l.*line.bytes, line.name);
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> parts;
  for (const auto& [bytes, name] : lines) parts.push_back(fmt::format("{} {:.1f}", name, bytes / gib));
  return fmt::format("Memory per GPU: {:.1f} of {:.1f} GiB ({}{}): {} GiB\n", l.total_bytes() / gib,
                     l.capacity_bytes / gib, l.fits() ? "fits" : "does not fit",
                     headroom.empty() ? "" : " " + headroom, fmt::join(parts, ", "));
}

/// The five parts of the explanation and the alternatives, in words (brief: the first
/// alternative, the simplest, without its traffic).
std::string explanation_text(const PlanReport& r, TextDetail detail) {
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
  // Brief: the brief_thresholds nearest the scenario's values (by ratio), in their order.
  std::vector<bool> shown(r.thresholds.size(), true);
  if (detail == TextDetail::brief && r.thresholds.size() > brief_thresholds) {
    std::vector<std::size_t> order(r.thresholds.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto distance = [&](std::size_t i) {
      const Threshold& t = r.thresholds[i];
      return std::abs(std::log(t.value / t.base_value));
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return distance(a) < distance(b); });
    for (std::size_t k = brief_thresholds; k < order.size(); ++k) shown[order[k]] = false;
  }
  for (std::size_t i = 0; i < r.thresholds.size(); ++i) {
    if (shown[i]) out += fmt::format("   - {}\n", threshold_summary(ctx, r.thresholds[i]));
  }
  if (r.thresholds.size() > brief_thresholds && detail == TextDetail::brief) {
    out += fmt::format("   ({} more, farther from the scenario's values: --full)\n",
                       r.thresholds.size() - brief_thresholds);
  }
  if (!r.thresholds_not_searched.empty()) {
    out += fmt::format("   (not searched, the search is too large to rerun that often: {})\n",
                       fmt::join(not_searched_names(r), ", "));
  }
  if (detail == TextDetail::brief) {
    if (!x.alternatives.empty()) {
      const Alternative& a = x.alternatives.front();
      out += fmt::format("\nSimplest answer: {}: {}", alternative_name(ctx, a.kind),
                         alternative_verdict(ctx, best, a));
    }
    return out;
  }
  out += "\nSimpler answers and alternatives\n";
  for (std::size_t i = 0; i < x.alternatives.size(); ++i) {
    const Alternative& a = x.alternatives[i];
    if (const std::string earlier = same_plan_as_earlier(ctx, x.alternatives, i); !earlier.empty()) {
      out += fmt::format("   - {}: the same plan as {}, above\n", alternative_name(ctx, a.kind),
                         earlier);
      continue;
    }
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

std::string report_text(const PlanReport& r, TextDetail detail) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  std::string out;
  out += fmt::format("planner {}: {}\n\n", PLANNER_VERSION, scenario_title(*r.scenario));
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
  if (detail == TextDetail::full) out += tied_line(r.result);
  if (const std::optional<QuotedAccuracy> a = plan_accuracy(ctx, best.plan)) {
    out += "  " + accuracy_sentence(*a) + "\n";
  }
  if (quotes_serving_accuracy(ctx)) out += "  " + serving_accuracy_sentence() + "\n";
  if (r.envelope_empty) out += "  " + envelope_empty_sentence(ctx, best.plan) + "\n";
  if (r.unvalidated) out += "  " + unvalidated_sentence(ctx, best, *r.unvalidated) + "\n";
  if (r.pinned) {
    out += fmt::format("  your pinned plan ({}): {}; {}\n", describe(ctx, r.pinned->plan),
                       pinned_figures(ctx, *r.pinned), pinned_verdict(ctx, *r.pinned, best, r.result.band_limit));
  }
  out += explanation_text(r, detail);
  if (detail == TextDetail::brief) {
    // After the simplest answer, in the same block; with the headroom clause when the ledger
    // fits with less room than its validated error (model/memory_accuracy.hpp).
    out += "\n" + memory_line(best.memory,
                               r.short_of_memory_headroom
                                   ? memory_headroom_clause(ctx, best, r.memory_roomy)
                                   : std::string());
    if (ctx.workload.kind == WorkloadKind::serving) {
      out += "\nTime\n" + describe_time(ctx, best);
      out += serving_capacity_text(ctx, best);
      out += disaggregation_text(ctx, r.result.ranked);
    }
    if (const std::optional<RestartBudget> b = plan_restart_budget(r)) {
      out += fmt::format("Restart budget {}: {}, worst case {} ({} binding)\n",
                         b->budget_seconds ? duration_text(*b->budget_seconds) : "none given",
                         b->met ? "met" : "not met", duration_text(b->recovery_seconds),
                         b->binding);
    }
    out += ctx.workload.kind == WorkloadKind::serving
               ? "(--full: every simpler answer, the memory breakdown, the runners-up and the "
                 "search)\n"
               : "(--full: every simpler answer with its traffic, the memory and time "
                 "breakdowns, the runners-up and the search)\n";
    return out;
  }
  out += "\nMemory per GPU\n" + describe_memory_lines(best.memory);
  if (r.short_of_memory_headroom) {
    out += "  headroom: " + memory_headroom_clause(ctx, best, r.memory_roomy) + "\n";
  }
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
      const std::string rank = rank_label(r.result, i);
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

std::string evaluation_report_text(const Scenario& s, const Context& ctx, const Evaluation& e) {
  std::string out = fmt::format("planner {}: {}\n\n", PLANNER_VERSION, scenario_title(s));
  out += fmt::format("Plan: {}\n", describe(ctx, e.plan));
  if (ctx.calibrated) {
    out += fmt::format("  effective {:.1f} TFLOP/s, from the measured step time\n",
                       ctx.flops_per_second / 1e12);
  }
  out += "\nMemory per GPU\n" + describe_memory_lines(e.memory);
  if (!e.fits()) out += "  " + memory_reason(e.memory) + "\n";
  if (ctx.workload.kind == WorkloadKind::training && e.fits() && !has_memory_headroom(e.memory)) {
    out += "  headroom: " + memory_headroom_note(e.memory) + "\n";
  }
  out += "\nTime\n" + describe_time(ctx, e);
  if (const std::optional<QuotedAccuracy> a = plan_accuracy(ctx, e.plan)) {
    out += "  " + accuracy_sentence(*a) + "\n";
  }
  if (quotes_serving_accuracy(ctx)) out += "  " + serving_accuracy_sentence() + "\n";
  const std::vector<TrafficNote> notes = traffic_notes(ctx, e);
  if (!notes.empty()) {
    out += "\nTraffic\n";
    for (const TrafficNote& n : notes) out += fmt::format("  - {}\n", traffic_summary(ctx, e, n));
  }
  return out;
}

}  // namespace planner

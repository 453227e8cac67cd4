#include "planner/report/markdown_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/explain/restart_budget.hpp"
#include "planner/io/text.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/report/headline.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/report/scaling_report.hpp"
#include "serving_text.hpp"
#include "time_parts.hpp"
#include "render_parts.hpp"

namespace planner {

std::string md_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (std::string_view("\\`*_[]<>|").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

namespace {

std::string title(const PlanReport& r) {
  const Scenario& s = *r.scenario;
  return fmt::format("# planner {}: {}\n\n", PLANNER_VERSION,
                     md_escape(scenario_title(s)));
}

std::string recommendation(const PlanReport& r) {
  const OpeningText t = opening_text(r);
  std::string out;
  // One line per missed target, each its own paragraph.
  for (const std::string& missed : t.missed) out += fmt::format("**{}**\n\n", md_escape(missed));
  out += fmt::format("**Recommendation:** {}  \n{}\n", md_escape(t.plan), md_escape(t.headline));
  if (!t.tied.empty()) out += fmt::format("\n{}.\n", md_escape(t.tied));
  if (!t.accuracy.empty()) out += fmt::format("\n{}.\n", md_escape(t.accuracy));
  if (!t.trust.empty()) out += fmt::format("\n{}.\n", md_escape(t.trust));
  if (!t.pinned_plan.empty()) {
    out += fmt::format("\nYour pinned plan ({}): {}; {}.\n", md_escape(t.pinned_plan),
                       md_escape(t.pinned_figures), md_escape(t.pinned_verdict));
  }
  return out;
}

/// The ledger: one row per non-zero line, then the total against the capacity.
std::string memory_table(const MemoryLedger& l) {
  std::string out = "\n## Memory per GPU\n\n| item | GiB | bytes |\n|---|---:|---:|\n";
  for (const LedgerLine& line : ledger_lines) {
    const double bytes = l.*line.bytes;
    if (bytes == 0) continue;
    const std::string_view note = ledger_line_note(l, line.bytes);
    out += fmt::format("| {}{}{} | {:.1f} | {:.0f} |\n", md_escape(line.name), note.empty() ? "" : " ",
                       md_escape(note), bytes / gib, bytes);
  }
  out += fmt::format("| **total** | **{:.1f}** | **{:.0f}** |\n\n", l.total_bytes() / gib,
                     l.total_bytes());
  out += fmt::format("Capacity {} per GPU: {}.\n", gib_text(l.capacity_bytes),
                     l.fits() ? "fits" : "does not fit");
  return out;
}

std::string share_text(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100 * part / whole) : std::string("-");
}

std::string training_notes(const Context& ctx, const Evaluation& e) {
  const TrainingTime& t = e.training;
  std::string out = fmt::format(
      "\n{} micro-batches per step; {} sequences, {:.0f} tokens/s, {}. Data-parallel "
      "traffic {} per step, {} of it exposed.\n",
      t.micro_batches, count_text(t.global_sequences), t.tokens_per_second,
      mfu_text(ctx, t.mfu, t.model_flops_per_second, hardware_flops_per_second(ctx, e)),
      seconds_text(t.dp.comm_seconds), seconds_text(t.dp.exposed_seconds));
  if (t.tp_seconds > 0) {
    out += fmt::format("Tensor-parallel traffic: {} x {} per micro-batch ({}).\n", t.tp_messages,
                       seconds_text(t.tp_collective.seconds()), to_string(t.tp_collective.algorithm));
  }
  if (t.cp_seconds > 0) {
    out += fmt::format("Context-parallel ring: {} per micro-batch, {} exposed.\n",
                       seconds_text(t.cp_seconds), seconds_text(t.cp_exposed_seconds));
  }
  return out;
}

/// The parts that add up to the step (or the time per token), then what overlaps.
std::string time_table(const Context& ctx, const Evaluation& e) {
  const bool training = ctx.workload.kind == WorkloadKind::training;
  const double total = headline_seconds(ctx, e);
  std::string out = fmt::format("\n## Time{}\n\n", training ? " per step" : " per output token");
  out += training ? "| component | per micro-batch | per step | share |\n|---|---:|---:|---:|\n"
                  : "| component | per token | share |\n|---|---:|---:|\n";
  for (const TimePart& p : time_parts(ctx, e)) {
    const std::string cell = p.per_micro_batch > 0 ? " " + seconds_text(p.per_micro_batch) : "";
    out += training ? fmt::format("| {} |{} | {} | {} |\n", md_escape(p.name), cell,
                                  seconds_text(p.seconds), share_text(p.seconds, total))
                    : fmt::format("| {} | {} | {} |\n", md_escape(p.name), seconds_text(p.seconds),
                                  share_text(p.seconds, total));
  }
  out += training ? fmt::format("| **step** | | **{}** | 100 % |\n", seconds_text(total))
                  : fmt::format("| **per token** | **{}** | 100 % |\n", seconds_text(total));
  return out + (training ? training_notes(ctx, e) : std::string());
}

std::string details(const PlanReport& r) {
  const std::string block = report_details_text(r);
  return block.empty() ? block : "\n```\n" + block + "```\n";
}

std::string why(const PlanReport& r) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  const Evaluation& best = r.result.ranked.front();
  std::string out = "\n## Why\n\n";
  out += fmt::format("**Binding constraint: {}**{}  \n{}\n", to_string(x.binding.kind),
                     x.binding.quadratic_dominates ? " (the quadratic attention term dominates)" : "",
                     md_escape(binding_detail(ctx, x.binding)));
  out += "\n### Axes\n\n";
  for (const AxisNote& a : x.axes) {
    out += fmt::format("- **{} = {}**{}: {}\n", to_string(a.axis), a.degree,
                       a.tier.empty() ? std::string() : fmt::format(" ({})", md_escape(a.tier)),
                       md_escape(axis_why(ctx, x, best, a)));
  }
  if (!x.traffic.empty()) out += "\n### Tiers and bandwidth\n\n";
  for (const TrafficNote& n : x.traffic) out += "- " + md_escape(traffic_summary(ctx, best, n)) + "\n";
  out += "\n### Failure mode accepted\n\n" +
         md_escape(failure_mode_text(ctx, best, x.failure_modes)) + "\n";
  return out;
}

std::string what_would_change(const PlanReport& r) {
  std::string out = "\n## What would change the answer\n\n";
  if (r.thresholds.empty()) out += "Thresholds not computed, or none within range.\n";
  for (const Threshold& t : r.thresholds) {
    out += "- " + md_escape(threshold_summary(r.context, t)) + "\n";
  }
  if (!r.thresholds_not_searched.empty()) {
    out += "\nNot searched (the search is too large to rerun that often):";
    for (const ScanGivenUp& g : r.thresholds_not_searched) {
      out += fmt::format(" {} {};", md_escape(g.parameter), to_string(g.side));
    }
    out.back() = '\n';
  }
  return out;
}

std::string alternatives(const PlanReport& r) {
  const Evaluation& best = r.result.ranked.front();
  std::string out = "\n## Simpler answers and alternatives\n\n";
  const std::vector<Alternative>& all = r.explanation.alternatives;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string earlier = render_detail::same_plan_as_earlier(r.context, all, i);
    out += fmt::format("- **{}**: {}\n", md_escape(alternative_name(r.context, all[i].kind)),
                       earlier.empty() ? md_escape(alternative_verdict(r.context, best, all[i]))
                                       : "the same plan as " + md_escape(earlier) + ", above");
  }
  return out;
}

std::string ranked(const PlanReport& r) {
  std::string out = "\n## Ranked plans\n\n| # | plan | result |\n|---:|---|---|\n";
  for (std::size_t i = 0; i < r.result.ranked.size(); ++i) {
    const Evaluation& e = r.result.ranked[i];
    out += fmt::format("| {} | {} | {} |\n", rank_label(r.result, i),
                       md_escape(describe(r.context, e.plan)),
                       md_escape(headline(r.context, e)));
  }
  out += fmt::format("\nSearch: {} configurations evaluated, {} fit", r.result.evaluated,
                     r.result.feasible);
  for (const auto& [kind, count] : r.result.rejected_by_kind) {
    out += fmt::format("; {} rejected for {}", count, md_escape(kind));
  }
  out += ".\n";
  for (const Rejection& rej : r.result.rejected) {
    out += fmt::format("- closest rejected ({}): {}: {}\n", md_escape(rej.kind),
                       md_escape(describe(r.context, rej.plan)), md_escape(rej.reason));
  }
  return out;
}

std::string no_fit(const PlanReport& r) {
  const Context& ctx = r.context;
  std::string out = fmt::format("**No configuration fits.** Binding constraint: {}: {}\n\n",
                                to_string(r.explanation.binding.kind),
                                md_escape(binding_detail(ctx, r.explanation.binding)));
  for (const Rejection& rej : r.result.rejected) {
    out += fmt::format("- rejected ({}): {}: {}\n", md_escape(rej.kind),
                       md_escape(describe(ctx, rej.plan)), md_escape(rej.reason));
  }
  return out;
}

}  // namespace

std::string report_details_text(const PlanReport& r) {
  const Context& ctx = r.context;
  const Evaluation& best = r.result.ranked.front();
  if (ctx.workload.kind == WorkloadKind::serving) {
    return serving_time_text(ctx, best.serving) + serving_capacity_text(ctx, best) +
           disaggregation_text(ctx, r.result.ranked);
  }
  if (r.scenario->resilience) {
    return restart_budget_text(restart_budget(ctx, best, *r.scenario->resilience),
                               *r.scenario->resilience);
  }
  return {};
}

std::string report_markdown(const PlanReport& r) {
  std::string out = title(r);
  if (!r.result.found()) return out + no_fit(r);
  const Evaluation& best = r.result.ranked.front();
  out += recommendation(r);
  out += memory_table(best.memory);
  if (r.short_of_memory_headroom) {
    out += fmt::format("Headroom: {}.\n",
                       md_escape(memory_headroom_clause(r.context, best, r.memory_roomy)));
  }
  out += time_table(r.context, best);
  out += details(r);
  out += why(r);
  out += what_would_change(r);
  out += alternatives(r);
  out += ranked(r);
  return out;
}

}  // namespace planner

#include "planner/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "html_parts.hpp"
#include "planner/io/text.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/report/headline.hpp"
#include "planner/report/markdown_report.hpp"
#include "planner/search/answer.hpp"
#include "serving_text.hpp"
#include "svg.hpp"
#include "time_parts.hpp"

namespace planner {

namespace {

using svg::escape;

std::string recommendation_section(const PlanReport& r) {
  const OpeningText t = opening_text(r);
  std::string out;
  for (const std::string& missed : t.missed) {
    out += "<p class=\"headline\"><b>" + escape(missed) + "</b></p>\n";
  }
  out += fmt::format(
      "<p class=\"headline\">Recommendation: <span class=\"plan\">{}</span><br>{}</p>\n",
      escape(t.plan), escape(t.headline));
  if (!t.tied.empty()) out += "<p>" + escape(t.tied) + ".</p>\n";
  if (!t.accuracy.empty()) out += "<p>" + escape(t.accuracy) + ".</p>\n";
  if (!t.trust.empty()) out += "<p>" + escape(t.trust) + ".</p>\n";
  if (!t.pinned_plan.empty()) {
    out += fmt::format("<p>Your pinned plan ({}): {}; {}.</p>\n", escape(t.pinned_plan),
                       escape(t.pinned_figures), escape(t.pinned_verdict));
  }
  return out;
}

/// "1F1B", or "interleaved 1F1B, v model chunks per stage" (model/schedule.hpp).
std::string schedule_name(const Plan& p) {
  if (p.virtual_stages <= 1) return "1F1B";
  return fmt::format("interleaved 1F1B, {} model chunks per stage", p.virtual_stages);
}

/// The schedule of the recommendation; with pp = 1, also that of the best plan with pipeline
/// stages, when one fits, so that the page shows what a pipeline would cost.
std::string schedules(const PlanReport& r) {
  const Context& ctx = r.context;
  const Evaluation& best = r.result.ranked.front();
  std::string out = "<h2>Pipeline schedule</h2>\n";
  if (ctx.workload.kind != WorkloadKind::training) {
    return out + "<p class=\"note\">Serving plans have no training schedule.</p>\n";
  }
  const std::string mine = html::schedule_svg(ctx, best, "schedule");
  out += fmt::format("<p>{}: {}, {} per step, {}.</p>\n",
                     best.plan.pp == 1 ? "No pipeline (pp = 1)" : "The recommendation",
                     plural(best.plan.pp, "stage"),
                     fmt::format("{} micro-batch{}", best.plan.grad_accum, best.plan.grad_accum == 1 ? "" : "es"),
                     schedule_name(best.plan));
  out += mine.empty() ? "<p class=\"note\">Too many passes to draw.</p>\n" : mine;
  if (r.pinned && r.pinned->plan.pp > 1 && !same_answer(ctx, r.pinned->plan, best.plan)) {
    const std::string pinned = html::schedule_svg(ctx, *r.pinned, "schedule-pinned");
    out += fmt::format("<p>Your pinned plan ({}): {}.</p>\n", escape(describe(ctx, r.pinned->plan)),
                       schedule_name(r.pinned->plan));
    out += pinned.empty() ? "<p class=\"note\">Too many passes to draw.</p>\n" : pinned;
  }
  if (best.plan.pp > 1) return out;
  for (const Alternative& a : r.explanation.alternatives) {
    if (a.kind != AlternativeKind::with_pipeline || !a.best || a.best->plan.pp <= 1) continue;
    const std::string theirs = html::schedule_svg(ctx, *a.best, "schedule-alternative");
    out += fmt::format("<p>For comparison, {}: {}</p>\n", escape(alternative_name(ctx, a.kind)),
                       escape(alternative_verdict(ctx, best, a)));
    out += theirs.empty() ? "<p class=\"note\">Too many passes to draw.</p>\n" : theirs;
  }
  return out;
}

std::string ranked_table(const PlanReport& r) {
  std::string out = fmt::format(
      "<h2>Ranked plans</h2>\n<table id=\"ranked\">\n<tr><th class=\"num\">#</th><th>plan</th>"
      "<th class=\"num\">{}</th><th>result</th></tr>\n", headline_time_name(r.context));
  for (std::size_t i = 0; i < r.result.ranked.size(); ++i) {
    const Evaluation& e = r.result.ranked[i];
    const double seconds = r.context.workload.kind == WorkloadKind::training
                               ? e.training.step_seconds : e.serving.per_token_seconds;
    out += fmt::format("<tr data-rank=\"{}\"><td class=\"num\">{}</td><td>{}</td>"
                       "<td class=\"num\" data-seconds=\"{}\">{}</td><td>{}</td></tr>\n",
                       i + 1, rank_label(r.result, i), escape(describe(r.context, e.plan)),
                       svg::number_attr(seconds), seconds_text(seconds),
                       escape(headline(r.context, e)));
  }
  out += fmt::format("</table>\n<p class=\"note\">Search: {} configurations evaluated, {} fit",
                     r.result.evaluated, r.result.feasible);
  for (const auto& [kind, count] : r.result.rejected_by_kind) {
    out += fmt::format("; {} rejected for {}", count, escape(kind));
  }
  return out + ".</p>\n";
}

std::string thresholds(const PlanReport& r) {
  std::string out = "<h2>What would change the answer</h2>\n";
  if (r.thresholds.empty()) return out + "<p class=\"note\">Thresholds not computed, or none within range.</p>\n";
  out += html::thresholds_svg(r.thresholds) + "<ul>\n";
  for (const Threshold& t : r.thresholds) {
    out += "<li>" + escape(threshold_summary(r.context, t)) + "</li>\n";
  }
  return out + "</ul>\n";
}

std::string why_section(const PlanReport& r) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  const Evaluation& best = r.result.ranked.front();
  std::string out = fmt::format("<h2>Why</h2>\n<p><b>Binding constraint: {}</b>{}. {}</p>\n<ul>\n",
                                to_string(x.binding.kind),
                                x.binding.quadratic_dominates ? " (the quadratic attention term dominates)" : "",
                                escape(binding_detail(ctx, x.binding)));
  for (const AxisNote& a : x.axes) {
    out += fmt::format("<li><b>{} = {}</b>{}: {}</li>\n", to_string(a.axis), a.degree,
                       a.tier.empty() ? std::string() : " (" + escape(a.tier) + ")",
                       escape(axis_why(ctx, x, best, a)));
  }
  out += "</ul>\n";
  if (!x.traffic.empty()) out += "<h3>Tiers and bandwidth</h3>\n<ul>\n";
  for (const TrafficNote& n : x.traffic) out += "<li>" + escape(traffic_summary(ctx, best, n)) + "</li>\n";
  if (!x.traffic.empty()) out += "</ul>\n";
  out += "<h3>Failure mode accepted</h3>\n<p>" +
         escape(failure_mode_text(ctx, best, x.failure_modes)) + "</p>\n";
  out += "<h3>Simpler answers and alternatives</h3>\n<ul>\n";
  for (const Alternative& a : x.alternatives) {
    out += fmt::format("<li><b>{}</b>: {}</li>\n", escape(alternative_name(ctx, a.kind)),
                       escape(alternative_verdict(ctx, best, a)));
  }
  return out + "</ul>\n";
}

}  // namespace

std::string report_html(const PlanReport& r) {
  const Scenario& s = *r.scenario;
  std::string out =
      html::page_start(fmt::format("planner {}: {}", PLANNER_VERSION, scenario_title(s)));
  if (!r.result.found()) {
    out += fmt::format("<p class=\"headline\">No configuration fits. Binding constraint: {}: {}</p>\n<ul>\n",
                       to_string(r.explanation.binding.kind),
                       escape(binding_detail(r.context, r.explanation.binding)));
    for (const Rejection& rej : r.result.rejected) {
      out += fmt::format("<li>rejected ({}): {}: {}</li>\n", escape(rej.kind),
                         escape(describe(r.context, rej.plan)), escape(rej.reason));
    }
    return out + "</ul>\n" + html::page_end();
  }
  const Evaluation& best = r.result.ranked.front();
  out += recommendation_section(r);
  out += "<h2>Memory per GPU</h2>\n" + html::memory_stack_svg(best.memory);
  if (r.short_of_memory_headroom) {
    out += fmt::format("<p>Headroom: {}.</p>\n",
                       escape(memory_headroom_clause(r.context, best, r.memory_roomy)));
  }
  out += fmt::format("<h2>Time, {}</h2>\n", headline_time_name(r.context));
  out += html::time_bar_svg(r.context, best);
  // The text report's serving breakdown (first token, capacity, deployments) or restart
  // budget, as worded there (issue 30: the pages carry what the text does).
  if (const std::string details = report_details_text(r); !details.empty()) {
    out += fmt::format("<h2>{}</h2>\n<pre>{}</pre>\n",
                       r.context.workload.kind == WorkloadKind::serving
                           ? "Time per token, first token and capacity"
                           : "Restart budget",
                       escape(details));
  }
  out += schedules(r);
  out += ranked_table(r);
  out += thresholds(r);
  out += why_section(r);
  return out + html::page_end();
}

}  // namespace planner

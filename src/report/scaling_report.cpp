#include "planner/report/scaling_report.hpp"

#include <fmt/format.h>

#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/explain/explain.hpp"
#include "planner/io/context.hpp"
#include "planner/report/report.hpp"
#include "planner/search/search.hpp"
#include "planner/io/text.hpp"

namespace planner {

using nlohmann::json;

std::string duration_text(double seconds) {
  if (seconds < 120.0) return seconds_text(seconds);
  if (seconds < 7200.0) return fmt::format("{:.1f} min", seconds / 60.0);
  if (seconds < 172800.0) return fmt::format("{:.1f} h", seconds / 3600.0);
  return fmt::format("{:.1f} d", seconds / 86400.0);
}

std::string lab_text(const LabModel& m, const std::vector<std::int64_t>& workers) {
  std::string out = fmt::format(
      "All-reduce scaling lab: {:g} ms of local compute per step, ring communication and a "
      "logarithmic straggler penalty.\n"
      "t(W) = {:g} ms + {:g} ms·W + {:g} ms·log2 W (a fit to the lab's published table, exact at "
      "its precision); speedup = W·{:g} ms / t(W).\n\n",
      m.compute_seconds * 1e3, m.compute_seconds * 1e3, m.ring_seconds_per_worker * 1e3,
      m.straggler_seconds_per_doubling * 1e3, m.compute_seconds * 1e3);
  out += "workers  step time  speedup  efficiency\n";
  for (const std::int64_t w : workers) {
    const double speedup = lab_speedup(m, w);
    out += fmt::format("{:>7}  {:>6.1f} ms  {:>6.1f}x  {:>8.1f} %\n", w,
                       lab_step_seconds(m, w) * 1e3, speedup,
                       100.0 * speedup / static_cast<double>(w));
  }
  return out;
}

json lab_json(const LabModel& m, const std::vector<std::int64_t>& workers) {
  json rows = json::array();
  for (const std::int64_t w : workers) {
    const double speedup = lab_speedup(m, w);
    rows.push_back(json{{"workers", w},
                        {"step", lab_step_seconds(m, w)},
                        {"speedup", speedup},
                        {"efficiency", speedup / static_cast<double>(w)}});
  }
  return json{{"schema_version", schema_version},
              {"command", "scaling"},
              {"mode", "lab"},
              {"model",
               {{"compute", m.compute_seconds},
                {"ring_per_worker", m.ring_seconds_per_worker},
                {"straggler_per_doubling", m.straggler_seconds_per_doubling}}},
              {"rows", rows}};
}

std::optional<ScalingReport> make_scaling_report(const Scenario& s,
                                                 const std::vector<ScalingMode>& modes,
                                                 std::vector<std::int64_t> dp_sizes) {
  if (s.workload.kind != WorkloadKind::training) {
    throw InputError(s.origin, "/workload/kind",
                     "planner scaling needs a training workload (it scales the data-parallel "
                     "replicas of a training plan); got \"serving\"");
  }
  ScalingReport r;
  r.scenario = &s;
  r.context = make_context(s);
  if (s.plan) {
    r.pinned = true;
    r.base = evaluate(r.context, *s.plan);
  } else {
    SearchOptions options;
    options.keep = 1;
    options.accounting = false;
    const SearchResult found = search(r.context, options);
    if (!found.found()) return std::nullopt;
    r.base = found.ranked.front();
  }
  if (dp_sizes.empty()) dp_sizes = default_dp_sizes(r.base.plan.dp);
  for (const ScalingMode mode : modes) {
    r.tables.push_back(
        scaling_table(r.context, r.base.plan, mode, dp_sizes, s.origin));
  }
  if (s.resilience) r.budget = restart_budget(r.context, r.base, *s.resilience);
  return r;
}

namespace {

std::string table_text(const ScalingReport& r, const ScalingTable& t) {
  const Plan& base = r.base.plan;
  std::string out = t.mode == ScalingMode::weak
                        ? fmt::format("Weak scaling: sequences per step and replica stay {}.\n",
                                      base.micro_batch * base.grad_accum)
                        : fmt::format("Strong scaling: the global batch stays {} sequences.\n",
                                      base.dp * base.micro_batch * base.grad_accum);
  out += "   dp   GPUs  batch      step   compute  communic.  straggler     seq/s    speedup  "
         "efficiency  marginal  fits\n";
  for (const ScalingRow& row : t.rows) {
    out += fmt::format("{:>5}  {:>5}  {:>5}  {:>8}  {:>8}  {:>9}  {:>9}  {:>8.3g}  {:>8.2f}x  "
                       "{:>8.1f} %  {:>8.2f}  {}\n",
                       row.plan.dp, row.gpus, row.global_sequences,
                       seconds_text(row.step_seconds), seconds_text(row.compute_seconds),
                       seconds_text(row.communication_seconds),
                       seconds_text(row.straggler_seconds), row.sequences_per_second,
                       row.speedup, 100.0 * row.efficiency, row.marginal,
                       row.fits ? "yes" : "no");
  }
  if (t.stops_paying) {
    const ScalingRow& at = t.rows[*t.stops_paying];
    const ScalingRow& before = t.rows[*t.stops_paying - 1];
    out += fmt::format(
        "Adding replicas stops paying at dp {}: going from dp {} the added communication and "
        "straggler delay cost more than the split saves (throughput {:.3g} -> {:.3g} seq/s).\n",
        at.plan.dp, before.plan.dp, before.sequences_per_second, at.sequences_per_second);
  } else if (t.rows.size() > 1) {
    const ScalingRow& last = t.rows.back();
    out += fmt::format("Adding replicas still pays at dp {}: each replica added last delivers "
                       "{:.2f} of one replica's throughput.\n",
                       last.plan.dp, last.marginal);
  }
  return out;
}

json table_json(const ScalingTable& t) {
  json rows = json::array();
  for (const ScalingRow& row : t.rows) {
    rows.push_back(json{{"dp", row.plan.dp},
                        {"gpus", row.gpus},
                        {"micro_batch", row.plan.micro_batch},
                        {"grad_accum", row.plan.grad_accum},
                        {"global_sequences", row.global_sequences},
                        {"compute", row.compute_seconds},
                        {"communication", row.communication_seconds},
                        {"straggler", row.straggler_seconds},
                        {"step", row.step_seconds},
                        {"sequences_per_second", row.sequences_per_second},
                        {"speedup", row.speedup},
                        {"efficiency", row.efficiency},
                        {"marginal", row.marginal},
                        {"fits", row.fits}});
  }
  json stops = nullptr;
  if (t.stops_paying) stops = t.rows[*t.stops_paying].plan.dp;
  return json{{"mode", std::string(to_string(t.mode))}, {"rows", rows}, {"stops_paying_dp", stops}};
}

}  // namespace

std::string scaling_text(const ScalingReport& r) {
  const Scenario& s = *r.scenario;
  std::string out = fmt::format("Scaling of {}: {} plan {}.\n", one_line(s.name.empty() ? s.origin : s.name, 200),
                                r.pinned ? "the pinned" : "the recommended",
                                describe(r.context, r.base.plan));
  if (s.stragglers) {
    out += fmt::format(
        "Stragglers: {} per-rank jitter, sigma {} per step; a step waits for the slowest of "
        "its GPUs ({}).\n",
        to_string(s.stragglers->distribution), seconds_text(s.stragglers->jitter_seconds),
        s.stragglers->distribution == JitterDistribution::exponential
            ? "sigma·(H_W − 1)"
            : "sigma·E[max of W standard normals]");
  } else {
    out += "Stragglers: none given (add \"stragglers\" to the scenario for the slowest-rank "
           "delay).\n";
  }
  for (const ScalingTable& t : r.tables) out += "\n" + table_text(r, t);
  if (r.budget) out += "\n" + restart_budget_text(*r.budget, *s.resilience);
  return out;
}

json scaling_json(const ScalingReport& r) {
  const Scenario& s = *r.scenario;
  const Plan& p = r.base.plan;
  json tables = json::array();
  for (const ScalingTable& t : r.tables) tables.push_back(table_json(t));
  json stragglers = nullptr;
  if (s.stragglers) {
    stragglers = json{{"distribution", std::string(to_string(s.stragglers->distribution))},
                      {"jitter", s.stragglers->jitter_seconds}};
  }
  json j{{"schema_version", schema_version},
         {"command", "scaling"},
         {"mode", "scenario"},
         {"scenario", s.name},
         {"plan",
          {{"pinned", r.pinned},
           {"description", describe(r.context, p)},
           {"dp", p.dp},
           {"tp", p.tp},
           {"pp", p.pp},
           {"cp", p.cp},
           {"zero", p.zero},
           {"micro_batch", p.micro_batch},
           {"grad_accum", p.grad_accum}}},
         {"stragglers", stragglers},
         {"tables", tables}};
  if (r.budget) j["resilience"] = restart_budget_json(*r.budget);
  return j;
}

}  // namespace planner

// The fitted FLOP rate of a target scenario and its prediction with the uncertainty band
// (docs/calibrate.md §Prediction).
#include <fmt/format.h>

#include <cmath>

#include "planner/calibrate/scenario_values.hpp"
#include "planner/base/error.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/search/search.hpp"

namespace planner::calibrate {

namespace {

const std::string flops_pointer = "/cluster/gpu/flops";

PlanOutcome best_plan(const Scenario& s, std::string label) {
  PlanOutcome o;
  o.label = std::move(label);
  SearchOptions opts;
  opts.keep = 1;
  opts.accounting = false;
  const SearchResult r = search(make_context(s), opts);
  if (!r.found()) return o;
  const Evaluation& e = r.ranked.front();
  o.found = true;
  o.plan = e.plan;
  o.step_seconds = e.training.step_seconds;
  o.tokens_per_second = e.training.tokens_per_second;
  return o;
}

/// The target's rate for plan `p` from the fitted GEMM curve and runtime factor; 0 when the
/// data pins no rate (the scenario's own gpu.flops then stays).
double target_flops(const Calibration& c, const Scenario& s, const Plan& p) {
  if (c.gemm) {
    return c.runtime_factor.value_or(1.0) * layer_gemm_flops_per_second(*c.gemm, s.model, p);
  }
  if (c.runs.empty()) return 0;
  double sum = 0;
  for (const RunResult& r : c.runs) sum += r.effective_flops_per_second;
  return sum / static_cast<double>(c.runs.size());
}

Values central_values(const Calibration& c) {
  Values v;
  for (const FittedConstant& k : c.constants) v[k.pointer] = k.value;
  return v;
}

/// Every constant at the end that slows training: low bandwidth and rate, high latency.
Values end_values(const Calibration& c, bool pessimistic) {
  Values v;
  for (const FittedConstant& k : c.constants) {
    const bool slow_is_high = k.unit == "s";
    v[k.pointer] = (pessimistic == slow_is_high) ? k.high : k.low;
  }
  return v;
}

}  // namespace

Values tier_values(const Calibration& c) {
  Values v;
  for (const FittedConstant& k : c.constants) {
    if (k.pointer != flops_pointer) v[k.pointer] = k.value;
  }
  return v;
}

Scenario scenario_with(nlohmann::json doc, const std::string& origin, const Values& values) {
  if (doc.contains("workload") && doc["workload"].is_object()) {
    doc["workload"].erase("step_time_per_micro_batch");
  }
  const bool domains = doc.contains("cluster") && doc["cluster"].is_object() &&
                       doc["cluster"].contains("domains");
  if (domains && values.count("/cluster/inter_node/bandwidth")) {
    throw InputError(origin, "/cluster/domains", "calibrate fits the node tier from one-node "
                                                 "runs and the network from multi-node runs, "
                                                 "expected a scenario without domains between "
                                                 "them");
  }
  for (const auto& [pointer, value] : values) doc[nlohmann::json::json_pointer(pointer)] = value;
  Scenario s = load_scenario(doc, origin);
  const Dtype compute = s.model.precision.compute;
  if (compute != Dtype::bf16 && compute != Dtype::fp16) {
    throw InputError(origin, "/model/precision/compute", "calibrate fits the 16-bit GEMM rate "
                                                         "(gpu.flops), expected \"bf16\" or "
                                                         "\"fp16\" compute");
  }
  return s;
}

namespace {

/// gpu.flops from the step logs alone: the mean of the runs' effective rates, the band their
/// range.
void add_runs_flops_constant(Calibration& c) {
  double sum = 0, lo = 1e300, hi = 0;
  std::string sources;
  for (const RunResult& r : c.runs) {
    sum += r.effective_flops_per_second;
    lo = std::min(lo, r.effective_flops_per_second);
    hi = std::max(hi, r.effective_flops_per_second);
    sources += (sources.empty() ? "" : "; ") + r.origin;
  }
  c.constants.push_back({flops_pointer, "FLOP/s", sum / static_cast<double>(c.runs.size()), lo,
                         hi, "range of the runs' effective rates", sources});
}

/// No GPU runs faster than its datasheet peak: a fitted rate above the target's catalogued
/// 16-bit peak means the GEMM table (or, without one, the step logs) came from another GPU or
/// dtype.
void check_below_peak(const Calibration& c, const Inputs& in, const Scenario& target,
                      double flops) {
  const double peak =
      target.cluster.gpu.peak_flops_by_dtype[static_cast<std::size_t>(Dtype::bf16)];
  if (peak > 0 && flops > peak) {
    throw InputError(c.gemm ? in.gemm.front().origin : c.runs.front().origin, "",
                     fmt::format("the fitted {} of {:.4g} FLOP/s for {} is above its GPU's "
                                 "catalogued bf16 peak of {:.4g} FLOP/s, expected at most "
                                 "the peak: was this measured on another GPU or dtype?",
                                 flops_pointer, flops, in.target_origin, peak));
  }
}

}  // namespace

void add_flops_constant(Calibration& c, const Inputs& in) {
  if (in.target) {
    Scenario s = scenario_with(*in.target, in.target_origin, tier_values(c));
    if (s.workload.kind != WorkloadKind::training) {
      throw InputError(in.target_origin, "/workload/kind", "calibrate predicts training "
                                                           "steps, expected \"training\"");
    }
    if (!c.gemm && c.runs.empty()) {
      c.defaults.push_back("/cluster/gpu/flops: no GEMM table or step log; the target's own value");
      return;
    }
    if (!c.gemm) {
      // The runs' mean effective rate, as without a target (below); the GEMM curve's text and
      // band described a fit that was not made (and read an empty optional).
      check_below_peak(c, in, s, target_flops(c, s, Plan{}));
      add_runs_flops_constant(c);
      return;
    }
    const Plan first = s.plan ? *s.plan : Plan{};
    double flops = target_flops(c, s, first);
    // Two passes: the rate depends on the GEMM shapes, which depend on the plan chosen.
    Values v = tier_values(c);
    v[flops_pointer] = flops;
    const PlanOutcome pass = best_plan(scenario_with(*in.target, in.target_origin, v), "");
    if (pass.found) flops = target_flops(c, s, pass.plan);
    check_below_peak(c, in, s, flops);
    const double lo = c.runtime_factor ? *c.runtime_factor_low / *c.runtime_factor : 1.0;
    const double hi = c.runtime_factor ? *c.runtime_factor_high / *c.runtime_factor : 1.0;
    c.constants.push_back(
        {flops_pointer, "FLOP/s", flops, flops * lo, flops * hi,
         c.runtime_factor ? "runtime factor's range over the runs, widened by 2x the GEMM "
                            "curve's rms residual"
                          : "no step logs: runtime factor 1, band not pinned",
         fmt::format("GEMM curve ({}) at the target's layer shapes{}", c.gemm->source,
                     c.runtime_factor ? fmt::format(" x runtime factor {:.3f} from {} run(s)",
                                                    *c.runtime_factor, c.runs.size())
                                      : "")});
    if (!c.runtime_factor) c.defaults.push_back("runtime factor: no step logs, taken as 1");
    return;
  }
  if (c.runs.empty()) {
    c.defaults.push_back("/cluster/gpu/flops: no step log; the scenario's own value");
    return;
  }
  add_runs_flops_constant(c);
}

Prediction predict(const Calibration& c, const Inputs& in) {
  Prediction p;
  p.origin = in.target_origin;
  const auto run = [&](const Values& v, std::string label) {
    return best_plan(scenario_with(*in.target, in.target_origin, v), std::move(label));
  };
  p.central = run(central_values(c), "central");
  p.pessimistic = run(end_values(c, true), "every constant at its slow end");
  p.optimistic = run(end_values(c, false), "every constant at its fast end");
  for (const FittedConstant& k : c.constants) {
    for (const bool low : {true, false}) {
      Values v = central_values(c);
      v[k.pointer] = low ? k.low : k.high;
      p.sensitivity.push_back(run(v, fmt::format("{} {}", k.pointer, low ? "low" : "high")));
    }
  }
  return p;
}

std::string plan_label(const Plan& p) {
  return fmt::format("dp={} tp={} pp={} cp={} zero={} micro_batch={} grad_accum={} "
                     "recompute={}{}{}",
                     p.dp, p.tp, p.pp, p.cp, p.zero, p.micro_batch, p.grad_accum,
                     to_string(p.recompute),
                     p.flash_attention ? " flash" : "", p.sequence_parallel ? " sp" : "");
}

}  // namespace planner::calibrate

// Output of `planner calibrate`: the profile (JSON), the full report (JSON) and the text
// report (docs/calibrate.md §Output).
#include <fmt/format.h>

#include "planner/base/one_line.hpp"
#include "planner/calibrate/calibrate.hpp"
#include "planner/calibrate/scenario_values.hpp"

namespace planner::calibrate {

namespace {

using nlohmann::json;

std::string human(double v, const std::string& unit) {
  if (unit == "B/s") return fmt::format("{:.2f} GB/s", v / 1e9);
  if (unit == "s") return fmt::format("{:.2f} us", v * 1e6);
  if (unit == "FLOP/s") return fmt::format("{:.1f} TFLOP/s", v / 1e12);
  return fmt::format("{:.4g} {}", v, unit);
}

json tier_json(const TierFit& f) {
  return {{"latency_seconds", f.latency_seconds},
          {"latency_standard_error_seconds", f.latency_se_seconds},
          {"bandwidth_bytes_per_second", f.bandwidth_bytes_per_second},
          {"bandwidth_standard_error_bytes_per_second", f.bandwidth_se_bytes_per_second},
          {"rms_relative_residual", f.rms_relative_residual},
          {"max_relative_residual", f.max_relative_residual},
          {"points", f.points},
          {"latency_resolved", !f.latency_clamped},
          {"sources", f.sources}};
}

json outcome_json(const PlanOutcome& o) {
  json j{{"label", o.label}, {"found", o.found}};
  if (o.found) {
    j["plan"] = plan_label(o.plan);
    j["step_seconds"] = o.step_seconds;
    j["tokens_per_second"] = o.tokens_per_second;
  }
  return j;
}

std::string outcome_text(const PlanOutcome& o) {
  if (!o.found) return fmt::format("  {:<44} no plan fits\n", o.label);
  return fmt::format("  {:<44} step {:9.3f} s  {:12.0f} tokens/s  {}\n", o.label,
                     o.step_seconds, o.tokens_per_second, plan_label(o.plan));
}

}  // namespace

void apply_profile(json& scenario, const Calibration& c) {
  for (const FittedConstant& k : c.constants) scenario[json::json_pointer(k.pointer)] = k.value;
}

json profile_json(const Calibration& c) {
  json p = json::object();
  json fitted = json::array();
  json set = json::array();
  for (const FittedConstant& k : c.constants) {
    p[json::json_pointer(k.pointer)] = k.value;
    fitted.push_back({{"pointer", k.pointer}, {"unit", k.unit}, {"value", k.value},
                      {"low", k.low}, {"high", k.high}, {"band", k.band}, {"source", k.source}});
    set.push_back(fmt::format("{}={:.6g}", k.pointer, k.value));
  }
  p["fitted"] = fitted;
  p["not_pinned"] = c.defaults;
  p["set"] = set;
  if (c.gemm) {
    p["gemm_curve"] = {{"saturated_flops_per_second", c.gemm->saturated_flops_per_second},
                       {"half_saturation_flop", c.gemm->half_saturation_flop},
                       {"sms", c.gemm->sms},
                       {"tile", {gemm_tile, gemm_tile}},
                       {"rms_relative_residual", c.gemm->rms_relative_residual},
                       {"source", c.gemm->source}};
  }
  if (c.runtime_factor) {
    p["runtime_factor"] = {{"value", *c.runtime_factor}, {"low", *c.runtime_factor_low},
                           {"high", *c.runtime_factor_high}};
  }
  return p;
}

json calibration_json(const Calibration& c) {
  json j{{"profile", profile_json(c)}, {"skipped", c.skipped}};
  if (c.intra) j["intra_node"] = tier_json(*c.intra);
  if (c.inter) j["inter_node"] = tier_json(*c.inter);
  if (c.gemm) {
    j["gemm"] = {{"saturated_standard_error", c.gemm->saturated_se},
                 {"half_saturation_standard_error", c.gemm->half_saturation_se},
                 {"max_relative_residual", c.gemm->max_relative_residual},
                 {"points", c.gemm->points}};
  }
  json runs = json::array();
  for (const RunResult& r : c.runs) {
    runs.push_back({{"log", r.origin}, {"scenario", r.scenario_origin},
                    {"format", to_string(r.format)}, {"steps_used", r.steps_used},
                    {"measured_seconds", r.measured_seconds},
                    {"predicted_seconds", r.predicted_seconds},
                    {"effective_flops_per_second", r.effective_flops_per_second},
                    {"gemm_flops_per_second", r.gemm_flops_per_second}});
  }
  j["runs"] = runs;
  if (c.prediction) {
    const Prediction& p = *c.prediction;
    json sens = json::array();
    for (const PlanOutcome& o : p.sensitivity) sens.push_back(outcome_json(o));
    j["prediction"] = {{"scenario", p.origin}, {"central", outcome_json(p.central)},
                       {"pessimistic", outcome_json(p.pessimistic)},
                       {"optimistic", outcome_json(p.optimistic)}, {"sensitivity", sens}};
  }
  return j;
}

std::string calibration_text(const Calibration& c) {
  std::string out = "Fitted constants (band: see docs/calibrate.md)\n";
  for (const FittedConstant& k : c.constants) {
    out += fmt::format("  {:<30} {:>16}  [{} .. {}]\n    from {}\n", k.pointer,
                       human(k.value, k.unit), human(k.low, k.unit), human(k.high, k.unit),
                       one_line(k.source));
  }
  for (const auto* t : {&c.intra, &c.inter}) {
    if (*t) {
      out += fmt::format("  {} fit: {} points, residual rms {:.1f} %, max {:.1f} %\n",
                         to_string((*t)->tier), (*t)->points, 100 * (*t)->rms_relative_residual,
                         100 * (*t)->max_relative_residual);
    }
  }
  if (c.gemm) {
    out += fmt::format("  GEMM curve: R_inf {:.1f} TFLOP/s, F_half {:.3g} FLOP, {} SMs; {} "
                       "points, residual rms {:.1f} %, max {:.1f} %\n",
                       c.gemm->saturated_flops_per_second / 1e12, c.gemm->half_saturation_flop,
                       c.gemm->sms, c.gemm->points, 100 * c.gemm->rms_relative_residual,
                       100 * c.gemm->max_relative_residual);
  }
  if (c.runtime_factor) {
    out += fmt::format("  runtime factor (step-log rate / GEMM-curve rate): {:.3f} [{:.3f} .. "
                       "{:.3f}]\n", *c.runtime_factor, *c.runtime_factor_low,
                       *c.runtime_factor_high);
  }
  if (!c.defaults.empty()) out += "Not pinned by the data\n";
  for (const std::string& d : c.defaults) out += "  " + d + "\n";
  if (!c.runs.empty()) out += "Runs: measured vs predicted step\n";
  for (const RunResult& r : c.runs) {
    out += fmt::format("  {} ({}, {} steps): measured {:.4f} s, predicted {:.4f} s ({:+.1f} %)\n",
                       one_line(r.origin), to_string(r.format), r.steps_used, r.measured_seconds,
                       r.predicted_seconds,
                       100 * (r.predicted_seconds / r.measured_seconds - 1.0));
  }
  for (const std::string& s : c.skipped) out += "Skipped: " + one_line(s) + "\n";
  if (c.prediction) {
    const Prediction& p = *c.prediction;
    out += fmt::format("Prediction for {}\n", one_line(p.origin));
    out += outcome_text(p.central) + outcome_text(p.pessimistic) + outcome_text(p.optimistic);
    out += "  one constant at a time:\n";
    for (const PlanOutcome& o : p.sensitivity) out += outcome_text(o);
  }
  return out;
}

}  // namespace planner::calibrate

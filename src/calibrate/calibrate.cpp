// The calibration: tier fits, the GEMM curve, the step-log runs and the fitted constants
// (docs/calibrate.md §Fits). The prediction for a target scenario is in prediction.cpp.
#include "planner/calibrate/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "planner/calibrate/scenario_values.hpp"
#include "planner/base/error.hpp"
#include "planner/model/evaluate.hpp"

namespace planner::calibrate {

namespace {

/// Estimate ± 2 standard errors (about 95 % under normal residuals); a lower end at or below
/// zero is cut to a tenth of the estimate, since none of these constants can be ≤ 0 for a
/// bandwidth or a rate.
void add_tier_constants(const TierFit& f, Calibration& c) {
  std::vector<FittedConstant>& out = c.constants;
  const std::string tier(to_string(f.tier));
  std::string sources;
  for (const std::string& s : f.sources) sources += (sources.empty() ? "" : "; ") + s;
  // Band ends past what the loader reads are cut to its range (a profile must load), and the
  // band and the list of what the data do not pin say so.
  constexpr std::string_view estimate = "fit estimate +/- 2 standard errors";
  constexpr std::string_view cut = "; cut to the loader's range: the fit does not pin it";
  const auto note_cut = [&](const std::string& pointer) {
    c.defaults.push_back(fmt::format("{}: the fit's band reaches past the loader's range and is "
                                     "cut to it; the data do not pin it",
                                     pointer));
  };
  const double bw = f.bandwidth_bytes_per_second, bw_se = f.bandwidth_se_bytes_per_second;
  const double bw_low = std::max(bw - 2 * bw_se, 0.1 * bw), bw_high = bw + 2 * bw_se;
  const bool bw_cut = !(bw_low >= min_link_bytes_per_second) ||
                      !(bw_high <= max_link_band_bytes_per_second);
  out.push_back({"/cluster/" + tier + "/bandwidth", "B/s", bw,
                 bw_low >= min_link_bytes_per_second ? bw_low : min_link_bytes_per_second,
                 bw_high <= max_link_band_bytes_per_second ? bw_high
                                                           : max_link_band_bytes_per_second,
                 fmt::format("{}{}", estimate, bw_cut ? cut : ""), sources});
  if (bw_cut) note_cut(out.back().pointer);
  const double a = f.latency_seconds, a_se = f.latency_se_seconds;
  const double a_high = a + 2 * a_se;
  const bool a_cut = !(a_high <= max_link_latency_seconds);
  out.push_back({"/cluster/" + tier + "/latency", "s", a, std::max(a - 2 * a_se, 0.0),
                 a_cut ? max_link_latency_seconds : a_high,
                 f.latency_clamped ? "negative intercept: latency not resolved, reported as 0"
                                   : fmt::format("{}{}", estimate, a_cut ? cut : ""),
                 sources});
  if (a_cut) note_cut(out.back().pointer);
}

std::string skipped_summary(const std::string& origin, const std::vector<SkippedLine>& s) {
  std::map<std::string, std::vector<std::size_t>> by_reason;
  for (const SkippedLine& l : s) by_reason[l.reason].push_back(l.line);
  std::string out = fmt::format("{}: {} line(s) skipped", origin, s.size());
  for (const auto& [reason, lines] : by_reason) {
    std::string at;
    for (std::size_t i = 0; i < std::min<std::size_t>(lines.size(), 5); ++i) {
      at += (i ? "," : "") + std::to_string(lines[i]);
    }
    if (lines.size() > 5) at += ",...";
    out += fmt::format("; {} x {} (line {})", lines.size(), reason, at);
  }
  return out;
}

/// Median of the step times after the warm-up steps; torchtitan's tokens/s per GPU becomes a
/// step time through the run's own batch: tokens per step / (tps · GPUs).
double measured_step_seconds(const RunInput& run, const Scenario& s, std::size_t warmup,
                             RunResult& r) {
  const std::vector<StepRow>& rows = run.log.rows;
  if (rows.size() <= warmup) {
    throw InputError(fmt::format("{}:{}", run.log.origin, rows.back().line), "",
                     fmt::format("{} step(s) logged, expected more than the {} warm-up step(s) "
                                 "dropped (--warmup-steps)", rows.size(), warmup));
  }
  const Plan& p = *s.plan;
  const double tokens = static_cast<double>(p.dp * p.grad_accum * p.micro_batch) *
                        static_cast<double>(s.model.seq_len);
  const double gpus = static_cast<double>(world_size(s.cluster));
  std::vector<double> times;
  for (std::size_t i = warmup; i < rows.size(); ++i) {
    const StepRow& row = rows[i];
    times.push_back(row.seconds > 0 ? row.seconds
                                    : tokens / (row.tokens_per_second_per_gpu * gpus));
  }
  std::sort(times.begin(), times.end());
  r.steps_used = times.size();
  r.steps_skipped = run.log.skipped.size() + warmup;
  const std::size_t n = times.size();
  return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/// The FLOP rate at which the planner's step time equals `measured` (bisection on log rate:
/// the step time falls monotonically as the rate grows).
double solve_flops(const Scenario& s, double measured, const std::string& log_origin) {
  const auto step = [&](double flops) {
    return training_time(s.model, s.cluster, *s.plan, flops).step_seconds;
  };
  double lo = 1e9, hi = 1e21;
  if (step(hi) >= measured) {
    throw InputError(log_origin, "", fmt::format("the measured step of {:.4g} s is shorter than "
                                                 "the {:.4g} s the plan's communication alone "
                                                 "takes on the calibrated network, expected a "
                                                 "longer step (check the run's scenario)",
                                                 measured, step(hi)));
  }
  if (step(lo) <= measured) {
    throw InputError(log_origin, "", fmt::format("the measured step of {:.4g} s implies less "
                                                 "than 1 GFLOP/s, expected a faster step (check "
                                                 "the log's unit and its scenario)", measured));
  }
  for (int i = 0; i < 200 && hi / lo > 1.0 + 1e-12; ++i) {
    const double mid = std::sqrt(lo * hi);
    (step(mid) > measured ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

RunResult fit_run(const RunInput& run, const Calibration& c, std::size_t warmup) {
  RunResult r;
  r.origin = run.log.origin;
  r.scenario_origin = run.scenario_origin;
  r.format = run.log.format;
  const Scenario s = scenario_with(run.scenario, run.scenario_origin, tier_values(c));
  if (!s.plan || s.workload.kind != WorkloadKind::training) {
    throw InputError(run.scenario_origin, "/plan", "a run's scenario needs a training workload "
                                                   "and its pinned plan, expected the plan the "
                                                   "log was measured with under \"plan\"");
  }
  r.measured_seconds = measured_step_seconds(run, s, warmup, r);
  r.effective_flops_per_second = solve_flops(s, r.measured_seconds, run.log.origin);
  if (c.gemm) r.gemm_flops_per_second = layer_gemm_flops_per_second(*c.gemm, s.model, *s.plan);
  return r;
}

/// True when the two names reach one file (./s.json and s.json, a symbolic link), else when
/// they are spelt alike (a name that does not resolve).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(a, ea);
  const auto cb = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : ca == cb;
}

/// Two runs of one scenario measure one job: their effective rates agree within noise. Runs 20×
/// apart were averaged silently (issue 32); past 2× one log is mislabelled or in other units.
void check_runs_agree(const Calibration& c) {
  constexpr double max_ratio = 2.0;
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    for (std::size_t j = i + 1; j < c.runs.size(); ++j) {
      const RunResult& a = c.runs[i];
      const RunResult& b = c.runs[j];
      if (!same_file(a.scenario_origin, b.scenario_origin)) continue;
      const double ratio = std::max(a.effective_flops_per_second, b.effective_flops_per_second) /
                           std::min(a.effective_flops_per_second, b.effective_flops_per_second);
      if (!(ratio <= max_ratio)) {
        throw InputError(b.origin, "",
                         fmt::format("this run of {} implies an effective rate {:.3g} times that "
                                     "of {}, a run of the same scenario; expected them within "
                                     "{}x (is one log from another job, or in other units?)",
                                     b.scenario_origin, b.effective_flops_per_second /
                                                            a.effective_flops_per_second,
                                     a.origin, max_ratio));
      }
    }
  }
}

/// ρ = effective rate / GEMM-curve rate per run; the band is the runs' spread widened by
/// twice the GEMM curve's rms relative residual. A step runs its GEMMs and more, so ρ ≤ 1;
/// up to 1.05 is accepted for timing noise and the curve's fit.
void fit_runtime_factor(Calibration& c) {
  if (c.runs.empty() || !c.gemm) return;
  constexpr double max_factor = 1.05;
  double sum = 0, lo = 1e300, hi = 0;
  for (const RunResult& r : c.runs) {
    const double rho = r.effective_flops_per_second / r.gemm_flops_per_second;
    if (!(rho <= max_factor)) {
      throw InputError(r.origin, "",
                       fmt::format("this run implies {:.3g} times the rate the GEMM curve ({}) "
                                   "gives for its layers, expected at most {} (a training step "
                                   "runs its GEMMs and more, so it cannot beat them; 5 % is "
                                   "allowed for noise): is the GEMM table from a slower GPU or "
                                   "dtype, or the log from another plan?",
                                   rho, c.gemm->source, max_factor));
    }
    sum += rho;
    lo = std::min(lo, rho);
    hi = std::max(hi, rho);
  }
  const double mean = sum / static_cast<double>(c.runs.size());
  const double widen = 2.0 * c.gemm->rms_relative_residual;
  c.runtime_factor = mean;
  c.runtime_factor_low = lo * (1.0 - widen);
  c.runtime_factor_high = hi * (1.0 + widen);
}

void predict_runs(Calibration& c, const Inputs& in) {
  double mean_flops = 0;
  for (const RunResult& r : c.runs) mean_flops += r.effective_flops_per_second;
  mean_flops /= static_cast<double>(c.runs.size());
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    RunResult& r = c.runs[i];
    const Scenario s = scenario_with(in.runs[i].scenario, r.scenario_origin, tier_values(c));
    const double flops = c.runtime_factor ? *c.runtime_factor * r.gemm_flops_per_second
                                          : mean_flops;
    r.predicted_seconds = training_time(s.model, s.cluster, *s.plan, flops).step_seconds;
  }
}

}  // namespace

Calibration calibrate(const Inputs& in) {
  Calibration c;
  std::vector<const NcclTable*> intra, inter;
  for (const NcclTable& t : in.nccl) {
    (tier_of(t) == TierName::intra_node ? intra : inter).push_back(&t);
    if (!t.skipped.empty()) c.skipped.push_back(skipped_summary(t.origin, t.skipped));
  }
  if (!intra.empty()) add_tier_constants(*(c.intra = fit_tier(intra)), c);
  else c.defaults.push_back("/cluster/intra_node/bandwidth and latency: no one-node nccl-tests output");
  if (!inter.empty()) add_tier_constants(*(c.inter = fit_tier(inter)), c);
  else c.defaults.push_back("/cluster/inter_node/bandwidth and latency: no multi-node nccl-tests output");
  for (const GemmTable& g : in.gemm) {
    if (!g.skipped.empty()) c.skipped.push_back(skipped_summary(g.origin, g.skipped));
  }
  if (!in.gemm.empty()) c.gemm = fit_gemm(in.gemm.front());
  for (const RunInput& run : in.runs) {
    if (!run.log.skipped.empty()) c.skipped.push_back(skipped_summary(run.log.origin, run.log.skipped));
    c.runs.push_back(fit_run(run, c, in.warmup_steps));
  }
  check_runs_agree(c);
  fit_runtime_factor(c);
  if (!c.runs.empty()) predict_runs(c, in);
  add_flops_constant(c, in);
  if (in.target) c.prediction = predict(c, in);
  return c;
}

}  // namespace planner::calibrate

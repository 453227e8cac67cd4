// The collective and GEMM fits (include/planner/calibrate/{collective,gemm}_fit.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "planner/calibrate/collective_fit.hpp"
#include "planner/calibrate/gemm_fit.hpp"
#include "planner/base/error.hpp"

namespace planner::calibrate {

TierFit fit_tier(const std::vector<const NcclTable*>& tables) {
  TierFit f;
  f.tier = tier_of(*tables.front());
  std::vector<Observation> obs;
  for (const NcclTable* t : tables) {
    for (const NcclRow& r : t->rows) {
      obs.push_back({ring_hops(t->op, t->ranks), bus_factor(t->op, t->ranks) * r.size_bytes,
                     r.time_seconds});
    }
    f.sources.push_back(fmt::format("{} ({}, {} ranks, {} node{}, {} sizes)", t->origin,
                                    to_string(t->op), t->ranks, t->nodes,
                                    t->nodes == 1 ? "" : "s", t->rows.size()));
  }
  TwoParameterFit lsq = fit_weighted(obs, collective_weight_power);
  const std::string where = fmt::format("{}:{}", tables.front()->origin,
                                        tables.front()->rows.front().line);
  if (!lsq.solvable || !(lsq.theta2 > 0)) {
    throw InputError(where, "", fmt::format("the {} time does not grow with the size, expected "
                                            "larger messages to take longer (check the sizes "
                                            "and the time unit)", to_string(f.tier)));
  }
  if (lsq.theta1 < 0) {
    // A negative intercept is noise around a latency too small to resolve: refit the
    // bandwidth alone through the origin and report α = 0, flagged.
    double num = 0, den = 0;
    for (const Observation& o : obs) {
      const double w = std::pow(o.y, -collective_weight_power);
      num += w * o.v * o.y;
      den += w * o.v * o.v;
    }
    lsq.theta1 = 0;
    lsq.theta2 = num / den;
    f.latency_clamped = true;
  }
  f.latency_seconds = lsq.theta1;
  f.latency_se_seconds = lsq.theta1_se;
  f.bandwidth_bytes_per_second = 1.0 / lsq.theta2;
  // se of 1/θ₂ by the delta method: se(θ₂)/θ₂².
  f.bandwidth_se_bytes_per_second = lsq.theta2_se / (lsq.theta2 * lsq.theta2);
  // Physical bounds on what was fitted (issue 32: 3e20 B/s was accepted). The fastest link of
  // a GPU today is NVLink 5 at 0.9 TB/s per direction; 100 TB/s is a hundred times that, so a
  // fit above it is a unit error (bytes read as kilobytes, microseconds as seconds), not a
  // link. A latency above one second is a stalled run, not a collective's fixed cost.
  constexpr double max_link_bytes_per_second = 1e14;
  constexpr double max_latency_seconds = 1.0;
  if (!(f.bandwidth_bytes_per_second <= max_link_bytes_per_second) ||
      !(f.latency_seconds <= max_latency_seconds)) {
    throw InputError(where, "",
                     fmt::format("the {} fit gives {:.3g} B/s and {:.3g} s of latency, beyond "
                                 "any link (at most 1e14 B/s and 1 s), expected sizes in bytes "
                                 "and times in microseconds",
                                 to_string(f.tier), f.bandwidth_bytes_per_second,
                                 f.latency_seconds));
  }
  // Below 1 B/s (the loader's lowest bandwidth, docs/errors.md §Limits) the profile would be
  // written and then refused against the target; refuse it here, at the nccl-tests file.
  if (!(f.bandwidth_bytes_per_second >= min_link_bytes_per_second)) {
    throw InputError(where, "",
                     fmt::format("the {} fit gives {:.3g} B/s, below any link (at least 1 B/s), "
                                 "expected sizes in bytes and times in microseconds",
                                 to_string(f.tier), f.bandwidth_bytes_per_second));
  }
  f.points = obs.size();
  double ss = 0, worst = 0;
  for (const Observation& o : obs) {
    const double r = (o.y - (f.latency_seconds * o.u + o.v / f.bandwidth_bytes_per_second)) / o.y;
    ss += r * r;
    worst = std::max(worst, std::abs(r));
  }
  f.rms_relative_residual = std::sqrt(ss / static_cast<double>(obs.size()));
  f.max_relative_residual = worst;
  return f;
}

GemmFit fit_gemm(const GemmTable& t) {
  GemmFit g;
  g.sms = t.sms;
  const std::string dtype = t.rows.front().dtype;
  std::vector<Observation> obs;
  std::set<double> sizes;
  for (const GemmRow& r : t.rows) {
    if (r.dtype != dtype) continue;
    const double w = wave_efficiency(r.m, r.n, t.sms);
    obs.push_back({1.0 / w, r.flop() / w, r.seconds});
    sizes.insert(r.flop());
  }
  const std::string where = fmt::format("{}:{}", t.origin, t.rows.front().line);
  if (sizes.size() < 2) {
    throw InputError(where, "", fmt::format("{} distinct GEMM size(s) of dtype {}, expected at "
                                            "least 2 to fit the efficiency curve",
                                            sizes.size(), dtype));
  }
  const TwoParameterFit lsq = fit_weighted(obs, gemm_weight_power);
  if (!lsq.solvable || !(lsq.theta2 > 0) || lsq.theta1 < 0) {
    throw InputError(where, "", "the GEMM rate does not rise and level off with size, expected "
                                "larger GEMMs to take longer but run at a higher rate (check "
                                "the seconds/tflops column)");
  }
  g.saturated_flops_per_second = 1.0 / lsq.theta2;
  // The rows' own bound (gemm_csv.cpp: 10 PFLOP/s, above any GPU's dense peak) holds for the
  // curve's asymptote too: times that barely grow with size put R∞ at 1e20 FLOP/s while each
  // row passed.
  if (!(g.saturated_flops_per_second <= max_gemm_flops_per_second)) {
    throw InputError(where, "", fmt::format("the fitted saturated rate R_inf is {:.4g} TFLOP/s, "
                                            "expected at most 10000 TFLOP/s, as for each row: "
                                            "the times barely grow with the GEMM size; check "
                                            "the seconds/tflops column",
                                            g.saturated_flops_per_second / 1e12));
  }
  g.saturated_se = lsq.theta2_se / (lsq.theta2 * lsq.theta2);
  g.half_saturation_flop = lsq.theta1 / lsq.theta2;
  // F½ = θ₁/θ₂: first-order error, ignoring the covariance (reported as an indication).
  g.half_saturation_se = g.half_saturation_flop *
                         std::hypot(lsq.theta1 > 0 ? lsq.theta1_se / lsq.theta1 : 0.0,
                                    lsq.theta2_se / lsq.theta2);
  g.rms_relative_residual = lsq.rms_relative_residual;
  g.max_relative_residual = lsq.max_relative_residual;
  g.points = lsq.points;
  g.source = fmt::format("{} ({} {} GEMMs{})", t.origin, obs.size(), dtype,
                         t.device.empty() ? "" : ", " + t.device);
  return g;
}

double layer_gemm_flops_per_second(const GemmFit& g, const Model& m, const Plan& p) {
  const double tokens = static_cast<double>(p.micro_batch) * static_cast<double>(m.seq_len) /
                        static_cast<double>(p.cp);
  const double tp = static_cast<double>(p.tp);
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double qkv = h + 2.0 * kv_hidden(m);
  const double shapes[4][2] = {{qkv / tp, h},                              // QKV
                               {h, h / tp},                                // attention output
                               {(m.gated_mlp ? 2.0 : 1.0) * f / tp, h},    // MLP up (and gate)
                               {h, f / tp}};                               // MLP down
  double flop = 0, seconds = 0;
  for (const auto& s : shapes) {
    const double n = std::max(1.0, std::round(s[0])), k = std::max(1.0, std::round(s[1]));
    const double fl = 2.0 * tokens * n * k;
    flop += fl;
    seconds += fl / g.flops_per_second(tokens, n, k);
  }
  return flop / seconds;
}

}  // namespace planner::calibrate

#include "planner/calibrate/measured_scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/calibrate/inputs.hpp"
#include "planner/explain/scaling_table.hpp"
#include "planner/io/text.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/validate.hpp"

namespace planner::calibrate {

using nlohmann::json;

namespace {

MeasuredRun read_run(std::int64_t gpus, const std::string& path, std::size_t warmup) {
  const StepLog log = parse_step_log(read_text_file(path), path);
  if (log.rows.size() <= warmup) {
    throw InputError("--measured", "",
                     fmt::format("{}: {} step(s) logged, expected more than the {} warm-up "
                                 "step(s) dropped (--warmup-steps)",
                                 path, log.rows.size(), warmup));
  }
  std::vector<double> seconds, rates;
  for (std::size_t i = warmup; i < log.rows.size(); ++i) {
    if (log.rows[i].seconds > 0) seconds.push_back(log.rows[i].seconds);
    if (log.rows[i].tokens_per_second_per_gpu > 0) {
      rates.push_back(log.rows[i].tokens_per_second_per_gpu);
    }
  }
  MeasuredRun run;
  run.gpus = gpus;
  run.origin = path;
  run.steps = log.rows.size() - warmup;
  if (!rates.empty()) run.tokens_per_second_per_gpu = median(rates);
  if (!seconds.empty()) run.step_seconds = median(seconds);
  return run;
}

}  // namespace

std::vector<MeasuredRun> read_measured_runs(const std::string& spec, std::size_t warmup_steps) {
  std::vector<MeasuredRun> runs;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string item = spec.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    std::int64_t gpus = 0;
    const char* end = item.data() + (eq == std::string::npos ? 0 : eq);
    const auto [at, ec] = std::from_chars(item.data(), end, gpus);
    if (eq == std::string::npos || ec != std::errc() || at != end || gpus < 1 ||
        gpus > (std::int64_t{1} << 24) || eq + 1 == item.size()) {
      throw InputError("--measured", "",
                       fmt::format("expected GPUS=LOG items separated by commas, such as "
                                   "1=run1.log,2=run2.log; got \"{}\"",
                                   item));
    }
    for (const MeasuredRun& r : runs) {
      if (r.gpus == gpus) {
        throw InputError("--measured", "", fmt::format("{} GPUs given twice; give one log each", gpus));
      }
    }
    runs.push_back(read_run(gpus, item.substr(eq + 1), warmup_steps));
    start = comma + 1;
  }
  std::sort(runs.begin(), runs.end(),
            [](const MeasuredRun& a, const MeasuredRun& b) { return a.gpus < b.gpus; });
  return runs;
}

MeasuredScaling measured_scaling(const ScalingReport& r, ScalingMode mode,
                                 const std::vector<MeasuredRun>& runs) {
  MeasuredScaling m;
  m.mode = mode;
  const Plan& base = r.base.plan;
  const std::int64_t model_parallel = base.tp * base.pp * base.cp;
  // Rates where every log gives them (torchtitan's tokens/s per GPU), else step times.
  m.from_rate = std::all_of(runs.begin(), runs.end(), [](const MeasuredRun& x) {
    return x.tokens_per_second_per_gpu > 0;
  });
  std::vector<std::int64_t> dps;
  for (const MeasuredRun& run : runs) {
    if (run.gpus % model_parallel != 0) {
      throw InputError("--measured", "",
                       fmt::format("{} GPUs is not a whole number of the plan's model replicas "
                                   "(tp·pp·cp = {}); measure at multiples of {}",
                                   run.gpus, model_parallel, model_parallel));
    }
    if (!m.from_rate && !(run.step_seconds > 0)) {
      throw InputError("--measured", "",
                       fmt::format("{}: the logs mix tokens/s and step times; give every run "
                                   "in one framework's log",
                                   run.origin));
    }
    dps.push_back(run.gpus / model_parallel);
  }
  const ScalingTable table =
      scaling_table(r.context, base, mode, dps, r.scenario ? r.scenario->origin : "");
  // Per-GPU throughput, measured: the logged rate, else the inverse step time, per GPU under
  // weak scaling (each GPU's batch fixed), per GPU of the whole under strong (the global batch
  // fixed, so a step carries the same tokens at every size).
  const auto per_gpu = [&](const MeasuredRun& x) {
    if (m.from_rate) return x.tokens_per_second_per_gpu;
    const double step_rate = 1.0 / x.step_seconds;
    return mode == ScalingMode::weak ? step_rate : step_rate / static_cast<double>(x.gpus);
  };
  const std::optional<QuotedAccuracy> quoted = plan_accuracy(r.context, base);
  const Regime regime = regime_of(r.context.model, r.context.cluster, base);
  const ModelAccuracy& row = quoted ? quoted->row : nearest_accuracy(regime);
  m.band = row.max_abs_error;
  m.regime = row.regime == regime
                 ? regime_text(regime)
                 : fmt::format("{}, the validated regime nearest this plan's {}",
                               regime_text(row.regime), regime_text(regime));
  const double first = per_gpu(runs.front());
  const ScalingRow& first_row = table.rows.front();
  const double first_predicted =
      first_row.sequences_per_second / static_cast<double>(first_row.gpus);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    MeasuredPoint p;
    p.run = runs[i];
    p.dp = dps[i];
    p.efficiency = per_gpu(runs[i]) / first;
    const ScalingRow& t = table.rows[i];
    p.predicted = t.sequences_per_second / static_cast<double>(t.gpus) / first_predicted;
    p.outside = std::abs(p.efficiency / p.predicted - 1.0) > m.band;
    m.points.push_back(p);
  }
  return m;
}

std::string measured_scaling_text(const MeasuredScaling& m) {
  std::string out = fmt::format(
      "Measured scaling ({}: {}), efficiency = throughput per GPU over the {}-GPU run's:\n",
      to_string(m.mode),
      m.from_rate ? "tokens/s per GPU as logged, the median after the warm-up steps"
      : m.mode == ScalingMode::weak
          ? "each GPU's batch fixed, so throughput per GPU goes as 1 / step time (the median "
            "after the warm-up steps)"
          : "the global batch fixed, so throughput per GPU goes as 1 / (GPUs x step time)",
      m.points.front().run.gpus);
  out += fmt::format("  {:>6} {:>5} {:>6} {:>14} {:>11} {:>10}  log\n", "GPUs", "dp", "steps",
                     m.from_rate ? "tok/s/GPU" : "step", "efficiency", "predicted");
  bool any_outside = false;
  for (const MeasuredPoint& p : m.points) {
    const std::string value = m.from_rate
                                  ? fmt::format("{:.0f}", p.run.tokens_per_second_per_gpu)
                                  : seconds_text(p.run.step_seconds);
    out += fmt::format("  {:>6} {:>5} {:>6} {:>14} {:>9.1f} % {:>8.1f} %  {}{}\n", p.run.gpus,
                       p.dp, p.run.steps, value, 100.0 * p.efficiency, 100.0 * p.predicted,
                       one_line(p.run.origin), p.outside ? "  <- outside the validated error" : "");
    any_outside = any_outside || p.outside;
  }
  out += fmt::format(
      "Validated error of the time model on this regime ({}): {:.1f} % at worst; ",
      m.regime, 100.0 * m.band);
  out += any_outside
             ? "a run marked lies farther from the prediction than that: look for what the model "
               "does not see (a straggler rank, the data loader, a slower network than the "
               "scenario states, contention); log each rank's data, compute and collective "
               "times to find it.\n"
             : "every run lies within it.\n";
  return out;
}

json measured_scaling_json(const MeasuredScaling& m) {
  json points = json::array();
  for (const MeasuredPoint& p : m.points) {
    json x{{"gpus", p.run.gpus},
           {"dp", p.dp},
           {"log", p.run.origin},
           {"steps", p.run.steps},
           {"efficiency", p.efficiency},
           {"predicted_efficiency", p.predicted},
           {"outside_validated_error", p.outside}};
    if (m.from_rate) {
      x["tokens_per_second_per_gpu"] = p.run.tokens_per_second_per_gpu;
    } else {
      x["step_seconds"] = p.run.step_seconds;
    }
    points.push_back(std::move(x));
  }
  return json{{"mode", to_string(m.mode)},
              {"from", m.from_rate ? "tokens_per_second_per_gpu" : "step_seconds"},
              {"validated_error", m.band},
              {"regime", m.regime},
              {"runs", points}};
}

}  // namespace planner::calibrate

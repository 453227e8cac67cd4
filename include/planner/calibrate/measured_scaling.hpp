#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/report/scaling_report.hpp"

/// `planner scaling SCENARIO --measured GPUS=LOG,...` (issue 31; docs/output.md §planner
/// scaling): the scaling efficiency of short runs at a few GPU counts, read from their step
/// logs, beside the model's prediction for the same counts, each flagged when it lies farther
/// from the prediction than the model's worst validated error on the plan's regime.

namespace planner::calibrate {

/// One run's log, reduced to its per-GPU throughput.
struct MeasuredRun {
  std::int64_t gpus = 0;
  std::string origin;           ///< the log's path as given
  std::size_t steps = 0;        ///< steps used (after the warm-up steps)
  /// Median tokens/s per GPU where the log gives it (torchtitan), else 0.
  double tokens_per_second_per_gpu = 0;
  double step_seconds = 0;      ///< median seconds per step where the log gives it, else 0
};

/// A measured run beside the prediction.
struct MeasuredPoint {
  MeasuredRun run;
  std::int64_t dp = 0;          ///< gpus / (tp·pp·cp) of the scaled plan
  double efficiency = 0;        ///< measured, over the smallest run
  double predicted = 0;         ///< the model's, over the same smallest run
  bool outside = false;         ///< |efficiency / predicted − 1| > band
};

struct MeasuredScaling {
  ScalingMode mode = ScalingMode::weak;
  bool from_rate = false;       ///< efficiencies from tokens/s per GPU, not step times
  double band = 0;              ///< the model's worst validated error on the regime (fraction)
  std::string regime;           ///< that regime in words
  std::vector<MeasuredPoint> points;  ///< by GPU count, the smallest first
};

/// Reads `spec` ("1=a.log,2=b.log"), each log with calibrate's parsers (Megatron-LM,
/// torchtitan or CSV), dropping `warmup_steps` steps. Throws InputError ("--measured") on a
/// malformed list, an unreadable log or one with no step left.
[[nodiscard]] std::vector<MeasuredRun> read_measured_runs(const std::string& spec,
                                                          std::size_t warmup_steps);

/// The runs beside the model: the report's plan at dp = gpus / (tp·pp·cp) for each run, in
/// `mode`. Throws InputError when a GPU count is not a multiple of the plan's model-parallel
/// size, or the logs mix rates and step times.
[[nodiscard]] MeasuredScaling measured_scaling(const ScalingReport& r, ScalingMode mode,
                                               const std::vector<MeasuredRun>& runs);

[[nodiscard]] std::string measured_scaling_text(const MeasuredScaling& m);
[[nodiscard]] nlohmann::json measured_scaling_json(const MeasuredScaling& m);

}  // namespace planner::calibrate

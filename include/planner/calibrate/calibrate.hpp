#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "planner/calibrate/collective_fit.hpp"
#include "planner/calibrate/gemm_fit.hpp"
#include "planner/calibrate/inputs.hpp"
#include "planner/inputs/plan.hpp"

/// `planner calibrate`: fits the hardware constants of the scenario format from measurements,
/// writes them as a profile, and predicts a target scenario with an uncertainty band
/// (docs/calibrate.md). Pure: inputs are parsed tables and scenario documents.

namespace planner::calibrate {

/// A short training run: its scenario (with the pinned plan it ran) and its step log.
struct RunInput {
  nlohmann::json scenario;
  std::string scenario_origin;
  StepLog log;
};

struct Inputs {
  std::vector<NcclTable> nccl;
  std::vector<GemmTable> gemm;
  std::vector<RunInput> runs;
  std::optional<nlohmann::json> target;  ///< the full-scale scenario to predict
  std::string target_origin;
  std::size_t warmup_steps = 1;  ///< logged steps dropped at the start of each run
};

/// One fitted constant of the profile: the scenario field it sets, the estimate and the band.
struct FittedConstant {
  std::string pointer;  ///< e.g. /cluster/intra_node/bandwidth
  std::string unit;     ///< base unit: B/s, s, FLOP/s
  double value = 0, low = 0, high = 0;
  std::string band;     ///< how low/high were derived
  std::string source;   ///< the measurements it came from
};

struct RunResult {
  std::string origin;  ///< the step log
  std::string scenario_origin;
  StepLogFormat format = StepLogFormat::csv;
  std::size_t steps_used = 0, steps_skipped = 0;
  double measured_seconds = 0;        ///< median step time after the warm-up steps
  double effective_flops_per_second = 0;  ///< the rate at which the model meets the measurement
  double gemm_flops_per_second = 0;   ///< the GEMM curve's rate for this run's layer (0: none)
  double predicted_seconds = 0;       ///< with the fitted constants
};

/// The best plan of a scenario under one set of constants.
struct PlanOutcome {
  std::string label;  ///< which end of which constant
  bool found = false;
  Plan plan;
  double step_seconds = 0, tokens_per_second = 0;
};

struct Prediction {
  std::string origin;
  PlanOutcome central;
  PlanOutcome pessimistic, optimistic;  ///< every constant at its worse / better end
  std::vector<PlanOutcome> sensitivity; ///< one constant at a time, low then high
};

struct Calibration {
  std::optional<TierFit> intra, inter;
  std::optional<GemmFit> gemm;
  std::vector<RunResult> runs;
  std::optional<double> runtime_factor, runtime_factor_low, runtime_factor_high;
  std::vector<FittedConstant> constants;  ///< what the data pinned down
  std::vector<std::string> defaults;      ///< what stayed at the scenario's own values
  std::vector<std::string> skipped;       ///< "file: N lines skipped (reasons)"
  std::optional<Prediction> prediction;
};

[[nodiscard]] Calibration calibrate(const Inputs& in);

/// The profile: the scenario keys the fit sets, in the scenario format, with the provenance
/// of each number; `"set"` lists the same values as `--set POINTER=VALUE` arguments.
[[nodiscard]] nlohmann::json profile_json(const Calibration& c);
[[nodiscard]] nlohmann::json calibration_json(const Calibration& c);
[[nodiscard]] std::string calibration_text(const Calibration& c);

/// Writes the profile's values into a scenario document (as `--set` would).
void apply_profile(nlohmann::json& scenario, const Calibration& c);

[[nodiscard]] std::string plan_label(const Plan& p);

}  // namespace planner::calibrate

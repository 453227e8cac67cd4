#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/inputs/scenario.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/report/validate_serving.hpp"

/// `planner validate`: published runs, each a scenario with its pinned published plan plus
/// what was measured and where it was published, evaluated with the current model. Record
/// format and figures: docs/validation.md.

namespace planner {

/// What a source measured. Each figure is optional; a record has at least one of the first two.
struct Measured {
  std::optional<double> tokens_per_second_per_gpu;
  std::optional<double> step_seconds;
  std::optional<double> memory_peak_bytes;          ///< per GPU, as the framework reported it
  std::optional<double> memory_model_states_bytes;  ///< weights + gradients + optimizer
};

/// One published run.
struct ValidationRecord {
  std::string id;
  std::string origin;  ///< file name, for messages
  std::string set;     ///< "calibration" or "validation"
  /// The model and recipe at every scale (docs/validation.md §Families); the id when none is
  /// given. A validation record whose family has a calibration member is reported apart.
  std::string family;
  /// For an FP8 run: the id of the same run in bf16, the pair that fits the FP8 ratio.
  std::string bf16_sibling;
  /// Why the run does not fit its catalog GPU's bf16 efficiency (another variant of the chip,
  /// or one not stated); empty: it does, when in the calibration set.
  std::string efficiency_excluded;
  /// The source publishes the run as the slower alternative it compares its own recipe
  /// against (record key "published_as": "baseline"; SC21's ZeRO-3 rows against PTD-P,
  /// Korthikanti et al.'s full-recompute rows): still validated, but not a plan its authors
  /// recommend, so `validate --search` reports the picks against recipes apart.
  bool baseline = false;
  /// The record states what its software could launch (record key "constraints", read by
  /// `validate --search` alone; docs/validation.md §Search).
  bool constrained = false;
  std::string citation;
  std::string location;
  Scenario scenario;   ///< with its pinned plan
  Measured measured;
  /// Published features the model does not represent, as "key=value" (e.g. "vpp=5"):
  /// reported per record, never silently dropped.
  std::vector<std::string> not_modelled;
};

/// Reads one record: the scenario keys (name, description, model, cluster, workload, plan;
/// plan required) plus id, set, source, measured, not_modelled and free-form notes. Errors are
/// InputError with the file, the JSON pointer and the expected form.
[[nodiscard]] ValidationRecord load_validation_record(const nlohmann::json& doc,
                                                      const std::string& origin);

/// The record files a path names: the path itself, or every *.json under a directory (its
/// subdirectories too, so validation/ takes validation/serving/), sorted.
[[nodiscard]] std::vector<std::string> validation_files(const std::string& path);

/// One predicted-versus-measured figure; `error` = (predicted − measured) / measured.
struct Comparison {
  double predicted = 0;
  std::optional<double> measured;
  [[nodiscard]] std::optional<double> error() const noexcept {
    if (!measured || !(*measured > 0)) return std::nullopt;
    return (predicted - *measured) / *measured;
  }
};

struct RecordResult {
  const ValidationRecord* record = nullptr;
  Evaluation evaluation;
  bool fits = false;
  Comparison tokens_per_second_per_gpu;
  Comparison step_seconds;
  Comparison memory_peak_bytes;
  Comparison memory_model_states_bytes;
  double flops_per_second = 0;  ///< the effective rate the time model used
};

/// Evaluates a record's pinned plan with the current model (as `planner memory` does).
[[nodiscard]] RecordResult validate_record(const ValidationRecord& r);

/// Median and maximum |error| of one figure over one set of records.
struct ErrorSummary {
  std::size_t records = 0;   ///< records in the set
  std::size_t compared = 0;  ///< records with that figure measured
  std::size_t infeasible = 0;
  double median_abs_error = 0;
  double max_abs_error = 0;
  std::string worst;  ///< id of the record with the largest |error|
};

/// Which figure a summary is about.
enum class Figure { throughput, memory_peak };

/// Summary of |error| over the results whose record is in `set`: of throughput per GPU
/// (tokens/s, or step time when a record gives only that), or of peak memory where measured.
/// The median of an even count is the mean of the two middle values.
[[nodiscard]] ErrorSummary summarize(const std::vector<RecordResult>& results,
                                     const std::string& set,
                                     Figure figure = Figure::throughput);

/// The validation records split by family (shared/calibration/README.md: "report validation
/// twice"): "with_calibrated_sibling" — the family has a calibration record (its single-node
/// member), so only the scale-out is tested — and "without_calibrated_sibling", which tests
/// everything. Only groups with records are returned.
[[nodiscard]] std::vector<std::pair<std::string, ErrorSummary>> summarize_by_family(
    const std::vector<RecordResult>& results);

/// The throughput error of a result: tokens/s per GPU when measured, else step time
/// (inverted sign: a step predicted too long is throughput predicted too low).
[[nodiscard]] std::optional<double> throughput_error(const RecordResult& r) noexcept;

/// `planner validate DIR|FILE...` options: bounds in percent; `fit` prints, per record, the
/// fraction of the catalog bf16 peak at which the model matches the measurement, and the
/// medians over the calibration set (how data/gpus.json's default efficiencies are fitted).
struct ValidateOptions {
  std::vector<std::string> paths;
  std::string format = "text";
  std::optional<double> max_median_error_percent;
  std::optional<double> max_error_percent;
  bool fit = false;
  /// Unpin each validation record's plan and report the planner's own pick against it
  /// (report/search_regret.hpp).
  bool search = false;
};

/// The summaries of each set present (calibration, validation), of throughput and of peak
/// memory where measured, and the bounds they exceed.
struct ValidationReport {
  std::vector<std::pair<std::string, ErrorSummary>> summaries;
  std::vector<std::pair<std::string, ErrorSummary>> memory_summaries;
  std::vector<std::pair<std::string, ErrorSummary>> family_summaries;  ///< summarize_by_family
  std::vector<std::string> breaches;  ///< "validation: max |error| 94.0% (...) exceeds 15%"
  bool within = true;
  std::vector<ServingResult> serving;  ///< the serving records (report/validate_serving.hpp)
};

/// The report in each format (validate_render.cpp; docs/output.md §validate).
void print_validation_json(const std::vector<RecordResult>& results,
                           const ValidationReport& report, const ValidateOptions& o,
                           std::ostream& out);
void print_validation_csv(const std::vector<RecordResult>& results, std::ostream& out);
void print_validation_text(const std::vector<RecordResult>& results,
                           const ValidationReport& report, std::ostream& out);

/// Runs the command and prints its report; returns false when a bound is exceeded (the CLI
/// exits 1). Bad input throws InputError.
[[nodiscard]] bool run_validate(const ValidateOptions& o, std::ostream& out);

/// Median of the values (mean of the two middle ones for an even count); 0 when empty.
[[nodiscard]] double median(std::vector<double> values);

}  // namespace planner

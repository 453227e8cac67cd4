#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

/// `planner validate` on published serving measurements (validation/serving/*.json; format in
/// validation/serving/README.md): each record's scenario with its pinned engine, evaluated as
/// `planner memory` does, against the one figure it publishes, reported per metric (time to
/// first token, time per output token, output throughput; issue 30).

namespace planner {

/// A serving record: its scenario's workload kind is "serving".
[[nodiscard]] bool is_serving_record(const nlohmann::json& doc) noexcept;

struct ServingResult {
  std::string id;
  std::string origin;  ///< file name, for messages
  std::string metric;  ///< "ttft", "per_token" or "throughput" (serving_metric_names)
  std::string source;  ///< the document and the row quoted
  double measured = 0;
  std::optional<double> predicted;  ///< none when the model's figure is unbounded (overload)
  double target = 0;                ///< the record's |error| target
  /// The record's "set" is "calibration": a single-node run a constant is fitted to
  /// (data/gpus.json serving_efficiency), reported apart from the validation records.
  bool calibration = false;
  [[nodiscard]] std::optional<double> error() const noexcept {
    if (!predicted) return std::nullopt;
    return *predicted / measured - 1;
  }
};

/// Evaluates one record; bad input (a missing key, an unknown pointer, a scenario that does
/// not load) throws InputError naming the file and the JSON pointer.
[[nodiscard]] ServingResult validate_serving_record(const nlohmann::json& doc,
                                                    const std::string& origin);

/// For `validate --fit`: the fraction of the record's catalog GPU's bf16 peak at which the
/// serving model reproduces its published figure (bisection: every serving figure moves one
/// way with the rate), or nullopt when no fraction in (0.05, 1] does or the GPU is not from
/// the catalog. The fit of data/gpus.json serving_efficiency (docs/validation.md).
[[nodiscard]] std::optional<double> fitted_serving_efficiency(const nlohmann::json& doc,
                                                              const std::string& origin);

/// Median and maximum |error| of one metric (or of all, metric "all").
struct ServingSummary {
  std::string metric;
  std::size_t records = 0;
  std::size_t unbounded = 0;  ///< records whose figure the model cannot bound (overloaded)
  double median_abs_error = 0;
  double max_abs_error = 0;
  std::string worst;
};

/// One summary per metric present, in serving_metric_names order, then "all", over the
/// validation records (`calibration`: over the calibration records instead).
[[nodiscard]] std::vector<ServingSummary> summarize_serving(
    const std::vector<ServingResult>& results, bool calibration = false);

/// The serving part of each report format (empty when there are no serving records).
void print_serving_text(const std::vector<ServingResult>& results, std::ostream& out);
[[nodiscard]] nlohmann::json serving_validation_json(const std::vector<ServingResult>& results);

}  // namespace planner

#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "planner/model/evaluate.hpp"

/// How far the serving model has been from published serving measurements, per metric: what
/// `planner plan` and `planner memory` quote beside a serving prediction, as report/
/// accuracy.hpp does for training. The figures are `planner validate validation/`'s over
/// validation/serving/'s validation records (the calibration ones, which data/gpus.json
/// serving_efficiency is fitted to, left out); docs/validation.md §Serving validation
/// reports them, and tests/report/test_serving_validation.cpp recomputes every row from the
/// records, so the table cannot drift from them.

namespace planner {

struct ServingAccuracy {
  std::string_view metric;      ///< as validate_serving.hpp names it: ttft, per_token, throughput
  std::string_view words;       ///< as the sentence says it
  int records = 0;
  double median_abs_error = 0;  ///< a fraction
  double max_abs_error = 0;
  double median_error = 0;      ///< signed: > 0 means the model predicts a larger figure
};

/// `planner validate validation/serving` at the commit that last changed the serving model or
/// its records (the eighteenth session: the NIM GenAI-Perf sweep's 1,068 and TensorRT-LLM
/// 0.9.0's 1,653 static-batch records joined, then the GEMMs' row share, gemm_rows.hpp).
inline constexpr std::array<ServingAccuracy, 3> serving_accuracy{{
    {"per_token", "time per output token", 931, 0.1527, 1.1892, -0.1371},
    {"ttft", "first token", 999, 0.1913, 9.6242, -0.0223},
    {"throughput", "throughput", 1090, 0.1307, 1.4115, 0.1097},
}};

/// Whether a serving prediction on `ctx` carries the quote: the catalog's fitted GEMM rate and
/// reads, nothing typed or calibrated (a typed rate is the user's number, whose error the
/// records do not measure).
[[nodiscard]] bool quotes_serving_accuracy(const Context& ctx) noexcept;

/// "Error of this serving model on 3020 published measurements (planner validate
/// validation/): time per output token 15.3 % median (931 records), 118.9 % at worst; ..."
[[nodiscard]] std::string serving_accuracy_sentence();

/// The table as JSON: {metric: {records, median_abs_error, max_abs_error, median_error}}.
[[nodiscard]] nlohmann::json serving_accuracy_json();

}  // namespace planner

#include "planner/report/serving_accuracy.hpp"

#include <fmt/format.h>

namespace planner {

bool quotes_serving_accuracy(const Context& ctx) noexcept {
  return ctx.workload.kind == WorkloadKind::serving && !ctx.calibrated &&
         ctx.cluster.gpu.fitted_rate && ctx.workload.serving.catalog_reads;
}

std::string serving_accuracy_sentence() {
  int records = 0;
  std::string parts;
  for (const ServingAccuracy& a : serving_accuracy) {
    records += a.records;
    parts += fmt::format("{}{} {:.1f} % median ({} records), {:.1f} % at worst",
                         parts.empty() ? "" : "; ", a.words, 100 * a.median_abs_error, a.records,
                         100 * a.max_abs_error);
  }
  return fmt::format("Error of this serving model on {} published measurements: {} (planner "
                     "validate validation/)",
                     records, parts);
}

nlohmann::json serving_accuracy_json() {
  nlohmann::json j = nlohmann::json::object();
  for (const ServingAccuracy& a : serving_accuracy) {
    j[std::string(a.metric)] = {{"records", a.records},
                                {"median_abs_error", a.median_abs_error},
                                {"max_abs_error", a.max_abs_error},
                                {"median_error", a.median_error}};
  }
  return j;
}

}  // namespace planner

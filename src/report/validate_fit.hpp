#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/io/catalog.hpp"
#include "planner/report/validate.hpp"

namespace planner {

/// The catalog GPU a record's scenario names, if any.
[[nodiscard]] const CatalogGpu* record_gpu(const nlohmann::json& doc);

/// `validate --fit`: per record, the fraction of its GPU's bf16 peak at which the model matches
/// it, the medians over calibration records (data/gpus.json default_efficiency), and each FP8
/// recipe's ratio from calibration FP8/BF16 pairs (data/gpus.json fp8_efficiency_ratio).
void print_fit(const std::vector<ValidationRecord>& records,
               const std::vector<const CatalogGpu*>& gpus, std::ostream& out);

/// A serving record's document and file, for --fit.
struct ServingRecordFile {
  nlohmann::json doc;
  std::string origin;
};

/// `validate --fit` on the calibration serving records: per record, the fraction of the bf16
/// peak at which the serving model reproduces it, and the median per catalog GPU
/// (data/gpus.json serving_efficiency).
void print_serving_fit(const std::vector<ServingRecordFile>& records, std::ostream& out);

}  // namespace planner

#include "planner/report/accuracy.hpp"

#include <fmt/format.h>

namespace planner {

std::string accuracy_sentence(const ModelAccuracy& a) {
  // A bias worth naming: the typical record errs one way (the signed median is most of the
  // absolute one), as FP8's all do (docs/validation.md §FP8 records).
  std::string bias;
  if (a.median_error > 0.5 * a.median_abs_error) bias = ", mostly predicting faster than measured";
  if (a.median_error < -0.5 * a.median_abs_error) bias = ", mostly predicting slower than measured";
  return fmt::format("Error of this time model on {} {}: {:.1f} % median, {:.1f} % at worst{} "
                     "(planner validate validation/)",
                     a.records, a.runs, 100 * a.median_abs_error, 100 * a.max_abs_error, bias);
}

}  // namespace planner

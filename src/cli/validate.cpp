#include <memory>
#include <optional>
#include <ostream>

#include "command.hpp"
#include "planner/cli/cli.hpp"
#include "planner/report/validate.hpp"

namespace planner::cli {

namespace {

struct ValidateArgs {
  ValidateOptions options;
  std::optional<double> max_median_error, max_error;
};

}  // namespace

Runner add_validate(CLI::App& sub) {
  auto a = std::make_shared<ValidateArgs>();
  sub.add_option("records", a->options.paths, "Record files or directories (validation/)")
      ->required();
  add_format(sub, a->options.format, {"text", "json", "csv"});
  sub.add_option("--max-median-error", a->max_median_error,
                 "Exit 1 when a set's median |error| exceeds this many percent");
  sub.add_option("--max-error", a->max_error,
                 "Exit 1 when a set's largest |error| exceeds this many percent");
  sub.add_flag("--fit", a->options.fit,
               "Print the fraction of the bf16 peak that matches each record, and the medians "
               "over the calibration set");
  sub.add_flag("--search", a->options.search,
               "Unpin each validation record's plan: the planner's own pick against the "
               "published plan, as the speed-up the model predicts");
  return [a](std::ostream& out, std::ostream&) {
    a->options.max_median_error_percent = a->max_median_error;
    a->options.max_error_percent = a->max_error;
    return run_validate(a->options, out) ? exit_ok : exit_no;
  };
}

}  // namespace planner::cli

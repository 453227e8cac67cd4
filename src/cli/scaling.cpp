// `planner scaling` (docs/output.md §planner scaling): the all-reduce lab's table, or the
// scaling tables and restart budget of a training scenario.
#include <fmt/format.h>

#include <charconv>
#include <memory>
#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/calibrate/measured_scaling.hpp"
#include "planner/cli/cli.hpp"
#include "planner/report/report.hpp"
#include "planner/report/scaling_report.hpp"

namespace planner::cli {

namespace {

struct ScalingArgs {
  std::string file;
  bool lab = false;
  std::string dp;  ///< comma-separated sizes; empty: the defaults
  std::string mode = "both";
  std::string format = "text";
  std::vector<std::string> sets;
  std::string measured;          ///< GPUS=LOG,...: runs to set beside the prediction
  std::size_t warmup_steps = 1;  ///< logged steps dropped at the start of each
};

/// "1,2,4,8": positive, strictly increasing integers no greater than 2^24.
std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size() || value < 1 ||
        value > (std::int64_t{1} << 24)) {
      throw InputError("--dp", "",
                       fmt::format("expected positive integers no greater than 16777216 "
                                   "separated by commas, such as 1,2,4,8; got \"{}\"",
                                   item));
    }
    if (!sizes.empty() && value <= sizes.back()) {
      throw InputError("--dp", "", fmt::format("sizes must increase: {} follows {}", value,
                                               sizes.back()));
    }
    sizes.push_back(value);
    start = comma + 1;
  }
  return sizes;
}

std::vector<ScalingMode> modes_of(const std::string& mode) {
  if (mode == "weak") return {ScalingMode::weak};
  if (mode == "strong") return {ScalingMode::strong};
  return {ScalingMode::weak, ScalingMode::strong};
}

int run_scaling(const ScalingArgs& a, std::ostream& out, std::ostream& err) {
  std::vector<std::int64_t> sizes = a.dp.empty() ? std::vector<std::int64_t>{} : parse_sizes(a.dp);
  if (a.lab) {
    if (!a.file.empty()) {
      throw InputError("command line", "", "give either --lab or a scenario file, not both");
    }
    if (sizes.empty()) sizes = {1, 2, 4, 8, 16};
    const LabModel lab;
    out << (a.format == "json" ? dump_json(lab_json(lab, sizes)) : lab_text(lab, sizes));
    return exit_ok;
  }
  if (a.file.empty()) {
    throw InputError("command line", "", "planner scaling needs a scenario file, or --lab");
  }
  const Scenario s = load_with_overrides(a.file, a.sets, err);
  const std::optional<ScalingReport> r = make_scaling_report(s, modes_of(a.mode), sizes);
  if (!r) {
    out << "No configuration fits, so there is no plan to scale; pin one under \"plan\".\n";
    return exit_no;
  }
  if (a.measured.empty()) {
    out << (a.format == "json" ? dump_json(scaling_json(*r)) : scaling_text(*r));
    return r->budget && !r->budget->met ? exit_no : exit_ok;
  }
  // Measured runs: weak scaling unless --mode strong says the global batch was held.
  const ScalingMode mode = a.mode == "strong" ? ScalingMode::strong : ScalingMode::weak;
  const calibrate::MeasuredScaling m = calibrate::measured_scaling(
      *r, mode, calibrate::read_measured_runs(a.measured, a.warmup_steps));
  if (a.format == "json") {
    nlohmann::json j = scaling_json(*r);
    j["measured"] = calibrate::measured_scaling_json(m);
    out << dump_json(j);
  } else {
    out << scaling_text(*r) << "\n" << calibrate::measured_scaling_text(m);
  }
  return r->budget && !r->budget->met ? exit_no : exit_ok;
}

}  // namespace

Runner add_scaling(CLI::App& sub) {
  auto a = std::make_shared<ScalingArgs>();
  sub.add_option("scenario", a->file, "Training scenario JSON file ('-' for standard input)");
  sub.add_flag("--lab", a->lab, "The all-reduce scaling lab's table instead of a scenario");
  sub.add_option("--dp", a->dp, "Data-parallel sizes (workers, with --lab), e.g. 1,2,4,8");
  sub.add_option("--mode", a->mode, "weak, strong or both")
      ->check(CLI::IsMember({"weak", "strong", "both"}))
      ->default_val(a->mode);
  sub.add_option("--measured", a->measured,
                 "Short runs' step logs by GPU count, e.g. 1=run1.log,2=run2.log,4=run4.log "
                 "(Megatron-LM, torchtitan or CSV step,seconds): their scaling efficiency beside "
                 "the prediction");
  sub.add_option("--warmup-steps", a->warmup_steps,
                 "With --measured: logged steps dropped at the start of each run")
      ->check(CLI::Range(0, 1000000))
      ->default_val(a->warmup_steps);
  add_format(sub, a->format, {"text", "json"});
  add_sets(sub, a->sets);
  return [a](std::ostream& out, std::ostream& err) { return run_scaling(*a, out, err); };
}

}  // namespace planner::cli

#include "cli_scaling.hpp"

#include <fmt/format.h>

#include <charconv>
#include <ostream>

#include "planner/cli.hpp"
#include "planner/error.hpp"
#include "planner/report.hpp"
#include "planner/scaling_report.hpp"
#include "planner/scenario_json.hpp"

namespace planner {

namespace {

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

}  // namespace

CLI::App* add_scaling_command(CLI::App& app, ScalingArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "scaling", "Delivered speedup as data-parallel replicas are added; restart budget");
  cmd->add_option("scenario", a.file, "Training scenario JSON file ('-' for standard input)");
  cmd->add_flag("--lab", a.lab, "The all-reduce scaling lab's table instead of a scenario");
  cmd->add_option("--dp", a.dp, "Data-parallel sizes (workers, with --lab), e.g. 1,2,4,8");
  cmd->add_option("--mode", a.mode, "weak, strong or both")
      ->check(CLI::IsMember({"weak", "strong", "both"}))
      ->default_val(a.mode);
  cmd->add_option("--format", a.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val(a.format);
  cmd->add_option("--set", a.sets, "Override a scenario value: JSON-POINTER=VALUE (repeatable)");
  return cmd;
}

int run_scaling(const ScalingArgs& a, std::ostream& out) {
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
  nlohmann::json doc = read_json_file(a.file);
  for (const std::string& s : a.sets) apply_override(doc, s);
  const Scenario s = load_scenario(doc, file_origin(a.file));
  const std::optional<ScalingReport> r = make_scaling_report(s, modes_of(a.mode), sizes);
  if (!r) {
    out << "No configuration fits, so there is no plan to scale; pin one under \"plan\".\n";
    return exit_no;
  }
  out << (a.format == "json" ? dump_json(scaling_json(*r)) : scaling_text(*r));
  return r->budget && !r->budget->met ? exit_no : exit_ok;
}

}  // namespace planner

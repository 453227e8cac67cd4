#include <ostream>

#include "command.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/scenario_json.hpp"

namespace planner::cli {

using nlohmann::json;

void warn_implausible(const Scenario& s, std::ostream& err) {
  for (const std::string& w : plausibility_warnings(s)) err << "planner: warning: " << w << "\n";
}

Scenario load_with_overrides(const std::string& path, const std::vector<std::string>& sets,
                             std::ostream& err) {
  json doc = read_json_file(path);
  for (const std::string& s : sets) apply_override(doc, s);
  Scenario s = load_scenario(doc, file_origin(path));
  warn_implausible(s, err);
  return s;
}

Scenario load_for_search(const std::string& path, const std::vector<std::string>& sets,
                         std::ostream& err) {
  json doc = read_json_file(path);
  for (const std::string& s : sets) apply_override(doc, s);
  std::string warning;
  Scenario s = load_scenario_for_search(doc, file_origin(path), warning);
  if (!warning.empty()) err << "planner: warning: " << warning << "\n";
  warn_implausible(s, err);
  return s;
}

void add_format(CLI::App& app, std::string& format, std::vector<std::string> allowed) {
  app.add_option("--format", format, "Output format")
      ->check(CLI::IsMember(std::move(allowed)))
      ->default_val(format);
}

void add_sets(CLI::App& app, std::vector<std::string>& sets) {
  app.add_option("--set", sets,
                 "Override a scenario value: JSON-POINTER=VALUE, e.g. "
                 "/cluster/inter_node/bandwidth=25GB/s (repeatable)");
}

void add_scenario_argument(CLI::App& app, std::string& file) {
  app.add_option("scenario", file, "Scenario JSON file ('-' for standard input)")->required();
}

}  // namespace planner::cli

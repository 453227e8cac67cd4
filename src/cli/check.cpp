#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/cli/cli.hpp"
#include "planner/model/placement.hpp"
#include "planner/report/report.hpp"

namespace planner::cli {

namespace {

using nlohmann::json;

/// Value at a JSON pointer, or null when the pointer does not resolve.
std::optional<double> number_at(const json& doc, const std::string& pointer) {
  try {
    const json& v = doc.at(json::json_pointer(pointer));
    if (v.is_number()) return v.get<double>();
    if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  } catch (const json::exception&) {
  }
  return std::nullopt;
}

std::vector<std::string> check_expectations(const Scenario& s, const PlanReport& r) {
  std::vector<std::string> drift;
  const Expect& x = s.expect;
  if (!r.result.found()) {
    drift.push_back("no configuration fits");
    return drift;
  }
  const Plan& p = r.result.ranked.front().plan;
  auto field = [&](const char* name, const auto& expected, const auto& got) {
    if (expected && *expected != got) {
      drift.push_back(fmt::format("/best/{}: expected {}, got {}", name, *expected, got));
    }
  };
  field("dp", x.dp, p.dp);
  field("tp", x.tp, p.tp);
  field("pp", x.pp, p.pp);
  field("cp", x.cp, p.cp);
  field("zero", x.zero, p.zero);
  field("micro_batch", x.micro_batch, p.micro_batch);
  field("grad_accum", x.grad_accum, p.grad_accum);
  field("sequences_per_replica", x.sequences_per_replica, p.micro_batch * p.grad_accum);
  if (x.recompute && *x.recompute != p.recompute) {
    drift.push_back(fmt::format("/best/recompute: expected {}, got {}", to_string(*x.recompute),
                                to_string(p.recompute)));
  }
  field("flash_attention", x.flash_attention, p.flash_attention);
  field("sequence_parallel", x.sequence_parallel, p.sequence_parallel);
  if (x.tp_tier) {
    const std::string got = tier_name(s.cluster, axis_tier(p, s.cluster, Axis::tp));
    if (*x.tp_tier != got) {
      drift.push_back(fmt::format("/best/placement/tp: expected {}, got {}", *x.tp_tier, got));
    }
  }
  if (!x.figures.empty()) {
    const json doc = report_json(r);
    for (const ExpectedFigure& f : x.figures) {
      // The pointer is the user's text, printed on a drift line: escaped (docs/errors.md).
      const std::string pointer = one_line(f.pointer, error_line_limit);
      const std::optional<double> got = number_at(doc, f.pointer);
      if (!got) {
        drift.push_back(fmt::format("{}: expected {:.6g}, but the output has no number there",
                                    pointer, f.value));
      } else if (std::abs(*got - f.value) > f.relative_tolerance * std::abs(f.value)) {
        drift.push_back(fmt::format("{}: expected {:.6g} (within {:g} %), got {:.6g}", pointer,
                                    f.value, 100 * f.relative_tolerance, *got));
      }
    }
  }
  return drift;
}

int run_check(const std::vector<std::string>& files, const std::vector<std::string>& sets,
              std::ostream& out, std::ostream& err) {
  // Standard input can be read once: a second '-' read nothing and checked an empty input.
  if (std::count(files.begin(), files.end(), std::string("-")) > 1) {
    throw InputError("command line", "",
                     "standard input given twice ('-' appears more than once); give it once");
  }
  int status = exit_ok;
  for (const std::string& file : files) {
    // check compares what plan answers, but a broken pinned plan is an error here, as
    // docs/errors.md §Plans says, not a warning (issue 32).
    const Scenario s = load_with_overrides(file, sets, err);
    if (s.expect.empty()) {
      throw InputError(s.origin, "/expect", "nothing to check: add an \"expect\" object");
    }
    bool wants_thresholds = false;
    for (const ExpectedFigure& f : s.expect.figures) {
      wants_thresholds = wants_thresholds || f.pointer.rfind("/thresholds", 0) == 0;
    }
    const PlanReport r = make_plan_report(s, 1, wants_thresholds);
    const std::vector<std::string> drift = check_expectations(s, r);
    // The file name may hold any bytes: a newline in it injected a line (a markdown heading).
    const std::string origin = one_line(s.origin, error_line_limit);
    if (drift.empty()) {
      out << fmt::format("ok      {}\n", origin);
    } else {
      status = exit_no;
      out << fmt::format("drift   {}\n", origin);
      for (const std::string& d : drift) out << "        " << d << "\n";
    }
  }
  return status;
}

struct CheckArgs {
  std::vector<std::string> files;
  std::vector<std::string> sets;
};

}  // namespace

Runner add_check(CLI::App& sub) {
  auto a = std::make_shared<CheckArgs>();
  sub.add_option("scenarios", a->files, "Scenario JSON files")->required();
  add_sets(sub, a->sets);
  return [a](std::ostream& out, std::ostream& err) { return run_check(a->files, a->sets, out, err); };
}

}  // namespace planner::cli

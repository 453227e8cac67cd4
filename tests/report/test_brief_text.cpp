// planner plan's default text is brief (issue 31: "concise by default ... about 30 lines; the
// full explanation behind a flag"): every bundled training scenario in at most 40 lines, no line
// twice, and nothing in it that the full text (--full) does not say, but its own summaries.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/report/report.hpp"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool training(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in).at("workload").at("kind") == "training";
}

}  // namespace

TEST_CASE("plan's brief text: at most 40 lines, no repeats, a subset of the full text",
          "[cli][brief]") {
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PLANNER_SOURCE_DIR) + "/scenarios")) {
    if (!training(entry.path())) continue;
    const std::string file = "scenarios/" + entry.path().filename().string();
    INFO(file);
    const auto brief = cli_harness::run({"plan", file});
    const auto full = cli_harness::run({"plan", file, "--full"});
    REQUIRE(brief.code == full.code);
    const std::vector<std::string> lines = lines_of(brief.out);
    CHECK(lines.size() <= 40);
    std::set<std::string> seen;
    const std::vector<std::string> full_lines = lines_of(full.out);
    const std::set<std::string> in_full(full_lines.begin(), full_lines.end());
    for (const std::string& line : lines) {
      if (line.empty()) continue;
      INFO(line);
      CHECK(seen.insert(line).second);
      // The brief text's own summaries; every other line is the full text's, word for word.
      const bool summary = line.starts_with("Simplest answer: ") ||
                           line.starts_with("Memory per GPU: ") ||
                           line.starts_with("Restart budget ") || line.starts_with("(--full: ") ||
                           line.ends_with("farther from the scenario's values: --full)");
      if (!summary) CHECK(in_full.count(line) == 1);
    }
    ++checked;
  }
  CHECK(checked >= 12);
}

TEST_CASE("plan's brief memory line sums to the ledger's total", "[cli][brief]") {
  // Scenario A's recommendation (ANSWER-KEY.md's 16.5 GiB of state for its ZeRO-2 plan is
  // pinned elsewhere): the one-line ledger lists each non-zero line, largest first, and its
  // figures add up to the total it states, to the 0.1 GiB they are printed to.
  const auto r = cli_harness::run({"plan", "scenarios/a.json", "--no-thresholds"});
  REQUIRE(r.code == 0);
  const std::string::size_type at = r.out.find("Memory per GPU: ");
  REQUIRE(at != std::string::npos);
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  double total = 0, capacity = 0;
  REQUIRE(std::sscanf(line.c_str(), "Memory per GPU: %lf of %lf GiB", &total, &capacity) == 2);
  CHECK(capacity == Approx(192.0));
  double sum = 0, previous = 1e300;
  std::istringstream parts(line.substr(line.find("): ") + 3));
  for (std::string part; std::getline(parts, part, ',');) {
    const double value = std::stod(part.substr(part.find_last_of(' ', part.find_last_not_of(" GiB")) + 1));
    CHECK(value <= previous);
    previous = value;
    sum += value;
  }
  CHECK(sum == Approx(total).margin(0.05 * 8));
}

TEST_CASE("plan without the search's counts ranks and thresholds as plan with them",
          "[cli][brief]") {
  // make_plan_report's scope (src/cli/plan.cpp asks for `full` in JSON, markdown, HTML and
  // --full): under `brief` the ranking comes from the winner search alone, whose ranked list is
  // the accounted search's (tests/search/test_pruning.cpp), and the threshold scans' work rule
  // reads the winner search's work in both, so the brief text and the JSON agree.
  for (const std::string name : {"q2-llama-3.1-70b-64-h100.json", "q4-mixtral-8x7b-training.json",
                                 "b.json"}) {
    INFO(name);
    std::string warning;
    const planner::Scenario s = planner::load_scenario_for_search(
        planner::read_json_file(std::string(PLANNER_SOURCE_DIR) + "/scenarios/" + name), name,
        warning);
    const planner::PlanReport with = planner::make_plan_report(s, 5, true, planner::ReportScope::full);
    const planner::PlanReport without = planner::make_plan_report(s, 5, true, planner::ReportScope::brief);
    REQUIRE(with.result.found());
    REQUIRE(without.result.ranked.size() == with.result.ranked.size());
    for (std::size_t i = 0; i < with.result.ranked.size(); ++i) {
      CHECK(planner::describe(with.context, without.result.ranked[i].plan) ==
            planner::describe(with.context, with.result.ranked[i].plan));
      CHECK(without.result.ranked[i].training.tokens_per_second ==
            with.result.ranked[i].training.tokens_per_second);
    }
    CHECK(with.result.evaluated > 0);
    CHECK(without.result.evaluated == 0);  // the counts were not computed
    REQUIRE(without.thresholds.size() == with.thresholds.size());
    for (std::size_t i = 0; i < with.thresholds.size(); ++i) {
      CHECK(without.thresholds[i].parameter == with.thresholds[i].parameter);
      CHECK(without.thresholds[i].value == with.thresholds[i].value);
    }
    CHECK(without.thresholds_not_searched.size() == with.thresholds_not_searched.size());
  }
}

TEST_CASE("a report computed for the brief text or CSV renders them as the full report does",
          "[cli][brief]") {
  // ReportScope (report.hpp): `brief` searches only the alternatives the brief text quotes (the
  // simplest answer, those the axis lines name), `ranked` (CSV) no explanation at all. What
  // each output shows must not change: every bundled scenario's brief text and CSV from the
  // narrower report against the same output from the full one, byte for byte. Thresholds off:
  // they do not read the explanation, and the full report's would rerun for minutes.
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PLANNER_SOURCE_DIR) + "/scenarios")) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    std::string warning;
    const planner::Scenario s = planner::load_scenario_for_search(
        planner::read_json_file(entry.path().string()), name, warning);
    const planner::PlanReport full = planner::make_plan_report(s, 5, false);
    const planner::PlanReport brief =
        planner::make_plan_report(s, 5, false, planner::ReportScope::brief);
    const planner::PlanReport ranked =
        planner::make_plan_report(s, 5, false, planner::ReportScope::ranked);
    CHECK(planner::report_text(brief, planner::TextDetail::brief) ==
          planner::report_text(full, planner::TextDetail::brief));
    CHECK(planner::report_csv(ranked) == planner::report_csv(full));
    // Fewer searches, not none: the brief report keeps the simplest answer.
    CHECK(brief.explanation.alternatives.size() <= full.explanation.alternatives.size());
    if (!full.explanation.alternatives.empty()) {
      REQUIRE_FALSE(brief.explanation.alternatives.empty());
      CHECK(brief.explanation.alternatives.front().kind ==
            full.explanation.alternatives.front().kind);
    }
  }
}

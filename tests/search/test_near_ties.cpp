// Stable near-ties (docs/ranking.md §2): the tolerance band around the fastest plan, a printed
// ranking that never gets faster down the list, thresholds only between plans the model can
// tell apart, and sweeps that do not flap between tied plans.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using nlohmann::json;

namespace {

const char* const training_scenarios[] = {
    "scenarios/a.json", "scenarios/b.json", "scenarios/q1-llama-3.1-8b-one-node.json",
    "scenarios/q2-llama-3.1-70b-64-h100.json", "scenarios/q6-gpt-3-175b-1024-a100.json"};

json plan_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"plan"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = cli_harness::run(args);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

double tokens_per_second(const json& plan) { 
  return plan.at("time").at("tokens_per_second").get<double>();
}

/// tp, pp and cp in use: the first criterion among equal plans.
int model_axes(const json& plan) {
  int n = 0;
  for (const char* axis : {"tp", "pp", "cp"}) n += plan.at(axis).get<int>() > 1 ? 1 : 0;
  return n;
}

/// The answer a sweep row names: degrees, switches and tiers (the micro-batch split moves
/// with every input and is not part of it; search/answer.hpp same_answer).
std::string answer_of(const std::vector<std::string>& row, const std::vector<std::string>& head) {
  std::string out;
  for (std::size_t i = 0; i < head.size(); ++i) {
    static const std::vector<std::string> keys{"dp", "tp", "pp", "cp", "zero", "recompute",
                                               "flash_attention", "sequence_parallel",
                                               "tp_tier", "cp_tier", "pp_tier", "dp_tier"};
    if (std::find(keys.begin(), keys.end(), head[i]) != keys.end()) out += row[i] + ",";
  }
  return out;
}

/// The tier of each axis's group ("placement" without the rank order).
json tiers(const json& plan) {
  json t = plan.at("placement");
  t.erase("order");
  return t;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  return out;
}

}  // namespace

TEST_CASE("The ranked list: the band first, simplest first, then never faster", "[ranking]") {
  for (const char* scenario : training_scenarios) {
    INFO(scenario);
    const json j = plan_json({scenario, "--format", "json", "--no-thresholds", "--top", "12"});
    const json& ranked = j.at("ranked");
    const auto tied = j.at("tied").at("plans").get<std::size_t>();
    CHECK(j.at("tied").at("tolerance") == 0.01);
    REQUIRE(tied >= 1);
    double fastest = 0;
    for (const json& p : ranked) fastest = std::max(fastest, tokens_per_second(p));
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      INFO("rank " << i + 1);
      // Seconds per token within 1 % of the fastest's: 1/x ≤ 1.01/fastest.
      const bool inside = 1.0 / tokens_per_second(ranked[i]) <= 1.01 / fastest * (1 + 1e-12);
      CHECK(inside == (i < std::min(tied, ranked.size())));
      if (i < tied) CHECK(model_axes(ranked.front()) <= model_axes(ranked[i]));
      // Past the band, each plan is no faster than the one before it, and none is faster
      // than the recommendation.
      if (i >= tied && i > 0) {
        CHECK(tokens_per_second(ranked[i]) <= tokens_per_second(ranked[i - 1]));
        CHECK(tokens_per_second(ranked[i]) < tokens_per_second(ranked.front()));
      }
    }
    const auto text =
        cli_harness::run({"plan", scenario, "--no-thresholds", "--top", "12", "--full"});
    if (tied > 1) {
      CHECK_THAT(text.out, Catch::Contains(std::to_string(tied) +
                                           " plans are within 1 % of the fastest"));
    }
  }
}

// Scenario B (65B on 64 GPUs, 50 GB/s inter-node): ZeRO-1 and ZeRO-2 move the same bytes and
// take the same time, so raising the bandwidth cannot make one of them a threshold of the
// other. Every threshold reported must name a plan that is not tied with the recommendation
// at the threshold's value.
TEST_CASE("A threshold is never a swap between tied plans", "[ranking]") {
  const json j = plan_json({"scenarios/b.json", "--format", "json"});
  const json best = j.at("best");
  for (const json& t : j.at("thresholds")) {
    INFO(t.at("summary").get<std::string>());
    const std::string at = t.at("parameter").get<std::string>() + "=" +
                           std::to_string(t.at("value").get<double>());
    const json there =
        plan_json({"scenarios/b.json", "--set", at, "--format", "json", "--no-thresholds",
                   "--top", "50"});
    const auto tied = there.at("tied").at("plans").get<std::size_t>();
    for (std::size_t i = 0; i < std::min(tied, there.at("ranked").size()); ++i) {
      const json& p = there.at("ranked")[i];
      const bool same = p.at("dp") == best.at("dp") && p.at("tp") == best.at("tp") &&
                        p.at("pp") == best.at("pp") && p.at("cp") == best.at("cp") &&
                        p.at("zero") == best.at("zero") &&
                        p.at("recompute") == best.at("recompute") &&
                        p.at("flash_attention") == best.at("flash_attention") &&
                        p.at("sequence_parallel") == best.at("sequence_parallel") &&
                        tiers(p) == tiers(best);
      CHECK_FALSE(same);
    }
  }
}

// The report: a sweep of inter-node bandwidth flipped the top answer A, A, B, A, C, A,
// A, D between plans the model called equal. A physical answer changes a few times as one
// input grows, and an answer once replaced does not come back.
TEST_CASE("A bandwidth sweep changes the top answer a bounded number of times", "[ranking]") {
  for (const char* scenario : {"scenarios/q2-llama-3.1-70b-64-h100.json", "scenarios/b.json"}) {
    INFO(scenario);
    const auto r = cli_harness::run({"sweep", scenario, "--vary",
                                     "/cluster/inter_node/bandwidth=5GB/s..400GB/s:40log",
                                     "--format", "csv", "--no-progress", "--threads", "2"});
    REQUIRE(r.code == 0);
    std::istringstream in(r.out);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> head = split(line);
    std::vector<std::string> answers;
    while (std::getline(in, line)) answers.push_back(answer_of(split(line), head));
    REQUIRE(answers.size() == 40);
    int changes = 0;
    int returns = 0;
    std::vector<std::string> seen{answers.front()};
    for (std::size_t i = 1; i < answers.size(); ++i) {
      if (answers[i] == answers[i - 1]) continue;
      ++changes;
      if (std::find(seen.begin(), seen.end(), answers[i]) != seen.end()) ++returns;
      seen.push_back(answers[i]);
    }
    CHECK(changes <= 5);  // a physical answer moves through a handful of plans
    // No return. A return can come where the 1 % band's reference moves (docs/ranking.md §2
    // records one on the 70B scenario under an earlier commit's two-level collectives); with
    // NCCL's multi-rail rings the 70B sweep changes twice and B's four times, none back.
    CHECK(returns == 0);
  }
}

// The search space as data (inputs/space.hpp): every searched setting is a named dimension that
// --fix bounds, the search honours at the step of its enumeration where the value is decided,
// and the help and errors list. Issue 33: "the --fix names read it".

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "planner/io/constraints.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/rank.hpp"
#include "planner/search/search.hpp"

using namespace planner;

namespace {

Scenario load_with_nodes(const std::string& file, std::int64_t nodes = 0) {
  std::ifstream in(std::string(PLANNER_SOURCE_DIR) + "/" + file);
  nlohmann::json j = nlohmann::json::parse(in);
  if (nodes > 0) j["cluster"]["nodes"] = nodes;
  return load_scenario(j, file);
}

/// Under the bound `fix`: every ranked plan satisfies it; the pruned search and the winner
/// search agree with the exhaustive one; and no plan of the unbounded exhaustive space that
/// satisfies the bound is faster than the bounded winner beyond the ranking's tolerance band
/// (docs/ranking.md §2): the bounded optimum is the optimum of the bounded subset.
void check_bound(Scenario s, const std::string& fix, bool (*satisfies)(const Plan&)) {
  INFO(fix);
  const Context open_ctx = make_context(s);
  s.constraints = parse_fix(fix, "--fix", "", s.constraints);
  const Context ctx = make_context(s);
  SearchOptions exhaustive;
  exhaustive.prune = false;
  exhaustive.keep = 1000;
  const SearchResult bounded = search(ctx, exhaustive);
  REQUIRE(bounded.found());
  for (const Evaluation& e : bounded.ranked) CHECK(satisfies(e.plan));
  SearchOptions pruned;
  pruned.keep = 1000;
  const SearchResult fast = search(ctx, pruned);
  REQUIRE(fast.ranked.size() == bounded.ranked.size());
  for (std::size_t i = 0; i < fast.ranked.size(); ++i) {
    CHECK(rank_key(ctx, fast.ranked[i]).tie() == rank_key(ctx, bounded.ranked[i]).tie());
  }
  SearchOptions winner;
  winner.keep = 1;
  winner.accounting = false;
  const SearchResult won = search(ctx, winner);
  REQUIRE(won.found());
  CHECK(rank_key(ctx, won.ranked.front()).tie() == rank_key(ctx, bounded.ranked.front()).tie());

  SearchOptions all;
  all.prune = false;
  all.keep = 1000000;
  const SearchResult open = search(open_ctx, all);
  const double best = seconds_per_unit(ctx, bounded.ranked.front());
  std::size_t matching = 0;
  for (const Evaluation& e : open.ranked) {
    if (!satisfies(e.plan)) continue;
    ++matching;
    CHECK(seconds_per_unit(open_ctx, e) >= best / (1.0 + time_resolution));
  }
  CHECK(matching >= bounded.ranked.size());
}

}  // namespace

TEST_CASE("Every searched setting can be bounded by --fix, and the search honours each bound",
          "[constraints][space]") {
  // Scenario A: 64 GPUs, 32 layers, dense. Its unbounded answer uses micro-batch 1 and no
  // interleaving, so these bounds each move the answer.
  const Scenario a = load_with_nodes("scenarios/a.json");
  check_bound(a, "micro_batch=2", [](const Plan& p) { return p.micro_batch == 2; });
  check_bound(a, "micro_batch>=4", [](const Plan& p) { return p.micro_batch >= 4; });
  check_bound(a, "pp=2,vp=4", [](const Plan& p) { return p.pp == 2 && p.virtual_stages == 4; });
  check_bound(a, "pp>=2,virtual_stages<=1",
              [](const Plan& p) { return p.pp >= 2 && p.virtual_stages == 1; });
  check_bound(a, "dp_shard=8", [](const Plan& p) { return shard_dp(p) == 8; });
  // Mixtral 8x7B on 16 GPUs: the expert degrees.
  const Scenario moe = load_with_nodes("scenarios/q4-mixtral-8x7b-training.json", 2);
  check_bound(moe, "ep=2", [](const Plan& p) { return p.ep == 2; });
  check_bound(moe, "tp=2,etp=1", [](const Plan& p) { return p.tp == 2 && expert_tp(p) == 1; });
}

TEST_CASE("The --fix names come from the space's table, and plan keys are accepted too",
          "[constraints][space]") {
  for (const SpaceDim& row : dimensions) {
    CHECK(dim_named(row.name) == row.dim);
    if (!row.plan_key.empty()) CHECK(dim_named(row.plan_key) == row.dim);
  }
  // The plan's key spelling of a switch and of the interleaving depth.
  const Constraints c = parse_fix("flash_attention=on,virtual_stages<=2", "--fix", "");
  CHECK(c.pinned_switch(Dim::flash) == true);
  CHECK(c.bound(Dim::vp).max == 2);
  // Out of range, per the row's words.
  const auto message = [](const std::string& fix) {
    try {
      (void)parse_fix(fix, "--fix", "");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(message("micro_batch=0"), Catch::Contains("at least 1 sequence"));
  CHECK_THAT(message("vp=0"), Catch::Contains("at least 1 model chunk"));
  CHECK_THAT(message("mb=2"), Catch::Contains("names: tp, cp, dp, pp, ep, etp, vp, dp_shard, "
                                              "replicas, micro_batch, zero, recompute, flash, sp"));
  // A training-only setting on a serving scenario is the user's mistake, said as one (exit 2).
  const auto serving = cli_harness::run(
      {"plan", "scenarios/q5-llama-3.1-70b-serving-one-node.json", "--fix", "micro_batch=2"});
  CHECK(serving.code == 2);
  CHECK_THAT(serving.err, Catch::Contains("micro_batch (sequences per micro-batch) is a training "
                                          "setting"));
  // The ones serving has stay accepted there.
  const auto tp = cli_harness::run({"plan", "scenarios/q5-llama-3.1-70b-serving-one-node.json",
                                    "--fix", "tp=8", "--no-thresholds"});
  CHECK(tp.code == 0);
}

TEST_CASE("The scenario schema's constraints.fix pattern names every dimension of the space",
          "[constraints][space][schema]") {
  std::ifstream in(std::string(PLANNER_SOURCE_DIR) + "/docs/scenario.schema.json");
  const nlohmann::json schema = nlohmann::json::parse(in);
  const nlohmann::json& fix_schema = schema.at("$defs").at("constraints").at("properties");
  const std::regex fix(fix_schema.at("fix").at("pattern").get<std::string>());
  const auto item = [](const SpaceDim& row, std::string_view name) {
    switch (row.kind) {
      case SpaceKind::integer:
        return std::string(name) + "<=" + std::to_string(row.max < 3 ? row.max : 2);
      case SpaceKind::on_off: return std::string(name) + "=on";
      case SpaceKind::choice: return std::string(name) + "!=op";
    }
    return std::string();
  };
  for (const SpaceDim& row : dimensions) {
    INFO(row.name);
    CHECK(std::regex_match(item(row, row.name), fix));
    CHECK_NOTHROW(parse_fix(item(row, row.name), "--fix", ""));
    if (!row.plan_key.empty()) CHECK(std::regex_match(item(row, row.plan_key), fix));
  }
  CHECK_FALSE(std::regex_match(std::string("mb=2"), fix));
}

TEST_CASE("planner memory has a flag for every settable dimension of the space",
          "[constraints][space][cli]") {
  const auto help = cli_harness::run({"memory", "--help"});
  for (const SpaceDim& row : dimensions) {
    if (row.set == nullptr) continue;  // derived (replicas)
    std::string flag = "--" + std::string(row.name);
    for (char& c : flag) c = c == '_' ? '-' : c;
    INFO(flag);
    CHECK_THAT(help.out, Catch::Contains(flag + " "));
  }
  // The interleaving depth, a row of the table, is a flag by being one: scenario A (32 layers)
  // with pp 2 and vp 4 evaluates an interleaved plan of 4 layers per chunk.
  const auto vp = cli_harness::run({"memory", "scenarios/a.json", "--pp", "2", "--vp", "4",
                                    "--format", "json"});
  REQUIRE(vp.code != 2);
  const nlohmann::json j = nlohmann::json::parse(vp.out);
  CHECK(j.at("plan").at("virtual_stages") == 4);
  CHECK(j.at("plan").at("pp") == 2);
}

TEST_CASE("A pinned setting no plan of the model can have is an input error, not a search",
          "[constraints][space][cli]") {
  const auto err = [](const std::string& scenario, const std::string& fix) {
    const auto r = cli_harness::run({"plan", "scenarios/" + scenario, "--no-thresholds", "--fix",
                                     fix});
    CHECK(r.code == 2);
    return r.err;
  };
  // Scenario A is dense (32 layers, 32 heads, 64 GPUs, 489 sequences a step: 2 M tokens / 4096).
  CHECK_THAT(err("a.json", "ep=2"), Catch::Contains("ep applies to mixture-of-experts models"));
  CHECK_THAT(err("a.json", "etp=2"), Catch::Contains("etp applies to mixture-of-experts models"));
  // 32 + 2 = 34 layers with the tables: neither is a multiple of 7 with two stages or more.
  CHECK_THAT(err("a.json", "vp=7"), Catch::Contains("no pipeline of 2 or more stages splits "
                                                    "the 32 layers into 7 chunks"));
  CHECK_THAT(err("a.json", "micro_batch=490"),
             Catch::Contains("exceeds the global batch's 489"));
  // Mixtral on 64 GPUs, 32 heads: etp divides gcd(64, 32) = 32.
  CHECK_THAT(err("q4-mixtral-8x7b-training.json", "etp=3"), Catch::Contains("etp must divide 32"));
  // A legal pin searches as before.
  const auto ok = cli_harness::run({"plan", "scenarios/a.json", "--no-thresholds", "--fix",
                                    "micro_batch=489"});
  CHECK(ok.code != 2);
  // With the thresholds, and in the brief text, the winner search meets groups whose
  // micro-batches the bound removes entirely (dp 2 and more: fewer than 489 sequences each);
  // it read a first micro-batch that did not exist (a crash, SIGFPE, until the fifteenth
  // session).
  const auto scanned = cli_harness::run({"plan", "scenarios/a.json", "--fix", "micro_batch=489"});
  CHECK(scanned.code == 0);
  CHECK_THAT(scanned.out, Catch::Contains("micro-batch 489 x 1"));
}

TEST_CASE("Training CSV rows end with the interleaving depth, as the JSON gives it",
          "[space][csv]") {
  // q2 with four pipeline stages: its ranked list holds plans with and without interleaving.
  const std::vector<std::string> base{"plan", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                      "--fix", "pp=4", "--no-thresholds"};
  std::vector<std::string> csv_args = base, json_args = base;
  csv_args.insert(csv_args.end(), {"--format", "csv"});
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto csv = cli_harness::run(csv_args);
  const auto js = cli_harness::run(json_args);
  REQUIRE(csv.code == 0);
  REQUIRE(js.code == 0);
  const nlohmann::json ranked = nlohmann::json::parse(js.out).at("ranked");
  std::istringstream lines(csv.out);
  std::string line;
  std::getline(lines, line);
  CHECK_THAT(line, Catch::EndsWith(",virtual_stages"));
  std::size_t i = 0;
  bool interleaved = false;
  while (std::getline(lines, line) && i < ranked.size()) {
    const std::int64_t v = std::stoll(line.substr(line.rfind(',') + 1));
    CHECK(v == ranked[i].value("virtual_stages", std::int64_t{1}));
    interleaved = interleaved || v > 1;
    ++i;
  }
  CHECK(i == ranked.size());
  CHECK(interleaved);
}

TEST_CASE("A scenario's constraints.fix is held to the same checks as --fix",
          "[constraints][space]") {
  std::ifstream in(std::string(PLANNER_SOURCE_DIR) + "/scenarios/a.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  const auto message = [&](const std::string& fix) {
    doc["constraints"] = {{"fix", fix}};
    try {
      (void)load_scenario(doc, "a.json");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Scenario A: 64 GPUs, 32 heads, 32 layers, dense.
  CHECK_THAT(message("tp=3"), Catch::Contains("/constraints/fix") &&
                                  Catch::Contains("must divide the cluster's 64 GPUs"));
  CHECK_THAT(message("vp=7"), Catch::Contains("no pipeline of 2 or more stages"));
  CHECK_THAT(message("ep=2"), Catch::Contains("mixture-of-experts models only"));
  CHECK(message("tp=2,vp<=2").empty());
}

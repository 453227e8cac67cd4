// `planner validate --search` (report/search_regret.hpp): every validation record's plan
// unpinned, the planner's own pick against the published plan. Issue 28's bar: the pick's
// predicted speed-up over the published plan at most 1.10x at the median, and no pick that no
// framework launches (the search once believed its picks 1.23x better at the median, 3.9x at
// worst, in regions no published run validates). The search keeps to what each run's software
// launched (a record's constraints.fix: SC21, MT-NLG and BLOOM predate sequence parallelism,
// selective recompute and FlashAttention); the median with those lifted is reported beside it,
// and so is the median over the published recipes alone (a row its source publishes as the
// slower baseline it compares against is one a planner should beat; docs/validation.md
// §Search).

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/report/search_regret.hpp"
#include "planner/report/validate.hpp"

using namespace planner;

TEST_CASE("validate --search: the planner's picks against the published plans",
          "[validate][search]") {
  std::vector<ValidationRecord> records;
  std::size_t validation = 0;
  for (const std::string& file :
       validation_files(std::string(PLANNER_SOURCE_DIR) + "/validation")) {
    std::ifstream in(file);
    const nlohmann::json doc = nlohmann::json::parse(in);
    if (is_serving_record(doc)) continue;  // validation/serving: report/validate_serving.hpp
    records.push_back(load_validation_record(doc, file));
    validation += records.back().set == "validation";
  }
  const std::vector<SearchRegret> rows = search_regrets(records);
  REQUIRE(rows.size() == validation);
  std::vector<double> speedups;
  std::vector<double> recipes;
  std::vector<double> today;
  std::size_t baselines = 0;
  for (const SearchRegret& r : rows) {
    INFO(r.record->id);
    REQUIRE(r.found);
    CHECK(r.launchable);
    // Both figures are the model's own: the ratio of the two predicted throughputs.
    CHECK(r.speedup == Approx(r.pick.training.tokens_per_second /
                              r.published.training.tokens_per_second));
    speedups.push_back(r.speedup);
    today.push_back(r.speedup_today);
    // Lifting a record's constraints widens the space: its pick is at least as fast.
    CHECK(r.speedup_today >= r.speedup * (1 - 1e-12));
    if (r.record->baseline) {
      ++baselines;
    } else {
      recipes.push_back(r.speedup);
    }
  }
  // The baselines marked are these three comparisons, no more: SC21 Table 2's six
  // ZeRO-3 rows, Korthikanti et al.'s four full-recompute rows, and the six vanilla-TP rows of
  // torchtitan's June 2025 AsyncTP page.
  CHECK(baselines == 16);
  // Issue 28's bar is 1.10 over every record. All records read 1.061 (225 records) since the
  // thirteenth session: MLPerf's 27 submissions and two DGX-B200 rows joined (their picks 1.01x at the median) and
  // every plan the search tries runs with the switches the record's published plan states
  // (tp overlap, overlapped interleaved sends, embedding and loss as stage layers: the stack's,
  // not the plan's; search_regret.cpp), which lifted the picks that had read below 1x for
  // lack of them. The 134 records before NVIDIA's tables read 1.122 with that change (1.106
  // without: step 30 added torchtitan's AsyncTP page, which runs Llama 3.1 8B at TP 8 to
  // compare TP implementations; the search's FSDP-only picks for it are 1.16-1.46x faster by
  // the model, and the same team measured the 8B FSDP-only run 1.5-1.65x faster than those TP
  // 8 runs). docs/validation.md §Search reports both; held here so that neither can drift
  // unnoticed.
  CHECK(median(speedups) <= 1.10);
  CHECK(median(recipes) <= 1.10);
  // llm-foundry's 35 H100 and A100 80GB FSDP runs (twelfth session) read 1.005x at the
  // median: the search keeps their recipe where they run without checkpointing, and picks
  // selective recompute at smaller micro-batches (1.22-1.31x) where they run with it.
  std::vector<double> before_nemo;
  for (const SearchRegret& r : rows) {
    const std::string& id = r.record->id;
    // MLPerf's 27 submissions and the B200 rows (thirteenth session) are later additions too,
    // as are KempnerForge's weak-scaling runs (eighteenth session).
    const bool nvidia_tables = id.rfind("nemo", 0) == 0 || id.rfind("mbridge", 0) == 0 ||
                               id.rfind("mlperf", 0) == 0 || id.rfind("kempnerforge", 0) == 0;
    const bool ends_with_part = [&] {
      for (const std::string tail : {"h100", "a100-80gb"}) {
        if (id.size() >= tail.size() && id.compare(id.size() - tail.size(), tail.size(), tail) == 0) {
          return true;
        }
      }
      return false;
    }();
    const bool foundry_h100_tables = id.rfind("llm-foundry", 0) == 0 && ends_with_part;
    if (!nvidia_tables && !foundry_h100_tables) before_nemo.push_back(r.speedup);
  }
  CHECK(before_nemo.size() == 134);
  CHECK(median(before_nemo) <= 1.123);
  // The JSON summary carries the same figures.
  const auto out = cli_harness::run({"validate", "validation/", "--search", "--format", "json"});
  REQUIRE(out.code == 0);
  const nlohmann::json j = nlohmann::json::parse(out.out);
  CHECK(j.at("median_speedup").get<double>() == Approx(median(speedups)));
  CHECK(j.at("recipe_median_speedup").get<double>() == Approx(median(recipes)));
  CHECK(j.at("recipes") == recipes.size());
  CHECK(j.at("median_speedup_today_features").get<double>() == Approx(median(today)));
  // SC21 Table 2 (12), MT-NLG (3), BLOOM (1), Korthikanti et al. (8).
  CHECK(j.at("constrained_records") == 24);
  CHECK(j.at("not_launchable") == 0);
  std::size_t tight = 0;
  for (const SearchRegret& r : rows) tight += !r.memory_headroom;
  CHECK(j.at("without_memory_headroom") == tight);
  CHECK(j.at("rows").size() == rows.size());
}

// One search for every command (issue 31): plan (--top N), export, sweep and check all take
// the recommendation from trusted_search; it must not depend on how many ranked plans the
// command keeps. Property over every bundled training scenario and every framework.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/search/search.hpp"

using namespace planner;

TEST_CASE("the recommendation does not depend on the plans kept", "[search][one-search]") {
  const std::filesystem::path dir = std::filesystem::path(PLANNER_SOURCE_DIR) / "scenarios";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int compared = 0;
  for (const auto& file : files) {
    const Scenario base = load_scenario_file(file.string());
    if (base.workload.kind != WorkloadKind::training) continue;
    for (const Framework f : {Framework::any, Framework::megatron, Framework::torchtitan,
                              Framework::deepspeed}) {
      Scenario s = base;
      s.constraints.framework = f;
      const Context ctx = make_context(s);
      SearchOptions one;  // export and sweep keep one plan
      one.keep = 1;
      one.accounting = false;
      SearchOptions many;  // plan --top 10
      many.keep = 10;
      const Recommendation a = trusted_search(ctx, one);
      const Recommendation b = trusted_search(ctx, many);
      INFO(file.filename().string() << " --framework " << to_string(f));
      REQUIRE(a.result.found() == b.result.found());
      CHECK(a.outside == b.outside);
      if (!a.result.found()) continue;
      CHECK(describe(ctx, a.result.ranked.front().plan) ==
            describe(ctx, b.result.ranked.front().plan));
      ++compared;
    }
  }
  CHECK(compared >= 40);
}

#include "planner/report/search_regret.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "planner/io/context.hpp"
#include "planner/model/memory_accuracy.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

namespace planner {

std::vector<SearchRegret> search_regrets(const std::vector<ValidationRecord>& records) {
  std::vector<SearchRegret> rows;
  for (const ValidationRecord& r : records) {
    if (r.set != "validation" || !r.scenario.plan ||
        r.scenario.workload.kind != WorkloadKind::training) {
      continue;
    }
    SearchRegret row;
    row.record = &r;
    // The switches of the software the run used (its tp and pipeline-send overlap, the
    // embedding and loss as stage layers) are the stack's, not the plan's choice: every plan
    // the search tries runs with them, as a scenario's workload states them for every plan
    // (--framework megatron turns the two overlaps on, docs/constraints.md). Without it a record that states them only on its plan (NeMo's,
    // Megatron-Bridge's and MLPerf's) compares the search's plans without overlap against
    // the published plan with it.
    Scenario stack = r.scenario;
    const Plan& published = *r.scenario.plan;
    Training& t = stack.workload.training;
    t.tp_comm_overlap = t.tp_comm_overlap || published.tp_comm_overlap;
    t.pp_comm_overlap = t.pp_comm_overlap || published.pp_comm_overlap;
    t.tables_in_pipeline_split = t.tables_in_pipeline_split || published.tables_in_pipeline_split;
    const Context ctx = make_context(stack);
    row.published = evaluate(ctx, published);
    SearchOptions options;
    options.keep = 1;
    options.accounting = false;
    const SearchResult found = search(ctx, options);
    row.found = found.found();
    if (row.found) {
      row.pick = found.ranked.front();
      row.speedup =
          row.pick.training.tokens_per_second / row.published.training.tokens_per_second;
      row.speedup_today = row.speedup;
      if (r.constrained) {
        // Today's features: the record's software constraints lifted, the default search's.
        Scenario today = stack;
        today.constraints = Constraints{};
        const SearchResult found_today = search(make_context(today), options);
        if (found_today.found()) {
          row.speedup_today = found_today.ranked.front().training.tokens_per_second /
                              row.published.training.tokens_per_second;
        }
      }
      row.memory_headroom = has_memory_headroom(row.pick.memory);
      // Checked against the frameworks' own rules, not the search's constraint (which is the
      // same predicate by construction): a pick no framework launches is a defect.
      row.launchable = false;
      for (const Framework f : launching_frameworks) {
        row.launchable = row.launchable || (framework_config_violation(f, row.pick.plan).empty() &&
                                            framework_placement_violation(f, row.pick.plan).empty());
      }
    }
    rows.push_back(row);
  }
  return rows;
}

void print_search_regrets(const std::vector<SearchRegret>& rows, const std::string& format,
                          std::ostream& out) {
  std::vector<double> speedups;
  std::vector<double> recipe_speedups;  // the published recipes, baselines left out
  std::vector<double> today_speedups;   // with the records' software constraints lifted
  std::size_t constrained = 0;
  std::size_t over = 0, unlaunchable = 0, tight = 0;
  const SearchRegret* worst = nullptr;
  for (const SearchRegret& r : rows) {
    if (!r.found) continue;
    speedups.push_back(r.speedup);
    today_speedups.push_back(r.speedup_today);
    constrained += r.record->constrained;
    if (!r.record->baseline) recipe_speedups.push_back(r.speedup);
    over += r.speedup > 1.10;
    unlaunchable += !r.launchable;
    tight += !r.memory_headroom;
    if (!worst || r.speedup > worst->speedup) worst = &r;
  }
  const double med = median(speedups);
  const double recipe_med = median(recipe_speedups);
  const double today_med = median(today_speedups);
  if (format == "json") {
    nlohmann::json j;
    j["records"] = rows.size();
    j["median_speedup"] = med;
    j["recipes"] = recipe_speedups.size();
    j["recipe_median_speedup"] = recipe_med;
    j["constrained_records"] = constrained;
    j["median_speedup_today_features"] = today_med;
    j["max_speedup"] = worst ? worst->speedup : 0.0;
    j["worst"] = worst ? worst->record->id : "";
    j["over_1_10"] = over;
    j["not_launchable"] = unlaunchable;
    j["without_memory_headroom"] = tight;
    nlohmann::json list = nlohmann::json::array();
    for (const SearchRegret& r : rows) {
      const Context ctx = make_context(r.record->scenario);
      list.push_back({{"id", r.record->id},
                      {"published", describe(ctx, r.published.plan)},
                      {"pick", r.found ? describe(ctx, r.pick.plan) : std::string()},
                      {"speedup", r.speedup},
                      {"speedup_today_features", r.speedup_today},
                      {"launchable", r.launchable},
                      {"memory_headroom", r.memory_headroom},
                      {"baseline", r.record->baseline}});
    }
    j["rows"] = list;
    out << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << fmt::format("{:<44} {:>8}  {}\n", "record", "speed-up", "planner's pick (published plan)");
  for (const SearchRegret& r : rows) {
    const Context ctx = make_context(r.record->scenario);
    out << fmt::format("{:<44} {:>7.3f}x  {}{}{}\n    published{}: {}\n", r.record->id, r.speedup,
                       r.found ? describe(ctx, r.pick.plan) : std::string("no plan found"),
                       r.launchable ? "" : "  [no framework launches it]",
                       r.memory_headroom ? "" : "  [without the validated memory headroom]",
                       r.record->baseline ? " (as a baseline)" : "",
                       describe(ctx, r.published.plan));
  }
  out << fmt::format("\n{} records: the planner's pick is predicted {:.3f}x the published plan's "
                     "throughput at the median, {:.3f}x at most ({}); {} picks above 1.10x; {} "
                     "picks no framework launches\n",
                     speedups.size(), med, worst ? worst->speedup : 0.0,
                     worst ? worst->record->id : "-", over, unlaunchable);
  out << fmt::format("{} published recipes (not the {} rows their sources publish as the slower "
                     "baseline they compare against): {:.3f}x at the median\n",
                     recipe_speedups.size(), speedups.size() - recipe_speedups.size(),
                     recipe_med);
  out << fmt::format("{} picks fit without the validated memory headroom (docs/ranking.md "
                     "section 6)\n",
                     tight);
  out << fmt::format("{} records keep to what their software launched (constraints.fix: before "
                     "sequence parallelism, selective recompute or FlashAttention); with those "
                     "lifted, the median over all {} is {:.3f}x\n",
                     constrained, speedups.size(), today_med);
}

}  // namespace planner

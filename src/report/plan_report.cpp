#include <algorithm>

#include "planner/io/context.hpp"
#include "planner/report/report.hpp"

/// The orchestration of `planner plan`: the search, the explanation of its winner and the
/// thresholds around it, each independent of the others.

namespace planner {

PlanReport make_plan_report(const Scenario& s, std::size_t top, bool thresholds) {
  PlanReport r;
  r.scenario = &s;
  r.context = make_context(s);
  SearchOptions options;
  options.keep = std::max<std::size_t>(top, 1);
  r.result = search(r.context, options);
  r.explanation = explain(r.context, r.result);
  if (thresholds && r.result.found()) {
    r.thresholds = find_thresholds(r.context, r.result.ranked.front().plan, 0,
                                   &r.thresholds_not_searched, r.result.work);
  }
  if (s.plan) r.pinned = evaluate(r.context, *s.plan);
  return r;
}

}  // namespace planner

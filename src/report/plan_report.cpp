#include <algorithm>

#include "planner/io/context.hpp"
#include "planner/model/memory_accuracy.hpp"
#include "planner/report/report.hpp"
#include "planner/search/rank.hpp"

/// The orchestration of `planner plan`: the search, the explanation of its winner and the
/// thresholds around it, each independent of the others.

namespace planner {

PlanReport make_plan_report(const Scenario& s, std::size_t top, bool thresholds,
                            ReportScope scope) {
  const bool accounting = scope == ReportScope::full;
  PlanReport r;
  r.scenario = &s;
  r.context = make_context(s);
  SearchOptions options;
  options.keep = std::max<std::size_t>(top, 1);
  // Rank for trust (docs/ranking.md §5): the recommendation lies inside the validated envelope,
  // or, where nothing fits inside, it is the raw ranking's, said so (search.hpp trusted_search;
  // the context follows, for the explanation and the thresholds). The fastest plan outside the
  // envelope is shown beside it when it is faster by more than the band.
  // The ranking comes from the winner search (the accounted search's ranked list exactly,
  // tests/search/test_pruning.cpp), whose work is also what each threshold probe reruns; the
  // accounted search, for its counts and closest rejections, runs only where the output shows
  // them (`accounting`) or nothing fits (the rejections are the answer then).
  options.accounting = false;
  Recommendation rec;
  std::int64_t winner_work = 0;
  if (thresholds || !accounting) {
    rec = trusted_search(r.context, options);
    winner_work = rec.result.work;
  }
  if (accounting || (!rec.result.found() && scope != ReportScope::ranked)) {
    options.accounting = true;
    rec = trusted_search(r.context, options);
  }
  r.result = rec.result;
  r.envelope_empty = rec.outside;
  const bool training = r.context.workload.kind == WorkloadKind::training;
  if (training && !r.result.found()) r.context.constraints.trusted = false;  // nothing anywhere
  if (rec.outside) r.context.constraints.trusted = false;
  // CSV shows the ranked plans alone: none of the explanation's parts are computed for it.
  const bool explained = scope != ReportScope::ranked;
  if (explained && training && r.result.found() && !rec.outside &&
      r.context.constraints.trusted) {
    Context raw = r.context;
    raw.constraints.trusted = false;
    const Evaluation& best = r.result.ranked.front();
    SearchOptions fastest;
    fastest.keep = 1;
    fastest.accounting = false;
    fastest.faster_than_seconds =
        1.0 / (best.training.tokens_per_second * (1.0 + time_resolution));
    const SearchResult other = search(raw, fastest);
    if (other.found() && other.ranked.front().training.tokens_per_second >
                             best.training.tokens_per_second * (1.0 + time_resolution)) {
      r.unvalidated = other.ranked.front();
    }
  }
  // A plan the ledger fits with less room than its validated error (model/memory_accuracy.hpp;
  // docs/ranking.md §6): the fastest plan that keeps that room, searched on a GPU of capacity
  // C' = (C + u·reserve)/(1 + u), where "allocated + reserve <= C'" is "allocated·(1 + u) +
  // reserve <= C", then ledgered on the real GPU and kept only if it has the room.
  if (explained && training && r.result.found() &&
      !has_memory_headroom(r.result.ranked.front().memory)) {
    r.short_of_memory_headroom = true;
    const double u = memory_accuracy.max_excess;
    Context roomy = r.context;
    roomy.cluster.gpu.memory_bytes =
        (r.context.cluster.gpu.memory_bytes + u * r.result.ranked.front().memory.reserve_bytes) /
        (1.0 + u);
    SearchOptions fastest;
    fastest.keep = 1;
    fastest.accounting = false;
    const SearchResult found = search(roomy, fastest);
    if (found.found()) {
      const Evaluation e = evaluate(r.context, found.ranked.front().plan);
      if (has_memory_headroom(e.memory)) r.memory_roomy = e;
    }
  }
  if (explained) {
    r.explanation = explain(r.context, r.result,
                            scope == ReportScope::brief ? AlternativeScope::quoted
                                                        : AlternativeScope::all);
  }
  if (thresholds && r.result.found()) {
    r.thresholds = find_thresholds(r.context, r.result.ranked.front().plan, 0,
                                   &r.thresholds_not_searched, winner_work,
                                   Bisection::candidates, r.result.fastest_seconds);
  }
  if (s.plan) r.pinned = evaluate(r.context, *s.plan);
  return r;
}

}  // namespace planner

#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "planner/model/evaluate.hpp"
#include "planner/report/validate.hpp"

/// `planner validate --search`: each validation record's plan unpinned, the planner's own pick
/// searched on the record's model, cluster and workload, and the speed-up the planner believes
/// its pick has over the published plan (both timed by the same model). The search keeps to
/// what the record's software launched (its `constraints.fix`: SC21's Megatron-LM had no
/// sequence parallelism, say); the speed-up with today's features is reported beside it. A
/// planner whose search exploits its model's optimism believes large speed-ups; one that ranks
/// for trust stays near the published plans (docs/ranking.md §4, docs/validation.md §Search).

namespace planner {

struct SearchRegret {
  const ValidationRecord* record = nullptr;
  Evaluation published;  ///< the record's own plan
  Evaluation pick;       ///< the planner's recommendation with the plan unpinned
  double speedup = 0;    ///< pick tokens/s over the published plan's, both predicted
  /// The same with the record's constraints.fix lifted: the pick among today's features
  /// (FlashAttention, sequence parallelism, selective recompute, sharded optimizers), which
  /// software older than them could not launch. Equal to `speedup` without constraints.
  double speedup_today = 0;
  bool launchable = true;  ///< some framework launches the pick as written (constraints.hpp)
  /// The pick's ledger leaves the room its validated error asks for (model/memory_accuracy.hpp).
  bool memory_headroom = true;
  bool found = false;    ///< the search found a plan
};

/// One row per validation record with a training plan (records of the set "validation").
[[nodiscard]] std::vector<SearchRegret> search_regrets(
    const std::vector<ValidationRecord>& records);

/// The table and its summary (median and largest speed-up, picks over 1.10x, picks no
/// framework launches), text or JSON.
void print_search_regrets(const std::vector<SearchRegret>& rows, const std::string& format,
                          std::ostream& out);

}  // namespace planner

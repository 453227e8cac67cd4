#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/model/evaluate.hpp"

/// "What would change the answer": for each key input, the nearest value below and above the
/// scenario's at which the recommended plan changes, found by running the whole planner at
/// geometrically spaced values and bisecting the first bracket (docs/ranking.md §4; over a
/// candidate set where the input moves every plan monotonically, docs/performance.md). Depends
/// on the search and the model only; the report renders the records.

namespace planner {

enum class ThresholdSide { below, above };

[[nodiscard]] constexpr std::string_view to_string(ThresholdSide s) noexcept {
  return s == ThresholdSide::below ? "below" : "above";
}

/// Where the recommendation flips as one input moves.
struct Threshold {
  std::string parameter;  ///< JSON pointer into the scenario
  double base_value = 0;  ///< the scenario's value, base units
  double value = 0;       ///< the flip point, base units
  ThresholdSide side = ThresholdSide::below;
  std::optional<Plan> plan;  ///< the recommendation on the other side; none when none fits
  /// GPUs per node of the cluster `plan` was found on (the scenario's, except when that is
  /// the input moved, the world size kept), so its tiers can be named.
  std::int64_t gpus_per_node = 1;
  bool world_kept = false;   ///< GPUs per node moved with the world size kept
  std::string unit;          ///< the unit the input is quoted in: "GB/s", "tokens", "GiB", …
  double unit_scale = 1;     ///< base units per quoted unit
};

/// The plan the full search recommends for `ctx`, if any fits.
[[nodiscard]] std::optional<Plan> recommend(const Context& ctx);

/// The inputs searched: their JSON pointers, in output order.
[[nodiscard]] std::vector<std::string> threshold_parameters(const Context& ctx);

/// The work (SearchResult::work) one scan — one input, one direction — may spend on its
/// reruns of the search: 1,000,000 steps, a few tenths of a second on one core of the
/// reference machine (docs/performance.md §Bounded work). The scans that finish on the
/// bundled scenarios spend at most ~800,000 (q3-llama-3.1-405b-16k-h100, llama3-405b's
/// 760,000; the million-GPU fuzz input 800,000); a world of 8,648,640 GPUs (448 divisors) spends ~8,000,000 on one search, and
/// its ~14 scans of up to ~50 reruns each took minutes and a GiB (issue 14). A scan that would
/// pass the budget gives up and reports no threshold.
inline constexpr std::int64_t threshold_work_budget = 1'000'000;

/// When the scenario's own winner search (what each probe reruns, SearchOptions::accounting
/// false) took more than this, no scan is run: each needs 8 or more reruns of a search about
/// that size, so every one would give up, after spending its budget (time, and memory on
/// every thread at once).
inline constexpr std::int64_t threshold_search_limit = threshold_work_budget / 8;

/// A scan that ran out of threshold_work_budget: its input and direction.
struct ScanGivenUp {
  std::string parameter;  ///< JSON pointer into the scenario
  ThresholdSide side = ThresholdSide::below;
};

/// How a scan bisects its bracket: over a candidate set where the input moves every plan
/// monotonically (a tier's bandwidth, the GPU's memory; the default, explain/thresholds.cpp
/// CandidateProbe), or with a whole search per probe everywhere (the reference the first is
/// tested against; its scans run out of budget sooner).
enum class Bisection { candidates, whole_searches };

/// Thresholds around the plan `best` (the recommendation for `ctx`), whose winner search did
/// `search_work` (0: unknown, the scans run). The scans run on up to
/// `threads` threads (0: one per core); the result is the same for every thread count. Scans
/// that ran out of threshold_work_budget are listed in `not_searched`, when given.
/// `known_fastest_seconds`: the fastest seconds per token at `ctx` when the caller's search
/// found it (SearchResult::fastest_seconds; 0: searched here).
[[nodiscard]] std::vector<Threshold> find_thresholds(
    const Context& ctx, const Plan& best, unsigned threads = 0,
    std::vector<ScanGivenUp>* not_searched = nullptr, std::int64_t search_work = 0,
    Bisection bisection = Bisection::candidates, double known_fastest_seconds = 0);

}  // namespace planner

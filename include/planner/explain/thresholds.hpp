#pragma once
#include <vector>

#include "planner/model/evaluate.hpp"
#include "planner/explain/explain.hpp"

/// "What would change the answer": for each key input, the nearest value below and above the
/// scenario's at which the recommended plan changes, found by running the whole planner at
/// geometrically spaced values and bisecting the first bracket (docs/ranking.md §4).

namespace planner {

/// The plan the full search recommends for `ctx`, if any fits.
[[nodiscard]] std::optional<Plan> recommend(const Context& ctx);

/// The inputs searched: their JSON pointers, in output order.
[[nodiscard]] std::vector<std::string> threshold_parameters(const Context& ctx);

/// Thresholds around the plan `best` (the recommendation for `ctx`). The scans run on up to
/// `threads` threads (0: one per core); the result is the same for every thread count.
[[nodiscard]] std::vector<Threshold> find_thresholds(const Context& ctx, const Plan& best,
                                                     unsigned threads = 0);

}  // namespace planner

#pragma once
#include <vector>

#include "planner/model/evaluate.hpp"
#include "planner/model/serving/disaggregated.hpp"

/// The disaggregated deployments of a serving scenario (docs/model.md §8.5): every split of
/// the GPUs into a prefill pool and a decode pool of engines whose tp divides the node size and
/// the heads (pp 1), each evaluated. Only for a known output length with a concurrency or a
/// request rate (a per-engine batch has no total to share between pools), and for at most
/// 1024 GPUs (the splits grow with the square of the world).
namespace planner {

[[nodiscard]] bool disaggregation_applies(const Context& ctx) noexcept;
[[nodiscard]] std::vector<DisaggregatedTime> search_disaggregated(const Context& ctx);

/// Indices of the points no other point beats on both throughput per GPU (higher) and time
/// per output token (lower), ordered by time per output token.
[[nodiscard]] std::vector<std::size_t> pareto_front(const std::vector<double>& tokens_per_gpu,
                                                    const std::vector<double>& per_token);

}  // namespace planner

#pragma once
#include <string>
#include <vector>

#include "planner/explain/explain.hpp"
#include "planner/explain/thresholds.hpp"

/// The explanation's records in words: the sentences of the text report and the "summary",
/// "detail", "why" and "verdict" strings of the JSON (docs/output.md).

namespace planner {

/// Short description of a plan: "tp 8 (intra) x dp 8, ZeRO-1, SP, flash, selective recompute, …".
[[nodiscard]] std::string describe(const Context& ctx, const Plan& p);

/// The numbers that show the binding constraint.
[[nodiscard]] std::string binding_detail(const Context& ctx, const BindingConstraint& b);

/// Why an axis of the recommendation `best` has its degree.
[[nodiscard]] std::string axis_why(const Context& ctx, const Explanation& x,
                                   const Evaluation& best, const AxisNote& a);

/// The failure modes accepted by the plan `e`, as one sentence.
[[nodiscard]] std::string failure_mode_text(const Context& ctx, const Evaluation& e,
                                            const std::vector<FailureMode>& modes);

/// "pure data parallel (any ZeRO stage, FSDP included)", "without tp", …
[[nodiscard]] std::string alternative_name(const Context& ctx, AlternativeKind k);

/// "fits, 19.0 % slower: …" or "does not fit: needs …", against the recommendation `best`.
[[nodiscard]] std::string alternative_verdict(const Context& ctx, const Evaluation& best,
                                              const Alternative& a);

/// The output's name of a traffic note's axis: "tp", "dp x cp", "memory", …
[[nodiscard]] std::string traffic_axis_name(TrafficAxis a);

/// What a traffic note moves: "all-reduce", "ring K/V exchange (point-to-point)", …
[[nodiscard]] std::string traffic_collective(const TrafficNote& n);

/// One sentence with the figures of a traffic note of the plan `e`.
[[nodiscard]] std::string traffic_summary(const Context& ctx, const Evaluation& e,
                                          const TrafficNote& n);

/// "/cluster/inter_node/bandwidth at or below 12.5 GB/s (now 50 GB/s): <plan>".
[[nodiscard]] std::string threshold_summary(const Context& ctx, const Threshold& t);

}  // namespace planner

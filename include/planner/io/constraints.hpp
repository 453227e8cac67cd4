#pragma once
#include <string>
#include <string_view>

#include "planner/inputs/constraints.hpp"
#include "planner/inputs/scenario.hpp"
#include "planner/inputs/workload.hpp"

/// Text forms of the constraints: `--fix tp=8,zero<=1,flash=off` and `--framework megatron`,
/// also the scenario's "constraints": {"fix": "...", "framework": "..."}
/// (docs/scenario-format.md, "Constraints").

namespace planner {

/// `base` with each comma-separated item of `text` applied: NAME=VALUE, NAME<=VALUE or
/// NAME>=VALUE for the integer dimensions of inputs/space.hpp, NAME=on/off/true/false for the
/// switches, recompute=MODE and recompute!=MODE. NAME is a dimension's --fix name or its plan
/// key. Errors: InputError(origin, pointer, "item 'x': ...").
[[nodiscard]] Constraints parse_fix(std::string_view text, const std::string& origin,
                                    const std::string& pointer, Constraints base = {});

/// Refuses, on a serving scenario, a bound on a dimension only training plans have
/// (inputs/space.hpp Dimension::serving): micro_batch, vp, dp_shard, etp.
void check_fix_for_workload(const Constraints& c, WorkloadKind kind, const std::string& origin,
                            const std::string& pointer);

/// Refuses a pinned value no plan of the scenario can have (exit 2, naming the item) rather
/// than a search ending in "no configuration fits": a degree that does not divide the GPUs
/// (tp: and the heads), ep or etp on a dense model, an etp no tp holds, a vp no pipeline split
/// of the layers allows, a micro-batch above the global batch (docs/constraints.md).
void check_pinned(const Scenario& s, const std::string& origin, const std::string& pointer);

/// "any", "megatron", "torchtitan" or "deepspeed".
/// `--rank` / `constraints.rank`: "trusted" (the default: inside the validated envelope) or
/// "raw" (every plan by the time model alone); true for trusted.
[[nodiscard]] bool parse_rank(std::string_view text, const std::string& origin,
                              const std::string& pointer);

[[nodiscard]] Framework parse_framework(std::string_view text, const std::string& origin,
                                        const std::string& pointer);

}  // namespace planner

#pragma once
#include <string>
#include <string_view>

#include "planner/inputs/constraints.hpp"

/// Text forms of the constraints: `--fix tp=8,zero<=1,flash=off` and `--framework megatron`,
/// also the scenario's "constraints": {"fix": "...", "framework": "..."}
/// (docs/scenario-format.md, "Constraints").

namespace planner {

/// `base` with each comma-separated item of `text` applied: NAME=VALUE, NAME<=VALUE or
/// NAME>=VALUE, NAME one of tp, cp, dp, pp, zero (integers), flash, sp (on/off/true/false,
/// "=" only), recompute (none/selective/full, "=" only). Errors:
/// InputError(origin, pointer, "item 'x': ...").
[[nodiscard]] Constraints parse_fix(std::string_view text, const std::string& origin,
                                    const std::string& pointer, Constraints base = {});

/// "any", "megatron", "torchtitan" or "deepspeed".
/// `--rank` / `constraints.rank`: "trusted" (the default: inside the validated envelope) or
/// "raw" (every plan by the time model alone); true for trusted.
[[nodiscard]] bool parse_rank(std::string_view text, const std::string& origin,
                              const std::string& pointer);

[[nodiscard]] Framework parse_framework(std::string_view text, const std::string& origin,
                                        const std::string& pointer);

}  // namespace planner

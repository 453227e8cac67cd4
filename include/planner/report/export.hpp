#pragma once
#include <string>

#include "planner/model/evaluate.hpp"

/// A plan as a framework's launch arguments (docs/exports.md).

namespace planner {

/// Megatron-LM `pretrain_gpt.py` arguments for `p` on `ctx`, one per line with a trailing
/// backslash, after a comment line. Names as in megatron/training/arguments.py (Megatron-LM
/// core_r0.12). The plan must satisfy the megatron framework rules (search/constraints.hpp).
[[nodiscard]] std::string megatron_arguments(const Context& ctx, const Plan& p);

}  // namespace planner

#pragma once
#include <array>
#include <string>
#include <string_view>

#include "planner/inputs/constraints.hpp"
#include "planner/model/evaluate.hpp"

/// A plan as a framework's launch arguments or config (docs/exports.md). Each writer expects a
/// plan that satisfies its framework's rules (search/constraints.hpp).

namespace planner {

/// Megatron-LM `pretrain_gpt.py` arguments for `p` on `ctx`, one per line with a trailing
/// backslash, after a comment line. Names as in megatron/training/arguments.py (Megatron-LM
/// core_r0.12).
[[nodiscard]] std::string megatron_arguments(const Context& ctx, const Plan& p);

/// A torchtitan TOML job config: a comment line, then [training], [parallelism] and
/// [activation_checkpoint] (torchtitan v0.2.2 torchtitan/config/job_config.py).
[[nodiscard]] std::string torchtitan_toml(const Context& ctx, const Plan& p);

/// A DeepSpeed config (JSON, DeepSpeed 0.19.6 deepspeed/runtime/config.py and constants.py).
[[nodiscard]] std::string deepspeed_json(const Context& ctx, const Plan& p);

/// One row per export target: the `--to` name, the framework whose rules the plan must follow,
/// its name in messages, and the writer.
struct Exporter {
  std::string_view name;
  Framework framework;
  std::string_view label;
  std::string (*write)(const Context&, const Plan&);
};

inline constexpr std::array<Exporter, 3> exporters{{
    {"megatron", Framework::megatron, "Megatron-LM", &megatron_arguments},
    {"torchtitan", Framework::torchtitan, "torchtitan", &torchtitan_toml},
    {"deepspeed", Framework::deepspeed, "DeepSpeed", &deepspeed_json},
}};

}  // namespace planner

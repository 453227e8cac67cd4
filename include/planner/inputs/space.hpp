#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "planner/inputs/plan.hpp"

/// The search space as data: one row per setting of a Plan that the search chooses and a
/// user can bound. `--fix` and the scenario's constraints.fix (io/constraints.cpp) parse their
/// items by these names and kinds, Constraints (inputs/constraints.hpp) holds one bound per
/// row, the search checks each bound at the step of its enumeration where the value is
/// decided (`Decided`; search/constraints.hpp `within`), and the help and error texts list
/// the names from here. A searched setting added to Plan is one row here plus its cost in the
/// model (docs/architecture.md, "Adding a searched setting").

namespace planner {

/// The dimensions, in the table's order. The first five are the axes in Axis's order
/// (plan.hpp), so an axis's dimension is `dim_of(axis)`.
enum class Dim {
  tp, cp, dp, pp, ep,
  etp, vp, dp_shard, replicas, micro_batch,
  zero, recompute, flash, sp,
};
inline constexpr std::size_t dim_count = 14;

/// The values a dimension takes and how an item spells them.
enum class SpaceKind {
  integer,  ///< NAME=N, NAME<=N, NAME>=N (items combine: tp>=2,tp<=4)
  choice,   ///< a name from the dimension's list; '=' pins it, '!=' rules one out
  on_off,   ///< on, off, true or false; '=' only
};

/// The step of the training search's enumeration (src/search/enumerate.hpp) at which a
/// dimension's value is known, so a bound prunes as early as it can: the placed degrees of a
/// factorisation, then the folded expert degrees, the interleaving depth, the hybrid shard
/// group, the micro-batch list, and last the row settings (ZeRO stage, recompute, SP).
enum class Decided { placed, folded, interleave, hybrid, micro_batch, row };

struct SpaceDim {
  Dim dim;
  std::string_view name;      ///< as --fix and constraints.fix spell it
  std::string_view plan_key;  ///< the scenario's and the output's plan key, also accepted by --fix
  SpaceKind kind;
  std::int64_t min;  ///< the smallest value a bound may name
  std::int64_t max;  ///< the largest
  Decided decided;
  /// The value a bound constrains (a derived one for etp, dp_shard and replicas).
  std::int64_t (*value)(const Plan&);
  /// Whether the plan has the setting at all (sequence parallelism only with tp > 1); null:
  /// always.
  bool (*applies)(const Plan&);
  /// Sets the value on a plan (`planner memory --NAME`); null where the value is derived
  /// (replicas: dp / dp_shard).
  void (*set)(Plan&, std::int64_t);
  /// The largest value a flag may give, as a power of two: the loader's limit for the same plan
  /// field (io/scenario_rules.hpp: 2^24 GPUs for a degree, 2^16 for a batch count); 0 where the
  /// kind bounds it (a stage, a switch, a choice).
  int limit_log2;
  /// Whether a plan's output (`plan` in JSON) names the setting: null always; the others only
  /// where the plan uses them, so that output without them is unchanged (docs/output.md).
  bool (*shown)(const Plan&);
  /// --fix accepts it on a serving scenario; the training-only settings (the serving search
  /// takes its micro-batch from the workload and has no interleaving or sharded state) are
  /// refused there with an error rather than searched into "no configuration fits".
  bool serving;
  std::string_view range;  ///< what an out-of-range value is told, after "item 'x': "
  std::string_view meaning;
};

inline constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max();

inline constexpr std::array<SpaceDim, dim_count> dimensions{{
    {Dim::tp, "tp", "tp", SpaceKind::integer, 1, unbounded, Decided::placed,
     [](const Plan& p) { return p.tp; }, nullptr,
     [](Plan& p, std::int64_t v) { p.tp = v; }, 24, nullptr, true,
     "a degree is at least 1", "tensor-parallel degree"},
    {Dim::cp, "cp", "cp", SpaceKind::integer, 1, unbounded, Decided::placed,
     [](const Plan& p) { return p.cp; }, nullptr,
     [](Plan& p, std::int64_t v) { p.cp = v; }, 24, nullptr, true,
     "a degree is at least 1", "context-parallel degree"},
    {Dim::dp, "dp", "dp", SpaceKind::integer, 1, unbounded, Decided::placed,
     [](const Plan& p) { return p.dp; }, nullptr,
     [](Plan& p, std::int64_t v) { p.dp = v; }, 24, nullptr, true,
     "a degree is at least 1", "data-parallel degree"},
    {Dim::pp, "pp", "pp", SpaceKind::integer, 1, unbounded, Decided::placed,
     [](const Plan& p) { return p.pp; }, nullptr,
     [](Plan& p, std::int64_t v) { p.pp = v; }, 24, nullptr, true,
     "a degree is at least 1", "pipeline stages"},
    {Dim::ep, "ep", "ep", SpaceKind::integer, 1, unbounded, Decided::folded,
     [](const Plan& p) { return p.ep; }, nullptr,
     [](Plan& p, std::int64_t v) { p.ep = v; }, 24, [](const Plan& p) { return p.ep > 1; }, true,
     "a degree is at least 1", "expert-parallel degree (MoE)"},
    {Dim::etp, "etp", "etp", SpaceKind::integer, 1, unbounded, Decided::folded,
     [](const Plan& p) { return expert_tp(p); }, nullptr,
     [](Plan& p, std::int64_t v) { p.etp = v; }, 24,
     [](const Plan& p) { return expert_tp(p) != p.tp; }, false,
     "a degree is at least 1", "expert tensor-parallel degree (MoE; tp when not split)"},
    {Dim::vp, "vp", "virtual_stages", SpaceKind::integer, 1, unbounded, Decided::interleave,
     [](const Plan& p) { return p.virtual_stages; }, nullptr,
     [](Plan& p, std::int64_t v) { p.virtual_stages = v; }, 16,
     [](const Plan& p) { return p.virtual_stages > 1; }, false,
     "a stage holds at least 1 model chunk (1: plain 1F1B)",
     "virtual pipeline stages per stage (interleaved 1F1B; 1 is plain 1F1B)"},
    {Dim::dp_shard, "dp_shard", "dp_shard", SpaceKind::integer, 1, unbounded, Decided::hybrid,
     [](const Plan& p) { return shard_dp(p); }, nullptr,
     [](Plan& p, std::int64_t v) { p.dp_shard = v; }, 24,
     [](const Plan& p) { return state_replicas(p) > 1; }, false,
     "a shard group has at least 1 data-parallel rank",
     "data-parallel ranks of a shard group (hybrid sharding; dp when not hybrid)"},
    {Dim::replicas, "replicas", "", SpaceKind::integer, 1, unbounded, Decided::hybrid,
     [](const Plan& p) { return state_replicas(p); }, nullptr,
     nullptr, 24, nullptr, true,
     "the state has at least 1 copy (1: no hybrid sharding)",
     "copies of the sharded state (1: no hybrid sharding)"},
    {Dim::micro_batch, "micro_batch", "micro_batch", SpaceKind::integer, 1, unbounded,
     Decided::micro_batch, [](const Plan& p) { return p.micro_batch; }, nullptr,
     [](Plan& p, std::int64_t v) { p.micro_batch = v; }, 16, nullptr, false,
     "a micro-batch holds at least 1 sequence", "sequences per micro-batch"},
    {Dim::zero, "zero", "zero", SpaceKind::integer, 0, 3, Decided::row,
     [](const Plan& p) -> std::int64_t { return p.zero; }, nullptr,
     [](Plan& p, std::int64_t v) { p.zero = static_cast<int>(v); }, 0, nullptr, true,
     "ZeRO stages are 0 to 3", "ZeRO stage 0-3"},
    {Dim::recompute, "recompute", "recompute", SpaceKind::choice, 0, 3, Decided::row,
     [](const Plan& p) { return static_cast<std::int64_t>(p.recompute); }, nullptr,
     [](Plan& p, std::int64_t v) { p.recompute = static_cast<Recompute>(v); }, 0, nullptr, true,
     "expected none, selective, op or full", "activation recompute: none, selective, op or full"},
    {Dim::flash, "flash", "flash_attention", SpaceKind::on_off, 0, 1, Decided::row,
     [](const Plan& p) -> std::int64_t { return p.flash_attention ? 1 : 0; }, nullptr,
     [](Plan& p, std::int64_t v) { p.flash_attention = v != 0; }, 0, nullptr, true,
     "expected on or off", "tiled (flash) attention: on or off"},
    {Dim::sp, "sp", "sequence_parallel", SpaceKind::on_off, 0, 1, Decided::row,
     [](const Plan& p) -> std::int64_t { return p.sequence_parallel ? 1 : 0; },
     [](const Plan& p) { return p.tp > 1; },
     [](Plan& p, std::int64_t v) { p.sequence_parallel = v != 0; }, 0, nullptr, true,
     "expected on or off", "sequence parallelism (with tp > 1): on or off"},
}};

static_assert(static_cast<std::size_t>(Dim::ep) + 1 == axis_count,
              "the axes lead the dimensions, in Axis's order");

[[nodiscard]] constexpr const SpaceDim& info(Dim d) noexcept {
  return dimensions[static_cast<std::size_t>(d)];
}

[[nodiscard]] constexpr Dim dim_of(Axis a) noexcept { return static_cast<Dim>(a); }

/// The dimension an item names: its --fix name or its plan key.
[[nodiscard]] constexpr std::optional<Dim> dim_named(std::string_view name) noexcept {
  for (const SpaceDim& row : dimensions) {
    if (row.name == name || (!row.plan_key.empty() && row.plan_key == name)) return row.dim;
  }
  return std::nullopt;
}

}  // namespace planner

#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "planner/inputs/plan.hpp"

/// What the user's stack can run: bounds on the axes and switches (`--fix tp=8,zero<=1`,
/// the scenario's "constraints") and the framework whose launch rules apply (`--framework`).
/// The search keeps only plans inside them (search/constraints.hpp has the framework rules).

namespace planner {

/// `any` (the default): a plan at least one of the three frameworks launches as written, rank
/// order included (docs/constraints.md). `unrestricted`: every rank order and combination the
/// time model can time, launchable or not, for what-if questions (never a default).
enum class Framework { any, megatron, torchtitan, deepspeed, unrestricted };

inline constexpr std::array<std::string_view, 5> framework_names{
    "any", "megatron", "torchtitan", "deepspeed", "unrestricted"};

/// The frameworks whose launch rules `any` takes the union of.
inline constexpr std::array<Framework, 3> launching_frameworks{
    Framework::megatron, Framework::torchtitan, Framework::deepspeed};

[[nodiscard]] constexpr std::string_view to_string(Framework f) noexcept {
  return framework_names[static_cast<std::size_t>(f)];
}

/// An inclusive range of an integer setting.
struct Bound {
  std::int64_t min = 1;
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  [[nodiscard]] constexpr bool holds(std::int64_t v) const noexcept { return v >= min && v <= max; }
};

struct Constraints {
  std::array<Bound, axis_count> degrees{};  ///< by Axis
  Bound zero{0, 3};
  /// Copies of the sharded state (Plan::dp_shard's replicas): `replicas=1` rules hybrid
  /// sharding out, `replicas>=2` asks for it.
  Bound replicas{};
  std::optional<Recompute> recompute;
  /// Recompute modes ruled out (`recompute!=selective`), one bit per Recompute: a stack that
  /// lacks one (Megatron-LM before Korthikanti et al. 2022 had full checkpointing only).
  std::uint8_t recompute_excluded = 0;
  std::optional<bool> flash_attention;
  std::optional<bool> sequence_parallel;
  Framework framework = Framework::any;
  /// Recommend only plans inside the validated envelope (model/regime.hpp; docs/ranking.md
  /// §4): `--rank trusted`, the default. `--rank raw` ranks every plan by the time model alone.
  bool trusted = true;

  [[nodiscard]] bool allows(Recompute r) const noexcept {
    return (!recompute || *recompute == r) &&
           (recompute_excluded & (1u << static_cast<unsigned>(r))) == 0;
  }
  [[nodiscard]] const Bound& degree(Axis a) const noexcept {
    return degrees[static_cast<std::size_t>(a)];
  }
};

/// True when `c` admits every plan (no bound narrowed, no setting fixed, no framework rule), so
/// the search can skip its checks.
[[nodiscard]] inline bool unconstrained(const Constraints& c) noexcept {
  const Bound any;
  for (const Bound& b : c.degrees) {
    if (b.min > any.min || b.max < any.max) return false;
  }
  return c.zero.min <= 0 && c.zero.max >= 3 && c.replicas.min <= any.min &&
         c.replicas.max >= any.max && !c.recompute && c.recompute_excluded == 0 &&
         !c.flash_attention &&
         !c.sequence_parallel && c.framework == Framework::unrestricted && !c.trusted;
}

}  // namespace planner

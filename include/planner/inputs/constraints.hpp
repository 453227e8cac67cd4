#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "planner/inputs/plan.hpp"
#include "planner/inputs/space.hpp"

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

/// The bounds a dimension starts with: every value it can take (inputs/space.hpp).
[[nodiscard]] constexpr std::array<Bound, dim_count> open_bounds() noexcept {
  std::array<Bound, dim_count> out{};
  for (const SpaceDim& row : dimensions) {
    out[static_cast<std::size_t>(row.dim)] = {row.min, row.max};
  }
  return out;
}

struct Constraints {
  /// One bound per dimension of the search space (inputs/space.hpp), by Dim: `tp=8` pins tp,
  /// `zero<=1` bounds the ZeRO stage, `replicas=1` rules hybrid sharding out, `sp=on` pins a
  /// switch (0 off, 1 on), `recompute=full` a choice (its index in recompute_names).
  std::array<Bound, dim_count> bounds = open_bounds();
  /// Values ruled out one by one (`recompute!=selective`), bit v for value v, by Dim: a stack
  /// that lacks one mode (Megatron-LM before Korthikanti et al. 2022 had full checkpointing
  /// only).
  std::array<std::uint64_t, dim_count> excluded{};
  Framework framework = Framework::any;
  /// Recommend only plans inside the validated envelope (model/regime.hpp; docs/ranking.md
  /// §4): `--rank trusted`, the default. `--rank raw` ranks every plan by the time model alone.
  bool trusted = true;

  [[nodiscard]] const Bound& bound(Dim d) const noexcept {
    return bounds[static_cast<std::size_t>(d)];
  }
  [[nodiscard]] Bound& bound(Dim d) noexcept { return bounds[static_cast<std::size_t>(d)]; }
  [[nodiscard]] const Bound& degree(Axis a) const noexcept { return bound(dim_of(a)); }
  /// Whether value `v` of dimension `d` is inside its bound and not ruled out.
  [[nodiscard]] bool holds(Dim d, std::int64_t v) const noexcept {
    const std::uint64_t out = excluded[static_cast<std::size_t>(d)];
    return bound(d).holds(v) && !(v >= 0 && v < 64 && ((out >> v) & 1u) != 0);
  }
  /// The one value a dimension is pinned to, if any.
  [[nodiscard]] std::optional<std::int64_t> pinned(Dim d) const noexcept {
    const Bound& b = bound(d);
    if (b.min != b.max) return std::nullopt;
    return b.min;
  }
  /// A pinned switch (flash, sp): true for on.
  [[nodiscard]] std::optional<bool> pinned_switch(Dim d) const noexcept {
    if (const auto v = pinned(d)) return *v == 1;
    return std::nullopt;
  }
  [[nodiscard]] std::optional<Recompute> pinned_recompute() const noexcept {
    if (const auto v = pinned(Dim::recompute)) return static_cast<Recompute>(*v);
    return std::nullopt;
  }
  [[nodiscard]] bool allows(Recompute r) const noexcept {
    return holds(Dim::recompute, static_cast<std::int64_t>(r));
  }
  /// Whether the constraints narrow dimension `d`: a bound left open (every value of its row)
  /// and no value ruled out hold for every plan.
  [[nodiscard]] bool narrowed(Dim d) const noexcept {
    const SpaceDim& row = info(d);
    const Bound& b = bound(d);
    return b.min > row.min || b.max < row.max || excluded[static_cast<std::size_t>(d)] != 0;
  }
};

/// The dimensions `c` narrows, one bit per Dim. By default none is (the constraints are
/// checked for the framework's rules and the envelope alone), and the search
/// (src/search/search.cpp) computes this once, not per configuration.
[[nodiscard]] inline std::uint32_t narrowed_dims(const Constraints& c) noexcept {
  std::uint32_t out = 0;
  for (const SpaceDim& row : dimensions) {
    if (c.narrowed(row.dim)) out |= 1u << static_cast<unsigned>(row.dim);
  }
  return out;
}

/// True when `c` admits every plan (no bound narrowed, no value ruled out, no framework rule),
/// so the search can skip its checks.
[[nodiscard]] inline bool unconstrained(const Constraints& c) noexcept {
  return narrowed_dims(c) == 0 && c.framework == Framework::unrestricted && !c.trusted;
}

}  // namespace planner

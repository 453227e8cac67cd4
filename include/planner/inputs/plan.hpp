#pragma once
#include <array>
#include <cstdint>
#include <string_view>

/// One parallel configuration: the degrees of the four axes, the memory-saving switches, the
/// batch split and the placement of the axes on the machine.

namespace planner {

enum class Recompute { none, selective, full };

[[nodiscard]] constexpr std::string_view to_string(Recompute r) noexcept {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

/// The four axes. Placement lists them innermost first: the innermost axis gets
/// consecutive ranks, so it is the one most likely to stay inside a node.
enum class Axis { tp, cp, dp, pp };

[[nodiscard]] constexpr std::string_view to_string(Axis a) noexcept {
  switch (a) {
    case Axis::tp: return "tp";
    case Axis::cp: return "cp";
    case Axis::dp: return "dp";
    case Axis::pp: return "pp";
  }
  return "tp";
}

using Placement = std::array<Axis, 4>;

/// Megatron-LM's default order (tp innermost, then cp, dp, pp).
inline constexpr Placement default_placement{Axis::tp, Axis::cp, Axis::dp, Axis::pp};

struct Plan {
  std::int64_t dp = 1;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t cp = 1;
  int zero = 0;  ///< ZeRO stage 0–3, sharding over the dp·cp ranks that hold the same weights
  Recompute recompute = Recompute::none;
  bool flash_attention = false;
  bool sequence_parallel = false;
  std::int64_t micro_batch = 1;  ///< sequences per micro-batch per model replica
  std::int64_t grad_accum = 1;   ///< micro-batches per optimizer step per replica
  Placement placement = default_placement;
};

[[nodiscard]] inline std::int64_t degree(const Plan& p, Axis a) noexcept {
  switch (a) {
    case Axis::tp: return p.tp;
    case Axis::cp: return p.cp;
    case Axis::dp: return p.dp;
    case Axis::pp: return p.pp;
  }
  return 1;
}

[[nodiscard]] inline std::int64_t gpus(const Plan& p) noexcept {
  return p.dp * p.tp * p.pp * p.cp;
}

}  // namespace planner

#pragma once
#include <algorithm>

#include "planner/model/memory.hpp"

/// The memory ledger's measured error, and the headroom a plan keeps for it (docs/ranking.md
/// §6).

namespace planner {

/// The memory ledger's error on the validation runs that measured peak memory (torchtitan on
/// H100 and H200 with FSDP, tp, pp and cp: the caching allocator's maximum reserved against
/// the ledger with its default reserve): runs, median and worst |error| ((predicted −
/// measured) / measured), and the most a measured peak exceeded its prediction, (measured −
/// predicted) / predicted. tests/report/test_accuracy.cpp recomputes it from validation/.
struct MemoryAccuracy {
  int records = 0;
  double median_abs_error = 0;
  double max_abs_error = 0;
  double max_excess = 0;
};
inline constexpr MemoryAccuracy memory_accuracy{12, 0.03375, 0.07897, 0.08574};

/// The share of the GPU's memory the ledger leaves free, (capacity − total) / capacity, ≥ 0.
[[nodiscard]] inline double spare_fraction(const MemoryLedger& l) noexcept {
  return l.capacity_bytes > 0
             ? std::max(0.0, (l.capacity_bytes - l.total_bytes()) / l.capacity_bytes)
             : 0.0;
}

/// Whether a training plan's ledger leaves the headroom its validated error asks for: what
/// the caching allocator reserves (the figure the runs measured) grown by the largest excess a
/// published peak showed, plus the runtime reserve, still fits the GPU.
[[nodiscard]] inline bool has_memory_headroom(const MemoryLedger& l) noexcept {
  return l.allocator_reserved_bytes() * (1.0 + memory_accuracy.max_excess) + l.reserve_bytes <=
         l.capacity_bytes;
}

}  // namespace planner

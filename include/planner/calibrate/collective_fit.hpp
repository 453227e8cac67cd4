#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "planner/calibrate/inputs.hpp"
#include "planner/calibrate/least_squares.hpp"

/// The collective model calibrate fits, per network tier: the planner's α–β model
/// (include/planner/collectives.hpp, docs/model.md §4) with the tier's bandwidth read as
/// nccl-tests' *bus bandwidth*. nccl-tests defines busbw = algbw × factor, algbw = size/time,
/// with factor 2(n−1)/n for all-reduce, (n−1)/n for all-gather and reduce-scatter
/// (NVIDIA/nccl-tests doc/PERFORMANCE.md), (n−1)/n for alltoall (src/alltoall.cu,
/// AlltoAllGetBw) and 1 for sendrecv (src/sendrecv.cu). That factor is exactly the ring
/// model's wire term: ring all-reduce moves 2(n−1)/n·M per GPU, so
///     time(M) = hops(op, n)·α + factor(op, n)·M / B
/// with hops the ring's latency steps: 2(n−1) for all-reduce, n−1 for all-gather,
/// reduce-scatter and all-to-all, 1 for sendrecv. B (bytes/s per GPU) is the `bandwidth` of
/// the scenario's tier and α (s) its `latency`. Fitted by fit_weighted() with u = hops and
/// v = factor·M over every table of the tier, weights 1/time (p = 1): on the public MI300X
/// samples the relative fit (p = 2) let the many latency-bound sizes, where NCCL/RCCL switch
/// protocols (LL, LL128, Simple) and the single-α model misfits, pull the bandwidth 7-9 %
/// below the large-message busbw; 1/time weights keep it within 1 % (docs/calibrate.md §Fits).

namespace planner::calibrate {

/// The loader's range for a link (docs/errors.md §Limits): a fitted bandwidth and its band
/// stay inside it, so a profile the fit writes is one the loader reads.
inline constexpr double min_link_bytes_per_second = 1.0;
inline constexpr double max_link_band_bytes_per_second = 1e18;
/// The loader's largest latency; a latency band's upper end is cut to it.
inline constexpr double max_link_latency_seconds = 60.0;

inline constexpr double collective_weight_power = 1.0;

[[nodiscard]] inline double bus_factor(NcclOp op, std::int64_t ranks) noexcept {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case NcclOp::all_reduce: return 2.0 * (n - 1.0) / n;
    case NcclOp::all_gather:
    case NcclOp::reduce_scatter:
    case NcclOp::all_to_all: return (n - 1.0) / n;
    case NcclOp::send_recv: return 1.0;
  }
  return 1.0;
}

[[nodiscard]] inline double ring_hops(NcclOp op, std::int64_t ranks) noexcept {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case NcclOp::all_reduce: return 2.0 * (n - 1.0);
    case NcclOp::all_gather:
    case NcclOp::reduce_scatter:
    case NcclOp::all_to_all: return n - 1.0;
    case NcclOp::send_recv: return 1.0;
  }
  return 1.0;
}

enum class TierName { intra_node, inter_node };

[[nodiscard]] inline std::string_view to_string(TierName t) noexcept {
  return t == TierName::intra_node ? "intra_node" : "inter_node";
}

/// The fitted tier: latency α and bandwidth B with their standard errors and the residuals.
struct TierFit {
  TierName tier = TierName::intra_node;
  double latency_seconds = 0;
  double latency_se_seconds = 0;
  double bandwidth_bytes_per_second = 0;
  double bandwidth_se_bytes_per_second = 0;
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  std::size_t points = 0;
  bool latency_clamped = false;  ///< the fit's intercept was negative and is reported as 0
  std::vector<std::string> sources;  ///< "file (all_reduce_perf, 8 ranks, 1 node, 23 sizes)"
};

/// A single-node table calibrates the intra-node tier, a multi-node one the inter-node tier
/// (a ring across nodes runs at the speed of its slowest link, the network).
[[nodiscard]] inline TierName tier_of(const NcclTable& t) noexcept {
  return t.nodes > 1 ? TierName::inter_node : TierName::intra_node;
}

/// Fits one tier from its tables (all of the same tier). Throws InputError naming the first
/// table when the data cannot pin both constants (time not growing with size).
[[nodiscard]] TierFit fit_tier(const std::vector<const NcclTable*>& tables);

/// The model's time for one row of `t` under `f` (for residual tables and tests).
[[nodiscard]] inline double model_seconds(const TierFit& f, NcclOp op, std::int64_t ranks,
                                          double size_bytes) noexcept {
  return ring_hops(op, ranks) * f.latency_seconds +
         bus_factor(op, ranks) * size_bytes / f.bandwidth_bytes_per_second;
}

}  // namespace planner::calibrate

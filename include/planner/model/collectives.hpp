#pragma once
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "planner/inputs/cluster.hpp"

/// α–β costs of the collectives the planner uses (docs/model.md §4).
/// `bytes` is always the size of the whole buffer M: the buffer each rank reduces
/// (all-reduce), the gathered output (all-gather), the input before scattering
/// (reduce-scatter), what each rank sends in total (all-to-all), the message (point-to-point).

namespace planner {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, point_to_point };
enum class Algorithm { ring, tree, one_shot, pairwise, direct };

[[nodiscard]] constexpr std::string_view to_string(Collective c) noexcept {
  switch (c) {
    case Collective::all_reduce: return "all-reduce";
    case Collective::all_gather: return "all-gather";
    case Collective::reduce_scatter: return "reduce-scatter";
    case Collective::all_to_all: return "all-to-all";
    case Collective::point_to_point: return "point-to-point";
  }
  return "all-reduce";
}

[[nodiscard]] constexpr std::string_view to_string(Algorithm a) noexcept {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::one_shot: return "one-shot";
    case Algorithm::pairwise: return "pairwise";
    case Algorithm::direct: return "direct";
  }
  return "ring";
}

/// Time of one collective, split into its latency (α) and wire (bytes/β) parts.
struct CollectiveCost {
  Algorithm algorithm = Algorithm::ring;
  double latency_seconds = 0;
  double wire_seconds = 0;
  [[nodiscard]] double seconds() const noexcept { return latency_seconds + wire_seconds; }
};

/// ⌈log2 n⌉ for n ≥ 1: the depth of a binary tree over n ranks, counted in integers (the bit
/// width of n − 1), which is exactly ceil(log2(n)) for every n below 2^49.
[[nodiscard]] inline double tree_depth(std::int64_t n) noexcept {
  return n <= 1 ? 0.0 : static_cast<double>(std::bit_width(static_cast<std::uint64_t>(n - 1)));
}

/// Whether `algorithm` implements `op` in the libraries we model. NCCL/RCCL provide ring and
/// (for all-reduce) double-binary-tree algorithms; one-shot all-reduce is the custom kernel of
/// vLLM / TensorRT-LLM, which needs peer memory access (a node's NVLink/NVSwitch domain).
[[nodiscard]] inline bool available(Collective op, Algorithm algorithm, bool peer_memory) noexcept {
  switch (op) {
    case Collective::all_reduce:
      return algorithm == Algorithm::ring || algorithm == Algorithm::tree ||
             (algorithm == Algorithm::one_shot && peer_memory);
    case Collective::all_gather:
    case Collective::reduce_scatter: return algorithm == Algorithm::ring;
    case Collective::all_to_all: return algorithm == Algorithm::pairwise;
    case Collective::point_to_point: return algorithm == Algorithm::direct;
  }
  return false;
}

/// Cost of `op` over `ranks` ranks with `algorithm`, on a tier with per-GPU bandwidth B and
/// per-hop latency α. Sources (docs/model.md §4):
/// - ring all-reduce 2(n−1)/n·M/B + 2(n−1)α: Patarasuk & Yuan 2009; Thakur et al. 2005 §4;
///   the answer key's formula.
/// - ring all-gather / reduce-scatter (n−1)/n·M/B + (n−1)α: Thakur et al. 2005 §3.
/// - tree all-reduce 2⌈log2 n⌉α + 2M/B: reduce then broadcast along a pipelined binary tree
///   (NCCL's double binary tree, Sanders et al. 2009), each rank sending M each way.
/// - one-shot all-reduce α + (n−1)M/B: every rank pushes its whole buffer to the others in one
///   step and reduces locally.
/// - pairwise all-to-all (n−1)/n·M/B + (n−1)α; point-to-point α + M/B.
/// A group of one rank costs nothing. Call only with `available(op, algorithm, …)`.
[[nodiscard]] inline CollectiveCost collective_cost(Collective op, Algorithm algorithm,
                                                    std::int64_t ranks, double bytes,
                                                    const Tier& tier) noexcept {
  CollectiveCost c;
  c.algorithm = algorithm;
  if (ranks <= 1 && op != Collective::point_to_point) return c;
  const double n = static_cast<double>(ranks);
  const double alpha = tier.latency_seconds;
  const double per_byte = 1.0 / tier.bandwidth_bytes_per_second;
  switch (algorithm) {
    case Algorithm::ring:
      if (op == Collective::all_reduce) {
        c.latency_seconds = 2.0 * (n - 1.0) * alpha;
        c.wire_seconds = 2.0 * (n - 1.0) / n * bytes * per_byte;
      } else {
        c.latency_seconds = (n - 1.0) * alpha;
        c.wire_seconds = (n - 1.0) / n * bytes * per_byte;
      }
      break;
    case Algorithm::tree:
      c.latency_seconds = 2.0 * tree_depth(ranks) * alpha;
      c.wire_seconds = 2.0 * bytes * per_byte;
      break;
    case Algorithm::one_shot:
      c.latency_seconds = alpha;
      c.wire_seconds = (n - 1.0) * bytes * per_byte;
      break;
    case Algorithm::pairwise:
      c.latency_seconds = (n - 1.0) * alpha;
      c.wire_seconds = (n - 1.0) / n * bytes * per_byte;
      break;
    case Algorithm::direct:
      c.latency_seconds = alpha;
      c.wire_seconds = bytes * per_byte;
      break;
  }
  return c;
}

inline constexpr std::array<Algorithm, 5> all_algorithms{
    Algorithm::ring, Algorithm::tree, Algorithm::one_shot, Algorithm::pairwise, Algorithm::direct};

/// The cheapest available algorithm for this message, as a collective library that tunes
/// per message size would pick it (NCCL's tuner chooses by the same α–β estimate). Ties go
/// to the earlier algorithm in `all_algorithms`, so the choice is deterministic.
[[nodiscard]] inline CollectiveCost cheapest_collective(Collective op, std::int64_t ranks,
                                                        double bytes, const Tier& tier,
                                                        bool peer_memory) noexcept {
  CollectiveCost best;
  bool found = false;
  for (Algorithm a : all_algorithms) {
    if (!available(op, a, peer_memory)) continue;
    const CollectiveCost c = collective_cost(op, a, ranks, bytes, tier);
    if (!found || c.seconds() < best.seconds()) {
      best = c;
      found = true;
    }
  }
  return best;
}

/// The same on `tier`, whose own `peer_memory` says whether one-shot kernels can run.
[[nodiscard]] inline CollectiveCost cheapest_collective(Collective op, std::int64_t ranks,
                                                        double bytes, const Tier& tier) noexcept {
  return cheapest_collective(op, ranks, bytes, tier, tier.peer_memory);
}

}  // namespace planner

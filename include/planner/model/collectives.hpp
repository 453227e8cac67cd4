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
enum class Algorithm { ring, tree, one_shot, pairwise, direct, hierarchical };

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
    case Algorithm::hierarchical: return "hierarchical";
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
    case Algorithm::hierarchical:  // two tiers: hierarchical_collective
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
/// Always inlined (gnu::always_inline): at a call site with a constant `op` the compiler folds
/// `available` and keeps only the algorithms that implement it; out of line, the data-parallel
/// traffic's four calls per evaluation took a quarter of its time (perf, bench evaluate/).
[[nodiscard, gnu::always_inline]] inline CollectiveCost cheapest_collective(
    Collective op, std::int64_t ranks, double bytes, const Tier& tier, bool peer_memory) noexcept {
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
[[nodiscard, gnu::always_inline]] inline CollectiveCost cheapest_collective(
    Collective op, std::int64_t ranks, double bytes, const Tier& tier) noexcept {
  return cheapest_collective(op, ranks, bytes, tier, tier.peer_memory);
}

/// Two-level collective over a group of `ranks` ranks, `inside` of them in each domain of
/// the `inner` tier (the node), the domains joined by `outer`: NCCL's hierarchical path and
/// its multi-rail rings (NCCL src/graph/tuning.cc: an inter-node ring's bus bandwidth is its
/// channels × the NIC's speed, one channel per NIC, so a node's `inside` ranks cross the
/// network on `inside` NICs at once). An all-reduce is an intra-domain reduce-scatter, an
/// all-reduce of each rank's 1/inside share across the domains (every rank on its own rail,
/// with the outer tier's per-GPU bandwidth), and an intra-domain all-gather (docs/model.md §4);
/// a reduce-scatter the first two phases, an all-gather the last two. Each phase takes its
/// tier's cheapest algorithm. Only for all-reduce, all-gather and reduce-scatter, and only
/// when 1 < inside < ranks and `inside` divides `ranks`; otherwise the flat cost on `outer`
/// (hierarchical_collective below). has_two_levels says which collectives have the form,
/// splits_in_two whether a split has it.
[[nodiscard]] inline bool has_two_levels(Collective op) noexcept {
  return op == Collective::all_reduce || op == Collective::all_gather ||
         op == Collective::reduce_scatter;
}

[[nodiscard]] inline bool splits_in_two(Collective op, std::int64_t ranks,
                                        std::int64_t inside) noexcept {
  return has_two_levels(op) && inside > 1 && inside < ranks && ranks % inside == 0;
}

/// The two levels' cost, for a split that splits_in_two accepts.
[[nodiscard]] inline CollectiveCost two_level_cost(Collective op, std::int64_t ranks,
                                                   std::int64_t inside, double bytes,
                                                   const Tier& inner, const Tier& outer) noexcept {
  const std::int64_t domains = ranks / inside;
  const double share = bytes / static_cast<double>(inside);
  CollectiveCost c;
  c.algorithm = Algorithm::hierarchical;
  auto add = [&](const CollectiveCost& phase) {
    c.latency_seconds += phase.latency_seconds;
    c.wire_seconds += phase.wire_seconds;
  };
  // The phases inside are rings (the only reduce-scatter and all-gather, available()).
  if (op != Collective::all_gather) {
    add(collective_cost(Collective::reduce_scatter, Algorithm::ring, inside, bytes, inner));
  }
  add(cheapest_collective(op, domains, share, outer));
  if (op != Collective::reduce_scatter) {
    add(collective_cost(Collective::all_gather, Algorithm::ring, inside, bytes, inner));
  }
  return c;
}

[[nodiscard]] inline CollectiveCost hierarchical_collective(Collective op, std::int64_t ranks,
                                                            std::int64_t inside, double bytes,
                                                            const Tier& inner,
                                                            const Tier& outer) noexcept {
  if (!splits_in_two(op, ranks, inside)) return cheapest_collective(op, ranks, bytes, outer);
  return two_level_cost(op, ranks, inside, bytes, inner, outer);
}

/// A floor under hierarchical_collective over every split of `ranks` into domains, both
/// levels on `tier`: the search's pruning bound, which must hold for every placement
/// (search/enumerate.hpp ideal_network). Wire: the flat ring's, since the two levels' wire
/// times sum to it (reduce-scatter (i−1)/i·M, then (o−1)/o·M/i: (n−1)/n·M in all) or exceed
/// it (a tree outside). Latency: the ring phases count i + o − 2 ≥ 2√n − 2 hops each way (i·o
/// = n); a tree outside (all-reduce) i − 1 + ⌈log2 o⌉ ≥ ⌈log2 n⌉, since i − 1 ≥ ⌈log2 i⌉; a
/// one-shot outside (a tier with peer memory) 2(i − 1) + 1 ≥ 3 latencies, with wire
/// (2(i − 1) + o − 1)/i · M ≥ 2(n − 1)/n · M, as (o − 1)(o − 2) ≥ 0.
[[nodiscard]] inline CollectiveCost hierarchical_floor(Collective op, std::int64_t ranks,
                                                       double bytes, const Tier& tier) noexcept {
  const CollectiveCost flat = cheapest_collective(op, ranks, bytes, tier);
  if (ranks < 4 || !has_two_levels(op)) return flat;  // no split of 2 or 3 ranks has two levels
  CollectiveCost c = collective_cost(op, Algorithm::ring, ranks, bytes, tier);
  c.algorithm = Algorithm::hierarchical;
  const double hops = 2.0 * std::sqrt(static_cast<double>(ranks)) - 2.0;
  double all_reduce_hops = 2.0 * std::min(hops, tree_depth(ranks));
  if (tier.peer_memory) all_reduce_hops = std::min(all_reduce_hops, 3.0);
  c.latency_seconds =
      (op == Collective::all_reduce ? all_reduce_hops : hops) * tier.latency_seconds;
  return c.seconds() < flat.seconds() ? c : flat;
}

/// The cost of a data-parallel collective over a group of `ranks`, `inside` of them in each
/// node: the cheaper of the flat collective on `outer` and, where `outer` allows it, the
/// two-level one (NCCL's tuner picks by the same estimate); ties go to the flat one.
/// `every_placement` (the search's ideal network) takes hierarchical_floor instead.
[[nodiscard, gnu::always_inline]] inline CollectiveCost group_collective(
    Collective op, std::int64_t ranks, std::int64_t inside, double bytes, const Tier& inner,
    const Tier& outer, bool every_placement) noexcept {
  if (every_placement) return hierarchical_floor(op, ranks, bytes, outer);
  const CollectiveCost flat = cheapest_collective(op, ranks, bytes, outer);
  if (!outer.hierarchical || !splits_in_two(op, ranks, inside)) return flat;
  const CollectiveCost two = two_level_cost(op, ranks, inside, bytes, inner, outer);
  return two.seconds() < flat.seconds() ? two : flat;
}

}  // namespace planner

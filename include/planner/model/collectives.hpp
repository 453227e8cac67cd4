#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "planner/base/named.hpp"
#include "planner/inputs/cluster.hpp"

/// α–β costs of the collectives the planner uses (docs/model.md §4).
/// `bytes` is always the size of the whole buffer M: the buffer each rank reduces
/// (all-reduce), the gathered output (all-gather), the input before scattering
/// (reduce-scatter), what each rank sends in total (all-to-all), the message (point-to-point).

namespace planner {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, point_to_point };
enum class Algorithm { ring, tree, one_shot, pairwise, direct, multi_rail_ring, multi_rail_tree };

/// Collective's names as `planner collective --op` and the output spell them.
inline constexpr std::array<Named<Collective>, 5> collective_names{{
    {"all-reduce", Collective::all_reduce},
    {"all-gather", Collective::all_gather},
    {"reduce-scatter", Collective::reduce_scatter},
    {"all-to-all", Collective::all_to_all},
    {"point-to-point", Collective::point_to_point},
}};

[[nodiscard]] constexpr std::string_view to_string(Collective c) noexcept {
  for (const Named<Collective>& n : collective_names) {
    if (n.value == c) return n.name;
  }
  return "all-reduce";
}

/// The Collective a name spells, if any.
[[nodiscard]] constexpr std::optional<Collective> collective_named(std::string_view name) noexcept {
  for (const Named<Collective>& n : collective_names) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

[[nodiscard]] constexpr std::string_view to_string(Algorithm a) noexcept {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::one_shot: return "one-shot";
    case Algorithm::pairwise: return "pairwise";
    case Algorithm::direct: return "direct";
    case Algorithm::multi_rail_ring: return "multi-rail ring";
    case Algorithm::multi_rail_tree: return "multi-rail tree";
  }
  return "ring";
}

/// The host's cost of launching one NCCL collective or send/recv without CUDA graphs: 3.0 µs,
/// the gap between a 1 KiB all-reduce on 4 H800 launched plainly (3.5 µs) and from a CUDA
/// graph (0.5 µs) (NVIDIA/nccl issue #1984; ../shared/calibration microbenchmarks-and-single-
/// node.json `launch-overhead-nccl-1984-h800-cudagraph`, a launch microbenchmark the
/// calibration rule admits; the raw cuLaunchKernel of `launch-overhead-tritonbench-gb200` is
/// the same 3.0 µs). Charged where a schedule issues many small exchanges in a row: each ring
/// step of context parallelism and each stage-boundary send (micro_batch_time.hpp).
inline constexpr double collective_launch_seconds = 3.0e-6;

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
    case Algorithm::multi_rail_ring:  // two tiers: multi_rail_collective
    case Algorithm::multi_rail_tree:
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

/// Node-aware (multi-rail) collectives over a group of `ranks` ranks, `inside` of them in each
/// domain of the `inner` tier (the node), the domains joined by `outer`, as NCCL builds them
/// across nodes (src/graph/tuning.cc, ncclTopoTuneModel): a ring or tree runs one channel
/// per NIC, so the busBw of an inter-node ring is nChannels × the NIC's speed and a node's
/// `inside` ranks cross the network on `inside` rails at once, each at the tier's per-GPU
/// bandwidth; every rank still moves the whole ring's bytes over the node's fabric, so the
/// bus bandwidth is min(B_inside, inside · B_outer). Latency as NCCL's tuner counts it:
/// - ring: (nsteps − nInterSteps) intra-node steps + nInterSteps inter-node ones, nsteps =
///   n − 1 for reduce-scatter and all-gather and 2(n − 1) for all-reduce, nInterSteps = o − 1
///   or 2(o − 1) over o = n / inside nodes; wire (n − 1)/n · M (twice for all-reduce) at the
///   bus bandwidth;
/// - tree (all-reduce only): 2((inside − 1) intra + ⌈log2 o⌉ inter) latencies, an intra-node
///   chain and a tree over the nodes; wire 2M at the bus bandwidth (NCCL's tree algbw is half
///   its busBw).
/// Only for all-reduce, all-gather and reduce-scatter, and only when 1 < inside < ranks and
/// `inside` divides `ranks` (has_rails); otherwise the flat cost on `outer`, every collective
/// at one GPU's share (multi_rail_collective below).
[[nodiscard]] constexpr bool is_multi_rail(Algorithm a) noexcept {
  return a == Algorithm::multi_rail_ring || a == Algorithm::multi_rail_tree;
}

[[nodiscard]] inline bool has_multi_rail_form(Collective op) noexcept {
  return op == Collective::all_reduce || op == Collective::all_gather ||
         op == Collective::reduce_scatter;
}

[[nodiscard]] inline bool has_rails(Collective op, std::int64_t ranks,
                                    std::int64_t inside) noexcept {
  return has_multi_rail_form(op) && inside > 1 && inside < ranks && ranks % inside == 0;
}

/// The node's bus bandwidth for a group with `inside` ranks in it: min(B_inside, inside ·
/// B_outer) (the ring's every rank moves all of its bytes over the node's fabric).
[[nodiscard]] inline double rail_bus_bandwidth(std::int64_t inside, const Tier& inner,
                                               const Tier& outer) noexcept {
  return std::min(inner.bandwidth_bytes_per_second,
                  static_cast<double>(inside) * outer.bandwidth_bytes_per_second);
}

/// The multi-rail ring, for a split that has_rails accepts.
[[nodiscard]] inline CollectiveCost multi_rail_ring_cost(Collective op, std::int64_t ranks,
                                                         std::int64_t inside, double bytes,
                                                         const Tier& inner,
                                                         const Tier& outer) noexcept {
  const double n = static_cast<double>(ranks);
  const double o = static_cast<double>(ranks / inside);
  const double passes = op == Collective::all_reduce ? 2.0 : 1.0;
  CollectiveCost ring;
  ring.algorithm = Algorithm::multi_rail_ring;
  ring.latency_seconds =
      passes * ((n - o) * inner.latency_seconds + (o - 1.0) * outer.latency_seconds);
  ring.wire_seconds = passes * (n - 1.0) / n * bytes / rail_bus_bandwidth(inside, inner, outer);
  return ring;
}

/// The multi-rail tree all-reduce, for a split that has_rails accepts.
[[nodiscard]] inline CollectiveCost multi_rail_tree_cost(std::int64_t ranks, std::int64_t inside,
                                                         double bytes, const Tier& inner,
                                                         const Tier& outer) noexcept {
  CollectiveCost tree;
  tree.algorithm = Algorithm::multi_rail_tree;
  tree.latency_seconds = 2.0 * (static_cast<double>(inside - 1) * inner.latency_seconds +
                                tree_depth(ranks / inside) * outer.latency_seconds);
  tree.wire_seconds = 2.0 * bytes / rail_bus_bandwidth(inside, inner, outer);
  return tree;
}

/// The cheaper of the multi-rail ring and (all-reduce) tree, for a split that has_rails
/// accepts; ties go to the ring.
[[nodiscard]] inline CollectiveCost multi_rail_cost(Collective op, std::int64_t ranks,
                                                    std::int64_t inside, double bytes,
                                                    const Tier& inner,
                                                    const Tier& outer) noexcept {
  const CollectiveCost ring = multi_rail_ring_cost(op, ranks, inside, bytes, inner, outer);
  if (op != Collective::all_reduce) return ring;
  const CollectiveCost tree = multi_rail_tree_cost(ranks, inside, bytes, inner, outer);
  return tree.seconds() < ring.seconds() ? tree : ring;
}

[[nodiscard]] inline CollectiveCost multi_rail_collective(Collective op, std::int64_t ranks,
                                                          std::int64_t inside, double bytes,
                                                          const Tier& inner,
                                                          const Tier& outer) noexcept {
  if (!has_rails(op, ranks, inside)) return cheapest_collective(op, ranks, bytes, outer);
  return multi_rail_cost(op, ranks, inside, bytes, inner, outer);
}

/// The cost of a data-parallel collective over a group of `ranks`, `inside` of them in each
/// node: the cheaper of the flat collective on `outer` and, where `outer` allows it
/// (Tier::hierarchical), the multi-rail one (NCCL's tuner picks by the same estimate); ties
/// go to the flat one. The search's pruning needs no floor of its own: on its ideal network
/// (search/enumerate.hpp), one tier with the larger bandwidth B and the smaller latency α,
/// the flat collective is below both forms on the real tiers, since min(B_inside,
/// inside · B_outer) ≤ B, the ring's steps are n − 1 either way, and the tree's
/// (inside − 1) + ⌈log2 o⌉ ≥ ⌈log2 inside⌉ + ⌈log2 o⌉ ≥ ⌈log2 n⌉.
[[nodiscard, gnu::always_inline]] inline CollectiveCost group_collective(
    Collective op, std::int64_t ranks, std::int64_t inside, double bytes, const Tier& inner,
    const Tier& outer) noexcept {
  const CollectiveCost flat = cheapest_collective(op, ranks, bytes, outer);
  if (!outer.hierarchical || !has_rails(op, ranks, inside)) return flat;
  const CollectiveCost rails = multi_rail_cost(op, ranks, inside, bytes, inner, outer);
  return rails.seconds() < flat.seconds() ? rails : flat;
}

}  // namespace planner

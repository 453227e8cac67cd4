#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/base/divisors.hpp"
#include "planner/inputs/constraints.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/search/rank.hpp"

/// The search space (every legal configuration of the cluster) and the exhaustive search
/// over it (docs/ranking.md). The search is a pure function of the context and options.

namespace planner {

/// Restrictions of the space, used by the explanation to time "the simpler answer"
/// (pure data parallel, the winner without one of its axes, …). Unset fields are free.
struct SearchFilter {
  std::array<std::optional<std::int64_t>, axis_count> degrees{};  ///< pinned degrees, by Axis
  std::array<std::int64_t, axis_count> min_degrees{1, 1, 1, 1, 1};  ///< 2 forces an axis into use
  std::optional<int> zero;
  std::optional<Recompute> recompute;
  std::optional<bool> flash_attention;
  std::optional<bool> tp_inside_node;
  /// Pinned expert tensor-parallel degree (MoE training); tp itself when it equals tp.
  std::optional<std::int64_t> etp;
  /// Hybrid sharding (Plan::dp_shard) required (true) or ruled out (false).
  std::optional<bool> hybrid;
  /// The user's bounds and framework (search() sets it from the context's constraints), and
  /// the dimensions they narrow (inputs/constraints.hpp narrowed_dims; set with it).
  const Constraints* constraints = nullptr;
  std::uint32_t narrowed = 0;
  /// The model's sequence length, for the validated envelope's context-parallel split
  /// (search() sets it).
  std::int64_t seq_len = 0;

  void pin(Axis a, std::int64_t d) noexcept { degrees[static_cast<std::size_t>(a)] = d; }
  void require(Axis a) noexcept { min_degrees[static_cast<std::size_t>(a)] = 2; }
};

struct SearchOptions {
  std::size_t keep = 10;  ///< how many ranked feasible plans to return
  SearchFilter filter;
  /// Skip the time model for configurations that provably cannot enter the top `keep`
  /// (docs/performance.md §Pruning). The ranked list, the counts and the rejections are the
  /// same either way; false is the exhaustive reference the tests compare against.
  bool prune = true;
  /// Count every ledger and keep the closest rejections (evaluated, feasible,
  /// rejected_by_kind, rejected). Without it, a pruned search computes only what ranking
  /// needs, leaves those empty, and returns the same ranked list (for callers that want the
  /// winner: thresholds, sweeps).
  bool accounting = true;
  /// Stop once the search has done this much work (SearchResult::work; 0: no limit); the
  /// result is then empty and `incomplete`. For reruns that may give up (thresholds).
  std::int64_t work_limit = 0;
  /// Return every plan inside the tolerance band in SearchResult::band (serving: the ranked
  /// plans), and the fastest time in SearchResult::fastest_seconds (thresholds ask whether a
  /// plan is still one of the equals); `ranked` keeps `keep`.
  bool whole_band = false;
  /// Training: also return, in SearchResult::within, every plan whose seconds per token are at
  /// most this (0: none), whatever `keep` (the threshold scans' candidate sets,
  /// explain/thresholds.cpp). Pruning keeps it exact: only candidates whose lower bound is
  /// above both this and the kept plans are skipped; `ranked` is unchanged.
  double keep_within_seconds = 0;
  /// At most this many plans in `within`; past it the list is emptied and
  /// SearchResult::within_overflow set (bounded memory on a space of millions of plans).
  std::size_t keep_within_max = 20'000;
  /// Training: only an answer whose fastest plan is faster than this many seconds per token is
  /// wanted (0: any). A candidate whose lower bound is past the tolerance band of this time
  /// (rank.hpp band_limit) is skipped: when the unrestricted fastest plan is faster than the
  /// limit, its whole band is below the band's limit here, so the ranked answer is the
  /// unrestricted search's; otherwise it is some plan no faster than the limit, or none. For
  /// "is there a plan faster than the one in hand" (plan_report.cpp: the fastest plan outside
  /// the validated envelope), which then stops once nothing left can be.
  double faster_than_seconds = 0;
  /// Training: only whether some plan is faster by more than the tolerance band than this many
  /// seconds per token (band_limit of its time below it; 0: not asked). A candidate whose
  /// lower bound cannot be is skipped, and the search stops at the first plan that is, which
  /// it returns (not necessarily the fastest); none found, nothing is. For the threshold
  /// scans: is the plan in hand still one of the equals (explain/threshold_probe.hpp).
  double decide_below_seconds = 0;
};

/// A configuration the search dropped, with the number that drops it.
struct Rejection {
  Plan plan;
  std::string kind;    ///< "memory", "batch", "divisibility"
  std::string reason;  ///< e.g. "needs 226.2 GiB, has 192.0 GiB: activations 97.0 GiB"
  double excess = 0;   ///< how far over (memory: needed / capacity) — the closest come first
};

struct SearchResult {
  std::vector<Evaluation> ranked;  ///< best first, at most options.keep
  std::vector<RankKey> keys;       ///< rank key of each ranked plan (placed in the band)
  /// Training: how many plans lie inside the tolerance band of the fastest (all of them, not
  /// only those in `ranked`, where they come first), and the band's slowest seconds per token.
  std::size_t tied = 0;
  double band_limit = 0;
  std::int64_t evaluated = 0;      ///< configurations considered: feasible + all rejected
  std::int64_t feasible = 0;       ///< configurations that fit (each timed on its placements)
  std::int64_t timed = 0;          ///< time-model evaluations run (pruning lowers it)
  std::map<std::string, std::int64_t> rejected_by_kind;
  std::vector<Rejection> rejected;  ///< the closest few of each kind
  /// The work done: factorisations tried, micro-batches listed, ledgers computed, time-model
  /// runs (the same count on every run of the same search).
  std::int64_t work = 0;
  bool incomplete = false;  ///< stopped at options.work_limit: no answer
  /// Training, with SearchOptions::keep_within_seconds: every plan at most that many seconds
  /// per token, in the order they were timed.
  std::vector<Evaluation> within;
  bool within_overflow = false;  ///< more than keep_within_max plans qualified
  /// With SearchOptions::whole_band: every plan inside the band, best first (serving: the
  /// ranked plans). `fastest_seconds`: the smallest exact time of a rank key (infinite when
  /// none fits), whole band or not for training (the collector tracks it for the band).
  /// Plans only: a band of 20,000 tied plans (seq_len 1 with a measured step time) returned
  /// whole as evaluations was 32 MB per rerun.
  std::vector<Plan> band;
  double fastest_seconds = std::numeric_limits<double>::infinity();
  [[nodiscard]] bool found() const noexcept { return !ranked.empty(); }
};

/// Every order of the placed axes: placed_axis_count! placements, a fixed-capacity list, so
/// the search's loops allocate nothing.
inline constexpr std::size_t placement_capacity = [] {
  std::size_t n = 1;
  for (std::size_t i = 2; i <= placed_axis_count; ++i) n *= i;
  return n;
}();

struct PlacementList {
  std::array<Placement, placement_capacity> items{};
  std::size_t size = 0;
  [[nodiscard]] const Placement* begin() const noexcept { return items.data(); }
  [[nodiscard]] const Placement* end() const noexcept { return items.data() + size; }
};

/// Placements that differ in which tier some group pays: one representative (the first in
/// lexicographic order of the axes, starting from Megatron's tp, cp, dp, pp) per distinct
/// assignment of tiers to the axes' groups (the axis table's `group`).
[[nodiscard]] inline PlacementList distinct_placements(const Plan& base, const Cluster& c) {
  PlacementList out;
  std::array<std::uint32_t, placement_capacity> seen{};
  const AxisDegrees degrees = axis_degrees(base);
  const TierDomains domains = tier_domains(c);
  Placement order = default_placement;
  std::sort(order.begin(), order.end());
  // Orders that differ only in where degree-1 axes sit have the same strides, so the same
  // tiers: only the first order of each sequence of the used axes is costed.
  std::array<std::uint32_t, placement_capacity> used_seen{};
  std::size_t used_count = 0;
  do {
    std::uint32_t used = 0;
    for (const Axis a : order) {
      if (degrees[static_cast<std::size_t>(a)] > 1) {
        used = used * axis_count + static_cast<std::uint32_t>(a) + 1;
      }
    }
    const auto used_end = used_seen.begin() + static_cast<std::ptrdiff_t>(used_count);
    if (std::find(used_seen.begin(), used_end, used) != used_end) continue;
    used_seen[used_count++] = used;
    std::uint32_t signature = 0;
    for (const std::size_t tier : axis_tiers(degrees, order, domains)) {
      signature = signature * static_cast<std::uint32_t>(c.tiers.size()) +
                  static_cast<std::uint32_t>(tier);
    }
    if (std::find(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(out.size),
                  signature) == seen.begin() + static_cast<std::ptrdiff_t>(out.size)) {
      seen[out.size] = signature;
      out.items[out.size++] = order;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

/// Human-readable memory rejection: total, capacity and the largest line.
std::string memory_reason(const MemoryLedger& l);

/// Every legal configuration, ranked (search.cpp). Training: dp·tp·pp·cp = GPUs, tp | heads
/// and compatible with kv_heads, pp ≤ layers, cp | seq_len with tiled attention, dp ≤ the
/// target sequences, ZeRO 0–3, recompute none/selective/full × flash on/off (flash implies the
/// attention-core recompute), sequence parallel with tp, micro-batch × accumulation = the
/// replica's sequences, and every distinct placement. Serving: tp × pp engines replicated dp
/// times.
[[nodiscard]] SearchResult search(const Context& ctx, const SearchOptions& options = {});

/// The recommendation's search, ranked for trust (docs/ranking.md §5): inside the validated
/// envelope, or, where no plan fits inside it, the raw ranking's (`outside` then true). One
/// rule for plan, export and sweep, so each command recommends the same plan.
struct Recommendation {
  SearchResult result;
  bool outside = false;  ///< nothing fits inside the envelope: the raw ranking answered
};
[[nodiscard]] Recommendation trusted_search(const Context& ctx,
                                            const SearchOptions& options = {});

}  // namespace planner

#pragma once
// The enumeration of the search: factorisations of the world into axis degrees, their
// placements, micro-batch choices, and the pruning bounds that let most of them go untimed
// (docs/search.md). Internal to src/search, included by search.cpp only.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "bounds.hpp"
#include "candidates.hpp"
#include "collector.hpp"
#include "planner/inputs/workload_settings.hpp"
#include "planner/model/legality.hpp"

namespace planner::search_detail {

struct RecomputeChoice {
  Recompute recompute;
  bool flash;
};

// Tiled attention always recomputes the attention core in its backward pass (Dao et al. 2022),
// so "flash + none" is the same configuration as "flash + selective" and is not listed twice.
// torchtitan's op-level checkpointing runs with tiled attention only (model/legality.hpp).
inline constexpr std::array<RecomputeChoice, 6> recompute_choices{{{Recompute::none, false},
                                                            {Recompute::selective, false},
                                                            {Recompute::full, false},
                                                            {Recompute::selective, true},
                                                            {Recompute::op, true},
                                                            {Recompute::full, true}}};

/// Whether a recompute choice applies to a group: ring attention (cp > 1) needs tiled
/// attention; op-level checkpointing is modelled for dense layers (model/legality.hpp).
inline bool choice_applies(const Model& m, const Plan& base, const RecomputeChoice& rc) {
  if (base.cp > 1 && !rc.flash) return false;
  return rc.recompute != Recompute::op || !is_moe(m);
}

/// The search's words for a factorisation that breaks a rule of model/legality.hpp.
inline std::string degree_reason(const Model& m, const Plan& p, const Violation& v) {
  switch (v.kind) {
    case ViolationKind::pp_layers: return fmt::format("pp = {} exceeds the {} layers", p.pp, m.layers);
    case ViolationKind::cp_seq_len:
      return fmt::format("cp = {} does not divide seq_len {}", p.cp, m.seq_len);
    default:
      return fmt::format("tp = {} must divide the {} heads and fit the {} KV heads", p.tp, m.heads,
                         m.kv_heads);
  }
}

/// One (tp, cp, pp, dp) factorisation that passed the group checks.
struct Group {
  Plan base;
  std::int64_t per_replica = 0;
  std::size_t micro_batches = 0;     ///< offset into the micro-batch pool
  std::size_t micro_batch_count = 0;
  std::size_t placements = 0;        ///< offset into the placement pool
  std::size_t placement_count = 0;
  bool placed = false;               ///< placements listed (the winner-only search lists
                                     ///< them when first needed)
};

/// Winner-only search: what is known of one (group, zero, recompute choice, sp) row of
/// micro-batches. The exhaustive enumeration stops a row at its first micro-batch whose
/// ledger does not fit, so a configuration belongs to the space exactly when every smaller
/// micro-batch of its row fits too.
struct Row {
  std::uint16_t fitting = 0;  ///< micro-batches 0 … fitting − 1 are known to fit
  bool ended = false;         ///< micro-batch `fitting` does not fit
  /// passes_settings of the row's plans, which does not read the micro-batch: 0 no, 1 yes
  /// (asked once per row by fitting_micro_batches, not per candidate popped)
  std::int8_t settings = 0;
};
/// A (group, recompute choice)'s rows, one per ZeRO stage and SP setting, are listed together
/// when its memory is first checked (search.cpp expand_row), not for every group enumerated:
/// most groups' choices are never expanded, and filling 48 rows per group was 3.7 % of the
/// Mixtral training scenario's instructions with thresholds.
inline constexpr std::size_t rows_per_choice = 4 * 2;

inline std::size_t row_index(int zero, int sp) {
  return static_cast<std::size_t>(zero) * 2 + static_cast<std::size_t>(sp);
}

/// Winner search: how often each of a row's two checks (0 its compute bound, 1 its memory)
/// ran and refused the row, so that the more selective runs first (search.cpp expand_row).
struct RowChecks {
  std::array<std::int64_t, 2> tried{}, refused{};
  /// Records a check's outcome and returns it.
  bool passes(std::size_t check, bool passed) noexcept {
    ++tried[check];
    if (!passed) ++refused[check];
    return passed;
  }
  /// The compute bound's share of refusals above the memory's (memory first until then).
  [[nodiscard]] bool compute_first() const noexcept {
    return refused[0] * tried[1] > refused[1] * tried[0];
  }
};

/// The search's working memory, reused between searches on one thread.
struct Scratch {
  std::vector<std::int64_t> world_divisors;
  std::vector<std::int64_t> expert_degrees;  ///< divisors of the routed experts ({1}: dense)
  std::vector<std::int64_t> micro_batches;  ///< one group's, while it is enumerated
  std::vector<std::uint8_t> variants;       ///< one group's, per recompute choice × micro-batch
  std::vector<std::int64_t> mb_pool;
  std::vector<Placement> placement_pool;
  std::vector<Row> row_pool;
  std::vector<Group> groups;
  std::vector<Candidate> candidates;
  std::vector<PendingRow> pending;  ///< winner search: the rows not listed yet
  /// Winner search: each expanded row's compute terms per SP setting (bounds.hpp) and the
  /// offset of its rows in row_pool, and where a (group, recompute choice)'s are
  /// (unit_of[group · choices + choice]).
  struct Unit {
    std::array<ComputeTerms, 2> terms;
    std::size_t rows = 0;
  };
  std::vector<Unit> units;
  std::vector<std::uint32_t> unit_of;
  RowChecks row_checks;  ///< winner search: the rows' two checks, in this search
  /// dp → offset of its micro-batches (the divisors of its per-replica share) in mb_pool:
  /// every group with the same dp has the same list, computed once (trial division up to the
  /// square root of the share was most of the search on a highly divisible world, issue 14).
  std::unordered_map<std::int64_t, std::pair<std::size_t, std::size_t>> mb_by_dp;
};

/// Whether the interleaved schedule can run micro-batch `mb` of the group: v > 1 needs the
/// micro-batches per step divisible by pp (Megatron-LM's rule, legality.hpp).
inline bool schedule_allows(const Group& g, std::size_t mb, const std::vector<std::int64_t>& mb_pool) {
  if (g.base.virtual_stages <= 1) return true;
  return (g.per_replica / mb_pool[g.micro_batches + mb]) % g.base.pp == 0;
}

/// The group's plan with a recompute choice and a micro-batch (ZeRO 0, no SP).
inline Plan configured(const Group& g, std::size_t choice, std::size_t mb,
                const std::vector<std::int64_t>& mb_pool) {
  Plan p = g.base;
  p.recompute = recompute_choices[choice].recompute;
  p.flash_attention = recompute_choices[choice].flash;
  p.micro_batch = mb_pool[g.micro_batches + mb];
  p.grad_accum = g.per_replica / p.micro_batch;
  return p;
}

/// Lists the group's placements that pass the filter, once.
inline void place(Group& g, const SearchFilter& filter, const Cluster& c, Scratch& s) {
  if (g.placed) return;
  g.placed = true;
  g.placements = s.placement_pool.size();
  for (const Placement& placement : distinct_placements(g.base, c)) {
    Plan p = g.base;
    p.placement = placement;
    if (passes_placement(filter, p, c)) s.placement_pool.push_back(placement);
  }
  g.placement_count = s.placement_pool.size() - g.placements;
}

/// Adds the group of `base` (its degrees and virtual stages) with its micro-batches (the
/// divisors of its per-replica share, listed once per dp) and hands it to `visit`.
template <typename Visit>
inline void add_group(const Context& ctx, const Plan& base, Scratch& s, Visit&& visit) {
  Group g;
  g.base = base;
  g.per_replica = sequences_per_replica(ctx, base.dp);
  auto [known, added] = s.mb_by_dp.try_emplace(base.dp);
  if (added) {
    fill_divisors(g.per_replica, s.micro_batches);
    // A micro-batch bound (`--fix micro_batch<=2`) narrows the list itself: the rows below
    // read it in increasing order and stop at the first that does not fit, which holds for
    // any subset of it.
    if (ctx.constraints.narrowed(Dim::micro_batch)) {
      const Bound& bound = ctx.constraints.bound(Dim::micro_batch);
      std::erase_if(s.micro_batches, [&](std::int64_t mb) { return !bound.holds(mb); });
    }
    known->second = {s.mb_pool.size(), s.micro_batches.size()};
    s.mb_pool.insert(s.mb_pool.end(), s.micro_batches.begin(), s.micro_batches.end());
  }
  g.micro_batches = known->second.first;
  g.micro_batch_count = known->second.second;
  budget.spend(static_cast<std::int64_t>(g.micro_batch_count));
  s.groups.push_back(g);
  visit(static_cast<std::uint32_t>(s.groups.size() - 1));
}

/// The hybrid-sharding shard groups the search tries for a group's degrees: for each tier
/// below the network, the dp_shard whose shard group, with its tp ranks, fills one domain
/// (tp·cp·dp_shard = the domain's GPUs; a node first: PyTorch FSDP HYBRID_SHARD's shard
/// inside, replicate across; MiCS's partition groups), when that leaves more than one replica
/// and shards over more than one rank. Smaller shard groups in the same domain pay the same
/// tier and hold more state; larger ones cross to the next tier. At most three values
/// (the loader's tiers), in increasing order.
struct HybridShards {
  std::array<std::int64_t, 8> values{};
  std::size_t count = 0;
  [[nodiscard]] const std::int64_t* begin() const noexcept { return values.data(); }
  [[nodiscard]] const std::int64_t* end() const noexcept { return values.data() + count; }
};
inline HybridShards hybrid_shards(const Cluster& c, const Plan& p) {
  HybridShards out;
  if (p.dp <= 1) return out;
  const std::int64_t inner = p.tp * p.cp;
  for (std::size_t k = 0; k < c.network_index() && out.count < out.values.size(); ++k) {
    const std::int64_t domain = domain_gpus(c, k);
    if (domain % inner != 0) continue;
    const std::int64_t shard = domain / inner;
    if (shard >= p.dp || p.dp % shard != 0 || shard * p.cp <= 1) continue;
    if (out.count > 0 && out.values[out.count - 1] >= shard) continue;
    out.values[out.count++] = shard;
  }
  return out;
}

/// Every (tp, cp, pp, dp) factorisation of the world in enumeration order that passes the
/// filter and the group checks, with pp > 1 once per number of virtual stages v (v dividing
/// the L/pp layers of a stage, so pp·v divides L: Megatron-LM's rule, L + 2 when the workload
/// counts the embedding and loss in the split; interleaved 1F1B, schedule.hpp), each handed to `visit` after its micro-batches are listed;
/// `out`, when given, gets the others as divisibility and batch rejections.
template <typename Visit>
inline void enumerate_groups(const Context& ctx, const SearchFilter& filter, Scratch& s,
                      Collector* out, Visit&& visit) {
  const Model& m = ctx.model;
  const std::int64_t world = world_size(ctx.cluster);
  const double target = target_sequences(ctx);
  fill_divisors(world, s.world_divisors);
  fill_divisors(std::max<std::int64_t>(1, m.moe.experts), s.expert_degrees);
  const bool tables_split = ctx.workload.kind == WorkloadKind::training &&
                            ctx.workload.training.tables_in_pipeline_split;
  // The divisors are in increasing order: past world/tp (world/tp/cp) none can divide it.
  for (std::int64_t tp : s.world_divisors) {
    for (std::int64_t cp : s.world_divisors) {
      if (cp > world / tp) break;
      if ((world / tp) % cp != 0) continue;
      for (std::int64_t pp : s.world_divisors) {
        if (pp > world / tp / cp) break;
        budget.spend(1);
        if ((world / tp / cp) % pp != 0) continue;
        Plan base;
        base.tp = tp;
        base.cp = cp;
        base.pp = pp;
        apply_workload_settings(ctx.workload.training, base);
        base.dp = world / tp / cp / pp;
        if (!passes_axes(filter, base, true)) continue;
        if (const std::optional<Violation> v = first_violation(
                m, ctx.cluster, ctx.workload.kind, base, LegalityScope::degrees)) {
          if (out) {
            out->reject(Kind::divisibility, base, 0, 1, [&] { return degree_reason(m, base, *v); });
          }
          continue;
        }
        if (static_cast<double>(base.dp) > std::ceil(target)) {
          if (out) {
            out->reject(Kind::batch, base, static_cast<double>(base.dp) / target, 1, [&] {
              return fmt::format("dp = {} replicas need at least {} sequences per step; the "
                                 "target is {:.1f} ({} tokens / {})",
                                 base.dp, base.dp, target,
                                 ctx.workload.training.global_batch_tokens, m.seq_len);
            });
          }
          continue;
        }
        // The expert-parallel degrees, innermost: 1 alone for a dense model, so its groups
        // and their order are those of a search without the ep axis. For an MoE model, each
        // ep with expert tensor parallelism etp = tp (Megatron-LM's default) first, then the
        // smaller divisors of tp, where ep·etp divides tp·dp·cp (model/legality.hpp).
        const bool moe = is_moe(m);
        for (std::size_t e = 0; e < s.expert_degrees.size() * (moe ? s.world_divisors.size() : 1);
             ++e) {
          const std::int64_t ep = s.expert_degrees[e % s.expert_degrees.size()];
          const std::int64_t etp =
              moe ? s.world_divisors[s.world_divisors.size() - 1 - e / s.expert_degrees.size()]
                  : tp;
          if (etp > tp || tp % etp != 0) continue;
          if (etp == tp ? (base.dp * base.cp) % ep != 0
                        : (tp * base.dp * base.cp) % (ep * etp) != 0) {
            continue;
          }
          Plan folded = base;
          folded.ep = ep;
          folded.etp = etp == tp ? 0 : etp;
          if (filter.etp && *filter.etp != etp) continue;
          if (!passes_axes(filter, folded)) continue;
          // Interleaved 1F1B: each v dividing the L/pp layers of a stage (pp·v divides L,
          // Megatron-LM's rule, model/legality.hpp), v = 1 first.
          // With workload.tables_in_pipeline_split the embedding and loss count as layers
          // (Megatron-LM --account-for-*-in-pipeline-split): pp·v divides L + 2.
          folded.tables_in_pipeline_split = folded.pp > 1 && tables_split;
          const std::int64_t units = m.layers + (folded.tables_in_pipeline_split ? 2 : 0);
          const std::int64_t layers_per_stage = folded.pp > 1 ? units / folded.pp : 1;
          for (std::int64_t v = 1; v <= layers_per_stage; ++v) {
            if (v > 1 && units % (folded.pp * v) != 0) continue;
            folded.virtual_stages = v;
            if (filter.constraints &&
                !within(*filter.constraints, folded,
                        filter.narrowed & decided_at(Decided::interleave))) {
              continue;
            }
            add_group(ctx, folded, s, visit);
            // Hybrid sharding (Plan::dp_shard), dense models: one shard group per domain
            // size (hybrid_shards), after the fully sharded group; none where the user's
            // constraints allow one copy of the state (`replicas=1`).
            if (moe || (filter.constraints && filter.constraints->bound(Dim::replicas).max <= 1) ||
                (filter.hybrid && !*filter.hybrid)) {
              continue;
            }
            for (const std::int64_t shard : hybrid_shards(ctx.cluster, folded)) {
              Plan hybrid = folded;
              hybrid.dp_shard = shard;
              add_group(ctx, hybrid, s, visit);
            }
          }
        }
      }
    }
  }
}

/// Pass 2 of the pruned search: candidates in increasing order of their compute bound. Once
/// a bound's time step is above the last kept plan's, so is every later one's, and the search
/// ends. A candidate is skipped when its ideal-network bound without the exposed data-
/// parallel traffic is beyond (the same for every ZeRO stage), a variant when its own ideal-
/// network bound is; the rest are timed on every placement. `fits(cand, p)` says whether the
/// variant `p` (with its zero and sp set) is in the space and fits, and may fill `ledger`.
/// `order` (BestFirst, or the winner search's LazyRows) gives the candidates in that order;
/// `compute_of(cand, q, shape, terms)` sets the compute terms of `q` (the candidate's plan with
/// an SP setting; step_time.hpp add_compute_terms or bounds.hpp ComputeTerms::at).
template <typename Order, typename Fits, typename ComputeOf>
inline void time_candidates(const Context& ctx, const SearchOptions& options, Scratch& s,
                            Collector& out, SearchResult& result, Order& order, Fits&& fits,
                            ComputeOf&& compute_of) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  const Cluster ideal = ideal_network(c);
  const double seq = static_cast<double>(m.seq_len);
  const auto beyond = [&](double bound) { return out.beyond(bound); };
  while (const Candidate* next = order.next(beyond)) {
    const Candidate cand = *next;
    if (out.beyond(cand.bound)) break;
    Group& g = s.groups[cand.group()];
    Plan p = configured(g, cand.choice(), cand.mb(), s.mb_pool);
    // The slots' bound holds for every ZeRO stage but not for both SP settings: sequence
    // parallelism splits the elementwise kernels' bytes over tp, so without it a step is
    // longer. The bound is the smaller of the two (the one without SP alone pruned faster plans
    // with it); the second is timed only when the first would prune. The micro-batch part of
    // an ideal-network timing does not depend on the ZeRO stage (model/step_time.hpp), so it
    // is computed once per SP setting and each variant's bound adds only its stage's
    // data-parallel terms. `count` counts the timings as whole ones, one per (SP, stage) in
    // the order the bounds ask for them, so the work count is the search's own.
    // Per SP setting, once computed: the compute terms, then (only where the compute alone does
    // not prune, most candidates) the micro-batch part with its traffic.
    std::array<ComputeTerms, 2> terms;
    std::array<bool, 2> have_terms{};
    std::array<std::optional<TrainingTime>, 2> part;
    std::array<int, 2> zero_of{-1, -1};  // the ZeRO stage last counted per SP setting; -1 none
    const StageShape shape = stage_shape(m, p);
    const auto count = [&](int sp, int zero) {
      const auto k = static_cast<std::size_t>(sp);
      if (zero_of[k] == zero) return;
      zero_of[k] = zero;
      ++result.timed;
      budget.spend(1);
    };
    // The micro-batch part in two steps (step_time.hpp micro_batch_part): its compute terms,
    // then its traffic on the ideal network.
    const auto compute = [&](int sp) -> const ComputeTerms& {
      const auto k = static_cast<std::size_t>(sp);
      if (!have_terms[k]) {
        Plan q = p;
        q.sequence_parallel = sp == 1;
        compute_of(cand, q, shape, terms[k]);
        have_terms[k] = true;
      }
      return terms[k];
    };
    // An MoE micro-batch's expert traffic first (the Mixtral training scenario's largest
    // traffic term on the ideal network): compute and expert traffic alone prune a third of
    // the candidates that the compute alone does not. For a dense model that step adds nothing.
    std::array<bool, 2> whole{};  // part[k] holds every traffic term
    const bool moe = is_moe(m);
    const auto with_experts = [&](int sp) -> const TrainingTime& {
      const auto k = static_cast<std::size_t>(sp);
      if (!part[k]) {
        TrainingTime& t = part[k].emplace();
        compute(sp).into(t);
        Plan q = p;
        q.sequence_parallel = sp == 1;
        if (moe) add_expert_traffic(m, ideal, q, shape, ctx.flops_per_second, t);
      }
      return *part[k];
    };
    const auto micro_batch = [&](int sp) -> const TrainingTime& {
      const auto k = static_cast<std::size_t>(sp);
      with_experts(sp);
      if (!whole[k]) {
        whole[k] = true;
        Plan q = p;
        q.sequence_parallel = sp == 1;
        add_non_expert_traffic(m, ideal, q, ctx.flops_per_second, shape, *part[k]);
        finish_micro_batch(q, *part[k]);
      }
      return *part[k];
    };
    // Whether the slots' bound prunes: (m + bubble slots) slots of the micro-batch over the
    // step's tokens, first with the compute terms alone, then (MoE) with the expert traffic
    // added, then with every traffic term (each term of a slot is ≥ 0, micro_batch_time.hpp
    // micro_batch_seconds, so each partial bound is below the next and prunes only what it
    // would). The operations are the time model's (micro_batch_seconds, then bubble_seconds =
    // bubble_slots · that), so no partial bound is the larger when rounded (a sum or product
    // of non-negative numbers never falls when a term grows). On the Mixtral training
    // scenario's decision searches 98 % of the candidates popped are pruned here.
    const double sequences = static_cast<double>(p.dp * p.micro_batch * p.grad_accum);
    const auto slots_beyond = [&](double slot_seconds) {
      return out.beyond((static_cast<double>(p.grad_accum) * slot_seconds +
                         bubble_slots(p) * slot_seconds) /
                        (sequences * seq) * bound_margin);
    };
    const auto slots_prune = [&](int sp, int zero) {
      count(sp, zero);
      return slots_beyond(compute(sp).seconds()) ||
             (moe && slots_beyond(with_experts(sp).micro_batch_seconds())) ||
             slots_beyond(micro_batch(sp).micro_batch_seconds());
    };
    // A variant's own ideal-network bound: its micro-batch part and its stage's terms.
    const auto variant_bound = [&](int sp, int zero) {
      count(sp, zero);
      const auto k = static_cast<std::size_t>(sp);
      TrainingTime t = micro_batch(sp);
      Plan q = p;
      q.sequence_parallel = sp == 1;
      q.zero = zero;
      add_step_terms(m, ideal, q, ctx.flops_per_second, terms[k].forward, terms[k].backward, t);
      return 1.0 / t.tokens_per_second * bound_margin;
    };
    const int first_zero = p.zero;
    if (slots_prune(0, first_zero) && (p.tp <= 1 || slots_prune(1, first_zero))) {
      continue;
    }
    for (int zero = 0; zero <= 3; ++zero) {
      if (zero == 0 && state_replicas(p) > 1) continue;  // hybrid sharding shards ZeRO's state
      for (int sp = 0; sp <= (p.tp > 1 ? 1 : 0); ++sp) {
        p.zero = zero;
        p.sequence_parallel = sp == 1;
        MemoryLedger ledger;
        if (!fits(cand, p, ledger)) continue;
        if (out.beyond(variant_bound(sp, zero))) continue;
        place(g, options.filter, c, s);
        for (std::size_t k = 0; k < g.placement_count; ++k) {
          p.placement = s.placement_pool[g.placements + k];
          if (!framework_launches(options.filter, p)) continue;
          ++result.timed;
          budget.spend(1);
          out.offer_training(p, ledger, training_time(ctx, p));
        }
      }
    }
  }
}

}  // namespace planner::search_detail

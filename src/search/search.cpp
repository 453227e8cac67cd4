#include "planner/search/search.hpp"

#include "planner/model/legality.hpp"
#include "planner/search/constraints.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unordered_map>

namespace planner {

std::string memory_reason(const MemoryLedger& l) {
  std::string_view largest_name = ledger_lines[0].name;
  double largest = -1;
  for (const LedgerLine& line : ledger_lines) {
    if (line.name == "reserve") continue;
    if (l.*line.bytes > largest) {
      largest = l.*line.bytes;
      largest_name = line.name;
    }
  }
  return fmt::format("needs {:.1f} GiB, has {:.1f} GiB: {} {:.1f} GiB", l.total_bytes() / gib,
                     l.capacity_bytes / gib, largest_name, largest / gib);
}

namespace {

/// Thrown when a search passes SearchOptions::work_limit; search() catches it.
struct WorkLimitReached {};

/// The work the current search on this thread has done, and its limit (0: none): a count of
/// the loop steps that cost time — factorisations tried, micro-batch lists, ledgers, time-
/// model runs — so that a limit stops a search after the same steps on every run.
struct Budget {
  std::int64_t used = 0;
  std::int64_t limit = 0;
  void spend(std::int64_t n) {
    used += n;
    if (limit > 0 && used > limit) throw WorkLimitReached{};
  }
};
thread_local Budget budget;

/// The filter's conditions on the axes' degrees alone.
bool passes_axes(const SearchFilter& f, const Plan& p) {
  for (const AxisInfo& row : axes) {
    const auto i = static_cast<std::size_t>(row.axis);
    const std::int64_t d = p.*row.degree;
    if ((f.degrees[i] && *f.degrees[i] != d) || d < f.min_degrees[i]) return false;
  }
  return !f.constraints || within_degrees(*f.constraints, p);
}

/// Everything but placement.
bool passes_config(const SearchFilter& f, const Plan& p) {
  if (!passes_axes(f, p)) return false;
  if (f.zero && *f.zero != p.zero) return false;
  if (f.recompute && *f.recompute != p.recompute) return false;
  if (f.constraints && !within_config(*f.constraints, p)) return false;
  return !f.flash_attention || *f.flash_attention == p.flash_attention;
}

/// The placement's condition (tp inside a node or not), for a plan that passes_config.
bool passes_placement(const SearchFilter& f, const Plan& p, const Cluster& c) {
  if (f.constraints && !framework_placement_violation(f.constraints->framework, p).empty()) {
    return false;
  }
  return !f.tp_inside_node || p.tp <= 1 || *f.tp_inside_node == inside_node(p, c, Axis::tp);
}

/// Rejection kinds, in the alphabetical order the result lists them in.
enum class Kind { batch, divisibility, memory };
constexpr std::array<const char*, 3> kind_names{"batch", "divisibility", "memory"};

/// Keeps the best `keep` plans and the closest few rejections of each kind. The top list is
/// the `keep` smallest rank keys offered; rank keys are a total order over distinct plans, so
/// the list does not depend on the order in which plans are offered.
class Collector {
 public:
  Collector(const Context& ctx, const SearchOptions& options, SearchResult& result)
      : ctx_(ctx), keep_(options.keep), result_(result) {
    top_.reserve(keep_ + 1);
  }

  /// True when the top list is full: only a key below the last entry's can still enter.
  [[nodiscard]] bool full() const noexcept { return keep_ == 0 || top_.size() == keep_; }

  /// The time step a plan must not exceed to have a chance (valid when full() and keep > 0).
  [[nodiscard]] std::int64_t worst_time_step() const noexcept { return top_.back().first.time; }

  /// True when a plan whose seconds per token are at least `lower_bound` cannot enter: its
  /// time step is then at least time_step(lower_bound) (time_step is non-decreasing), which
  /// is strictly above the last kept key's, and the time step is the key's first field for
  /// training (misses_slo is 0).
  [[nodiscard]] bool beyond(double lower_bound) const noexcept {
    if (!full()) return false;
    return keep_ == 0 || past_worst_step(lower_bound);
  }

  void offer_training(const Plan& p, const MemoryLedger& ledger, const TrainingTime& t) {
    if (keep_ == 0) return;
    if (full() && past_worst_step(1.0 / t.tokens_per_second)) return;
    Evaluation e;
    e.plan = p;
    e.memory = ledger;
    e.training = t;
    insert(e);
  }

  void offer_serving(const Plan& p, const MemoryLedger& ledger, const ServingTime& t) {
    if (keep_ == 0) return;
    Evaluation e;
    e.plan = p;
    e.memory = ledger;
    e.serving = t;
    insert(e);
  }

  void reject(Kind kind, const Plan& p, double excess, std::int64_t count,
              const auto& make_reason) {
    const auto k = static_cast<std::size_t>(kind);
    counts_[k] += count;
    std::vector<Rejection>& list = closest_[k];
    constexpr std::size_t per_kind = 3;
    if (list.size() == per_kind && !(excess < list.back().excess)) return;
    Rejection r{p, kind_names[k], make_reason(), excess};
    auto at = std::upper_bound(list.begin(), list.end(), excess,
                               [](double x, const Rejection& y) { return x < y.excess; });
    list.insert(at, std::move(r));
    if (list.size() > per_kind) list.pop_back();
  }

  void finish() {
    for (auto& [key, e] : top_) {
      result_.keys.push_back(key);
      result_.ranked.push_back(e);
    }
    for (std::size_t k = 0; k < kind_names.size(); ++k) {
      if (counts_[k] > 0) result_.rejected_by_kind[kind_names[k]] = counts_[k];
      for (Rejection& r : closest_[k]) result_.rejected.push_back(std::move(r));
    }
  }

 private:
  /// time_step(seconds) > worst_time_step(), without a logarithm away from the step's end:
  /// time_step is floor(log(x)/log1p(0.01)), which passes the worst kept step at
  /// x* = exp((step + 1)·log1p(0.01)); a relative distance of 1e-9 from x* moves the quotient
  /// by about 1e-7, far more than the few ulps log, exp and the division can be off, so only
  /// inside that band is the logarithm needed.
  [[nodiscard]] bool past_worst_step(double seconds) const noexcept {
    if (seconds < worst_step_end_ * (1.0 - 1e-9)) return false;
    if (seconds > worst_step_end_ * (1.0 + 1e-9)) return true;
    return time_step(seconds) > worst_time_step();
  }

  void insert(const Evaluation& e) {
    const RankKey key = rank_key(ctx_, e);
    if (full() && !(key < top_.back().first)) return;
    auto at = std::upper_bound(top_.begin(), top_.end(), key,
                               [](const RankKey& k, const auto& entry) { return k < entry.first; });
    top_.insert(at, {key, e});
    if (top_.size() > keep_) top_.pop_back();
    if (full()) {
      worst_step_end_ = std::exp(static_cast<double>(worst_time_step() + 1) *
                                 std::log1p(time_resolution));
    }
  }

  const Context& ctx_;
  std::size_t keep_;
  SearchResult& result_;
  std::vector<std::pair<RankKey, Evaluation>> top_;
  double worst_step_end_ = 0;  ///< where the last kept key's time step ends (when full)
  std::array<std::int64_t, 3> counts_{};
  std::array<std::vector<Rejection>, 3> closest_;
};

struct RecomputeChoice {
  Recompute recompute;
  bool flash;
};

// Tiled attention always recomputes the attention core in its backward pass (Dao et al. 2022),
// so "flash + none" is the same configuration as "flash + selective" and is not listed twice.
constexpr std::array<RecomputeChoice, 5> recompute_choices{{{Recompute::none, false},
                                                            {Recompute::selective, false},
                                                            {Recompute::full, false},
                                                            {Recompute::selective, true},
                                                            {Recompute::full, true}}};

/// The search's words for a factorisation that breaks a rule of model/legality.hpp.
std::string degree_reason(const Model& m, const Plan& p, const Violation& v) {
  switch (v.kind) {
    case ViolationKind::pp_layers: return fmt::format("pp = {} exceeds the {} layers", p.pp, m.layers);
    case ViolationKind::cp_seq_len:
      return fmt::format("cp = {} does not divide seq_len {}", p.cp, m.seq_len);
    default:
      return fmt::format("tp = {} must divide the {} heads and fit the {} KV heads", p.tp, m.heads,
                         m.kv_heads);
  }
}

/// Divisors of n in increasing order, into `out` (reused, so no allocation once it is grown).
void fill_divisors(std::int64_t n, std::vector<std::int64_t>& out) {
  out.clear();
  std::size_t small = 0;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(small), d);
    ++small;
    if (d != n / d) out.insert(out.begin() + static_cast<std::ptrdiff_t>(small), n / d);
  }
}

/// Safety factor on lower bounds: the bounds below are exact inequalities between real
/// numbers, evaluated in a different order of floating-point operations than the time model;
/// shrinking them by one part in 10^9 (far above any rounding difference, far below the 1 %
/// time step) keeps them below the model's own rounded figures.
constexpr double bound_margin = 1.0 - 1e-9;

/// Pruning bound 1, from the FLOPs alone: a training step is (m + pp − 1) slots of at least
/// the micro-batch's compute (dense + attention + recompute FLOPs at the effective rate; the
/// score-matrix traffic, communication, bubble excess and exposed data-parallel traffic are
/// all ≥ 0), so seconds per token ≥ (m + pp − 1)·FLOPs/F / (dp·b·m·s).
double compute_bound(const Context& ctx, const Plan& p) {
  const double flops = micro_batch_flops(ctx.model, p).total();
  const double slots = static_cast<double>(p.grad_accum + p.pp - 1);
  const double tokens = static_cast<double>(p.dp) * static_cast<double>(p.micro_batch) *
                        static_cast<double>(p.grad_accum) * static_cast<double>(ctx.model.seq_len);
  return slots * (flops / ctx.flops_per_second) / tokens * bound_margin;
}

/// Pruning bound 2, for every placement at once: the time model on an "ideal network" — one
/// node holding every GPU, whose single tier has the larger bandwidth and the smaller latency
/// of the two. Each collective's cost is a sum of latency·(count ≥ 0) and bytes/bandwidth·
/// (count ≥ 0), the cheapest over a set of algorithms that only grows inside a node (one-shot),
/// so it can only fall; exposure max(min(bucket, comm), comm − window) and the step's sums
/// are non-decreasing in those costs; correctly rounded arithmetic is monotone. So the ideal
/// step is at most the step of any real placement.
Cluster ideal_network(const Cluster& c) {
  Cluster ideal = c;
  ideal.nodes = 1;
  ideal.gpus_per_node = world_size(c);
  Tier best = c.node_tier();
  for (const Tier& t : c.tiers) {
    best.bandwidth_bytes_per_second =
        std::max(best.bandwidth_bytes_per_second, t.bandwidth_bytes_per_second);
    best.latency_seconds = std::min(best.latency_seconds, t.latency_seconds);
    best.peer_memory = best.peer_memory || t.peer_memory;
  }
  ideal.tiers.assign(2, best);
  return ideal;
}

/// The configurations of one group, recompute choice and micro-batch, waiting for their time
/// (pruned search only): the FLOPs, and so the compute bound, do not depend on the ZeRO stage
/// or sequence parallelism, so the variants share one entry.
struct Candidate {
  double bound = 0;         ///< compute_bound, seconds per token
  std::uint64_t order = 0;  ///< group, recompute choice, micro-batch: a tie-break, so the
                            ///< order (and the `timed` count) is fixed
  std::uint8_t variants = 0;  ///< accounted search: bit 2·zero + sp set for each that fits
  [[nodiscard]] std::uint32_t group() const noexcept {
    return static_cast<std::uint32_t>(order >> 24);
  }
  [[nodiscard]] std::size_t choice() const noexcept { return (order >> 16) & 0xff; }
  [[nodiscard]] std::size_t mb() const noexcept { return order & 0xffff; }
  /// The heap's order: the candidate that comes out later is "less".
  friend bool later(const Candidate& a, const Candidate& b) noexcept {
    return a.bound != b.bound ? a.bound > b.bound : a.order > b.order;
  }
};

std::uint64_t candidate_order(std::uint32_t group, std::size_t choice, std::size_t mb) {
  return (static_cast<std::uint64_t>(group) << 24) | (static_cast<std::uint64_t>(choice) << 16) |
         static_cast<std::uint64_t>(mb);
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
  std::size_t rows = 0;              ///< winner-only search: offset into the row pool
};

/// Winner-only search: what is known of one (group, zero, recompute choice, sp) row of
/// micro-batches. The exhaustive enumeration stops a row at its first micro-batch whose
/// ledger does not fit, so a configuration belongs to the space exactly when every smaller
/// micro-batch of its row fits too.
struct Row {
  std::uint16_t fitting = 0;  ///< micro-batches 0 … fitting − 1 are known to fit
  bool ended = false;         ///< micro-batch `fitting` does not fit
};
constexpr std::size_t rows_per_group = 4 * recompute_choices.size() * 2;

std::size_t row_index(int zero, std::size_t choice, int sp) {
  return (static_cast<std::size_t>(zero) * recompute_choices.size() + choice) * 2 +
         static_cast<std::size_t>(sp);
}

/// The search's working memory, reused between searches on one thread.
struct Scratch {
  std::vector<std::int64_t> world_divisors;
  std::vector<std::int64_t> micro_batches;  ///< one group's, while it is enumerated
  std::vector<std::uint8_t> variants;       ///< one group's, per recompute choice × micro-batch
  std::vector<std::int64_t> mb_pool;
  std::vector<Placement> placement_pool;
  std::vector<Row> row_pool;
  std::vector<Group> groups;
  std::vector<Candidate> candidates;
  /// dp → offset of its micro-batches (the divisors of its per-replica share) in mb_pool:
  /// every group with the same dp has the same list, computed once (trial division up to the
  /// square root of the share was most of the search on a highly divisible world, issue 14).
  std::unordered_map<std::int64_t, std::pair<std::size_t, std::size_t>> mb_by_dp;
};

/// The group's plan with a recompute choice and a micro-batch (ZeRO 0, no SP).
Plan configured(const Group& g, std::size_t choice, std::size_t mb,
                const std::vector<std::int64_t>& mb_pool) {
  Plan p = g.base;
  p.recompute = recompute_choices[choice].recompute;
  p.flash_attention = recompute_choices[choice].flash;
  p.micro_batch = mb_pool[g.micro_batches + mb];
  p.grad_accum = g.per_replica / p.micro_batch;
  return p;
}

/// Lists the group's placements that pass the filter, once.
void place(Group& g, const SearchFilter& filter, const Cluster& c, Scratch& s) {
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

/// Every (tp, cp, pp, dp) factorisation of the world in enumeration order that passes the
/// filter and the group checks, each handed to `visit` after its micro-batches are listed;
/// `out`, when given, gets the others as divisibility and batch rejections.
template <typename Visit>
void enumerate_groups(const Context& ctx, const SearchFilter& filter, Scratch& s,
                      Collector* out, Visit&& visit) {
  const Model& m = ctx.model;
  const std::int64_t world = world_size(ctx.cluster);
  const double target = target_sequences(ctx);
  fill_divisors(world, s.world_divisors);
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
        base.dp = world / tp / cp / pp;
        if (!passes_axes(filter, base)) continue;
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
        Group g;
        g.base = base;
        g.per_replica = sequences_per_replica(ctx, base.dp);
        auto [known, added] = s.mb_by_dp.try_emplace(base.dp);
        if (added) {
          fill_divisors(g.per_replica, s.micro_batches);
          known->second = {s.mb_pool.size(), s.micro_batches.size()};
          s.mb_pool.insert(s.mb_pool.end(), s.micro_batches.begin(), s.micro_batches.end());
        }
        g.micro_batches = known->second.first;
        g.micro_batch_count = known->second.second;
        budget.spend(static_cast<std::int64_t>(g.micro_batch_count));
        s.groups.push_back(g);
        visit(static_cast<std::uint32_t>(s.groups.size() - 1));
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
/// A heap rather than a sort: usually only the first candidates come out before the end.
template <typename Fits>
void time_candidates(const Context& ctx, const SearchOptions& options, Scratch& s,
                     Collector& out, SearchResult& result, Fits&& fits) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  const Cluster ideal = ideal_network(c);
  const double seq = static_cast<double>(m.seq_len);
  auto heap_less = [](const Candidate& a, const Candidate& b) { return later(a, b); };
  std::make_heap(s.candidates.begin(), s.candidates.end(), heap_less);
  for (auto end = s.candidates.end(); end != s.candidates.begin(); --end) {
    std::pop_heap(s.candidates.begin(), end, heap_less);
    const Candidate cand = *(end - 1);
    if (out.beyond(cand.bound)) break;
    Group& g = s.groups[cand.group()];
    Plan p = configured(g, cand.choice(), cand.mb(), s.mb_pool);
    TrainingTime lower = training_time(m, ideal, p, ctx.flops_per_second);
    ++result.timed;
    budget.spend(1);
    const double slots = static_cast<double>(p.grad_accum) * lower.micro_batch_seconds() +
                         lower.bubble_seconds;
    if (out.beyond(slots / (lower.global_sequences * seq) * bound_margin)) continue;
    int timed_zero = 0;
    for (int zero = 0; zero <= 3; ++zero) {
      for (int sp = 0; sp <= (p.tp > 1 ? 1 : 0); ++sp) {
        p.zero = zero;
        p.sequence_parallel = sp == 1;
        MemoryLedger ledger;
        if (!fits(cand, p, ledger)) continue;
        if (zero != timed_zero) {
          lower = training_time(m, ideal, p, ctx.flops_per_second);
          ++result.timed;
          budget.spend(1);
          timed_zero = zero;
        }
        if (out.beyond(1.0 / lower.tokens_per_second * bound_margin)) continue;
        place(g, options.filter, c, s);
        for (std::size_t k = 0; k < g.placement_count; ++k) {
          p.placement = s.placement_pool[g.placements + k];
          ++result.timed;
          budget.spend(1);
          out.offer_training(p, ledger, training_time(ctx, p));
        }
      }
    }
  }
}

/// The search with its accounting: every ledger in enumeration order, the counts and the
/// closest rejections; exhaustive (every placement of every fitting configuration timed
/// there and then) or pruned (fitting configurations become candidates for pass 2).
void search_training(const Context& ctx, const SearchOptions& options, Collector& out,
                     SearchResult& result, Scratch& s) {
  const Cluster& c = ctx.cluster;
  const SearchFilter& filter = options.filter;
  enumerate_groups(ctx, filter, s, &out, [&](std::uint32_t group_index) {
    Group& g = s.groups[group_index];
    const Plan base = g.base;
    const std::size_t mb_count = g.micro_batch_count;
    place(g, filter, c, s);
    if (options.prune) s.variants.assign(recompute_choices.size() * mb_count, 0);
    for (int zero = 0; zero <= 3; ++zero) {
      for (std::size_t choice = 0; choice < recompute_choices.size(); ++choice) {
        const RecomputeChoice& rc = recompute_choices[choice];
        if (base.cp > 1 && !rc.flash) continue;  // ring attention needs tiled attention
        for (int sp = 0; sp <= (base.tp > 1 ? 1 : 0); ++sp) {
          for (std::size_t i = 0; i < mb_count; ++i) {
            Plan p = base;
            p.zero = zero;
            p.recompute = rc.recompute;
            p.flash_attention = rc.flash;
            p.sequence_parallel = sp == 1;
            p.micro_batch = s.mb_pool[g.micro_batches + i];
            p.grad_accum = g.per_replica / p.micro_batch;
            if (!passes_config(filter, p)) break;
            const MemoryLedger ledger = memory_ledger(ctx, p);
            ++result.evaluated;
            budget.spend(1);
            if (!ledger.fits()) {
              // Activations grow with the micro-batch: every larger one fails too.
              const auto larger = static_cast<std::int64_t>(mb_count - i);
              out.reject(Kind::memory, p, ledger.total_bytes() / ledger.capacity_bytes, larger,
                         [&] { return memory_reason(ledger); });
              break;
            }
            ++result.feasible;
            if (options.prune) {
              s.variants[choice * mb_count + i] |= static_cast<std::uint8_t>(1 << (2 * zero + sp));
              continue;
            }
            for (std::size_t k = 0; k < g.placement_count; ++k) {
              p.placement = s.placement_pool[g.placements + k];
              ++result.timed;
              budget.spend(1);
              out.offer_training(p, ledger, training_time(ctx, p));
            }
          }
        }
      }
    }
    if (!options.prune) return;
    for (std::size_t choice = 0; choice < recompute_choices.size(); ++choice) {
      for (std::size_t i = 0; i < mb_count; ++i) {
        const std::uint8_t variants = s.variants[choice * mb_count + i];
        if (variants == 0) continue;
        s.candidates.push_back({compute_bound(ctx, configured(g, choice, i, s.mb_pool)),
                                candidate_order(group_index, choice, i), variants});
      }
    }
  });
  if (!options.prune) return;
  time_candidates(ctx, options, s, out, result,
                  [&](const Candidate& cand, const Plan& p, MemoryLedger& ledger) {
                    if ((cand.variants >> (2 * p.zero + (p.sequence_parallel ? 1 : 0)) & 1) == 0) {
                      return false;
                    }
                    ledger = memory_ledger(ctx, p);
                    return true;
                  });
}

/// The winner-only search (SearchOptions::accounting false): every (group, recompute choice,
/// micro-batch) becomes a candidate with its compute bound and no ledger; pass 2 checks
/// membership lazily, computing a row's ledgers in enumeration order only as far as a
/// surviving candidate needs. The same configurations are in the space and the same are
/// timed against the same bounds, so the ranked list is the accounted search's; the counts
/// and rejections are not computed.
void search_training_winner(const Context& ctx, const SearchOptions& options, Collector& out,
                            SearchResult& result, Scratch& s) {
  const SearchFilter& filter = options.filter;
  enumerate_groups(ctx, filter, s, nullptr, [&](std::uint32_t group_index) {
    Group& g = s.groups[group_index];
    g.rows = s.row_pool.size();
    s.row_pool.resize(s.row_pool.size() + rows_per_group);
    for (std::size_t choice = 0; choice < recompute_choices.size(); ++choice) {
      const RecomputeChoice& rc = recompute_choices[choice];
      if (g.base.cp > 1 && !rc.flash) continue;  // ring attention needs tiled attention
      if (filter.recompute && *filter.recompute != rc.recompute) continue;
      if (filter.flash_attention && *filter.flash_attention != rc.flash) continue;
      for (std::size_t i = 0; i < g.micro_batch_count; ++i) {
        s.candidates.push_back({compute_bound(ctx, configured(g, choice, i, s.mb_pool)),
                                candidate_order(group_index, choice, i), 0});
      }
      budget.spend(static_cast<std::int64_t>(g.micro_batch_count));
    }
  });
  time_candidates(ctx, options, s, out, result,
                  [&](const Candidate& cand, const Plan& p, MemoryLedger& ledger) {
                    if (!passes_config(filter, p)) return false;
                    const Group& g = s.groups[cand.group()];
                    Row& row = s.row_pool[g.rows + row_index(p.zero, cand.choice(),
                                                             p.sequence_parallel ? 1 : 0)];
                    const std::size_t i = cand.mb();
                    while (row.fitting <= i && !row.ended) {
                      Plan q = p;
                      q.micro_batch = s.mb_pool[g.micro_batches + row.fitting];
                      q.grad_accum = g.per_replica / q.micro_batch;
                      budget.spend(1);
                      if (memory_ledger(ctx, q).fits()) {
                        ++row.fitting;
                      } else {
                        row.ended = true;
                      }
                    }
                    if (row.fitting <= i) return false;
                    ledger = memory_ledger(ctx, p);
                    return true;
                  });
}

void search_serving(const Context& ctx, const SearchOptions& options, Collector& out,
                    SearchResult& result) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  const std::int64_t world = world_size(c);
  thread_local std::vector<std::int64_t> world_divisors;
  fill_divisors(world, world_divisors);
  for (std::int64_t tp : world_divisors) {
    for (std::int64_t pp : world_divisors) {
      if ((world / tp) % pp != 0) continue;
      Plan p;
      p.tp = tp;
      p.pp = pp;
      p.dp = world / tp / pp;
      p.micro_batch = engine_batch(ctx.workload.serving, p.dp);
      if (!passes_axes(options.filter, p)) continue;
      if (const std::optional<Violation> v = first_violation(m, c, ctx.workload.kind, p,
                                                             LegalityScope::degrees)) {
        out.reject(Kind::divisibility, p, 0, 1, [&] { return degree_reason(m, p, *v); });
        continue;
      }
      const MemoryLedger ledger = memory_ledger(ctx, p);
      ++result.evaluated;
      budget.spend(1);
      if (!ledger.fits()) {
        out.reject(Kind::memory, p, ledger.total_bytes() / ledger.capacity_bytes, 1,
                   [&] { return memory_reason(ledger); });
        continue;
      }
      ++result.feasible;
      // Serving spaces are small (tp × pp pairs): every placement is timed.
      for (const Placement& placement : distinct_placements(p, c)) {
        p.placement = placement;
        if (!passes_config(options.filter, p) || !passes_placement(options.filter, p, c)) continue;
        ++result.timed;
        budget.spend(1);
        out.offer_serving(
            p, ledger, serving_time(m, c, ctx.workload.serving, p, ledger, ctx.flops_per_second));
      }
    }
  }
}

void search_any(const Context& ctx, const SearchOptions& options, Collector& out,
                SearchResult& result) {
  if (ctx.workload.kind == WorkloadKind::training) {
    thread_local Scratch s;
    s.mb_pool.clear();
    s.placement_pool.clear();
    s.row_pool.clear();
    s.groups.clear();
    s.candidates.clear();
    s.mb_by_dp.clear();
    if (options.prune && !options.accounting) {
      search_training_winner(ctx, options, out, result, s);
    } else {
      search_training(ctx, options, out, result, s);
    }
  } else {
    search_serving(ctx, options, out, result);
  }
}

}  // namespace

SearchResult search(const Context& ctx, const SearchOptions& requested) {
  SearchOptions options = requested;
  options.filter.constraints = &ctx.constraints;  // the user's bounds apply to every search
  SearchResult result;
  Collector out(ctx, options, result);
  budget = Budget{0, options.work_limit};
  try {
    search_any(ctx, options, out, result);
  } catch (const WorkLimitReached&) {
    // Stopped part way: nothing of it may pass for an answer.
    SearchResult stopped;
    stopped.incomplete = true;
    stopped.work = budget.used;
    return stopped;
  }
  out.finish();
  result.work = budget.used;
  // Every configuration considered either fits or is rejected for one counted reason (a
  // larger micro-batch of one that does not fit is counted without its ledger being computed).
  result.evaluated = result.feasible;
  for (const auto& [kind, count] : result.rejected_by_kind) result.evaluated += count;
  return result;
}

}  // namespace planner

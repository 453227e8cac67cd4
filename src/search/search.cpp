#include "planner/search/search.hpp"

#include "planner/model/legality.hpp"
#include "planner/search/constraints.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unordered_map>

#include "collector.hpp"
#include "enumerate.hpp"

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

using namespace search_detail;

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
    // The pruned search lists placements when a candidate of the group is first timed.
    if (!options.prune) place(g, filter, c, s);
    if (options.prune) s.variants.assign(recompute_choices.size() * mb_count, 0);
    for (int zero = 0; zero <= 3; ++zero) {
      if (zero == 0 && state_replicas(base) > 1) continue;  // hybrid sharding needs ZeRO >= 1
      for (std::size_t choice = 0; choice < recompute_choices.size(); ++choice) {
        const RecomputeChoice& rc = recompute_choices[choice];
        if (!choice_applies(ctx.model, base, rc)) continue;
        for (int sp = 0; sp <= (base.tp > 1 ? 1 : 0); ++sp) {
          for (std::size_t i = 0; i < mb_count; ++i) {
            if (!schedule_allows(g, i, s.mb_pool)) continue;
            Plan p = base;
            p.zero = zero;
            p.recompute = rc.recompute;
            p.flash_attention = rc.flash;
            p.sequence_parallel = sp == 1;
            p.micro_batch = s.mb_pool[g.micro_batches + i];
            p.grad_accum = g.per_replica / p.micro_batch;
            if (!passes_settings(filter, p)) break;  // the group passed passes_axes
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
              if (!framework_launches(filter, p)) continue;
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
                                candidate_order(group_index, choice, i, variants)});
      }
    }
  });
  if (!options.prune) return;
  BestFirst order(s.candidates);
  const auto compute_of = [&](const Candidate&, const Plan& q, const StageShape& shape,
                              ComputeTerms& terms) {
    TrainingTime t;
    double forward = 0, backward = 0;
    add_compute_terms(ctx.model, ctx.cluster, q, ctx.flops_per_second, shape, t, forward,
                      backward);
    terms = ComputeTerms::of(t, forward, backward);
  };
  time_candidates(ctx, options, s, out, result, order,
                  [&](const Candidate& cand, const Plan& p, MemoryLedger& ledger) {
                    if ((cand.variants() >> (2 * p.zero + (p.sequence_parallel ? 1 : 0)) & 1) == 0) {
                      return false;
                    }
                    ledger = memory_ledger(ctx, p);
                    return true;
                  },
                  compute_of);
}

/// How many of the group's micro-batches (in increasing order) fit for at least one of the
/// choice's variants (ZeRO stage and SP setting) that the settings allow: every variant of a
/// larger micro-batch holds at least as much as the same variant of a smaller one
/// (activations, logits and the recompute working set grow with it, min(pp·b, sequences) in
/// flight), so no plan past the count fits and pass 2 would reject each one lazily. Found by
/// bisection, it spares the winner search the candidates that can never fit: most of the
/// 8.4 million of the 8,648,640-GPU world of tests/cli/test_hostile_work.cpp, and, under a
/// framework's rules, a row whose only allowed stages hold the whole optimizer state (a
/// pipeline that no framework shards past ZeRO-1: four in five candidates popped in a
/// threshold scan of llama3-405b had no allowed variant that fit). `allowed` holds the row
/// indices' settings (Row::settings), filled here. The variants are tried leanest first
/// (ZeRO-3 down to 0).
std::size_t fitting_micro_batches(const Context& ctx, const SearchFilter& filter, const Group& g,
                                  std::size_t choice, const std::vector<std::int64_t>& mb_pool,
                                  Row* rows) {
  std::array<std::pair<int, bool>, 8> allowed{};
  std::size_t allowed_count = 0;
  Plan q = configured(g, choice, 0, mb_pool);
  for (int zero = 3; zero >= 0; --zero) {
    for (const bool sp : {true, false}) {
      if (sp && q.tp <= 1) continue;
      q.zero = zero;
      q.sequence_parallel = sp;
      const bool passes = passes_settings(filter, q);
      rows[row_index(zero, sp ? 1 : 0)].settings = passes ? 1 : 0;
      if (zero == 0 && state_replicas(q) > 1) continue;  // hybrid sharding needs ZeRO >= 1
      if (passes) allowed[allowed_count++] = {zero, sp};
    }
  }
  if (allowed_count == 0) return 0;
  // ZeRO-2 holds at most what ZeRO-1 does, ZeRO-1 at most what ZeRO-0 does (each line of
  // model/memory.hpp training_ledger equal or sharded further; ZeRO-3 adds gather buffers, so
  // it is not ordered against them): once stage 2 or 1 does not fit, the lower stages with
  // the same SP setting are not tried.
  // Each variant's state lines do not depend on the micro-batch (training_state_ledger): they
  // are computed once, when a probe first needs them, and each probe adds its micro-batch's
  // lines, the same arithmetic as a whole ledger (a fifth of a threshold scan's instructions
  // went to these ledgers). Most rows settle on the first variant tried, so most of the
  // eight are never computed (a third of the Mixtral training scenario's instructions were
  // these rows' memory checks when all eight were).
  std::array<MemoryLedger, 8> state;
  std::array<bool, 8> have{};
  const auto state_of = [&](std::size_t k) -> const MemoryLedger& {
    if (!have[k]) {
      q.zero = allowed[k].first;
      q.sequence_parallel = allowed[k].second;
      state[k] = training_state_ledger(ctx.model, ctx.cluster, ctx.workload.training, q);
      have[k] = true;
    }
    return state[k];
  };
  const auto fits = [&](std::size_t i) {
    Plan v = configured(g, choice, i, mb_pool);
    std::array<bool, 2> lean_failed{};  // per SP setting
    for (std::size_t k = 0; k < allowed_count; ++k) {
      const auto [zero, sp] = allowed[k];
      if (lean_failed[sp ? 1 : 0]) continue;
      v.zero = zero;
      v.sequence_parallel = sp;
      MemoryLedger ledger = state_of(k);
      add_training_activations(ctx.model, ctx.cluster, ctx.workload.training, v, ledger);
      if (ledger.fits()) return true;
      if (zero == 1 || zero == 2) lean_failed[sp ? 1 : 0] = true;
    }
    return false;
  };
  std::size_t lo = 0, hi = g.micro_batch_count;  // [0, lo) fit, [hi, count) do not
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Whether the winner search lists the group's recompute choice: it applies to the group and
/// the filter allows it.
bool choice_searched(const Context& ctx, const SearchFilter& filter, const Group& g,
                     std::size_t choice) {
  const RecomputeChoice& rc = recompute_choices[choice];
  if (!choice_applies(ctx.model, g.base, rc)) return false;
  if (filter.recompute && *filter.recompute != rc.recompute) return false;
  return !filter.flash_attention || *filter.flash_attention == rc.flash;
}

/// The winner-only search's enumeration (SearchOptions::accounting false; the search is
/// search_training_winner below): every (group, recompute choice) becomes a pending row with
/// the lowest bound of its micro-batches, its memory not yet looked at; expand_row lists its
/// candidates. Pass 2 checks membership lazily, computing a row's ledgers in enumeration
/// order only as far as a surviving candidate needs. The same configurations are in the space
/// and the same are timed against bounds at least as tight, so the ranked list is the
/// accounted search's; the counts and rejections are not computed.
void enumerate_rows(const Context& ctx, const SearchFilter& filter, Scratch& s) {
  enumerate_groups(ctx, filter, s, nullptr, [&](std::uint32_t group_index) {
    const Group& g = s.groups[group_index];
    // A micro-batch bound (`--fix micro_batch=...`) can leave a group none: no rows (its
    // first micro-batch, which the bound below reads, does not exist).
    if (g.micro_batch_count == 0) return;
    for (std::size_t choice = 0; choice < recompute_choices.size(); ++choice) {
      if (!choice_searched(ctx, filter, g, choice)) continue;
      // The row's smallest bound is its first micro-batch's, b = 1 with the most micro-batches
      // per step ((m + (pp − 1)/v)/m falls as m grows), from its FLOPs alone (compute_bound:
      // cheap, and most rows of a large space are never expanded); one part in 10^12 below it
      // keeps it below the candidates' tighter bounds when rounded.
      s.pending.push_back(
          {compute_bound(ctx, configured(g, choice, 0, s.mb_pool)) * (1.0 - 1e-12),
           candidate_order(group_index, choice, 0)});
    }
  });
}

/// A pending row's candidates: the micro-batches that fit for a variant the settings allow
/// (fitting_micro_batches, which fills the row's settings), with their bounds. Two checks can
/// refuse the whole row: its compute bound (its first micro-batch's, the lowest of its
/// candidates', beyond the search's limit) and its memory (no micro-batch fits). Either
/// order lists the same candidates; the one that has refused the larger share of the rows it
/// checked so far in this search runs first (memory on a dense model's large space, where
/// most rows do not fit; the compute bound on the Mixtral training scenario, where a decision
/// search's memory check passed 1,961 of 3,450 rows and the compute bound then refused 70 %).
template <typename Beyond>
void expand_row(const Context& ctx, const SearchFilter& filter, Scratch& s,
                const PendingRow& row, std::vector<Candidate>& into, const Beyond& beyond) {
  const Candidate first{row.bound, row.order};
  const std::uint32_t group_index = first.group();
  const std::size_t choice = first.choice();
  Group& g = s.groups[group_index];
  budget.spend(static_cast<std::int64_t>(g.micro_batch_count));
  Plan unit = configured(g, choice, 0, s.mb_pool);
  std::array<ComputeTerms, 2> terms{};
  double per_sequence = 0;
  const auto compute_passes = [&] {
    for (int sp = 0; sp <= (unit.tp > 1 ? 1 : 0); ++sp) {
      unit.sequence_parallel = sp == 1;
      terms[static_cast<std::size_t>(sp)] = compute_terms_per_sequence(ctx, unit);
    }
    per_sequence = compute_seconds_per_sequence(terms, unit);
    // One part in 10^12 below, as the rows' bounds (enumerate_rows): the candidates' bounds
    // round the same terms in another order.
    return s.row_checks.passes(
        0, !beyond(compute_bound_per_sequence(ctx, unit, per_sequence) * (1.0 - 1e-12)));
  };
  std::size_t fitting = 0;
  const std::size_t rows = s.row_pool.size();
  const auto memory_passes = [&] {
    s.row_pool.resize(rows + rows_per_choice);
    fitting = fitting_micro_batches(ctx, filter, g, choice, s.mb_pool, &s.row_pool[rows]);
    return s.row_checks.passes(1, fitting > 0);
  };
  if (s.row_checks.compute_first() ? !(compute_passes() && memory_passes())
                                   : !(memory_passes() && compute_passes())) {
    s.row_pool.resize(rows);  // refused: its rows are never read
    return;
  }
  s.unit_of[group_index * recompute_choices.size() + choice] =
      static_cast<std::uint32_t>(s.units.size());
  s.units.push_back({terms, rows});
  for (std::size_t i = 0; i < fitting; ++i) {
    if (!schedule_allows(g, i, s.mb_pool)) continue;
    into.push_back(
        {compute_bound_per_sequence(ctx, configured(g, choice, i, s.mb_pool), per_sequence),
         candidate_order(group_index, choice, i)});
  }
}

/// The winner search: rows expanded as pass 2 reaches them (LazyRows).
void search_training_winner(const Context& ctx, const SearchOptions& options, Collector& out,
                            SearchResult& result, Scratch& s) {
  const auto fits = [&](const Candidate& cand, const Plan& p, MemoryLedger& ledger) {
    const Group& g = s.groups[cand.group()];
    const std::size_t unit = s.unit_of[cand.group() * recompute_choices.size() + cand.choice()];
    Row& row = s.row_pool[s.units[unit].rows + row_index(p.zero, p.sequence_parallel ? 1 : 0)];
    if (row.settings == 0) return false;  // filled by the row's memory check
    const std::size_t i = cand.mb();
    bool have = false;  // `ledger` holds micro-batch i's, the plan `p` itself
    while (row.fitting <= i && !row.ended) {
      Plan q = p;
      q.micro_batch = s.mb_pool[g.micro_batches + row.fitting];
      q.grad_accum = g.per_replica / q.micro_batch;
      budget.spend(1);
      ledger = memory_ledger(ctx, q);
      if (ledger.fits()) {
        have = row.fitting == i;
        ++row.fitting;
      } else {
        row.ended = true;
      }
    }
    if (row.fitting <= i) return false;
    if (!have) ledger = memory_ledger(ctx, p);
    return true;
  };
  enumerate_rows(ctx, options.filter, s);
  s.row_checks = {};
  s.units.clear();
  s.unit_of.assign(s.groups.size() * recompute_choices.size(), 0);
  const auto expand = [&](const PendingRow& row, std::vector<Candidate>& into) {
    expand_row(ctx, options.filter, s, row, into,
               [&](double bound) { return out.beyond(bound); });
  };
  LazyRows<decltype(expand)> order(s.pending, s.candidates, expand);
  const auto compute_of = [&](const Candidate& cand, const Plan& q, const StageShape&,
                              ComputeTerms& terms) {
    const std::size_t unit = s.unit_of[cand.group() * recompute_choices.size() + cand.choice()];
    terms = s.units[unit].terms[q.sequence_parallel ? 1 : 0].at(
        static_cast<double>(q.micro_batch));
  };
  time_candidates(ctx, options, s, out, result, order, fits, compute_of);
}

/// One serving configuration: its ledger, and its time on every distinct placement.
void search_serving_plan(const Context& ctx, const SearchOptions& options, Collector& out,
                         SearchResult& result, Plan p) {
  const Cluster& c = ctx.cluster;
  const MemoryLedger ledger = memory_ledger(ctx, p);
  ++result.evaluated;
  budget.spend(1);
  if (!ledger.fits()) {
    out.reject(Kind::memory, p, ledger.total_bytes() / ledger.capacity_bytes, 1,
               [&] { return memory_reason(ledger); });
    return;
  }
  ++result.feasible;
  // Serving spaces are small (tp × pp × ep): every placement is timed.
  for (const Placement& placement : distinct_placements(p, c)) {
    p.placement = placement;
    if (!passes_config(options.filter, p) || !passes_placement(options.filter, p, c, false)) {
      continue;
    }
    ++result.timed;
    budget.spend(1);
    out.offer_serving(p, ledger,
                      serving_time(ctx.model, c, ctx.workload.serving, p, ledger,
                                   ctx.flops_per_second));
  }
}

/// Serving: every tp × pp engine replicated dp times, and for an MoE model every ep that
/// divides the experts and folds into the dp replicas (docs/moe.md §6; a dense model has
/// ep = 1 alone, so its space and order are those of a search without the axis).
void search_serving(const Context& ctx, const SearchOptions& options, Collector& out,
                    SearchResult& result) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  const std::int64_t world = world_size(c);
  thread_local std::vector<std::int64_t> world_divisors;
  thread_local std::vector<std::int64_t> expert_degrees;
  fill_divisors(world, world_divisors);
  fill_divisors(std::max<std::int64_t>(1, m.moe.experts), expert_degrees);
  for (std::int64_t tp : world_divisors) {
    for (std::int64_t pp : world_divisors) {
      if ((world / tp) % pp != 0) continue;
      bool rejected = false;  // a degree violation is recorded once per (tp, pp)
      for (const std::int64_t ep : expert_degrees) {
        Plan p;
        p.tp = tp;
        p.pp = pp;
        p.dp = world / tp / pp;
        if (p.dp % ep != 0) continue;
        p.ep = ep;
        p.micro_batch = engine_batch(ctx.workload.serving, p.dp);
        if (!passes_axes(options.filter, p)) continue;
        if (const std::optional<Violation> v = first_violation(m, c, ctx.workload.kind, p,
                                                               LegalityScope::degrees)) {
          if (!rejected) {
            out.reject(Kind::divisibility, p, 0, 1, [&] { return degree_reason(m, p, *v); });
          }
          rejected = true;
          continue;
        }
        search_serving_plan(ctx, options, out, result, p);
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
    s.pending.clear();
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
  // The user's bounds apply to every search; none given, nothing to check per plan.
  options.filter.constraints = unconstrained(ctx.constraints) ? nullptr : &ctx.constraints;
  options.filter.narrowed = narrowed_dims(ctx.constraints);
  options.filter.seq_len = ctx.model.seq_len;
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

Recommendation trusted_search(const Context& ctx, const SearchOptions& options) {
  Recommendation r{search(ctx, options), false};
  if (r.result.found() || r.result.incomplete || !ctx.constraints.trusted ||
      ctx.workload.kind != WorkloadKind::training) {
    return r;
  }
  Context raw = ctx;
  raw.constraints.trusted = false;
  r.result = search(raw, options);
  r.outside = r.result.found();
  return r;
}

}  // namespace planner

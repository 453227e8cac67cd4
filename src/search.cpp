#include "planner/search.hpp"

#include <fmt/format.h>

#include <cmath>

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

/// The filter's conditions on the axes' degrees alone.
bool passes_axes(const SearchFilter& f, const Plan& p) {
  if (f.tp && *f.tp != p.tp) return false;
  if (f.pp && *f.pp != p.pp) return false;
  if (f.cp && *f.cp != p.cp) return false;
  if (f.dp && *f.dp != p.dp) return false;
  return p.tp >= f.tp_min && p.pp >= f.pp_min && p.cp >= f.cp_min;
}

/// Everything but placement.
bool passes_config(const SearchFilter& f, const Plan& p) {
  if (!passes_axes(f, p)) return false;
  if (f.zero && *f.zero != p.zero) return false;
  if (f.recompute && *f.recompute != p.recompute) return false;
  return !f.flash_attention || *f.flash_attention == p.flash_attention;
}

bool passes(const SearchFilter& f, const Plan& p, const Cluster& c) {
  if (!passes_config(f, p)) return false;
  if (f.tp_inside_node && p.tp > 1 && *f.tp_inside_node != inside_node(p, c, {Axis::tp})) {
    return false;
  }
  return true;
}

/// Keeps the best `keep` plans and the closest few rejections of each kind.
class Collector {
 public:
  Collector(const Context& ctx, const SearchOptions& options, SearchResult& result)
      : ctx_(ctx), options_(options), result_(result) {}

  void offer(const Evaluation& e) {
    ++result_.feasible;
    const RankKey key = rank_key(ctx_, e);
    if (top_.size() == options_.keep && !(key < top_.back().first)) return;
    auto at = std::upper_bound(top_.begin(), top_.end(), key,
                               [](const RankKey& k, const auto& entry) { return k < entry.first; });
    top_.insert(at, {key, e});
    if (top_.size() > options_.keep) top_.pop_back();
  }

  void reject(const char* kind, const Plan& p, double excess, std::int64_t count,
              const auto& make_reason) {
    result_.rejected_by_kind[kind] += count;
    auto& list = closest_[kind];
    constexpr std::size_t per_kind = 3;
    if (list.size() == per_kind && !(excess < list.back().excess)) return;
    Rejection r{p, kind, make_reason(), excess};
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
    for (auto& [kind, list] : closest_) {
      for (Rejection& r : list) result_.rejected.push_back(std::move(r));
    }
  }

 private:
  const Context& ctx_;
  const SearchOptions& options_;
  SearchResult& result_;
  std::vector<std::pair<RankKey, Evaluation>> top_;
  std::map<std::string, std::vector<Rejection>> closest_;
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

bool tp_fits_heads(const Model& m, std::int64_t tp) {
  return m.heads % tp == 0 && (m.kv_heads % tp == 0 || tp % m.kv_heads == 0);
}

void search_training(const Context& ctx, const SearchOptions& options, Collector& out,
                     SearchResult& result) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  const std::int64_t world = world_size(c);
  const double target = target_sequences(ctx);
  for (std::int64_t tp : divisors(world)) {
    for (std::int64_t cp : divisors(world / tp)) {
      for (std::int64_t pp : divisors(world / tp / cp)) {
        Plan base;
        base.tp = tp;
        base.cp = cp;
        base.pp = pp;
        base.dp = world / tp / cp / pp;
        if (!passes_axes(options.filter, base)) continue;
        if (!tp_fits_heads(m, tp)) {
          out.reject("divisibility", base, 0, 1, [&] {
            return fmt::format("tp = {} must divide the {} heads and fit the {} KV heads", tp,
                               m.heads, m.kv_heads);
          });
          continue;
        }
        if (m.seq_len % cp != 0 || pp > m.layers) {
          out.reject("divisibility", base, 0, 1, [&] {
            return pp > m.layers ? fmt::format("pp = {} exceeds the {} layers", pp, m.layers)
                                 : fmt::format("cp = {} does not divide seq_len {}", cp, m.seq_len);
          });
          continue;
        }
        if (static_cast<double>(base.dp) > std::ceil(target)) {
          out.reject("batch", base, static_cast<double>(base.dp) / target, 1, [&] {
            return fmt::format("dp = {} replicas need at least {} sequences per step; the target "
                               "is {:.1f} ({} tokens / {})",
                               base.dp, base.dp, target,
                               ctx.workload.training.global_batch_tokens, m.seq_len);
          });
          continue;
        }
        const std::int64_t per_replica = sequences_per_replica(ctx, base.dp);
        const std::vector<std::int64_t> micro_batches = divisors(per_replica);
        const std::vector<Placement> placements = distinct_placements(base, c);
        for (int zero = 0; zero <= 3; ++zero) {
          for (const RecomputeChoice& rc : recompute_choices) {
            if (cp > 1 && !rc.flash) continue;  // ring attention needs tiled attention
            for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
              for (std::size_t i = 0; i < micro_batches.size(); ++i) {
                Plan p = base;
                p.zero = zero;
                p.recompute = rc.recompute;
                p.flash_attention = rc.flash;
                p.sequence_parallel = sp == 1;
                p.micro_batch = micro_batches[i];
                p.grad_accum = per_replica / p.micro_batch;
                if (!passes_config(options.filter, p)) break;
                const MemoryLedger ledger = memory_ledger(ctx, p);
                ++result.evaluated;
                if (!ledger.fits()) {
                  // Activations grow with the micro-batch: every larger one fails too.
                  const auto larger = static_cast<std::int64_t>(micro_batches.size() - i);
                  out.reject("memory", p, ledger.total_bytes() / ledger.capacity_bytes, larger,
                             [&] { return memory_reason(ledger); });
                  break;
                }
                for (const Placement& placement : placements) {
                  p.placement = placement;
                  if (!passes(options.filter, p, c)) continue;
                  Evaluation e;
                  e.plan = p;
                  e.memory = ledger;
                  e.training = training_time(m, c, p, ctx.flops_per_second);
                  out.offer(e);
                }
              }
            }
          }
        }
      }
    }
  }
}

void search_serving(const Context& ctx, const SearchOptions& options, Collector& out,
                    SearchResult& result) {
  const Model& m = ctx.model;
  const Cluster& c = ctx.cluster;
  const std::int64_t world = world_size(c);
  for (std::int64_t tp : divisors(world)) {
    for (std::int64_t pp : divisors(world / tp)) {
      Plan p;
      p.tp = tp;
      p.pp = pp;
      p.dp = world / tp / pp;
      p.micro_batch = ctx.workload.serving.batch;
      if (!passes_axes(options.filter, p)) continue;
      if (!tp_fits_heads(m, tp) || pp > m.layers) {
        out.reject("divisibility", p, 0, 1, [&] {
          return pp > m.layers ? fmt::format("pp = {} exceeds the {} layers", pp, m.layers)
                               : fmt::format("tp = {} must divide the {} heads and fit the {} KV "
                                             "heads", tp, m.heads, m.kv_heads);
        });
        continue;
      }
      const MemoryLedger ledger = memory_ledger(ctx, p);
      ++result.evaluated;
      if (!ledger.fits()) {
        out.reject("memory", p, ledger.total_bytes() / ledger.capacity_bytes, 1,
                   [&] { return memory_reason(ledger); });
        continue;
      }
      for (const Placement& placement : distinct_placements(p, c)) {
        p.placement = placement;
        if (!passes(options.filter, p, c)) continue;
        Evaluation e;
        e.plan = p;
        e.memory = ledger;
        e.serving = serving_time(m, c, ctx.workload.serving, p, ledger);
        out.offer(e);
      }
    }
  }
}

}  // namespace

SearchResult search(const Context& ctx, const SearchOptions& options) {
  SearchResult result;
  Collector out(ctx, options, result);
  if (ctx.workload.kind == WorkloadKind::training) {
    search_training(ctx, options, out, result);
  } else {
    search_serving(ctx, options, out, result);
  }
  out.finish();
  return result;
}

}  // namespace planner

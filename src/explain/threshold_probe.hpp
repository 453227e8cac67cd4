#pragma once
// The threshold scans' probes (internal to explain/thresholds.cpp): the answer the search gives
// at one value of an input, the work budget a scan spends on reruns, the inputs' accessors, and
// the candidate set that answers a bracket's probes without rerunning the search where the
// input moves every plan monotonically (docs/ranking.md §4).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/explain/thresholds.hpp"
#include "planner/search/answer.hpp"
#include "planner/search/search.hpp"

namespace planner::threshold_detail {

/// A scan ran out of its work budget (threshold_work_budget): it reports no threshold.
struct OutOfBudget {};

/// The search's answer at one probe: the recommendation and the plans tied with it (training:
/// every plan inside the tolerance band, the recommendation first; empty when none fits), and
/// training's fastest seconds per token (infinite when none fits).
struct Answer {
  std::vector<Plan> equals;
  double fastest_seconds = std::numeric_limits<double>::infinity();
};

/// Whether `b` is still one of the equals at a probe: thresholds are drawn between classes of
/// plans the model cannot tell apart, so a swap inside the band is no threshold.
bool same(const Context& ctx, const Answer& answer, const Plan& b) {
  return std::any_of(answer.equals.begin(), answer.equals.end(),
                     [&](const Plan& a) { return same_answer(ctx, a, b); });
}

std::optional<Plan> first(const Answer& answer) {
  if (answer.equals.empty()) return std::nullopt;
  return answer.equals.front();
}

/// The work one scan may still spend on reruns of the search.
class ScanBudget {
 public:
  /// The answer at `ctx`, within the budget; throws OutOfBudget when the search would pass it.
  Answer equals(const Context& ctx) {
    SearchOptions options = winner_options();
    options.whole_band = true;
    SearchResult r = run(ctx, options);
    Answer out;
    out.equals = std::move(r.band);
    out.fastest_seconds = r.fastest_seconds;
    return out;
  }

  /// Every training plan at `ctx` at most `seconds` per token (SearchOptions::
  /// keep_within_seconds), or none when more than its cap qualify.
  std::optional<std::vector<Evaluation>> within(const Context& ctx, double seconds) {
    SearchOptions options = winner_options();
    options.keep_within_seconds = seconds;
    SearchResult r = run(ctx, options);
    if (r.within_overflow) return std::nullopt;
    return std::move(r.within);
  }

  /// Whether `best` is still one of the equals at `ctx` (what `same(tiers, equals(ctx), best)`
  /// says, for training) without listing the band, in two searches: the fastest plan of
  /// `best`'s answer at `ctx` (same_answer: its degrees, ZeRO stage and recompute pinned in the
  /// filter, the rest compared plan by plan), then whether any plan is faster than that one by
  /// more than the band (SearchOptions::decide_below_seconds). `best` is one of the equals
  /// exactly when its answer's fastest plan a is, t(a) <= band_limit(fastest), so exactly when
  /// no plan f has band_limit(t(f)) < t(a). The second search prunes below the answer's time
  /// and stops at the first plan that beats it, where the band search times every plan within
  /// the band of the fastest; an answer that cannot run at `ctx` (its cp no longer divides the
  /// sequence, its dp exceeds the sequences) costs only the first.
  /// `answer_seconds_out`, when given, gets the answer's fastest time at `ctx`: infinite when
  /// it cannot run there or is not known (its class has more plans than `within` lists).
  bool keeps(const Context& ctx, const Context& tiers, const Plan& best,
             double* answer_seconds_out = nullptr) {
    if (answer_seconds_out) *answer_seconds_out = std::numeric_limits<double>::infinity();
    SearchOptions own = winner_options();
    for (const AxisInfo& row : axes) own.filter.pin(row.axis, best.*row.degree);
    own.filter.etp = expert_tp(best);
    own.filter.zero = best.zero;
    own.filter.recompute = best.recompute;
    own.filter.flash_attention = best.flash_attention;
    own.filter.hybrid = state_replicas(best) > 1;
    own.keep_within_seconds = std::numeric_limits<double>::max();
    SearchResult mine = run(ctx, own);
    if (mine.within_overflow) return same(tiers, equals(ctx), best);
    double answer_seconds = std::numeric_limits<double>::infinity();
    for (const Evaluation& e : mine.within) {
      if (same_answer(tiers, e.plan, best)) {
        answer_seconds = std::min(answer_seconds, 1.0 / e.training.tokens_per_second);
      }
    }
    if (answer_seconds_out) *answer_seconds_out = answer_seconds;
    if (!std::isfinite(answer_seconds)) return false;
    SearchOptions faster = winner_options();
    faster.decide_below_seconds = answer_seconds;
    const SearchResult r = run(ctx, faster);
    // Every plan the search returns is below the limit (Collector::beyond drops the rest).
    return !r.found();
  }

  /// Work done outside a search (a time-model run per candidate), counted as the search's.
  void spend(std::size_t work) {
    left_ -= static_cast<std::int64_t>(work);
    if (left_ <= 0) throw OutOfBudget{};
  }

 private:
  /// A winner-only search (no accounting) that stops at the budget left.
  SearchOptions winner_options() const {
    SearchOptions options;
    options.keep = 1;
    options.accounting = false;
    options.work_limit = left_;
    return options;
  }
  SearchResult run(const Context& ctx, const SearchOptions& options) {
    SearchResult r = search(ctx, options);
    left_ -= r.work;
    if (r.incomplete || left_ <= 0) throw OutOfBudget{};
    return r;
  }
  std::int64_t left_ = threshold_work_budget;
};

/// One input the thresholds move: how to read and write it in a context, its range around
/// the scenario's value, and whether it is a count.
struct Input {
  std::string pointer;
  std::function<double(const Context&)> get;
  std::function<void(Context&, double)> set;
  double range = 100;  ///< search from value / range to value × range
  bool integer = false;
  std::string unit;    ///< as quoted: "GB/s", "tokens", "GiB", "ms", ""
  double unit_scale = 1;
  /// Changes only what the network costs (a tier's bandwidth): every plan's time falls as it
  /// rises and which plans fit does not change (monotone_kind).
  bool network_only = false;
  /// An integer input probed only at multiples of this step (1 when null): see seq_len_step.
  std::int64_t (*step)(const Context&, const Plan& best) = nullptr;
};

/// How an input moves every plan, where a bracket can be bisected over a candidate set
/// (training only): a tier's bandwidth (each plan's time falls as it rises; which plans fit
/// does not change) and the GPU's memory (times do not change; a plan that fits at a value
/// fits above it). Other inputs change the space itself: each probe is a whole search.
enum class Monotone { none, bandwidth, memory };

Monotone monotone_kind(const Context& base, const Input& in) {
  if (base.workload.kind != WorkloadKind::training) return Monotone::none;
  if (in.network_only) return Monotone::bandwidth;
  if (in.pointer == "/cluster/gpu/memory") return Monotone::memory;
  return Monotone::none;
}

/// The answer among `candidates` at `ctx`, what search() returns there when they hold its
/// fastest plan and that plan's whole band: the band of the fastest that fit, ordered by the
/// rank key (search/collector.hpp finish_training). Each candidate is re-timed (bandwidth) or
/// re-checked for fit (memory) at `ctx`; `seconds` gets each one's time, infinite where it
/// does not fit.
Answer answer_among(const Context& ctx, Monotone kind, std::vector<Evaluation>& candidates,
                    std::vector<double>& seconds) {
  constexpr double none = std::numeric_limits<double>::infinity();
  seconds.assign(candidates.size(), none);
  Answer out;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Evaluation& e = candidates[i];
    if (kind == Monotone::bandwidth) e.training = training_time(ctx, e.plan);
    if (kind == Monotone::memory) e.memory = memory_ledger(ctx, e.plan);
    if (e.memory.fits()) seconds[i] = 1.0 / e.training.tokens_per_second;
    out.fastest_seconds = std::min(out.fastest_seconds, seconds[i]);
  }
  if (!std::isfinite(out.fastest_seconds)) return out;
  const double limit = band_limit(out.fastest_seconds);
  std::vector<std::pair<RankKey, std::size_t>> band;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (seconds[i] > limit) continue;
    band.emplace_back(with_band(rank_key(ctx, candidates[i]), WorkloadKind::training, limit), i);
  }
  std::sort(band.begin(), band.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, i] : band) out.equals.push_back(candidates[i].plan);
  return out;
}

/// A bracket's probes answered among candidates instead of by whole searches (issue 33). With
/// `better` the end where times are lowest and the most plans fit (the larger bandwidth or
/// memory) and `worse` the other, a plan can be the fastest, or inside its band, at a value in
/// the bracket only if its time at `better` is within band_limit of the fastest time at
/// `worse` (times only fall, and fits only grow, toward `better`). The candidates are the
/// plans a search at `better` finds within that limit; each probe becomes one end of the
/// bracket and narrows them. The answers are exactly the whole searches': the scans' flip
/// points and plans are those of bisecting with searches (tests/explain/test_explain.cpp).
class CandidateProbe {
 public:
  CandidateProbe(const Context& base, const Input& in, Monotone kind, double better,
                 double worse, double worse_fastest, std::vector<Evaluation> candidates)
      : base_(base), in_(in), kind_(kind), better_(better), worse_(worse),
        worse_fastest_(worse_fastest), candidates_(std::move(candidates)) {
    better_seconds_.reserve(candidates_.size());
    for (const Evaluation& e : candidates_) {
      better_seconds_.push_back(1.0 / e.training.tokens_per_second);
    }
  }

  Answer at(double v, ScanBudget& budget) {
    Context ctx = base_;
    in_.set(ctx, v);
    budget.spend(candidates_.size());
    Answer answer = answer_among(ctx, kind_, candidates_, probe_seconds_);
    probe_fastest_ = answer.fastest_seconds;
    return answer;
  }

  /// The bracket is now [lo, hi] in either order, `v` (the last probe) one of its ends.
  void narrowed(double v, double lo, double hi) {
    better_ = std::max(lo, hi);
    worse_ = std::min(lo, hi);
    if (v == better_) better_seconds_ = probe_seconds_;
    if (v == worse_) worse_fastest_ = probe_fastest_;
    const double limit = band_limit(worse_fastest_) * (1.0 + 1e-9);  // rounding's slack
    std::size_t kept = 0;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      if (!(better_seconds_[i] <= limit)) continue;
      candidates_[kept] = std::move(candidates_[i]);
      better_seconds_[kept++] = better_seconds_[i];
    }
    candidates_.resize(kept);
    better_seconds_.resize(kept);
  }

 private:
  const Context& base_;
  const Input& in_;
  Monotone kind_;
  double better_, worse_, worse_fastest_;
  std::vector<Evaluation> candidates_;
  std::vector<double> better_seconds_, probe_seconds_;
  double probe_fastest_ = 0;
};

}  // namespace planner::threshold_detail

#pragma once
// The search's bookkeeping: the work budget, the filter's tests, and the collector that keeps
// the best plans and the closest rejections. Internal to src/search (included by search.cpp
// only, so that everything here inlines into the search loops as before the split).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "planner/model/regime.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

namespace planner::search_detail {

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
inline thread_local Budget budget;

/// The work (Budget) of holding one plan in the training band: storing its 1.6 KB evaluation
/// and later sorting its key cost about as much as 8 ledgers or time-model runs (measured on
/// seq_len 1 with a measured step time, where 20,000 plans tie: 2 us a plan against 0.2 us a
/// step). Uncounted, such bands made the threshold scans' budget of 1,000,000 steps take
/// seconds instead of tenths, and the command 22 s (hostile input).
inline constexpr std::int64_t band_entry_work = 8;

/// The filter's conditions on the axes' degrees alone (`placed_only`: on the placed axes'
/// alone, for a factorisation whose folded axes are chosen next).
inline bool passes_axes(const SearchFilter& f, const Plan& p, bool placed_only = false) {
  for (const AxisInfo& row : axes) {
    if (placed_only && row.folded) continue;
    const auto i = static_cast<std::size_t>(row.axis);
    const std::int64_t d = p.*row.degree;
    if ((f.degrees[i] && *f.degrees[i] != d) || d < f.min_degrees[i]) return false;
  }
  return !f.constraints || within_degrees(*f.constraints, p, f.narrowed, placed_only);
}

/// The settings (ZeRO stage, recompute, tiled attention, SP, the framework's rules on them)
/// of a plan whose degrees passed passes_axes: the training search checks the degrees once
/// per group and the settings per configuration.
inline bool passes_settings(const SearchFilter& f, const Plan& p) {
  if (f.zero && *f.zero != p.zero) return false;
  if (f.hybrid && *f.hybrid != (state_replicas(p) > 1)) return false;
  if (f.recompute && *f.recompute != p.recompute) return false;
  if (f.constraints && !within_settings(*f.constraints, p, f.narrowed)) return false;
  if (f.constraints && f.constraints->trusted &&
      outside_envelope_config(validated_envelope, p, f.seq_len) != EnvelopeFeature::none) {
    return false;
  }
  return !f.flash_attention || *f.flash_attention == p.flash_attention;
}

/// Everything but placement.
inline bool passes_config(const SearchFilter& f, const Plan& p) {
  return passes_axes(f, p) && passes_settings(f, p);
}

/// Whether the scenario's framework launches the whole training plan: its ZeRO stage, recompute
/// and SP together with its rank order. `place` lists a group's placements once, from the
/// group's first configuration, so a framework whose order holds only for other settings
/// (Megatron-LM's tp-pp-dp order, which has no ZeRO-3) is checked again per variant.
inline bool framework_launches(const SearchFilter& f, const Plan& p) {
  return !f.constraints || framework_placement_violation(f.constraints->framework, p).empty();
}

/// The placement's condition (tp inside a node or not), for a plan that passes_config. The
/// default (`any`: some training framework launches it) concerns training: a serving engine
/// is no Megatron-LM, torchtitan or DeepSpeed job (docs/constraints.md).
inline bool passes_placement(const SearchFilter& f, const Plan& p, const Cluster& c,
                             bool training = true) {
  if ((training || (f.constraints && f.constraints->framework != Framework::any)) &&
      !framework_launches(f, p)) {
    return false;
  }
  if (f.constraints && f.constraints->trusted && training &&
      tp_outside_envelope(validated_envelope, p, c, axis_tier(p, c, Axis::tp))) {
    return false;
  }
  return !f.tp_inside_node || p.tp <= 1 || *f.tp_inside_node == inside_node(p, c, Axis::tp);
}

/// Rejection kinds, in the alphabetical order the result lists them in.
enum class Kind { batch, divisibility, memory };
inline constexpr std::array<const char*, 3> kind_names{"batch", "divisibility", "memory"};

/// Keeps the best `keep` plans and the closest few rejections of each kind. The top list is
/// the `keep` smallest rank keys offered; rank keys are a total order over distinct plans, so
/// the list does not depend on the order in which plans are offered.
class Collector {
 public:
  Collector(const Context& ctx, const SearchOptions& options, SearchResult& result)
      : ctx_(ctx), keep_(options.keep), result_(result), whole_band_(options.whole_band),
        within_limit_(options.keep_within_seconds), within_max_(options.keep_within_max),
        faster_than_(options.faster_than_seconds), decide_below_(options.decide_below_seconds) {
    top_.reserve(keep_ + 1);
    band_plans_.swap(spare_band_plans());  // its capacity: see spare_band_plans
  }
  ~Collector() {
    band_plans_.clear();
    if (band_plans_.capacity() > spare_band_plans().capacity()) band_plans_.swap(spare_band_plans());
  }
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  /// True when the top list is full: only a key below the last entry's can still enter.
  [[nodiscard]] bool full() const noexcept { return keep_ == 0 || top_.size() == keep_; }

  /// True when a training plan whose seconds per token are at least `lower_bound` cannot
  /// enter: it is outside the band of the fastest plan so far (the band only narrows), and
  /// slower than every kept plan, which rank by exact time outside the band (rank.hpp).
  [[nodiscard]] bool beyond(double lower_bound) const noexcept {
    if (lower_bound <= within_limit_) return false;  // wanted in `within` whatever its rank
    return beyond_ranking(lower_bound);
  }

  /// beyond() without `within`: whether the plan can enter the ranked list or the band.
  [[nodiscard]] bool beyond_ranking(double lower_bound) const noexcept {
    if (keep_ == 0) return true;
    if (faster_than_ > 0 && lower_bound > band_limit(faster_than_)) return true;
    // A decision: settled once a plan below the limit is in hand; otherwise a plan no faster
    // than the bound cannot be below it (band_limit is monotone when rounded).
    if (decide_below_ > 0 && (decided_ || !(band_limit(lower_bound) < decide_below_))) return true;
    if (!full()) return false;
    return lower_bound > band_limit(fastest_) && lower_bound > top_.back().first.exact_time;
  }

  void offer_training(const Plan& p, const MemoryLedger& ledger, const TrainingTime& t) {
    const double seconds = 1.0 / t.tokens_per_second;
    if (beyond(seconds)) return;
    Evaluation e;
    e.plan = p;
    e.memory = ledger;
    e.training = t;
    if (seconds <= within_limit_ && !result_.within_overflow) {
      if (result_.within.size() == within_max_) {
        result_.within_overflow = true;
        result_.within = {};
      } else {
        result_.within.push_back(e);
      }
    }
    // Wanted in `within` alone (a threshold scan's candidate set times every plan below its
    // limit, most of them outside the ranking): its rank key would be computed for nothing.
    if (beyond_ranking(seconds)) return;
    const RankKey key = rank_key(ctx_, e);
    if (seconds < fastest_) {
      fastest_ = seconds;
      std::erase_if(band_, [&](const auto& entry) {
        return entry.first.exact_time > band_limit(fastest_);
      });
      compact_band();
    }
    // The top list holds the fastest `keep` by exact time: the plans outside the final band
    // come from it (the band is a prefix of that order).
    insert(with_band(key, WorkloadKind::training, 0.0), e);
    if (seconds <= band_limit(fastest_)) {
      budget.spend(band_entry_work);
      band_.emplace_back(key, band_plans_.size());
      band_plans_.push_back(std::move(e));
    }
    if (decide_below_ > 0 && band_limit(seconds) < decide_below_) decided_ = true;
  }

  void offer_serving(const Plan& p, const MemoryLedger& ledger, const ServingTime& t) {
    if (keep_ == 0) return;
    Evaluation e;
    e.plan = p;
    e.memory = ledger;
    e.serving = t;
    insert(rank_key(ctx_, e), e);
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
    if (ctx_.workload.kind == WorkloadKind::training && !top_.empty()) {
      finish_training();
    } else {
      for (auto& [key, e] : top_) {
        result_.keys.push_back(key);
        result_.ranked.push_back(e);
        // Serving has no band: the equals a threshold scan compares are the ranked plans.
        if (whole_band_) {
          result_.band.push_back(e.plan);
          result_.fastest_seconds = std::min(result_.fastest_seconds, key.exact_time);
        }
      }
    }
    for (std::size_t k = 0; k < kind_names.size(); ++k) {
      if (counts_[k] > 0) result_.rejected_by_kind[kind_names[k]] = counts_[k];
      for (Rejection& r : closest_[k]) result_.rejected.push_back(std::move(r));
    }
  }

 private:
  void insert(const RankKey& key, const Evaluation& e) {
    if (full() && !(key < top_.back().first)) return;
    auto at = std::upper_bound(top_.begin(), top_.end(), key,
                               [](const RankKey& k, const auto& entry) { return k < entry.first; });
    top_.insert(at, {key, e});
    if (top_.size() > keep_) top_.pop_back();
  }

  /// The band's storage is handed from one search to the next on a thread: a band of 20,000
  /// evaluations is 32 MB, and allocating it afresh for each of the threshold scans' reruns
  /// spent their time growing the vector and faulting its pages in.
  static std::vector<Evaluation>& spare_band_plans() {
    thread_local std::vector<Evaluation> spare;
    return spare;
  }

  /// Drops the evaluations the band no longer holds once they outnumber the ones it holds, so
  /// that band_plans_ stays within twice the band (each evaluation moves O(1) times amortised).
  void compact_band() {
    if (band_plans_.size() <= 2 * band_.size() + 64) return;
    std::vector<Evaluation> kept;
    kept.reserve(band_.size());
    for (auto& [key, i] : band_) {
      kept.push_back(std::move(band_plans_[i]));
      i = kept.size() - 1;
    }
    band_plans_ = std::move(kept);
  }

  /// The band's plans, simplest first (the key's tail), then the rest by exact time.
  /// The keys are sorted with the index of their plan, and only the plans kept are moved out:
  /// sorting the (key, Evaluation) pairs themselves, 1.8 KB each, made a band of 17,000 tied
  /// plans (seq_len 1, a measured step time: every plan compute-bound) cost a quarter of a
  /// second per search, and the threshold scans rerun it hundreds of times (hostile input).
  /// Keys are a total order, so the result is the same as sorting the pairs.
  void finish_training() {
    const double limit = band_limit(fastest_);
    std::vector<std::pair<RankKey, std::size_t>> order;
    order.reserve(band_.size());
    for (const auto& [key, i] : band_) {
      order.emplace_back(with_band(key, WorkloadKind::training, limit), i);
    }
    const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    result_.tied = order.size();
    result_.band_limit = limit;
    result_.fastest_seconds = fastest_;
    if (whole_band_) {
      std::sort(order.begin(), order.end(), by_key);
      result_.band.reserve(order.size());
      for (const auto& [key, i] : order) result_.band.push_back(band_plans_[i].plan);
    }
    const std::size_t size = keep_;
    if (order.size() > size) {
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(size),
                        order.end(), by_key);
      order.resize(size);
    } else {
      std::sort(order.begin(), order.end(), by_key);
    }
    result_.keys.reserve(size);
    result_.ranked.reserve(size);
    for (auto& [key, i] : order) {
      result_.keys.push_back(key);
      result_.ranked.push_back(std::move(band_plans_[i]));
    }
    for (const auto& [key, e] : top_) {
      if (result_.ranked.size() == size) break;
      if (key.exact_time > limit) {
        result_.keys.push_back(key);
        result_.ranked.push_back(e);
      }
    }
  }

  const Context& ctx_;
  std::size_t keep_;
  SearchResult& result_;
  bool whole_band_;
  double within_limit_;      ///< SearchOptions::keep_within_seconds
  std::size_t within_max_;   ///< SearchOptions::keep_within_max
  double faster_than_;       ///< SearchOptions::faster_than_seconds (0: none)
  double decide_below_;      ///< SearchOptions::decide_below_seconds (0: none)
  bool decided_ = false;     ///< a plan below decide_below_ is in hand
  /// Training: the fastest `keep` plans by exact time; serving: the best `keep` keys.
  std::vector<std::pair<RankKey, Evaluation>> top_;
  /// Training: every plan inside the band of the fastest so far (a superset of the final band),
  /// as its key and its index in band_plans_. The keys alone move when a faster plan narrows
  /// the band: moving the 1.6 KB evaluations made a band of 20,000 tied plans cost a second
  /// per search (hostile input: seq_len 1 with a measured step time, every plan compute-bound).
  std::vector<std::pair<RankKey, std::size_t>> band_;
  /// The band's evaluations, and those of plans it has dropped until compact_band reclaims them.
  std::vector<Evaluation> band_plans_;
  double fastest_ = std::numeric_limits<double>::infinity();
  std::array<std::int64_t, 3> counts_{};
  std::array<std::vector<Rejection>, 3> closest_;
};

}  // namespace planner::search_detail

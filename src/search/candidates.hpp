#pragma once
// The order in which pass 2 of the pruned search meets its candidates: increasing lower bound
// (bounds.hpp), so that it stops at the first one the kept plans rule out (docs/search.md).
// Internal to src/search.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace planner::search_detail {

/// Pass 2's order: increasing bound, then increasing tie-break (`order`, unique per candidate
/// or row, so the order is strict and total). Candidates, rows and the rows' cut all compare so.
inline bool precedes(double a_bound, std::uint64_t a_order, double b_bound,
                     std::uint64_t b_order) noexcept {
  return a_bound != b_bound ? a_bound < b_bound : a_order < b_order;
}

/// The configurations of one group, recompute choice and micro-batch, waiting for their time
/// (pruned search only): the FLOPs, and so the compute bound, do not depend on the ZeRO stage
/// or sequence parallelism, so the variants share one entry.
struct Candidate {
  /// A lower bound on the seconds per token (bounds.hpp: compute_bound in the accounted
  /// search, compute_bound_per_sequence in the winner search).
  double bound = 0;
  /// Group, recompute choice, micro-batch and (lowest byte) the variants: a tie-break, so the
  /// order (and the `timed` count) is fixed; the variants never decide it, since the first
  /// three fields are unique. One word, so the heap moves 16-byte entries.
  std::uint64_t order = 0;
  [[nodiscard]] std::uint32_t group() const noexcept {
    return static_cast<std::uint32_t>(order >> 32);
  }
  [[nodiscard]] std::size_t choice() const noexcept { return (order >> 24) & 0xff; }
  [[nodiscard]] std::size_t mb() const noexcept { return (order >> 8) & 0xffff; }
  /// Accounted search: bit 2·zero + sp set for each variant that fits.
  [[nodiscard]] std::uint8_t variants() const noexcept {
    return static_cast<std::uint8_t>(order & 0xff);
  }
  /// The heap's order: the candidate that comes out later is "less".
  friend bool later(const Candidate& a, const Candidate& b) noexcept {
    return precedes(b.bound, b.order, a.bound, a.order);
  }
};

inline std::uint64_t candidate_order(std::uint32_t group, std::size_t choice, std::size_t mb,
                                     std::uint8_t variants = 0) {
  return (static_cast<std::uint64_t>(group) << 32) | (static_cast<std::uint64_t>(choice) << 24) |
         (static_cast<std::uint64_t>(mb) << 8) | variants;
}

/// The candidates in increasing (bound, order), a batch at a time: nth_element picks the
/// next batch and a sort orders it, each batch twice the last, so a search that ends early
/// orders little more than it visits and one that visits most of them pays about one sort,
/// cheaper than as many heap pops (a pop sifts down through scattered memory: a fifth of a
/// threshold scan's time when this was a heap). The order is the heap's: (bound, order) is
/// a strict total order, `order` being unique per candidate. Before each batch the
/// candidates not yet ordered whose bound `beyond` already refuses are dropped: the search's
/// limit only narrows (Collector::beyond), so it would stop before reaching any of them.
class BestFirst {
 public:
  explicit BestFirst(std::vector<Candidate>& candidates) : c_(candidates) {}

  /// The next candidate, or nullptr after the last.
  template <typename Beyond>
  const Candidate* next(const Beyond& beyond) {
    if (next_ == ordered_) {
      const auto rest = c_.begin() + static_cast<std::ptrdiff_t>(ordered_);
      c_.erase(std::remove_if(rest, c_.end(),
                              [&](const Candidate& cand) { return beyond(cand.bound); }),
               c_.end());
      const std::size_t batch = std::min(batch_, c_.size() - ordered_);
      batch_ *= 2;
      const auto first = c_.begin() + static_cast<std::ptrdiff_t>(ordered_);
      const auto last = first + static_cast<std::ptrdiff_t>(batch);
      const auto earlier = [](const Candidate& a, const Candidate& b) {
        return precedes(a.bound, a.order, b.bound, b.order);
      };
      if (last != c_.end()) std::nth_element(first, last, c_.end(), earlier);
      std::sort(first, last, earlier);
      ordered_ += batch;
      if (next_ == ordered_) return nullptr;
    }
    return &c_[next_++];
  }

 private:
  std::vector<Candidate>& c_;
  std::size_t next_ = 0;     ///< the next to give
  std::size_t ordered_ = 0;  ///< [0, ordered_) is in its final order
  std::size_t batch_ = 256;
};

/// One (group, recompute choice) of the winner search whose micro-batches are not listed
/// yet: a bound at most any of theirs, and the order of its first micro-batch (no candidate
/// of the row orders before it).
struct PendingRow {
  double bound = 0;
  std::uint64_t order = 0;
  friend bool before(const PendingRow& a, const PendingRow& b) noexcept {
    return precedes(a.bound, a.order, b.bound, b.order);
  }
};

/// The winner search's candidates in BestFirst's order, a row's listed only when pass 2
/// reaches its bound (issue 33): `expand(row, into)` checks the row's memory and appends its
/// candidates. Rows are expanded a batch at a time, each batch the rows of smallest (bound,
/// order) not yet expanded (nth_element, unsorted inside: sorting them cost more than their
/// expansion on a 405B model's space), and a candidate is given only while it orders before
/// the batch's last row: every row not yet expanded orders after that, and every candidate of
/// a row at or after its row, so the candidates come in the order of listing them all first.
/// Before each batch the rows whose bound `beyond` already refuses are dropped (the limit
/// only narrows, Collector::beyond: pass 2 would stop before their candidates). Most rows of
/// a large space are never expanded: their memory ledgers and settings are never computed.
template <typename Expand>
class LazyRows {
 public:
  LazyRows(std::vector<PendingRow>& rows, std::vector<Candidate>& heap, Expand expand)
      : rows_(rows), heap_(heap), expand_(std::move(expand)) {
    heap_.clear();
  }

  template <typename Beyond>
  const Candidate* next(const Beyond& beyond) {
    while (expanded_ < rows_.size() && (heap_.empty() || !before_cut(heap_.front()))) {
      expand_batch(beyond);
    }
    if (heap_.empty()) return nullptr;
    std::pop_heap(heap_.begin(), heap_.end(), comes_later);
    current_ = heap_.back();
    heap_.pop_back();
    return &current_;
  }

 private:
  static bool comes_later(const Candidate& a, const Candidate& b) noexcept { return later(a, b); }
  /// Whether `c` orders before the last row expanded (every row not yet expanded is after it).
  [[nodiscard]] bool before_cut(const Candidate& c) const noexcept {
    return precedes(c.bound, c.order, cut_.bound, cut_.order);
  }

  template <typename Beyond>
  void expand_batch(const Beyond& beyond) {
    const auto rest = rows_.begin() + static_cast<std::ptrdiff_t>(expanded_);
    rows_.erase(std::remove_if(rest, rows_.end(),
                               [&](const PendingRow& row) { return beyond(row.bound); }),
                rows_.end());
    if (expanded_ == rows_.size()) return;
    const std::size_t count = std::min(batch_, rows_.size() - expanded_);
    batch_ *= 2;
    const auto first = rows_.begin() + static_cast<std::ptrdiff_t>(expanded_);
    const auto last = first + static_cast<std::ptrdiff_t>(count) - 1;  // the batch's last row
    if (expanded_ + count < rows_.size()) {
      std::nth_element(first, last, rows_.end(),
                       [](const PendingRow& a, const PendingRow& b) { return before(a, b); });
    }
    cut_ = *last;
    for (std::size_t r = expanded_; r < expanded_ + count; ++r) {
      const std::size_t listed = heap_.size();
      expand_(rows_[r], heap_);
      for (std::size_t i = listed; i < heap_.size(); ++i) {
        std::push_heap(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(i + 1),
                       comes_later);
      }
    }
    expanded_ += count;
    if (expanded_ == rows_.size()) {  // none left: every candidate may go
      cut_.bound = std::numeric_limits<double>::infinity();
      cut_.order = std::numeric_limits<std::uint64_t>::max();
    }
  }

  std::vector<PendingRow>& rows_;
  std::vector<Candidate>& heap_;
  Expand expand_;
  std::size_t expanded_ = 0;  ///< rows [0, expanded_) are expanded
  std::size_t batch_ = 64;
  PendingRow cut_;            ///< the last row expanded, in (bound, order)
  Candidate current_;
};

}  // namespace planner::search_detail

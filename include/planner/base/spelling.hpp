#pragma once
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// "Did you mean ...?" support: an edit distance and a nearest-candidate lookup, used for
/// unknown keys, enum values, units and override pointers (STYLE P11, after ninja's
/// `SpellcheckStringV` in src/util.h).

namespace planner {

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
/// adjacent characters each cost 1, so "hiddne" is one edit from "hidden" (a swap is the most
/// common typo). Bytes are compared as written: "GB/s" and "Gb/s" differ.
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows: the swap case looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

/// How far a word may be from a candidate and still be suggested. Short words get one edit:
/// with two, any two-letter word would "match" every other two-letter key ("xy" -> "tp").
[[nodiscard]] inline std::size_t suggestion_distance(std::string_view word) noexcept {
  return word.size() <= 3 ? 1 : 2;
}

/// The candidate nearest to `word`, if one is within `suggestion_distance(word)` edits.
/// Ties go to the earliest candidate, so callers order candidates by preference.
/// `Range` is any range of things convertible to std::string_view.
template <typename Range>
[[nodiscard]] std::optional<std::string> closest(std::string_view word, const Range& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = suggestion_distance(word) + 1;
  for (const auto& candidate : candidates) {
    const std::string_view c{candidate};
    // The distance is at least the difference in length: a far longer word (a 1 MB key) is
    // skipped without filling its table.
    const std::size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (gap >= best_distance) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

}  // namespace planner

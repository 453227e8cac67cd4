// The order in which pass 2 meets its candidates (src/search/candidates.hpp): BestFirst's
// batches and the winner search's lazily expanded rows must give the candidates in increasing
// (bound, order), exactly as sorting them all would, up to the first one the limit refuses —
// the search stops there (search/enumerate.hpp time_candidates), so a candidate given out of
// order could be one it never times. Checked on random rows and candidates, ties included, against a full sort.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "search/candidates.hpp"

using namespace planner::search_detail;

namespace {

struct RandomRows {
  std::vector<PendingRow> rows;
  std::vector<std::vector<Candidate>> of_row;  // each row's candidates, in rows' order
};

/// Rows with bounds from a few distinct values (ties), each with 0-5 candidates whose bounds
/// are at or above the row's and whose orders follow the row's (search.cpp enumerate_rows).
RandomRows random_rows(std::mt19937_64& rng, std::size_t count) {
  RandomRows out;
  std::uniform_int_distribution<int> level(0, 40);
  std::uniform_int_distribution<int> candidates(0, 5);
  for (std::size_t r = 0; r < count; ++r) {
    const double bound = 1.0 + 0.01 * level(rng);
    const std::uint64_t order = candidate_order(static_cast<std::uint32_t>(r / 6), r % 6, 0);
    out.rows.push_back({bound, order});
    std::vector<Candidate> own;
    const int k = candidates(rng);
    for (int i = 0; i < k; ++i) {
      const double lift = 0.01 * level(rng) * (i == 0 && level(rng) < 10 ? 0 : 1);
      own.push_back({bound + lift, candidate_order(static_cast<std::uint32_t>(r / 6), r % 6,
                                                   static_cast<std::size_t>(i))});
    }
    out.of_row.push_back(own);
  }
  return out;
}

bool earlier(const Candidate& a, const Candidate& b) {
  return a.bound != b.bound ? a.bound < b.bound : a.order < b.order;
}

/// The candidates before the first whose bound exceeds `limit` (all of them when none does):
/// what pass 2 times before it stops (it stops at that one, or when none is left).
std::vector<Candidate> until_beyond(const std::vector<Candidate>& in, double limit) {
  std::vector<Candidate> out;
  for (const Candidate& c : in) {
    if (c.bound > limit) break;
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("Lazily expanded rows give the candidates in the order of a full sort",
          "[search][pruning]") {
  std::mt19937_64 rng(20261206);
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t count = 1 + static_cast<std::size_t>(trial % 7 == 0 ? 3000 : trial * 3);
    RandomRows r = random_rows(rng, count);
    std::vector<Candidate> all;
    for (const auto& own : r.of_row) all.insert(all.end(), own.begin(), own.end());
    std::sort(all.begin(), all.end(), earlier);
    // No limit, and a limit inside the range of bounds (the search's band once it has a plan).
    for (const double limit : {std::numeric_limits<double>::infinity(), 1.2, 1.05}) {
      const auto beyond = [&](double bound) { return bound > limit; };
      std::vector<PendingRow> rows = r.rows;
      std::vector<Candidate> heap;
      const auto expand = [&](const PendingRow& row, std::vector<Candidate>& into) {
        const std::size_t index = Candidate{row.bound, row.order}.group() * 6 +
                                  Candidate{row.bound, row.order}.choice();
        for (const Candidate& c : r.of_row[index]) into.push_back(c);
      };
      LazyRows<decltype(expand)> lazy(rows, heap, expand);
      std::vector<Candidate> given;
      while (const Candidate* c = lazy.next(beyond)) {
        if (beyond(c->bound)) break;
        given.push_back(*c);
      }
      const std::vector<Candidate> expected = until_beyond(all, limit);
      REQUIRE(given.size() == expected.size());
      for (std::size_t i = 0; i < given.size(); ++i) {
        INFO("trial " << trial << ", limit " << limit << ", candidate " << i);
        REQUIRE(given[i].order == expected[i].order);
        REQUIRE(given[i].bound == expected[i].bound);
      }
      // BestFirst over the same candidates, listed in row order.
      std::vector<Candidate> listed;
      for (const auto& own : r.of_row) listed.insert(listed.end(), own.begin(), own.end());
      BestFirst first(listed);
      std::vector<Candidate> batched;
      while (const Candidate* c = first.next(beyond)) {
        if (beyond(c->bound)) break;
        batched.push_back(*c);
      }
      REQUIRE(batched.size() == expected.size());
      for (std::size_t i = 0; i < batched.size(); ++i) {
        REQUIRE(batched[i].order == expected[i].order);
      }
      compared += static_cast<int>(given.size());
    }
  }
  CHECK(compared > 100'000);  // not vacuous
}

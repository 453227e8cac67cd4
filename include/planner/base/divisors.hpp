#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

/// The divisors of a count, in increasing order: the degrees an axis can take (search), and the
/// values an error suggests ("try 32 or 64", io). One definition for both (issue 33 counted
/// three copies).

namespace planner {

/// Divisors of n in increasing order, into `out` (reused, so no allocation once it is grown).
/// Trial division to √n: the small divisors go in order, each paired large one after them.
inline void fill_divisors(std::int64_t n, std::vector<std::int64_t>& out) {
  out.clear();
  std::size_t small = 0;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(small), d);
    ++small;
    if (d != n / d) out.insert(out.begin() + static_cast<std::ptrdiff_t>(small), n / d);
  }
}

/// Divisors of n in increasing order.
[[nodiscard]] inline std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  fill_divisors(n, out);
  return out;
}

}  // namespace planner

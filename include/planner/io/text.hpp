#pragma once
#include <string>

#include <fmt/format.h>

#include "planner/base/units.hpp"

/// Quantities as the text output and the explanation print them: memory in IEC units, rates in
/// SI units (docs/scenario-format.md, "Quantities"), times in the largest unit that keeps a
/// leading digit.

namespace planner {

[[nodiscard]] inline std::string seconds_text(double s) {
  if (s >= 1.0) return fmt::format("{:.2f} s", s);
  if (s >= 1e-3) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

[[nodiscard]] inline std::string bytes_text(double b) {
  if (b >= gib) return fmt::format("{:.1f} GiB", b / gib);
  if (b >= mib) return fmt::format("{:.1f} MiB", b / mib);
  return fmt::format("{:.1f} KiB", b / kib);
}

/// Always in GiB, for ledger figures that are compared with each other.
[[nodiscard]] inline std::string gib_text(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / gib);
}

[[nodiscard]] inline std::string gb_per_s(double bytes_per_second) {
  return fmt::format("{:.1f} GB/s", bytes_per_second / 1e9);
}

}  // namespace planner

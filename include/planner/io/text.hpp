#pragma once
#include <string>
#include <utility>

#include <fmt/format.h>

#include "planner/base/units.hpp"
#include "planner/inputs/model.hpp"

/// Quantities as the text output and the explanation print them: memory in IEC units, rates in
/// SI units (docs/scenario-format.md, "Quantities"), times in the largest unit that keeps a
/// leading digit.

namespace planner {

/// The blocks a pipeline splits: "61 layers", or "62 blocks (61 layers and 1 MTP module)".
[[nodiscard]] inline std::string layers_text(const Model& m) {
  if (m.mtp_layers == 0) return fmt::format("{} layers", m.layers);
  return fmt::format("{} blocks ({} layers and {} MTP module{})", blocks(m), m.layers,
                     m.mtp_layers, m.mtp_layers == 1 ? "" : "s");
}

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

/// `v` with `digits` significant digits in fixed point (no exponent): 4096 → "4096",
/// 4.194 → "4.19", 0.01234 → "0.0123".
[[nodiscard]] inline std::string significant_text(double v, int digits) {
  const double a = v < 0 ? -v : v;
  int decimals = digits - 1;
  for (double p = 10; p <= a && decimals > 0; p *= 10) --decimals;
  for (double p = 1; a > 0 && a < p / 10 && decimals < 12; p /= 10) ++decimals;
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {  // "2.00" → "2", "1.50" → "1.5"
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

/// The SI prefix (from k up) for a count of magnitude `a`: its scale and its text.
[[nodiscard]] inline std::pair<double, const char*> count_prefix(double a) {
  if (a >= 1e12) return {1e12, " T"};
  if (a >= 1e9) return {1e9, " G"};
  if (a >= 1e6) return {1e6, " M"};
  if (a >= 1e4) return {1e3, " k"};
  return {1, ""};
}

/// A count for people: 3 significant digits with an SI prefix from ten thousand up
/// ("4.19 M", "4096", "31.8 k"); never an exponent.
[[nodiscard]] inline std::string count_text(double n) {
  const auto [scale, prefix] = count_prefix(n < 0 ? -n : n);
  const double a = n < 0 ? -n : n;
  if (scale == 1 && a == static_cast<double>(static_cast<long long>(a))) {
    return fmt::format("{:.0f}", n);
  }
  return significant_text(n / scale, 3) + prefix;
}

/// `x` and `now` with one SI prefix (chosen by `now`) and the fewest significant digits, 4 or
/// more, that tell them apart: {"16.77 M", "16.78 M"}, never "1.677e+07".
[[nodiscard]] inline std::pair<std::string, std::string> count_pair_text(double x, double now) {
  const auto [scale, prefix] = count_prefix(now < 0 ? -now : now);
  std::string sx, sn;
  for (int digits = 4; digits <= 9; ++digits) {
    sx = significant_text(x / scale, digits) + prefix;
    sn = significant_text(now / scale, digits) + prefix;
    if (sx != sn) break;
  }
  return {sx, sn};
}

/// "1 replica", "2 replicas": `n` and the noun, plural unless n is exactly one.
[[nodiscard]] inline std::string plural(long long n, const char* noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace planner

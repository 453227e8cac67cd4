#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

/// Unit-aware quantities at the input boundary: "192 GiB", "50 GB/s", "15 us", "400 TFLOP/s".
/// Units are converted here, once, to base SI units (bytes, seconds, bytes/s, FLOP/s); nothing
/// past the loader sees a unit (STYLE P4). The accepted spellings are listed in
/// docs/scenario-format.md §Quantities.

namespace planner {

enum class Dimension { bytes, seconds, bytes_per_second, flops_per_second };

/// The base unit of a dimension, as written in messages: "bytes", "seconds", "bytes/s", "FLOP/s".
[[nodiscard]] std::string_view base_unit(Dimension d) noexcept;

/// The units accepted for a dimension, comma-separated, for messages and --help.
[[nodiscard]] std::string_view unit_list(Dimension d) noexcept;

/// Reads `v` as a quantity of dimension `d` in base units. A JSON number is taken as base
/// units; a string must carry a unit of that dimension ("192 GiB"). Throws
/// InputError(origin, pointer, ...) on a wrong JSON type, unreadable text, a missing or
/// unknown unit, a unit of another dimension, NaN/infinity, or a negative value.
/// Zero is accepted; fields that need a positive value check that themselves.
[[nodiscard]] double parse_quantity(const nlohmann::json& v, Dimension d, const std::string& origin,
                                    const std::string& pointer);

/// The same for text alone (as on the command line): "700 ms", "2.5e9 B", "100 Gbps".
[[nodiscard]] double parse_quantity_text(std::string_view text, Dimension d,
                                         const std::string& origin, const std::string& pointer);

/// A quantity of whichever dimension its unit names, for values whose dimension is not
/// known in advance (expected figures). Same errors as parse_quantity_text, except that
/// any known unit is accepted.
struct AnyQuantity {
  double value = 0;
  Dimension dimension = Dimension::bytes;
};
[[nodiscard]] AnyQuantity parse_any_quantity_text(std::string_view text, const std::string& origin,
                                                  const std::string& pointer);

/// A JSON value as messages show it: compact, on one line (control characters escaped,
/// invalid UTF-8 replaced), cut to about 40 characters. Strings keep their quotes.
[[nodiscard]] std::string describe_value(const nlohmann::json& v);

/// Prints a base-unit value with a readable unit and 4 significant digits, for messages:
/// bytes in IEC units ("10 GiB"), rates in SI units ("50 GB/s", "400 TFLOP/s"), times in
/// s/ms/us/ns.
[[nodiscard]] std::string format_quantity(double value, Dimension d);

}  // namespace planner

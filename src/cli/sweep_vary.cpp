// `planner sweep`'s options: --vary specifications and --shard ranges (docs/output.md §sweep).
#include "planner/cli/sweep.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/scenario_json.hpp"

namespace planner {

using nlohmann::json;

namespace {

/// A --vary is echoed up to this length: long enough for a pointer and a range
/// ("/cluster/inter_node/bandwidth=5GB/s..400GB/s:20log" is 49), cut past it like any echo.
constexpr std::size_t spec_limit = 80;

/// A range end: a plain number, or a number with any known unit, in base units. An end with
/// a unit is kept in `with_unit`, so that run_sweep can check the unit's dimension against
/// the field's.
double range_end(std::string_view text, std::vector<std::string>& with_unit) {
  std::string t(text);
  char* end = nullptr;
  const double plain = std::strtod(t.c_str(), &end);
  if (end != t.c_str() && *end == '\0' && std::isfinite(plain)) return plain;
  const double value = parse_any_quantity_text(t, "--vary", "").value;
  with_unit.push_back(t);
  return value;
}

bool integer_at(const json& doc, const std::string& pointer) {
  try {
    return doc.at(json::json_pointer(pointer)).is_number_integer();
  } catch (const json::exception&) {
    return false;
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

json value_of(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return json(text);
  }
}

}  // namespace

void vary_error(const std::string& spec, const std::string& message) {
  throw InputError("--vary", "", fmt::format("'{}': {}", one_line(spec, spec_limit), message));
}

SweepAxis parse_vary(const std::string& spec, const json& doc) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || spec[0] != '/') {
    vary_error(spec, "expected POINTER=V1,V2,... or POINTER=START..STOP:STEPS[log], with POINTER a "
              "JSON pointer such as /cluster/inter_node/bandwidth");
  }
  SweepAxis axis;
  axis.pointer = spec.substr(0, eq);
  const std::string rhs = spec.substr(eq + 1);
  const std::size_t dots = rhs.find("..");
  if (dots == std::string::npos) {
    for (const std::string& item : split(rhs, ',')) {
      if (item.empty()) vary_error(spec, "empty item in the list");
      axis.values.push_back(value_of(item));
      // As for --set: a string must be valid UTF-8 (the JSONL writer throws on anything else).
      if (axis.values.back().is_string() && !valid_utf8(item)) {
        vary_error(spec, fmt::format("item \"{}\" is not valid UTF-8 text", one_line(item, echo_limit)));
      }
    }
    return axis;
  }
  const std::size_t colon = rhs.rfind(':');
  if (colon == std::string::npos || colon < dots) vary_error(spec, "a range needs ':STEPS', e.g. 5GB/s..400GB/s:20log");
  std::string steps_text = rhs.substr(colon + 1);
  const bool log = steps_text.size() >= 3 && steps_text.compare(steps_text.size() - 3, 3, "log") == 0;
  if (log) steps_text.resize(steps_text.size() - 3);
  char* end = nullptr;
  const long steps = std::strtol(steps_text.c_str(), &end, 10);
  if (steps_text.empty() || *end != '\0' || steps < 1 || steps > 1'000'000) {
    vary_error(spec, fmt::format("STEPS must be an integer from 1 to 1000000, got '{}'", steps_text));
  }
  const double start = range_end(rhs.substr(0, dots), axis.ends_with_unit);
  const double stop = range_end(rhs.substr(dots + 2, colon - dots - 2), axis.ends_with_unit);
  if (log && (start <= 0 || stop <= 0)) vary_error(spec, "a log range needs positive ends");
  const bool integer = integer_at(doc, axis.pointer);
  for (long i = 0; i < steps; ++i) {
    const double f = steps == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(steps - 1);
    double v = log ? start * std::pow(stop / start, f) : start + (stop - start) * f;
    // Where the ratio or the difference of the ends overflows (1e-300..1e300:3log,
    // -1.7e308..1.7e308:3), interpolate in a form that cannot (std::lerp is finite between
    // finite ends); the NaN it gave was reported as "got null".
    if (!std::isfinite(v)) {
      v = log ? std::exp(std::lerp(std::log(start), std::log(stop), f)) : std::lerp(start, stop, f);
    }
    // The ends are the values typed: pow's rounding made 1e-9..1e9:2log end at
    // 1000000000.0000001, which a field bounded at 1e9 refused.
    if (i == 0) v = start;
    if (i == steps - 1 && steps > 1) v = stop;
    if (!std::isfinite(v)) {
      vary_error(spec, fmt::format("point {} of the range is not a finite number; narrow the range",
                                   i + 1));
    }
    // A double of magnitude 2^63 or more has no int64 value (the cast is undefined: 1..1e308:3 reported
    // -9223372036854775808).
    if (integer && !(v > -9223372036854775808.0 && v < 9223372036854775808.0)) {
      vary_error(spec, fmt::format("point {} of the range, {:.6g}, is outside the 64-bit integers "
                                   "(magnitude up to 9223372036854775807) that {} holds; narrow "
                                   "the range",
                                   i + 1, v, axis.pointer));
    }
    if (integer) {
      axis.values.push_back(static_cast<std::int64_t>(std::llround(v)));
    } else {
      axis.values.push_back(v);
    }
  }
  return axis;
}

std::pair<std::size_t, std::size_t> shard_range(const std::string& shard, std::size_t points) {
  if (shard.empty()) return {0, points};
  const std::size_t slash = shard.find('/');
  const std::string shown = one_line(shard, echo_limit);
  // from_chars, not strtol: strtol clamps a huge number to LONG_MAX (and accepts spaces and
  // '+'), so "1/99999999999999999999" ran as "1/9223372036854775807".
  const auto number = [&](std::string_view text, long long& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      throw InputError("--shard", "",
                       fmt::format("K and N must be at most 9223372036854775807 (2^63 - 1), got "
                                   "'{}'",
                                   shown));
    }
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
  };
  long long k = 0;
  long long n = 0;
  const std::string_view view(shard);
  const bool parsed = slash != std::string::npos && number(view.substr(0, slash), k) &&
                      number(view.substr(slash + 1), n);
  if (!parsed || n < 1 || k < 1 || k > n) {
    throw InputError("--shard", "", fmt::format("expected K/N with 1 <= K <= N, got '{}'", shown));
  }
  // 128-bit products: K·points can pass 2^64 when N is huge (__extension__: GCC and clang
  // provide the type; ISO C++ does not name it).
  __extension__ using wide = unsigned __int128;
  const auto slice = [&](long long j) {
    return static_cast<std::size_t>(static_cast<wide>(j) * points / static_cast<wide>(n));
  };
  return {slice(k - 1), slice(k)};
}

}  // namespace planner

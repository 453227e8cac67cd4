#include "planner/io/quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "planner/base/error.hpp"
#include "planner/base/spelling.hpp"
#include "planner/base/units.hpp"

namespace planner {
namespace {

using json = nlohmann::json;

struct Unit {
  std::string_view name;
  double factor;  ///< base units per one of this unit
  Dimension dimension;
};

// Within a dimension, the order is the preference for suggestions on ties: bytes before bits,
// so "GB/sec" suggests "GB/s" rather than "Gb/s", which is eight times smaller.
constexpr std::array units{
    Unit{"B", 1.0, Dimension::bytes},
    Unit{"KB", kb, Dimension::bytes},
    Unit{"MB", mb, Dimension::bytes},
    Unit{"GB", gb, Dimension::bytes},
    Unit{"TB", tb, Dimension::bytes},
    Unit{"PB", 1e15, Dimension::bytes},
    Unit{"KiB", kib, Dimension::bytes},
    Unit{"MiB", mib, Dimension::bytes},
    Unit{"GiB", gib, Dimension::bytes},
    Unit{"TiB", tib, Dimension::bytes},
    Unit{"PiB", tib * 1024.0, Dimension::bytes},
    Unit{"s", 1.0, Dimension::seconds},
    Unit{"ms", 1e-3, Dimension::seconds},
    Unit{"us", 1e-6, Dimension::seconds},
    Unit{"\u00b5s", 1e-6, Dimension::seconds},  // micro sign
    Unit{"\u03bcs", 1e-6, Dimension::seconds},  // Greek small mu, which keyboards also produce
    Unit{"ns", 1e-9, Dimension::seconds},
    Unit{"B/s", 1.0, Dimension::bytes_per_second},
    Unit{"KB/s", kb, Dimension::bytes_per_second},
    Unit{"MB/s", mb, Dimension::bytes_per_second},
    Unit{"GB/s", gb, Dimension::bytes_per_second},
    Unit{"TB/s", tb, Dimension::bytes_per_second},
    Unit{"KiB/s", kib, Dimension::bytes_per_second},
    Unit{"MiB/s", mib, Dimension::bytes_per_second},
    Unit{"GiB/s", gib, Dimension::bytes_per_second},
    Unit{"TiB/s", tib, Dimension::bytes_per_second},
    // "p" for "per", capital B for bytes, as in Calculon's "GBps" keys.
    Unit{"MBps", mb, Dimension::bytes_per_second},
    Unit{"GBps", gb, Dimension::bytes_per_second},
    Unit{"TBps", tb, Dimension::bytes_per_second},
    // Network links are quoted in bits per second; a byte is 8 bits.
    Unit{"Mb/s", mb / 8, Dimension::bytes_per_second},
    Unit{"Mbit/s", mb / 8, Dimension::bytes_per_second},
    Unit{"Mbps", mb / 8, Dimension::bytes_per_second},
    Unit{"Gb/s", gb / 8, Dimension::bytes_per_second},
    Unit{"Gbit/s", gb / 8, Dimension::bytes_per_second},
    Unit{"Gbps", gb / 8, Dimension::bytes_per_second},
    Unit{"Tb/s", tb / 8, Dimension::bytes_per_second},
    Unit{"Tbit/s", tb / 8, Dimension::bytes_per_second},
    Unit{"Tbps", tb / 8, Dimension::bytes_per_second},
    Unit{"FLOP/s", 1.0, Dimension::flops_per_second},
    Unit{"GFLOP/s", 1e9, Dimension::flops_per_second},
    Unit{"TFLOP/s", 1e12, Dimension::flops_per_second},
    Unit{"PFLOP/s", 1e15, Dimension::flops_per_second},
    Unit{"FLOPS", 1.0, Dimension::flops_per_second},
    Unit{"GFLOPS", 1e9, Dimension::flops_per_second},
    Unit{"TFLOPS", 1e12, Dimension::flops_per_second},
    Unit{"PFLOPS", 1e15, Dimension::flops_per_second},
};

/// How messages name a dimension.
struct Words {
  std::string_view noun;     ///< "a size in bytes"
  std::string_view bare;     ///< "size in bytes"
  std::string_view example;  ///< "80 GiB"
};

const Words& words(Dimension d) noexcept {
  static constexpr std::array table{
      Words{"a size in bytes", "size in bytes", "80 GiB"},
      Words{"a time in seconds", "time in seconds", "15 us"},
      Words{"a bandwidth in bytes/s", "bandwidth in bytes/s", "50 GB/s"},
      Words{"a compute rate in FLOP/s", "compute rate in FLOP/s", "400 TFLOP/s"},
  };
  return table[static_cast<std::size_t>(d)];
}

/// Messages quote user text as a JSON string, so that quotes, newlines and control
/// characters in it cannot break the one-line error format.
std::string json_quoted(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string_view trim(std::string_view s) noexcept {
  constexpr std::string_view space = " \t\n\r\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

bool equal_ignoring_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

const Unit* find_unit(std::string_view name) noexcept {
  for (const Unit& u : units) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

/// Units that differ only in case come first ("gib" -> "GiB": two edits, too far for the
/// distance rule on a short word). All of them are offered, because case carries meaning:
/// "gb/s" could be "GB/s" or "Gb/s", eight times apart. Else the nearest spelling.
std::string suggest_unit(std::string_view name, std::optional<Dimension> want) {
  std::vector<std::string_view> names;
  std::vector<std::string> same_letters;
  for (const Unit& u : units) {
    if (want && u.dimension != *want) continue;
    names.push_back(u.name);
    if (equal_ignoring_case(u.name, name)) same_letters.push_back(fmt::format("\"{}\"", u.name));
  }
  if (same_letters.empty()) {
    if (const auto guess = closest(name, names))
      same_letters.push_back(fmt::format("\"{}\"", *guess));
  }
  if (same_letters.empty()) return "";
  std::string out = " (did you mean " + same_letters.front();
  for (std::size_t i = 1; i < same_letters.size(); ++i) {
    out += (i + 1 == same_letters.size() ? " or " : ", ") + same_letters[i];
  }
  return out + "?)";
}

std::string expected_units(std::optional<Dimension> want) {
  if (want) return fmt::format("units for {}: {}", base_unit(*want), unit_list(*want));
  return "units: B, GiB, ... for sizes; s, ms, us, ns for times; GB/s, Gbps, ... for "
         "bandwidths; TFLOP/s, ... for compute rates";
}

std::string unreadable(std::string_view text, std::optional<Dimension> want) {
  if (!want) {
    return fmt::format(
        "cannot read {} as a quantity; write a number and a unit, such as \"50 GB/s\"",
        json_quoted(text));
  }
  return fmt::format("cannot read {} as {}; write a number and a unit, such as \"{}\"", json_quoted(text),
                     words(*want).noun, words(*want).example);
}

std::string no_unit(std::string_view text, std::optional<Dimension> want) {
  if (!want) {
    return fmt::format(
        "{} has no unit; write a unit (\"192 GiB\", \"15 us\", \"50 GB/s\") or, for a "
        "figure in base units, a bare JSON number",
        json_quoted(text));
  }
  return fmt::format(
      "{} has no unit; write {} with one of {} (such as \"{}\"), or a bare JSON number "
      "in {}",
      json_quoted(text), words(*want).noun, unit_list(*want), words(*want).example, base_unit(*want));
}

std::string unknown_unit(std::string_view unit, std::string_view text,
                         std::optional<Dimension> want) {
  return fmt::format("unknown unit {} in {}{}; {}", json_quoted(unit), json_quoted(text),
                     suggest_unit(unit, want), expected_units(want));
}

[[noreturn]] void throw_at(const std::string& origin, const std::string& pointer,
                           const std::string& message) {
  throw InputError(origin, pointer, message);
}

/// The shared parser: number, optional spaces, unit. `want` empty accepts any dimension.
AnyQuantity parse_text(std::string_view text, std::optional<Dimension> want,
                       const std::string& origin, const std::string& pointer) {
  const auto fail = [&](const std::string& message) { throw_at(origin, pointer, message); };
  const std::string_view t = trim(text);
  const char* first = t.data();
  const char* const last = t.data() + t.size();
  if (first != last && *first == '+') ++first;  // from_chars takes no '+'; "+5 GB" is harmless
  double number = 0;
  const auto [end, ec] = std::from_chars(first, last, number);
  if (ec == std::errc::invalid_argument) fail(unreadable(t, want));
  if (ec == std::errc::result_out_of_range) fail(fmt::format("{} is out of range", json_quoted(t)));
  // from_chars reads "nan" and "inf" as numbers; no capacity or rate can be either.
  if (!std::isfinite(number)) fail(fmt::format("{} is not a finite number", json_quoted(t)));
  const std::string_view unit = trim(std::string_view(end, static_cast<std::size_t>(last - end)));
  if (unit.empty()) fail(no_unit(t, want));
  const Unit* u = find_unit(unit);
  if (u == nullptr) fail(unknown_unit(unit, t, want));
  if (want && u->dimension != *want) {
    fail(fmt::format("{} is {}, but {} is expected here ({})", json_quoted(t), words(u->dimension).noun,
                     words(*want).noun, expected_units(want)));
  }
  if (number < 0) {
    fail(fmt::format("expected a non-negative {}, got {}", words(u->dimension).bare, json_quoted(t)));
  }
  const double value = number * u->factor;
  if (!std::isfinite(value)) fail(fmt::format("{} is too large", json_quoted(t)));
  return {value, u->dimension};
}

}  // namespace

std::string_view base_unit(Dimension d) noexcept {
  switch (d) {
    case Dimension::bytes:
      return "bytes";
    case Dimension::seconds:
      return "seconds";
    case Dimension::bytes_per_second:
      return "bytes/s";
    case Dimension::flops_per_second:
      return "FLOP/s";
  }
  return "bytes";
}

std::string_view unit_list(Dimension d) noexcept {
  switch (d) {
    case Dimension::bytes:
      return "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";
    case Dimension::seconds:
      return "s, ms, us, \u00b5s, ns";
    case Dimension::bytes_per_second:
      return "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, GBps, Mb/s, Gb/s, Tb/s, "
             "Gbit/s, Gbps";
    case Dimension::flops_per_second:
      return "FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s";
  }
  return "";
}

std::string describe_value(const json& v) {
  constexpr std::size_t limit = 40;
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= limit) return text;
  std::size_t cut = limit - 3;
  // Back off to a character boundary so the cut never splits a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

double parse_quantity(const json& v, Dimension d, const std::string& origin,
                      const std::string& pointer) {
  if (v.is_string())
    return parse_quantity_text(v.get_ref<const std::string&>(), d, origin, pointer);
  if (!v.is_number()) {
    throw InputError(origin, pointer,
                     fmt::format("expected {} (a number or a string such as \"{}\"), got {}",
                                 words(d).noun, words(d).example, describe_value(v)));
  }
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0) {
    throw InputError(
        origin, pointer,
        fmt::format("expected a non-negative {}, got {}", words(d).bare, describe_value(v)));
  }
  return x;
}

double parse_quantity_text(std::string_view text, Dimension d, const std::string& origin,
                           const std::string& pointer) {
  return parse_text(text, d, origin, pointer).value;
}

AnyQuantity parse_any_quantity_text(std::string_view text, const std::string& origin,
                                    const std::string& pointer) {
  return parse_text(text, std::nullopt, origin, pointer);
}

std::string format_quantity(double value, Dimension d) {
  struct Scale {
    double factor;
    std::string_view name;
  };
  // Largest first; the last entry of each list is the base unit, used for zero and tiny values.
  static const std::vector<Scale> bytes{{tib * 1024, "PiB"}, {tib, "TiB"}, {gib, "GiB"},
                                        {mib, "MiB"},        {kib, "KiB"}, {1, "B"}};
  static const std::vector<Scale> seconds{{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  static const std::vector<Scale> rates{
      {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}};
  static const std::vector<Scale> flops{
      {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}, {1, "FLOP/s"}};
  const std::vector<Scale>& scales = d == Dimension::bytes              ? bytes
                                     : d == Dimension::seconds          ? seconds
                                     : d == Dimension::bytes_per_second ? rates
                                                                        : flops;
  if (value == 0) {
    return fmt::format("0 {}",
                       d == Dimension::seconds ? std::string_view("s") : scales.back().name);
  }
  const Scale* pick = &scales.back();
  for (const Scale& s : scales) {
    if (std::fabs(value) >= s.factor) {
      pick = &s;
      break;
    }
  }
  return fmt::format("{:.4g} {}", value / pick->factor, pick->name);
}

}  // namespace planner

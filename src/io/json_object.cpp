#include "json_object.hpp"

#include <charconv>
#include <cmath>

namespace planner::json_input {
// ---- Small text helpers ----------------------------------------------------------------

void fail(const std::string& origin, const std::string& pointer,
                       const std::string& message) {
  throw InputError(origin, pointer, message);
}

// RFC 6901: '~' and '/' inside a key are written "~0" and "~1".
std::string escape_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string quote(std::string_view text) { return describe_value(json(std::string(text))); }

/// nlohmann's what() starts with an id, "[json.exception.parse_error.101] "; drop it.
std::string library_message(std::string_view what) {
  if (const auto end = what.find("] "); what.starts_with("[json.exception.") && end != what.npos) {
    what.remove_prefix(end + 2);
  }
  return std::string(what);
}

/// The reason alone: "parse error at byte 2: escape character ..." -> "escape character ...".
std::string library_reason(std::string_view what) {
  std::string message = library_message(what);
  if (message.starts_with("parse error")) {
    if (const auto colon = message.find(": "); colon != std::string::npos)
      message.erase(0, colon + 2);
  }
  return message;
}

std::string join(const std::vector<std::string_view>& items, std::string_view separator) {
  std::string out;
  for (const std::string_view item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

/// "1, 2, 4, 8, 16, 32, ..." : the first few of `values`, for "try ..." hints.
std::string first_few(const std::vector<std::int64_t>& values) {
  constexpr std::size_t shown = 6;
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  }
  if (values.size() > shown) out += ", ...";
  return out;
}

/// The divisors of `n` just below and above `x`: "32 or 64".
std::string nearest_divisors(std::int64_t n, std::int64_t x) {
  std::optional<std::int64_t> below, above;
  for (const std::int64_t d : divisors(n)) {
    if (d < x) below = d;
    if (d > x && !above) above = d;
  }
  if (below && above) return fmt::format("{} or {}", *below, *above);
  return std::to_string(below ? *below : above.value_or(1));
}

std::string limit_text(std::int64_t n) {
  for (int k = 10; k < 63; ++k) {
    if (n == pow2(k)) return fmt::format("{} (2^{})", n, k);
  }
  return std::to_string(n);
}

// ---- Value decoders: each checks the JSON kind before converting (STYLE §4.3.8) --------

std::string int_expect(IntRule r, bool with_limit) {
  if (r.lo == 1 && !with_limit) return "a positive integer";
  if (r.lo == 1) return fmt::format("a positive integer no greater than {}", limit_text(r.hi));
  return fmt::format("an integer from {} to {}", r.lo, limit_text(r.hi));
}

/// Integers may be written 8e9: a float that is exactly integral is accepted.
std::int64_t read_int(const json& v, IntRule r, const std::string& origin, const std::string& ptr) {
  const auto bad = [&](bool too_large) {
    fail(origin, ptr,
         fmt::format("expected {}, got {}", int_expect(r, too_large), describe_value(v)));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(r.hi)) bad(true);
    if (u < static_cast<std::uint64_t>(r.lo)) bad(false);
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < r.lo) bad(false);
    if (i > r.hi) bad(true);
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(r.lo)) bad(false);
    if (d > static_cast<double>(r.hi)) bad(true);
    return static_cast<std::int64_t>(d);
  }
  bad(false);
  return 0;
}

bool read_bool(const json& v, const std::string& origin, const std::string& ptr) {
  if (!v.is_boolean()) {
    fail(origin, ptr, fmt::format("expected true or false, got {}", describe_value(v)));
  }
  return v.get<bool>();
}

std::string read_string(const json& v, const std::string& origin, const std::string& ptr) {
  if (!v.is_string())
    fail(origin, ptr, fmt::format("expected a string, got {}", describe_value(v)));
  return v.get<std::string>();
}

void check_range(double x, const NumberRule& r, const json& v, const std::string& origin,
                 const std::string& ptr) {
  const bool low = r.lo_open ? !(x > r.lo) : !(x >= r.lo);
  if (low || !(x <= r.hi)) {
    fail(origin, ptr, fmt::format("expected {}, got {}", r.expect, describe_value(v)));
  }
}

double read_number(const json& v, const NumberRule& r, const std::string& origin,
                   const std::string& ptr) {
  if (!v.is_number())
    fail(origin, ptr, fmt::format("expected {}, got {}", r.expect, describe_value(v)));
  const double x = v.get<double>();
  check_range(x, r, v, origin, ptr);
  return x;
}

double read_quantity(const json& v, Dimension d, const NumberRule& r, const std::string& origin,
                     const std::string& ptr) {
  const double x = parse_quantity(v, d, origin, ptr);
  check_range(x, r, v, origin, ptr);
  return x;
}

double read_long_time(const json& v, const NumberRule& r, const std::string& origin,
                      const std::string& ptr) {
  struct Long {
    std::string_view unit;
    double seconds;
  };
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    for (const Long u : {Long{"min", 60.0}, Long{"h", 3600.0}, Long{"d", 86400.0}}) {
      if (text.size() <= u.unit.size() || !text.ends_with(u.unit)) continue;
      std::string_view number(text.data(), text.size() - u.unit.size());
      while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
      while (!number.empty() && number.front() == ' ') number.remove_prefix(1);
      double x = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
      if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(x)) {
        fail(origin, ptr,
             fmt::format("cannot read {} as a time; write a number and a unit, such as \"15 "
                         "min\"",
                         describe_value(v)));
      }
      check_range(x * u.seconds, r, v, origin, ptr);
      return x * u.seconds;
    }
  }
  return read_quantity(v, Dimension::seconds, r, origin, ptr);
}

}  // namespace planner::json_input

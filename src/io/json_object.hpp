#pragma once
// Decoding JSON input strictly: values checked for kind and range, objects checked for unknown
// keys before any field is read, every error an InputError that names the file and the JSON
// pointer (STYLE P12, docs/errors.md). Shared by the scenario loader and its sections
// (scenario_json.cpp, scenario_sections.cpp) and the resilience loader (resilience_json.cpp);
// internal to the io layer, so it lives beside them rather than under include/.
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/base/divisors.hpp"
#include "planner/base/error.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/quantity.hpp"

namespace planner::json_input {

using json = nlohmann::json;

constexpr std::int64_t pow2(int n) { return std::int64_t{1} << n; }

/// An inclusive range for an integer input.
struct IntRule {
  std::int64_t lo;
  std::int64_t hi;
};

/// A range for a real number or a quantity; `expect` is the whole "expected ..." phrase.
struct NumberRule {
  double lo;
  bool lo_open;  ///< true: value must be > lo; false: >= lo
  double hi;
  std::string_view expect;
};

/// One named value of an enumerated input.
template <typename E>
struct Choice {
  std::string_view name;
  E value;
};

// ---- Small text helpers ----------------------------------------------------------------

[[noreturn]] void fail(const std::string& origin, const std::string& pointer,
                       const std::string& message);
/// RFC 6901: '~' and '/' inside a key are written "~0" and "~1".
[[nodiscard]] std::string escape_token(std::string_view key);
[[nodiscard]] std::string quote(std::string_view text);
/// nlohmann's what() without its "[json.exception.parse_error.101] " id.
[[nodiscard]] std::string library_message(std::string_view what);
/// The reason alone: "parse error at byte 2: escape character ..." -> "escape character ...".
[[nodiscard]] std::string library_reason(std::string_view what);
[[nodiscard]] std::string join(const std::vector<std::string_view>& items,
                               std::string_view separator);
/// "1, 2, 4, 8, 16, 32, ..." : the first few of `values`, for "try ..." hints.
[[nodiscard]] std::string first_few(const std::vector<std::int64_t>& values);
/// The divisors of `n` just below and above `x`: "32 or 64".
[[nodiscard]] std::string nearest_divisors(std::int64_t n, std::int64_t x);
/// "65536 (2^16)" for powers of two from 2^10, else the number.
[[nodiscard]] std::string limit_text(std::int64_t n);

// ---- Value decoders: each checks the JSON kind before converting (STYLE §4.3.8) --------

[[nodiscard]] std::string int_expect(IntRule r, bool with_limit);
/// Integers may be written 8e9: a float that is exactly integral is accepted.
[[nodiscard]] std::int64_t read_int(const json& v, IntRule r, const std::string& origin,
                                    const std::string& ptr);
[[nodiscard]] bool read_bool(const json& v, const std::string& origin, const std::string& ptr);
[[nodiscard]] std::string read_string(const json& v, const std::string& origin,
                                      const std::string& ptr);
void check_range(double x, const NumberRule& r, const json& v, const std::string& origin,
                 const std::string& ptr);
[[nodiscard]] double read_number(const json& v, const NumberRule& r, const std::string& origin,
                                 const std::string& ptr);
[[nodiscard]] double read_quantity(const json& v, Dimension d, const NumberRule& r,
                                   const std::string& origin, const std::string& ptr);
/// A time that may also be written in minutes, hours or days ("15 min", "50677 h", "54 d"),
/// as failure and restart times are; anything else goes to parse_quantity in seconds.
[[nodiscard]] double read_long_time(const json& v, const NumberRule& r, const std::string& origin,
                                    const std::string& ptr);

template <typename E, std::size_t N>
std::string choice_list(const std::array<Choice<E>, N>& table) {
  std::vector<std::string> quoted;
  for (const auto& c : table) quoted.push_back(fmt::format("\"{}\"", c.name));
  std::vector<std::string_view> views(quoted.begin(), quoted.end());
  return join(views, ", ");
}

template <typename E, std::size_t N>
E read_choice(const json& v, const std::array<Choice<E>, N>& table, const std::string& origin,
              const std::string& ptr) {
  std::vector<std::string_view> names;
  for (const auto& c : table) names.push_back(c.name);
  std::string hint;
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    for (const auto& c : table) {
      if (c.name == s) return c.value;
    }
    if (const auto guess = closest(s, names)) hint = fmt::format(" (did you mean \"{}\"?)", *guess);
  }
  fail(origin, ptr,
       fmt::format("expected one of {}, got {}{}", choice_list(table), describe_value(v), hint));
}

// ---- Object: strict key sets, pointer in hand (STYLE P12) ------------------------------

/// One JSON object being decoded. The constructor rejects unknown keys before any field is
/// read, because a misspelt key ("hiden") would otherwise be reported as the missing one.
class Object {
 public:
  Object(const json& v, std::string pointer, const std::string& origin,
         std::initializer_list<std::string_view> keys)
      : Object(v, std::move(pointer), origin, std::vector<std::string_view>(keys)) {}

  Object(const json& v, std::string pointer, const std::string& origin,
         std::vector<std::string_view> keys)
      : v_(v), pointer_(std::move(pointer)), origin_(origin), keys_(std::move(keys)) {
    if (!v.is_object()) {
      fail(origin_, pointer_,
           fmt::format("expected an object with keys {}, got {}", join(keys_, ", "),
                       describe_value(v)));
    }
    for (const auto& item : v.items()) check_known(item.key(), keys_);
  }

  /// Narrows the key set after a discriminator is read (the workload kind): a key of the
  /// other variant is an error that lists this variant's keys.
  void restrict_to(std::initializer_list<std::string_view> keys, std::string_view variant) const {
    const std::vector<std::string_view> allowed(keys);
    for (const auto& item : v_.items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
      fail(origin_, path(item.key()),
           fmt::format("not a key of {}; expected one of: {}", variant, join(allowed, ", ")));
    }
  }

  [[nodiscard]] std::string path(std::string_view key) const {
    return pointer_ + "/" + escape_token(key);
  }

  /// An error about the value of `key` that no single range expresses.
  [[noreturn]] void fail_at(std::string_view key, const std::string& message) const {
    fail(origin_, path(key), message);
  }

  [[nodiscard]] const json* find(std::string_view key) const {
    const auto it = v_.find(std::string(key));
    return it == v_.end() ? nullptr : &*it;
  }

  /// The value of a required key; a missing key names what was expected.
  [[nodiscard]] const json& need(std::string_view key, std::string_view expect) const {
    const json* v = find(key);
    if (v == nullptr) {
      fail(origin_, path(key), fmt::format("missing required key (expected {})", expect));
    }
    return *v;
  }

  [[nodiscard]] std::optional<std::int64_t> maybe_int(std::string_view key, IntRule r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_int(*v, r, origin_, path(key));
  }
  [[nodiscard]] std::int64_t integer(std::string_view key, IntRule r) const {
    (void)need(key, int_expect(r, false));
    return *maybe_int(key, r);
  }
  [[nodiscard]] std::int64_t integer(std::string_view key, IntRule r, std::int64_t fallback) const {
    return maybe_int(key, r).value_or(fallback);
  }

  [[nodiscard]] std::optional<bool> maybe_flag(std::string_view key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_bool(*v, origin_, path(key));
  }
  [[nodiscard]] bool flag(std::string_view key, bool fallback) const {
    return maybe_flag(key).value_or(fallback);
  }

  [[nodiscard]] std::optional<std::string> maybe_text(std::string_view key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_string(*v, origin_, path(key));
  }

  [[nodiscard]] std::optional<double> maybe_number(std::string_view key,
                                                   const NumberRule& r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_number(*v, r, origin_, path(key));
  }
  [[nodiscard]] double number(std::string_view key, const NumberRule& r) const {
    (void)need(key, r.expect);
    return *maybe_number(key, r);
  }

  [[nodiscard]] std::optional<double> maybe_quantity(std::string_view key, Dimension d,
                                                     const NumberRule& r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_quantity(*v, d, r, origin_, path(key));
  }
  [[nodiscard]] double quantity(std::string_view key, Dimension d, const NumberRule& r) const {
    (void)need(key, r.expect);
    return *maybe_quantity(key, d, r);
  }

  /// As maybe_quantity for a time, also accepting min, h and d (read_long_time).
  [[nodiscard]] std::optional<double> maybe_long_time(std::string_view key,
                                                      const NumberRule& r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_long_time(*v, r, origin_, path(key));
  }

  template <typename E, std::size_t N>
  [[nodiscard]] std::optional<E> maybe_choice(std::string_view key,
                                              const std::array<Choice<E>, N>& table) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_choice(*v, table, origin_, path(key));
  }

 private:
  void check_known(const std::string& key, const std::vector<std::string_view>& allowed) const {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) return;
    if (const auto guess = closest(key, allowed)) {
      fail(origin_, path(key), fmt::format("unknown key (did you mean '{}'?)", *guess));
    }
    fail(origin_, path(key), fmt::format("unknown key; expected one of: {}", join(allowed, ", ")));
  }

  const json& v_;
  std::string pointer_;
  const std::string& origin_;
  std::vector<std::string_view> keys_;
};

}  // namespace planner::json_input

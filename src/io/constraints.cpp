#include "planner/io/constraints.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "planner/base/error.hpp"
#include "planner/base/spelling.hpp"

namespace planner {

namespace {

enum class Op { eq, le, ge, ne };

struct Item {
  std::string name;
  Op op = Op::eq;
  std::string value;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

/// "zero<=1" → {zero, le, 1}; nullopt-free: throws on a missing operator.
Item split_item(std::string_view item, const std::string& origin, const std::string& pointer) {
  for (const auto& [text, op] : std::array<std::pair<std::string_view, Op>, 4>{
           {{"<=", Op::le}, {">=", Op::ge}, {"!=", Op::ne}, {"=", Op::eq}}}) {
    const std::size_t at = item.find(text);
    if (at == std::string_view::npos) continue;
    return {std::string(trim(item.substr(0, at))), op,
            std::string(trim(item.substr(at + text.size())))};
  }
  throw InputError(origin, pointer,
                   fmt::format("item '{}': expected NAME=VALUE, NAME<=VALUE, NAME>=VALUE or "
                               "NAME!=VALUE, such as tp=8, zero<=1 or recompute!=selective",
                               item));
}

std::int64_t integer_of(const Item& it, std::string_view item, const std::string& origin,
                        const std::string& pointer) {
  if (it.op == Op::ne) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}': {} takes '=', '<=' or '>=' only", item, it.name));
  }
  std::int64_t v = 0;
  const char* end = it.value.data() + it.value.size();
  const auto [ptr, ec] = std::from_chars(it.value.data(), end, v);
  if (ec != std::errc() || ptr != end || v < 0) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}': expected a non-negative integer after {}, got '{}'",
                                 item, it.name, it.value));
  }
  return v;
}

/// Narrows `b` by one item. Bounds intersect; an item that leaves no value contradicts an
/// earlier one (in this list or the scenario's constraints.fix) and is said so, rather than
/// surfacing as "no configuration fits" (issue 32: `--fix tp=8,tp=4`).
void apply_bound(Bound& b, Op op, std::int64_t v, std::string_view item, std::string_view name,
                 const std::string& origin, const std::string& pointer) {
  const Bound before = b;
  if (op != Op::ge) b.max = std::min(b.max, v);
  if (op != Op::le) b.min = std::max(b.min, v);
  if (b.min > b.max) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}' contradicts an earlier bound on {} (from {} to {}, "
                                 "here or in the scenario's constraints.fix); give {} once",
                                 item, name, before.min,
                                 before.max == std::numeric_limits<std::int64_t>::max()
                                     ? std::string("any")
                                     : std::to_string(before.max),
                                 name));
  }
}

bool switch_of(const Item& it, std::string_view item, const std::string& origin,
               const std::string& pointer) {
  if (it.op != Op::eq) {
    throw InputError(origin, pointer, fmt::format("item '{}': {} takes '=' only", item, it.name));
  }
  if (it.value == "on" || it.value == "true") return true;
  if (it.value == "off" || it.value == "false") return false;
  throw InputError(origin, pointer,
                   fmt::format("item '{}': expected on or off, got '{}'", item, it.value));
}

/// Sets a switch, refusing a second, different value (`--fix sp=on,sp=off`).
template <typename T>
void set_once(std::optional<T>& slot, T value, std::string_view item, const std::string& origin,
              const std::string& pointer) {
  if (slot && *slot != value) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}' contradicts an earlier value (here or in the "
                                 "scenario's constraints.fix); give it once",
                                 item));
  }
  slot = value;
}

void apply_item(Constraints& c, std::string_view item, const std::string& origin,
                const std::string& pointer) {
  const Item it = split_item(item, origin, pointer);
  if (const std::optional<Axis> axis = axis_named(it.name)) {
    const std::int64_t v = integer_of(it, item, origin, pointer);
    if (v < 1) throw InputError(origin, pointer, fmt::format("item '{}': a degree is at least 1", item));
    apply_bound(c.degrees[static_cast<std::size_t>(*axis)], it.op, v, item, it.name, origin,
                pointer);
  } else if (it.name == "zero") {
    const std::int64_t v = integer_of(it, item, origin, pointer);
    if (v > 3) throw InputError(origin, pointer, fmt::format("item '{}': ZeRO stages are 0 to 3", item));
    apply_bound(c.zero, it.op, v, item, it.name, origin, pointer);
  } else if (it.name == "replicas") {
    const std::int64_t v = integer_of(it, item, origin, pointer);
    if (v < 1) {
      throw InputError(origin, pointer,
                       fmt::format("item '{}': the state has at least 1 copy (1: no hybrid "
                                   "sharding)",
                                   item));
    }
    apply_bound(c.replicas, it.op, v, item, it.name, origin, pointer);
  } else if (it.name == "flash") {
    set_once(c.flash_attention, switch_of(it, item, origin, pointer), item, origin, pointer);
  } else if (it.name == "sp") {
    set_once(c.sequence_parallel, switch_of(it, item, origin, pointer), item, origin, pointer);
  } else if (it.name == "recompute") {
    if (it.op != Op::eq && it.op != Op::ne) {
      throw InputError(origin, pointer,
                       fmt::format("item '{}': recompute takes '=' or '!=' only", item));
    }
    const std::optional<Recompute> named = recompute_named(it.value);
    if (!named) {
      throw InputError(origin, pointer,
                       fmt::format("item '{}': expected none, selective, op or full", item));
    }
    const Recompute r = *named;
    if (it.op == Op::eq) {
      set_once(c.recompute, r, item, origin, pointer);
    } else {
      c.recompute_excluded |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(r));
    }
    if (c.recompute_excluded == (1u << recompute_names.size()) - 1) {  // every mode ruled out
      throw InputError(origin, pointer,
                       fmt::format("item '{}' leaves no recompute mode (none, selective, op and "
                                   "full are all ruled out); drop one of the recompute!= items",
                                   item));
    }
    if (c.recompute && !c.allows(*c.recompute)) {
      throw InputError(origin, pointer,
                       fmt::format("item '{}' contradicts an earlier recompute item (here or in "
                                   "the scenario's constraints.fix)",
                                   item));
    }
  } else {
    static const std::vector<std::string> names{"tp",    "cp", "dp", "pp",       "zero",
                                                "replicas", "flash", "sp", "recompute"};
    const auto guess = closest(it.name, names);
    throw InputError(origin, pointer,
                     fmt::format("item '{}': unknown name '{}'{}; names: tp, cp, dp, pp, zero, "
                                 "replicas, flash, sp, recompute",
                                 item, it.name,
                                 guess ? fmt::format(" (did you mean '{}'?)", *guess) : ""));
  }
}

}  // namespace

Constraints parse_fix(std::string_view text, const std::string& origin, const std::string& pointer,
                      Constraints base) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (!item.empty()) apply_item(base, item, origin, pointer);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return base;
}

Framework parse_framework(std::string_view text, const std::string& origin,
                          const std::string& pointer) {
  for (std::size_t i = 0; i < framework_names.size(); ++i) {
    if (framework_names[i] == text) return static_cast<Framework>(i);
  }
  throw InputError(origin, pointer,
                   fmt::format("unknown framework '{}'; expected any, megatron, torchtitan, "
                               "deepspeed or unrestricted",
                               text));
}

bool parse_rank(std::string_view text, const std::string& origin, const std::string& pointer) {
  if (text == "trusted") return true;
  if (text == "raw") return false;
  throw InputError(origin, pointer,
                   fmt::format("unknown ranking '{}'; expected trusted (plans inside the runs "
                               "the model was validated on) or raw (every plan by the time model)",
                               text));
}

}  // namespace planner

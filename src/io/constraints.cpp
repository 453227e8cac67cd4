#include "planner/io/constraints.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "planner/base/error.hpp"
#include "planner/base/spelling.hpp"
#include "planner/inputs/cluster.hpp"

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

/// The --fix names, in the table's order: "tp, cp, ..., sp" (inputs/space.hpp).
std::string fix_names() {
  std::string out;
  for (const SpaceDim& row : dimensions) {
    out += (out.empty() ? "" : ", ") + std::string(row.name);
  }
  return out;
}

/// Pins a switch or a choice, refusing a second, different value (`--fix sp=on,sp=off`).
void pin_once(Constraints& c, const SpaceDim& row, std::int64_t v, std::string_view item,
              const std::string& origin, const std::string& pointer) {
  Bound& b = c.bound(row.dim);
  if (b.min == b.max && b.min != v) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}' contradicts an earlier value (here or in the "
                                 "scenario's constraints.fix); give it once",
                                 item));
  }
  b = {v, v};
}

/// A choice item: `recompute=full` pins the mode, `recompute!=selective` rules one out.
void apply_choice(Constraints& c, const SpaceDim& row, const Item& it, std::string_view item,
                  const std::string& origin, const std::string& pointer) {
  if (it.op != Op::eq && it.op != Op::ne) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}': {} takes '=' or '!=' only", item, row.name));
  }
  const std::optional<Recompute> named = recompute_named(it.value);
  if (!named) throw InputError(origin, pointer, fmt::format("item '{}': {}", item, row.range));
  const auto v = static_cast<std::int64_t>(*named);
  std::uint64_t& out = c.excluded[static_cast<std::size_t>(row.dim)];
  if (it.op == Op::eq) {
    pin_once(c, row, v, item, origin, pointer);
  } else {
    out |= std::uint64_t{1} << v;
  }
  if (out == (std::uint64_t{1} << recompute_names.size()) - 1) {  // every mode ruled out
    throw InputError(origin, pointer,
                     fmt::format("item '{}' leaves no recompute mode (none, selective, op and "
                                 "full are all ruled out); drop one of the recompute!= items",
                                 item));
  }
  if (const auto pinned = c.pinned(row.dim); pinned && !c.holds(row.dim, *pinned)) {
    throw InputError(origin, pointer,
                     fmt::format("item '{}' contradicts an earlier recompute item (here or in "
                                 "the scenario's constraints.fix)",
                                 item));
  }
}

void apply_item(Constraints& c, std::string_view item, const std::string& origin,
                const std::string& pointer) {
  const Item it = split_item(item, origin, pointer);
  const std::optional<Dim> dim = dim_named(it.name);
  if (!dim) {
    std::vector<std::string> names;
    for (const SpaceDim& row : dimensions) names.emplace_back(row.name);
    const auto guess = closest(it.name, names);
    throw InputError(origin, pointer,
                     fmt::format("item '{}': unknown name '{}'{}; names: {}", item, it.name,
                                 guess ? fmt::format(" (did you mean '{}'?)", *guess) : "",
                                 fix_names()));
  }
  const SpaceDim& row = info(*dim);
  switch (row.kind) {
    case SpaceKind::integer: {
      const std::int64_t v = integer_of(it, item, origin, pointer);
      if (v < row.min || v > row.max) {
        throw InputError(origin, pointer, fmt::format("item '{}': {}", item, row.range));
      }
      apply_bound(c.bound(row.dim), it.op, v, item, it.name, origin, pointer);
      break;
    }
    case SpaceKind::on_off:
      pin_once(c, row, switch_of(it, item, origin, pointer) ? 1 : 0, item, origin, pointer);
      break;
    case SpaceKind::choice:
      apply_choice(c, row, it, item, origin, pointer);
      break;
  }
}

/// A pinned degree no plan of this cluster and model can have is the user's mistake, said as
/// one (exit 2), not searched into "no configuration fits": it must divide the GPUs (the
/// placed axes multiply to the world size), and tp the attention heads (docs/ranking.md §1).
void check_pinned_degrees(const Scenario& s, const std::string& origin,
                          const std::string& pointer) {
  const std::int64_t world = world_size(s.cluster);
  for (const AxisInfo& row : axes) {
    if (row.folded) continue;
    const Bound& b = s.constraints.degree(row.axis);
    if (b.min != b.max) continue;
    const std::int64_t d = b.min;
    const std::string item = fmt::format("item '{}={}'", row.name, d);
    if (d > world || world % d != 0) {
      throw InputError(origin, pointer,
                       fmt::format("{}: {} = {} must divide the cluster's {} GPUs", item,
                                   row.name, d, world));
    }
    if (row.axis == Axis::tp && s.model.heads > 0 && s.model.heads % d != 0) {
      throw InputError(origin, pointer,
                       fmt::format("{}: tp = {} must divide the model's {} attention heads",
                                   item, d, s.model.heads));
    }
  }
}

/// The same for the other dimensions of the search space (inputs/space.hpp) whose pinned value
/// no plan of this model can have, said at once rather than as "no configuration fits" with a
/// memory reason: expert settings on a dense model, an expert split that no tp can hold (etp
/// divides tp, which divides the GPUs and the heads), an interleaving depth no pipeline split
/// of the layers allows (pp·v divides the layers, or the layers + 2 with the embedding and loss
/// as stages), a micro-batch larger than the global batch's sequences.
void check_pinned_settings(const Scenario& s, const std::string& origin,
                           const std::string& pointer) {
  const Constraints& c = s.constraints;
  const Model& m = s.model;
  const auto fail = [&](std::string_view name, std::int64_t d, const std::string& why) {
    throw InputError(origin, pointer, fmt::format("item '{}={}': {}", name, d, why));
  };
  const Bound& ep = c.bound(Dim::ep);
  if (!is_moe(m) && ep.min > 1) fail("ep", ep.min, "ep applies to mixture-of-experts models only");
  if (const auto etp = c.pinned(Dim::etp)) {
    if (!is_moe(m) && *etp > 1) {
      fail("etp", *etp, "etp applies to mixture-of-experts models only");
    }
    const std::int64_t room = std::gcd(world_size(s.cluster), std::max<std::int64_t>(m.heads, 1));
    if (room % *etp != 0) {
      fail("etp", *etp,
           fmt::format("etp divides tp, which divides the {} GPUs and the {} heads: etp must "
                       "divide {}",
                       world_size(s.cluster), m.heads, room));
    }
  }
  if (const auto vp = c.pinned(Dim::vp); vp && *vp > 1) {
    bool splits = false;  // some pp >= 2 with pp·v dividing the layers (or the layers + 2)
    for (const std::int64_t units : {m.layers, m.layers + 2}) {
      splits = splits || (units % *vp == 0 && units / *vp >= 2);
    }
    if (!splits) {
      fail("vp", *vp,
           fmt::format("no pipeline of 2 or more stages splits the {} layers into {} chunks "
                       "per stage (pp·vp must divide the layers)",
                       m.layers, *vp));
    }
  }
  if (s.workload.kind == WorkloadKind::training) {
    const double sequences = s.workload.training.global_batch_tokens /
                             static_cast<double>(std::max<std::int64_t>(m.seq_len, 1));
    const Bound& mb = c.bound(Dim::micro_batch);
    if (static_cast<double>(mb.min) > std::ceil(sequences)) {
      fail("micro_batch", mb.min,
           fmt::format("a micro-batch of {} sequences exceeds the global batch's {:.0f}",
                       mb.min, std::ceil(sequences)));
    }
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

void check_fix_for_workload(const Constraints& c, WorkloadKind kind, const std::string& origin,
                            const std::string& pointer) {
  if (kind != WorkloadKind::serving) return;
  for (const SpaceDim& row : dimensions) {
    if (row.serving || !c.narrowed(row.dim)) continue;
    throw InputError(origin, pointer,
                     fmt::format("{} ({}) is a training setting: a serving search takes its "
                                 "batch from the workload and has no interleaved pipeline, "
                                 "sharded state or expert tensor split to choose; drop the {} "
                                 "item",
                                 row.name, row.meaning, row.name));
  }
}

void check_pinned(const Scenario& s, const std::string& origin, const std::string& pointer) {
  check_pinned_degrees(s, origin, pointer);
  check_pinned_settings(s, origin, pointer);
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

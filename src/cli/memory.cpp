#include <cctype>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>

#include "command.hpp"
#include "planner/inputs/space.hpp"
#include "planner/inputs/workload_settings.hpp"
#include "planner/io/context.hpp"
#include "planner/base/error.hpp"
#include "planner/cli/cli.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"

namespace planner::cli {

namespace {

struct MemoryArgs {
  std::string file;
  std::string format = "text";
  std::vector<std::string> sets;
  /// One flag per settable dimension of the search space (inputs/space.hpp), by Dim: the
  /// integers (--tp, --vp, --micro-batch, --zero, …) and the words (--flash on, --recompute full).
  std::array<std::optional<std::int64_t>, dim_count> integers;
  std::array<std::optional<std::string>, dim_count> words;
  std::optional<std::int64_t> grad_accum;
  std::optional<std::string> placement;

  [[nodiscard]] const std::optional<std::int64_t>& degree(Axis a) const {
    return integers[static_cast<std::size_t>(dim_of(a))];
  }
};

/// A word flag's value as its dimension's number: on 1, off 0, a recompute mode its index (the
/// flags' checks admit only these words).
std::int64_t word_value(const SpaceDim& row, const std::string& text) {
  if (row.kind == SpaceKind::on_off) return text == "on" ? 1 : 0;
  return static_cast<std::int64_t>(recompute_named(text).value_or(Recompute::full));
}

/// The flag of a dimension: "--" and its name with dashes ("--micro-batch", "--dp-shard").
std::string flag_of(const SpaceDim& row) {
  std::string flag = "--" + std::string(row.name);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

Placement parse_placement(const std::string& text) {
  std::string all, listed;  // "tp,cp,dp,pp" and "tp, cp, dp, pp": the table's names
  for (const AxisInfo& row : axes) {
    if (row.folded) continue;  // not placed
    all += (all.empty() ? "" : ",") + std::string(row.name);
    listed += (listed.empty() ? "" : ", ") + std::string(row.name);
  }
  Placement p = default_placement;
  std::vector<Axis> order;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const std::optional<Axis> a = axis_named(name);
    if (!a || info(*a).folded) {
      throw InputError("--placement", "", fmt::format("unknown axis '{}'; expected a "
                                                      "permutation of {}", name, all));
    }
    order.push_back(*a);
    start = comma + 1;
  }
  std::vector<Axis> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() != placed_axis_count ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw InputError("--placement", "", fmt::format("expected each of {} exactly once, e.g. {}",
                                                    listed, all));
  }
  std::copy(order.begin(), order.end(), p.begin());
  return p;
}

/// Range check of an integer flag before any arithmetic on it, with the loader's limits for
/// the same plan field (docs/errors.md §Limits), so that no product below can overflow and no
/// division sees a zero.
void check_flag(const std::optional<std::int64_t>& value, const char* field, int limit_log2) {
  if (!value) return;
  const std::int64_t limit = std::int64_t{1} << limit_log2;
  if (*value < 1) {
    throw InputError("command line", fmt::format("/plan/{}", field),
                     fmt::format("expected a positive integer, got {}", *value));
  }
  if (*value > limit) {
    throw InputError("command line", fmt::format("/plan/{}", field),
                     fmt::format("expected a positive integer no greater than {} (2^{}), got {}",
                                 limit, limit_log2, *value));
  }
}

/// The plan `planner memory` evaluates: the pinned plan with the flags applied; degrees not
/// given fill the world (dp = GPUs / (tp·pp·cp)) and the accumulation fills the batch target.
Plan memory_plan(const Scenario& s, const MemoryArgs& a) {
  bool any_degree = false;  // a degree other than the one that fills the world
  for (const AxisInfo& row : axes) {
    any_degree = any_degree || (a.degree(row.axis) && (row.enumerated || row.folded));
  }
  bool any_setting = false;  // a flag other than the degrees
  for (const SpaceDim& row : dimensions) {
    const auto i = static_cast<std::size_t>(row.dim);
    if (row.limit_log2 > 0) check_flag(a.integers[i], std::string(row.plan_key).c_str(), row.limit_log2);
    const bool given = a.integers[i] || a.words[i];
    if (static_cast<std::size_t>(row.dim) >= axis_count) any_setting = any_setting || given;
  }
  const AxisInfo* fill = nullptr;
  for (const AxisInfo& row : axes) {
    if (!row.enumerated && !row.folded) fill = &row;
  }
  check_flag(a.grad_accum, "grad_accum", 16);
  const bool pinned = s.plan.has_value();
  const bool filled_given = a.degree(fill->axis).has_value();
  const bool any_flag = any_degree || filled_given || any_setting || a.grad_accum || a.placement;
  if (!pinned && !any_flag) {
    throw InputError(s.origin, "/plan",
                     "no plan to evaluate: pin one under \"plan\" or pass --tp/--pp/--cp/--dp "
                     "(or run 'planner plan' to search)");
  }
  Plan p = pinned ? *s.plan : Plan{};
  if (!pinned) {
    p.micro_batch = s.workload.kind == WorkloadKind::training ? s.workload.training.micro_batch
                                                              : s.workload.serving.batch;
  }
  for (const AxisInfo& row : axes) {
    if (const auto& given = a.degree(row.axis)) p.*row.degree = *given;
  }
  if (!filled_given && (any_degree || !pinned)) {
    // Each degree is at most 2^24, so the product of the others may overflow: a product past
    // 2^63 leaves the filling axis at 1, and validate_plan reports the mismatch.
    std::int64_t others = 1;
    bool overflow = false;
    for (const AxisInfo& row : axes) {
      if (row.enumerated) overflow = overflow || __builtin_mul_overflow(others, p.*row.degree, &others);
    }
    p.*fill->degree = overflow ? 1 : std::max<std::int64_t>(1, world_size(s.cluster) / others);
  }
  // A plan built from flags is timed as the search times it: the workload's framework settings.
  if (!pinned && s.workload.kind == WorkloadKind::training) {
    apply_workload_settings(s.workload.training, p);
  }
  // The other settings, each through its dimension's setter (the degrees are set above, before
  // the filling axis is computed from them).
  for (const SpaceDim& row : dimensions) {
    const auto i = static_cast<std::size_t>(row.dim);
    if (i < axis_count || row.set == nullptr) continue;
    if (a.integers[i]) row.set(p, *a.integers[i]);
    if (a.words[i]) row.set(p, word_value(row, *a.words[i]));
  }
  const bool micro_batch_given = a.integers[static_cast<std::size_t>(Dim::micro_batch)].has_value();
  if (a.placement) p.placement = parse_placement(*a.placement);
  if (a.grad_accum) {
    p.grad_accum = *a.grad_accum;
  } else if (s.workload.kind == WorkloadKind::training &&
             (!pinned || any_degree || filled_given || micro_batch_given)) {
    const Context ctx = make_context(s);
    const double per_replica = static_cast<double>(sequences_per_replica(ctx, p.dp));
    p.grad_accum = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(per_replica / static_cast<double>(p.micro_batch))));
  }
  // A serving plan has no accumulation: one given with --grad-accum is refused by
  // validate_plan as it is in the file (it was silently replaced by 1).
  if (s.workload.kind == WorkloadKind::serving && !a.grad_accum) p.grad_accum = 1;
  validate_plan(s, p, "command line", "/plan");
  return p;
}

int run_memory(const MemoryArgs& a, std::ostream& out, std::ostream& err) {
  const Scenario s = load_with_overrides(a.file, a.sets, err);
  const Plan p = memory_plan(s, a);
  const Context ctx = make_context(s);
  const Evaluation e = evaluate(ctx, p);
  if (a.format == "json") {
    out << dump_json(evaluation_report_json(s, ctx, e));
  } else if (a.format == "csv") {
    out << evaluation_report_csv(ctx, e);
  } else {
    out << evaluation_report_text(s, ctx, e);
  }
  return e.fits() ? exit_ok : exit_no;
}

}  // namespace

Runner add_memory(CLI::App& sub) {
  auto a = std::make_shared<MemoryArgs>();
  add_scenario_argument(sub, a->file);
  add_format(sub, a->format, {"text", "json", "csv"});
  add_sets(sub, a->sets);
  // One flag per settable dimension of the search space (inputs/space.hpp): a setting added
  // there is a flag here too. The axes keep their table's help (plan.hpp axes).
  std::vector<std::string> recompute_flag_names;
  for (const Named<Recompute>& n : recompute_names) recompute_flag_names.emplace_back(n.name);
  for (const SpaceDim& row : dimensions) {
    if (row.set == nullptr) continue;
    const auto i = static_cast<std::size_t>(row.dim);
    std::string help(i < axis_count ? info(static_cast<Axis>(i)).flag_help : row.meaning);
    if (i >= axis_count) help[0] = static_cast<char>(std::toupper(help[0]));
    switch (row.kind) {
      case SpaceKind::integer: {
        CLI::Option* o = sub.add_option(flag_of(row), a->integers[i], help);
        if (row.limit_log2 == 0) o->check(CLI::Range(row.min, row.max));
        break;
      }
      case SpaceKind::on_off:
        sub.add_option(flag_of(row), a->words[i], help)->check(CLI::IsMember({"on", "off"}));
        break;
      case SpaceKind::choice:
        sub.add_option(flag_of(row), a->words[i], help)->check(CLI::IsMember(recompute_flag_names));
        break;
    }
  }
  sub.add_option("--grad-accum", a->grad_accum, "Micro-batches per step (default: fill the batch target)");
  sub.add_option("--placement", a->placement, "Axis order, innermost first, e.g. tp,cp,dp,pp");
  return [a](std::ostream& out, std::ostream& err) { return run_memory(*a, out, err); };
}

}  // namespace planner::cli

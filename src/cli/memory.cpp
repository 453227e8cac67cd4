#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>

#include "command.hpp"
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
  std::array<std::optional<std::int64_t>, axis_count> degrees;  ///< by the axis table's order
  std::optional<std::int64_t> micro_batch, grad_accum, etp, dp_shard;
  std::optional<int> zero;
  std::optional<std::string> recompute, flash, sp, placement;
};

Recompute parse_recompute(const std::string& text) {
  return recompute_named(text).value_or(Recompute::full);  // the flag's check admits only names
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
    const auto& given = a.degrees[static_cast<std::size_t>(row.axis)];
    check_flag(given, std::string(row.name).c_str(), 24);
    any_degree = any_degree || (given && (row.enumerated || row.folded));
  }
  const AxisInfo* fill = nullptr;
  for (const AxisInfo& row : axes) {
    if (!row.enumerated && !row.folded) fill = &row;
  }
  check_flag(a.micro_batch, "micro_batch", 16);
  check_flag(a.grad_accum, "grad_accum", 16);
  check_flag(a.etp, "etp", 24);
  check_flag(a.dp_shard, "dp_shard", 24);
  const bool pinned = s.plan.has_value();
  const bool filled_given = a.degrees[static_cast<std::size_t>(fill->axis)].has_value();
  const bool any_flag = any_degree || filled_given || a.zero || a.recompute || a.flash ||
                        a.sp || a.micro_batch || a.grad_accum || a.placement || a.etp ||
                        a.dp_shard;
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
    if (const auto& given = a.degrees[static_cast<std::size_t>(row.axis)]) p.*row.degree = *given;
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
  if (a.zero) p.zero = *a.zero;
  if (a.recompute) p.recompute = parse_recompute(*a.recompute);
  if (a.flash) p.flash_attention = *a.flash == "on";
  if (a.sp) p.sequence_parallel = *a.sp == "on";
  if (a.micro_batch) p.micro_batch = *a.micro_batch;
  if (a.etp) p.etp = *a.etp;
  if (a.dp_shard) p.dp_shard = *a.dp_shard;
  if (a.placement) p.placement = parse_placement(*a.placement);
  if (a.grad_accum) {
    p.grad_accum = *a.grad_accum;
  } else if (s.workload.kind == WorkloadKind::training &&
             (!pinned || any_degree || filled_given || a.micro_batch)) {
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
  for (const AxisInfo& row : axes) {
    sub.add_option("--" + std::string(row.name), a->degrees[static_cast<std::size_t>(row.axis)],
                   std::string(row.flag_help));
  }
  sub.add_option("--zero", a->zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  std::vector<std::string> recompute_flag_names;
  for (const Named<Recompute>& n : recompute_names) recompute_flag_names.emplace_back(n.name);
  sub.add_option("--recompute", a->recompute, "none, selective, op or full")
      ->check(CLI::IsMember(recompute_flag_names));
  sub.add_option("--flash", a->flash, "Tiled attention: on or off")->check(CLI::IsMember({"on", "off"}));
  sub.add_option("--sp", a->sp, "Sequence parallelism: on or off")->check(CLI::IsMember({"on", "off"}));
  sub.add_option("--etp", a->etp, "Expert tensor-parallel degree (MoE; divides tp; default tp)");
  sub.add_option("--dp-shard", a->dp_shard,
                 "Data-parallel ranks of a shard group: hybrid sharding (HSDP) with dp/N replicas");
  sub.add_option("--micro-batch", a->micro_batch, "Sequences per micro-batch");
  sub.add_option("--grad-accum", a->grad_accum, "Micro-batches per step (default: fill the batch target)");
  sub.add_option("--placement", a->placement, "Axis order, innermost first, e.g. tp,cp,dp,pp");
  return [a](std::ostream& out, std::ostream& err) { return run_memory(*a, out, err); };
}

}  // namespace planner::cli

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/io/constraints.hpp"
#include "planner/search/constraints.hpp"

namespace planner::cli {

void add_constraints(CLI::App& app, ConstraintArgs& c) {
  std::string names;
  for (const SpaceDim& row : dimensions) names += " " + std::string(row.name);
  app.add_option("--fix", c.fix,
                 "Pin or bound axes and switches, e.g. tp=8,zero<=1,flash=off,recompute!=op "
                 "(names:" + names + ")");
  app.add_option("--framework", c.framework,
                 "Only plans this framework launches: any (one of the three, the default), "
                 "megatron, torchtitan, deepspeed; unrestricted (every rank order, what-if)");
  app.add_option("--rank", c.rank,
                 "trusted (the default: the fastest plan inside the regimes published runs "
                 "validate) or raw (the fastest by the time model alone)");
}

namespace {

/// "cp = 2" for a pinned bound, "cp >= 2" for a lower one: how the --fix items read.
std::string bound_text(std::string_view name, const Bound& b) {
  return b.min == b.max ? fmt::format("{} = {}", name, b.min)
                        : fmt::format("{} >= {}", name, b.min);
}

/// Items of --fix that rule out every plan together, or with the framework's rules
/// (docs/constraints.md), named as a contradiction (exit 2) instead of searched into "no
/// configuration fits" with an unrelated reason. `framework` says where the framework comes
/// from ("--framework megatron", "--to megatron"). Only rules that hold for every plan are
/// checked here; a legal plan that does not fit in memory is still the search's exit 1.
void check_fix_contradictions(const Scenario& s, const std::string& framework) {
  const Constraints& c = s.constraints;
  auto fail = [](const std::string& message) { throw InputError("--fix", "", message); };
  // The placed degrees multiply to the world size: pinned ones must divide it together.
  const std::int64_t world = world_size(s.cluster);
  std::int64_t product = 1;
  std::string names, values;
  int pinned = 0;
  for (const AxisInfo& row : axes) {
    const Bound& b = c.degree(row.axis);
    if (row.folded || b.min != b.max) continue;
    ++pinned;
    names += (names.empty() ? "" : "·") + std::string(row.name);
    values += (values.empty() ? "" : "·") + std::to_string(b.min);
    if (__builtin_mul_overflow(product, b.min, &product)) product = world + 1;
  }
  if (pinned > 1 && (product > world || world % product != 0)) {
    fail(fmt::format("the pinned degrees contradict the cluster: {} = {} = {} must divide the "
                     "{} GPUs; loosen one of them",
                     names, values, product, world));
  }
  const Bound& cp = c.degree(Axis::cp);
  const std::optional<bool> flash = c.pinned_switch(Dim::flash);
  const std::optional<bool> sp = c.pinned_switch(Dim::sp);
  const std::optional<Recompute> recompute = c.pinned_recompute();
  const Bound& zero = c.bound(Dim::zero);
  const bool no_flash = flash && !*flash;
  if (cp.min > 1 && no_flash) {
    fail(fmt::format("{} contradicts flash=off: context parallelism needs flash attention (ring "
                     "attention computes attention in tiles); drop one",
                     bound_text("cp", cp)));
  }
  if (recompute == Recompute::op && no_flash) {
    fail("recompute=op contradicts flash=off: torchtitan's op-level checkpointing needs flash "
         "attention (its attention is always tiled); drop one");
  }
  const Bound& tp = c.degree(Axis::tp);
  if (sp && *sp && tp.max == 1) {
    fail("sp=on contradicts tp = 1: sequence parallelism splits activations across the tp "
         "ranks; drop one");
  }
  // The named framework's rules that no plan escapes. The conditions pick the fixed items such
  // a rule refuses whatever the other settings; the reason is the rule's own words, read from
  // search/constraints.hpp framework_config_violation on a plan that has the item and
  // otherwise the defaults (tiled attention on), so the message cannot drift from the search.
  const auto refused = [&](auto set) {
    Plan p;
    p.flash_attention = true;
    set(p);
    return framework_config_violation(c.framework, p);
  };
  const auto against = [&](const std::string& item, std::string_view why) {
    fail(fmt::format("{} contradicts {}: {} (docs/constraints.md); drop one", item, framework,
                     why));
  };
  const auto zero_at_least = [&](Plan& p) { p.zero = static_cast<int>(zero.min); };
  const auto op_recompute = [](Plan& p) { p.recompute = Recompute::op; };
  switch (c.framework) {
    case Framework::megatron:
      if (zero.min > 1) against(bound_text("zero", zero), refused(zero_at_least));
      if (recompute == Recompute::op) against("recompute=op", refused(op_recompute));
      break;
    case Framework::deepspeed:
      if (cp.min > 1) against(bound_text("cp", cp), refused([&](Plan& p) { p.cp = cp.min; }));
      if (recompute == Recompute::op) against("recompute=op", refused(op_recompute));
      if (sp && *sp) {
        against("sp=on", refused([](Plan& p) {
                  p.tp = 2;
                  p.sequence_parallel = true;
                }));
      }
      break;
    case Framework::torchtitan:
      if (zero.min == 1 && zero.max == 1) against("zero = 1", refused(zero_at_least));
      if (no_flash) against("flash=off", refused([](Plan& p) { p.flash_attention = false; }));
      if (sp && !*sp && tp.min > 1) {
        fail(fmt::format("sp=off with {} contradicts {}: {} (docs/constraints.md); drop one",
                         bound_text("tp", tp), framework,
                         refused([&](Plan& p) { p.tp = tp.min; })));
      }
      break;
    default:
      break;
  }
}

}  // namespace

void check_framework_fix(const Scenario& s, std::string_view framework_source) {
  check_fix_contradictions(
      s, fmt::format("{} {}", framework_source, to_string(s.constraints.framework)));
}

void apply_constraints(Scenario& s, const ConstraintArgs& c) {
  if (!c.fix.empty()) {
    s.constraints = parse_fix(c.fix, "--fix", "", s.constraints);
    check_fix_for_workload(s.constraints, s.workload.kind, "--fix", "");
    check_pinned(s, "--fix", "");
  }
  // Said at once rather than as "no configuration fits" (model/legality.hpp).
  if (s.constraints.pinned_recompute() == Recompute::op && is_moe(s.model)) {
    throw InputError("--fix", "", "recompute=op (torchtitan's op-level checkpointing) is "
                                  "modelled for dense layers only; choose none, selective or "
                                  "full for a mixture-of-experts model");
  }
  if (!c.framework.empty()) s.constraints.framework = parse_framework(c.framework, "--framework", "");
  if (!c.rank.empty()) s.constraints.trusted = parse_rank(c.rank, "--rank", "");
  if (!c.fix.empty()) {
    check_framework_fix(s, c.framework.empty() ? "the scenario's framework" : "--framework");
  }
}

}  // namespace planner::cli

#include <fmt/format.h>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/io/constraints.hpp"

namespace planner::cli {

void add_constraints(CLI::App& app, ConstraintArgs& c) {
  app.add_option("--fix", c.fix,
                 "Pin or bound axes and switches, e.g. tp=8,zero<=1,flash=off,recompute!=op "
                 "(names: tp cp dp pp zero replicas flash sp recompute)");
  app.add_option("--framework", c.framework,
                 "Only plans this framework launches: any (one of the three, the default), "
                 "megatron, torchtitan, deepspeed; unrestricted (every rank order, what-if)");
  app.add_option("--rank", c.rank,
                 "trusted (the default: the fastest plan inside the regimes published runs "
                 "validate) or raw (the fastest by the time model alone)");
}

namespace {

/// A pinned degree no plan of this cluster and model can have is the user's mistake, said as
/// one (exit 2), not searched into "no configuration fits": it must divide the GPUs (the
/// placed axes multiply to the world size), and tp the attention heads (docs/ranking.md §1).
void check_pinned_degrees(const Scenario& s) {
  const std::int64_t world = world_size(s.cluster);
  for (const AxisInfo& row : axes) {
    if (row.folded) continue;
    const Bound& b = s.constraints.degree(row.axis);
    if (b.min != b.max) continue;
    const std::int64_t d = b.min;
    const std::string item = fmt::format("item '{}={}'", row.name, d);
    if (d > world || world % d != 0) {
      throw InputError("--fix", "",
                       fmt::format("{}: {} = {} must divide the cluster's {} GPUs", item,
                                   row.name, d, world));
    }
    if (row.axis == Axis::tp && s.model.heads > 0 && s.model.heads % d != 0) {
      throw InputError("--fix", "",
                       fmt::format("{}: tp = {} must divide the model's {} attention heads",
                                   item, d, s.model.heads));
    }
  }
}

}  // namespace

void apply_constraints(Scenario& s, const ConstraintArgs& c) {
  if (!c.fix.empty()) {
    s.constraints = parse_fix(c.fix, "--fix", "", s.constraints);
    check_pinned_degrees(s);
  }
  // Said at once rather than as "no configuration fits" (model/legality.hpp).
  if (s.constraints.recompute == Recompute::op && is_moe(s.model)) {
    throw InputError("--fix", "", "recompute=op (torchtitan's op-level checkpointing) is "
                                  "modelled for dense layers only; choose none, selective or "
                                  "full for a mixture-of-experts model");
  }
  if (!c.framework.empty()) s.constraints.framework = parse_framework(c.framework, "--framework", "");
  if (!c.rank.empty()) s.constraints.trusted = parse_rank(c.rank, "--rank", "");
}

}  // namespace planner::cli

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

void check_pinned_settings(const Scenario& s);

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
  check_pinned_settings(s);
}

/// The same for the other dimensions of the search space (inputs/space.hpp) whose pinned value
/// no plan of this model can have, said at once rather than as "no configuration fits" with a
/// memory reason: expert settings on a dense model, an expert split that no tp can hold (etp
/// divides tp, which divides the GPUs and the heads), an interleaving depth no pipeline split
/// of the layers allows (pp·v divides the layers, or the layers + 2 with the embedding and loss
/// as stages), a micro-batch larger than the global batch's sequences.
void check_pinned_settings(const Scenario& s) {
  const Constraints& c = s.constraints;
  const Model& m = s.model;
  const auto fail = [](std::string_view name, std::int64_t d, const std::string& why) {
    throw InputError("--fix", "", fmt::format("item '{}={}': {}", name, d, why));
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
    check_pinned_degrees(s);
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

#include <fmt/format.h>

#include "planner/io/text.hpp"
#include "planner/model/serving/expert_serving.hpp"
#include "planner/report/moe_text.hpp"

/// The words for expert parallelism in serving (docs/moe.md §6).

namespace planner {

namespace {

/// "latency-bound" when the all-to-all's per-hop latencies exceed its wire time.
std::string bound_text(const CollectiveCost& c) {
  return c.latency_seconds > c.wire_seconds ? "latency-bound" : "bandwidth-bound";
}

/// The experts a decode step reads on one GPU: expected touched of those held, per layer.
std::string read_text(const Context& ctx, const Plan& p, const DecodeStep& d) {
  const Moe& moe = ctx.model.moe;
  const double held = static_cast<double>(moe.experts / p.ep);
  return fmt::format(
      "a decode step's {:.0f} {}{} touch {:.2f} of the {:.0f} experts a GPU holds per layer "
      "(E/ep x (1 - (1 - k/E)^tokens), k = {}, E = {}), so it reads {:.1f} % of its expert "
      "weights",
      expert_group_tokens(p, d.batch), expert_group_tokens(p, d.batch) == 1 ? "token" : "tokens",
      p.ep > 1 ? " of the ep group" : "",
      held * d.expert_read_fraction, held, moe.top_k, moe.experts,
      100.0 * d.expert_read_fraction);
}

}  // namespace

std::string serving_expert_axis_text(const Context& ctx, const Evaluation& best,
                                     const std::string& verdict) {
  const Plan& p = best.plan;
  const Moe& moe = ctx.model.moe;
  const DecodeStep& d = best.serving.decode;
  const std::string tail = verdict.empty() ? std::string() : "; " + verdict;
  if (p.ep <= 1) {
    return fmt::format("every GPU of an engine holds all {} experts of each MoE layer (split by "
                       "tp), so tokens need no all-to-all; {}{}",
                       moe.experts, read_text(ctx, p, d), tail);
  }
  Plan whole = p;
  whole.ep = 1;
  const double replicated =
      serving_ledger(ctx.model, ctx.cluster, ctx.workload.serving, whole).weights_bytes;
  const ServingAllToAll& a = d.ep;
  return fmt::format(
      "splits each MoE layer's {} experts {} ways across replicas ({} per GPU), so a GPU holds "
      "{} of weights instead of {}; {}; every decode step runs {:.0f} token all-to-alls "
      "(dispatch and combine) of {} per GPU on {} ({}), {}: {} per step, {:.1f} % of the {} "
      "per token; prefill adds {} to the first token; the busiest rank's routed load is taken "
      "as {:.2f}x the mean{}",
      moe.experts, p.ep, moe.experts / p.ep, bytes_text(best.memory.weights_bytes),
      bytes_text(replicated), read_text(ctx, p, d), a.all_to_alls, bytes_text(a.message_bytes),
      tier_name(ctx.cluster, a.tier),
      gb_per_s(ctx.cluster.tiers[a.tier].bandwidth_bytes_per_second), bound_text(a.all_to_all),
      seconds_text(a.seconds), 100.0 * a.seconds / best.serving.per_token_seconds,
      seconds_text(best.serving.per_token_seconds), seconds_text(best.serving.prefill.ep_seconds),
      expert_load_factor(ctx.model), tail);
}

std::string serving_expert_traffic_summary(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const ServingAllToAll& a = e.serving.decode.ep;
  const double far = static_cast<double>(p.ep - a.ranks_in_node);
  return fmt::format(
      "ep {}: {:.0f} all-to-alls of {} per decode step ({} MoE layers x dispatch and combine) "
      "on {} ({}), {} of the ep ranks on this node: {} each (latency {} + wire {}), {} per "
      "step = {:.1f} % of the time per token, on the critical path; {}",
      p.ep, a.all_to_alls, bytes_text(a.message_bytes), a.layers, tier_name(ctx.cluster, a.tier),
      gb_per_s(ctx.cluster.tiers[a.tier].bandwidth_bytes_per_second),
      far > 0 ? fmt::format("{} of {}", a.ranks_in_node, p.ep) : std::string("all"),
      seconds_text(a.all_to_all.seconds()), seconds_text(a.all_to_all.latency_seconds),
      seconds_text(a.all_to_all.wire_seconds), seconds_text(a.seconds),
      100.0 * a.seconds / e.serving.per_token_seconds,
      a.all_to_all.latency_seconds > a.all_to_all.wire_seconds
          ? "latency-bound: the per-hop latency, not bandwidth, sets this cost"
          : "bandwidth-bound: the tier's bandwidth sets this cost");
}

std::string serving_expert_time_lines(const ServingTime& t) {
  const ServingAllToAll& a = t.decode.ep;
  if (!(a.seconds > 0)) return {};
  return fmt::format("  ep all-to-alls     {:>12}   ({:.0f} x {}, dispatch and combine)\n",
                     seconds_text(a.seconds), a.all_to_alls, seconds_text(a.all_to_all.seconds()));
}

}  // namespace planner

// The plan report as CSV (docs/output.md §CSV): one row per ranked plan, its columns in the
// documented order.
#include <fmt/format.h>

#include "planner/report/report.hpp"
#include "render_parts.hpp"

namespace planner {

bool csv_dp_shard_column(WorkloadKind kind, bool moe, const Constraints& c) {
  return kind == WorkloadKind::training && !moe && c.bound(Dim::replicas).max > 1;
}

std::string plan_csv_header(WorkloadKind kind, bool moe, bool dp_shard) {
  std::string h =
      "dp,tp,pp,cp,zero,recompute,flash_attention,sequence_parallel,micro_batch,grad_accum,"
      "tp_tier,cp_tier,pp_tier,dp_tier,memory_total_bytes,memory_capacity_bytes";
  h += kind == WorkloadKind::training ? ",step_seconds,tokens_per_second,mfu"
                                      : ",per_token_seconds,slo_margin_seconds,tokens_per_second";
  // Mixture-of-experts models only (docs/output.md §CSV), so dense output is unchanged; the
  // shard group's dp ranks where hybrid sharding is searched, after them.
  if (moe) h += ",ep,ep_tier,etp";
  if (dp_shard) h += ",dp_shard";
  // Training rows end with the interleaving depth (the search's vp, inputs/space.hpp), so that
  // plans that differ only in it can be told apart; a last column, every other where it was.
  return kind == WorkloadKind::training ? h + ",virtual_stages" : h;
}

std::string plan_csv_row(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  // The documented column order (docs/output.md §CSV): tiers of tp, cp, pp, dp.
  using render_detail::bool_text;
  using render_detail::group_tier_name;
  std::string row = fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.0f}", p.dp, p.tp, p.pp, p.cp, p.zero,
      to_string(p.recompute), bool_text(p.flash_attention), bool_text(p.sequence_parallel),
      p.micro_batch, p.grad_accum, group_tier_name(ctx, p, Axis::tp),
      group_tier_name(ctx, p, Axis::cp), group_tier_name(ctx, p, Axis::pp),
      group_tier_name(ctx, p, Axis::dp), e.memory.total_bytes(), e.memory.capacity_bytes);
  if (ctx.workload.kind == WorkloadKind::training) {
    row += fmt::format(",{:.6g},{:.6g},{:.6g}", e.training.step_seconds,
                       e.training.tokens_per_second, e.training.mfu);
  } else {
    row += fmt::format(",{:.6g},{:.6g},{:.6g}", e.serving.per_token_seconds,
                       e.serving.slo_margin_seconds, e.serving.tokens_per_second);
  }
  if (is_moe(ctx.model)) {
    row += fmt::format(",{},{},{}", p.ep, group_tier_name(ctx, p, Axis::ep), expert_tp(p));
  }
  if (csv_dp_shard_column(ctx.workload.kind, is_moe(ctx.model), ctx.constraints)) {
    row += fmt::format(",{}", shard_dp(p));
  }
  if (ctx.workload.kind == WorkloadKind::training) row += fmt::format(",{}", p.virtual_stages);
  return row;
}

std::string report_csv(const PlanReport& r) {
  std::string out =
      "rank," +
      plan_csv_header(r.context.workload.kind, is_moe(r.context.model),
                      csv_dp_shard_column(r.context.workload.kind, is_moe(r.context.model),
                                          r.context.constraints)) +
      "\n";
  for (std::size_t i = 0; i < r.result.ranked.size(); ++i) {
    out += fmt::format("{},{}\n", i + 1, plan_csv_row(r.context, r.result.ranked[i]));
  }
  return out;
}

}  // namespace planner

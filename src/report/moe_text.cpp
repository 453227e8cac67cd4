#include "planner/report/moe_text.hpp"

#include <fmt/format.h>

#include "planner/io/text.hpp"

namespace planner {

std::string expert_axis_text(const Context& ctx, const Evaluation& best) {
  const Plan& p = best.plan;
  const Moe& moe = ctx.model.moe;
  const TrainingTime& t = best.training;
  if (p.ep <= 1) {
    return fmt::format("every GPU holds all {} experts of each MoE layer, so tokens need no "
                       "all-to-all; the expert weights are replicated over dp x cp",
                       moe.experts);
  }
  const double steps = static_cast<double>(t.micro_batches);
  const double exposed = steps * t.ep.exposed_seconds;
  const std::string overlap =
      moe.overlap_all_to_all
          ? fmt::format(", of which {} stays on the critical path (the rest overlaps another "
                        "micro-batch's compute)",
                        seconds_text(exposed))
          : std::string(" on the critical path");
  return fmt::format(
      "splits each MoE layer's {} experts {} ways ({} per GPU); every micro-batch runs {:.0f} "
      "token all-to-alls (dispatch and combine, forward and backward) of {} per GPU on {} "
      "({}): {} per step{}, {:.1f} % of the step; the busiest rank's routed load is taken as "
      "{:.2f}x the mean: routing imbalance or a hot expert stretches every all-to-all and "
      "expert GEMM",
      moe.experts, p.ep, moe.experts / p.ep, t.ep.all_to_alls, bytes_text(t.ep.message_bytes),
      tier_name(ctx.cluster, t.ep.tier),
      gb_per_s(ctx.cluster.tiers[t.ep.tier].bandwidth_bytes_per_second),
      seconds_text(steps * t.ep.seconds), overlap, 100.0 * exposed / t.step_seconds,
      expert_load_factor(ctx.model)) +
         expert_tensor_text(ctx, p);
}

std::string expert_tensor_text(const Context& ctx, const Plan& p) {
  const std::int64_t etp = expert_tp(p);
  if (etp == p.tp) return {};
  return fmt::format(
      "; etp {} (tp is {}): each expert's matrices {}, and the ep group takes in {} of every "
      "{} tp ranks ({} ranks of a stage's {} hold each layer's experts once){}",
      etp, p.tp,
      etp == 1 ? std::string("stay whole on one GPU") : fmt::format("split over {} GPUs", etp),
      p.tp / etp, p.tp, etp * p.ep, p.tp * p.dp * p.cp,
      layers_without_mlp_tp(ctx.model, p) > 0
          ? "; the MoE layers' MLP needs no tp collectives (the tokens stay split as sequence "
            "parallelism left them)"
          : "");
}

std::string expert_traffic_summary(const Context& ctx, const Evaluation& e) {
  const Plan& p = e.plan;
  const TrainingTime& t = e.training;
  const double accum = static_cast<double>(p.grad_accum);
  const double far = static_cast<double>(p.ep - t.ep.ranks_in_node);
  const DataParallelTraffic expert_dp = t.expert_dp.value_or(DataParallelTraffic{});
  return fmt::format(
      "ep {}: {:.0f} all-to-alls of {} per micro-batch ({} MoE layers x dispatch and combine, "
      "forward and backward) on {} ({}), {} of the ep ranks on this node: {} each, {} per step "
      "= {:.1f} % of the {} of compute in a step; exposed {}{}. Expert gradients: {} over the "
      "{} ranks holding the same experts, exposed {}",
      p.ep, t.ep.all_to_alls, bytes_text(t.ep.message_bytes), t.ep.layers,
      tier_name(ctx.cluster, t.ep.tier),
      gb_per_s(ctx.cluster.tiers[t.ep.tier].bandwidth_bytes_per_second),
      far > 0 ? fmt::format("{} of {}", t.ep.ranks_in_node, p.ep) : std::string("all"),
      seconds_text(t.ep.all_to_all.seconds()), seconds_text(t.ep.seconds * accum),
      100.0 * t.ep.seconds / t.compute_seconds(), seconds_text(t.compute_seconds() * accum),
      seconds_text(t.ep.exposed_seconds * accum),
      ctx.model.moe.overlap_all_to_all ? " (overlapped with another micro-batch's compute)"
                                       : " (on the critical path)",
      seconds_text(expert_dp.comm_seconds), expert_dp.ranks,
      seconds_text(expert_dp.exposed_seconds));
}

std::string expert_failure_text(const Context& ctx, const Evaluation& e) {
  return fmt::format(
      "routing imbalance and hot experts: each all-to-all and expert GEMM waits for the busiest "
      "of the {} expert ranks, taken as {:.2f}x the mean load (model.moe.imbalance{}); a "
      "collapsing router raises it (symptom: all-to-all and expert GEMM times spreading across "
      "ep ranks; remedies: load-balancing loss or bias, a capacity factor)",
      e.plan.ep, expert_load_factor(ctx.model),
      ctx.model.moe.capacity_factor > 0 ? ", capped by the capacity factor" : "");
}

std::string expert_time_lines(const TrainingTime& t, bool per_step) {
  if (!per_step && t.ep.seconds > 0) {
    return fmt::format(
        "    ep all-to-all    {:>12}   ({:.0f} x {}, dispatch and combine; exposed {})\n",
        seconds_text(t.ep.seconds), t.ep.all_to_alls, seconds_text(t.ep.all_to_all.seconds()),
        seconds_text(t.ep.exposed_seconds));
  }
  if (per_step && t.expert_dp && t.expert_dp->ranks > 1) {
    return fmt::format("    expert dp        {:>12}   (exposed {}, over {} ranks)\n",
                       seconds_text(t.expert_dp->comm_seconds),
                       seconds_text(t.expert_dp->exposed_seconds), t.expert_dp->ranks);
  }
  return {};
}

std::string bf16_mfu_note(const Context& ctx, double mfu) {
  const Dtype d = ctx.model.precision.compute;
  const double bf16 = ctx.cluster.gpu.flops_per_second;
  if (d == Dtype::bf16 || d == Dtype::fp16 || ctx.calibrated || !(bf16 > 0)) return {};
  return fmt::format(" ({} rate; {:.1f} % of the bf16 rate)", to_string(d),
                     100.0 * mfu * ctx.flops_per_second / bf16);
}

PeakMfu peak_mfu(const Context& ctx, double model_flops_per_second) {
  PeakMfu out;
  if (ctx.calibrated) return out;
  const Gpu& g = ctx.cluster.gpu;
  const double achieved = model_flops_per_second;
  const double bf16 = g.peak_flops_by_dtype[static_cast<std::size_t>(Dtype::bf16)];
  const Dtype d = ctx.model.precision.compute;
  const double own = g.peak_flops_by_dtype[static_cast<std::size_t>(d)];
  if (bf16 > 0) out.bf16_peak = achieved / bf16;
  if (d != Dtype::bf16 && d != Dtype::fp16 && own > 0) out.compute_peak = achieved / own;
  return out;
}

double hardware_flops_per_second(const Context& ctx, const Evaluation& e) {
  const TrainingTime& t = e.training;
  if (!(t.step_seconds > 0)) return 0;
  return t.global_sequences * hardware_flops_per_sequence(ctx.model, e.plan) /
         (t.step_seconds * static_cast<double>(world_size(ctx.cluster)));
}

std::string mfu_text(const Context& ctx, double mfu, double model_flops_per_second,
                     double hardware_flops_per_second) {
  const PeakMfu p = peak_mfu(ctx, model_flops_per_second);
  if (p.bf16_peak <= 0) {
    // Not MFU (issue 31): model FLOPs over the rate the scenario typed, or the one measured;
    // MFU divides by a datasheet peak, which a GPU given by numbers does not have.
    return fmt::format("{:.1f} % of the {} rate{}", 100 * mfu,
                       ctx.calibrated ? "measured" : "typed", bf16_mfu_note(ctx, mfu));
  }
  const Dtype d = ctx.model.precision.compute;
  const std::string hfu = fmt::format("; HFU {:.1f} % of the bf16 dense peak",
                                      100 * peak_mfu(ctx, hardware_flops_per_second).bf16_peak);
  // The rate MFU's parenthesis is against: a typed (or measured) effective rate, or, from the
  // catalog's peak times an efficiency, the GEMMs' rate, named with its value since the
  // memory-bound work is timed apart from it (docs/model.md §6a).
  const bool gemm_rate = ctx.cluster.gpu.elementwise_bytes_per_second > 0 && !ctx.calibrated;
  const std::string dtype = p.compute_peak <= 0 ? std::string() : std::string(to_string(d)) + " ";
  const std::string rate =
      gemm_rate ? fmt::format("the {:.0f} TFLOP/s {}GEMM rate", ctx.flops_per_second / 1e12, dtype)
                : fmt::format("the effective {}rate", dtype);
  if (p.compute_peak <= 0) {
    return fmt::format("MFU {:.1f} % of the bf16 dense peak ({:.1f} % of {}){}", 100 * p.bf16_peak,
                       100 * mfu, rate, hfu);
  }
  return fmt::format("MFU {:.1f} % of the bf16 dense peak, {:.1f} % of the {} peak ({:.1f} % of "
                     "{}){}",
                     100 * p.bf16_peak, 100 * p.compute_peak, to_string(d), 100 * mfu, rate, hfu);
}

}  // namespace planner

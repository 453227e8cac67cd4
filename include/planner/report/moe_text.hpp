#pragma once
#include <string>

#include "planner/model/evaluate.hpp"

/// The words for mixture-of-experts figures and low-precision compute (docs/moe.md): empty
/// for a dense model in bf16, so dense output is unchanged.

namespace planner {

/// Why ep: the experts each rank holds, the all-to-all's size, tier and share of the step,
/// and the failure mode it accepts (routing imbalance, hot experts).
[[nodiscard]] std::string expert_axis_text(const Context& ctx, const Evaluation& best);

/// Expert tensor parallelism other than tp, as a clause for expert_axis_text; empty when
/// etp = tp.
[[nodiscard]] std::string expert_tensor_text(const Context& ctx, const Plan& p);

/// The ep traffic note: the all-to-alls of a step, their tier and share, and the expert
/// gradients' reduction over the expert-data-parallel group.
[[nodiscard]] std::string expert_traffic_summary(const Context& ctx, const Evaluation& e);

/// The failure mode ep accepts: every rank waits for the busiest expert rank.
[[nodiscard]] std::string expert_failure_text(const Context& ctx, const Evaluation& e);

/// The time breakdown's MoE lines (ep all-to-all per micro-batch; expert gradients per step).
[[nodiscard]] std::string expert_time_lines(const TrainingTime& t, bool per_step);

/// Serving (moe_serving_text.cpp): why ep, or why not: the experts and weights each GPU
/// holds, the share of its experts a decode step reads, and the all-to-all's size, tier and
/// share of the time per token; `verdict` is the alternative's (the answer the other way).
[[nodiscard]] std::string serving_expert_axis_text(const Context& ctx, const Evaluation& best,
                                                   const std::string& verdict);

/// Serving's ep traffic note: a decode step's all-to-alls, their tier, latency and share.
[[nodiscard]] std::string serving_expert_traffic_summary(const Context& ctx,
                                                         const Evaluation& e);

/// The serving time breakdown's MoE line (ep all-to-alls per decode step); empty without ep.
[[nodiscard]] std::string serving_expert_time_lines(const ServingTime& t);

/// ", MFU x % of the bf16 rate" when the GEMMs run in another format (fp8): the MFU the
/// report prints is against the rate of the compute format; this is against the bf16 rate.
[[nodiscard]] std::string bf16_mfu_note(const Context& ctx, double mfu);

/// MFU as the field defines it (Chowdhery et al. 2022, PaLM, Appendix B: model FLOP/s over
/// the hardware's peak): against the catalog's bf16 dense peak and, for another compute
/// format, its own peak; 0 where the GPU is given by numbers (no datasheet peak) or the rate
/// is calibrated from a measured step.
struct PeakMfu {
  double bf16_peak = 0;
  double compute_peak = 0;
};
/// `model_flops_per_second`: per GPU, counted as the field does (TrainingTime).
[[nodiscard]] PeakMfu peak_mfu(const Context& ctx, double model_flops_per_second);

/// Hardware FLOP/s per GPU of a training evaluation: MFU's model FLOPs plus every
/// recomputation, on the field's whole-square count (compute.hpp hardware_flops_per_sequence),
/// the numerator of HFU (Korthikanti et al. 2022 §6).
[[nodiscard]] double hardware_flops_per_second(const Context& ctx, const Evaluation& e);

/// "MFU x % of the bf16 dense peak (y % of the effective rate); HFU z % of the bf16 dense
/// peak" where the peak is known, else "MFU y %" against the effective rate the time model
/// uses (with the fp8 note); `mfu` and `model_flops_per_second` as in TrainingTime.
[[nodiscard]] std::string mfu_text(const Context& ctx, double mfu, double model_flops_per_second,
                                   double hardware_flops_per_second);

}  // namespace planner

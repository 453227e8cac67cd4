#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/evaluate.hpp"

/// How far the time model's throughput has been from published training runs, by kind of
/// run: what `planner plan` quotes beside a prediction, so the user reads 72,229 tokens/s with
/// the error it carries. The figures are `planner validate validation/`'s over the validation
/// records (never the calibration runs the efficiency is fitted to), grouped as
/// `accuracy_subset` groups a plan; docs/validation.md reports them, and a test recomputes
/// every row from validation/ so the table cannot drift from the records.

namespace planner {

/// The kinds of run the validation set measures apart, because their errors differ.
enum class AccuracySubset {
  bf16,              ///< 16-bit GEMMs (bf16, fp16)
  fp8,               ///< FP8 GEMMs: no calibration run, the bf16 efficiency is assumed
  zero3_per_tensor,  ///< ZeRO-3 issuing a collective per parameter tensor (DeepSpeed 2021)
};

struct ModelAccuracy {
  AccuracySubset subset;
  std::string_view key;   ///< JSON name
  std::string_view runs;  ///< what the records are, in words
  int records = 0;
  double median_abs_error = 0;  ///< of tokens/s per GPU, a fraction
  double max_abs_error = 0;
  double median_error = 0;      ///< signed: > 0 means the model predicts faster than measured
};

/// `planner validate validation/` at the commit that last changed the model, grouped by
/// accuracy_subset (docs/validation.md §Quoted beside each plan); tests/report/test_accuracy.cpp
/// recomputes each row.
inline constexpr std::array<ModelAccuracy, 3> model_accuracy{{
    {AccuracySubset::bf16, "bf16", "published BF16 and FP16 training runs", 55, 0.06271,
     0.36054, -0.02154},
    {AccuracySubset::fp8, "fp8", "published FP8 training runs", 31, 0.18771, 0.32034, 0.18771},
    {AccuracySubset::zero3_per_tensor, "zero3_per_tensor",
     "published runs of DeepSpeed's 2021 per-tensor ZeRO-3", 6, 0.46464, 1.03797, 0.46464},
}};

/// The subset a training plan belongs to.
[[nodiscard]] inline AccuracySubset accuracy_subset(const Model& m, const Plan& p) noexcept {
  if (p.zero == 3 && p.zero3_collectives_per_layer > 1) return AccuracySubset::zero3_per_tensor;
  if (m.precision.compute == Dtype::fp8) return AccuracySubset::fp8;
  return AccuracySubset::bf16;
}

/// The accuracy to quote for `p`: training timed with the catalog's fitted rate only. A typed
/// `gpu.flops` or `efficiency`, or a rate measured with `step_time_per_micro_batch`, is the
/// user's number, whose error the validation set does not measure.
[[nodiscard]] inline std::optional<ModelAccuracy> plan_accuracy(const Context& ctx,
                                                                const Plan& p) noexcept {
  if (ctx.workload.kind != WorkloadKind::training || ctx.calibrated ||
      !ctx.cluster.gpu.fitted_rate) {
    return std::nullopt;
  }
  const AccuracySubset s = accuracy_subset(ctx.model, p);
  for (const ModelAccuracy& a : model_accuracy) {
    if (a.subset == s) return a;
  }
  return std::nullopt;
}

/// "Error of this time model on 55 published BF16 and FP16 training runs: 6.3 % median,
/// 36.1 % at worst (planner validate validation/)"; with a bias, which way it leans.
[[nodiscard]] std::string accuracy_sentence(const ModelAccuracy& a);

}  // namespace planner

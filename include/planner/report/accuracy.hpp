#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/memory_accuracy.hpp"
#include "planner/model/regime.hpp"

/// How far the time model's throughput has been from published training runs of the plan's
/// regime: what `planner plan` quotes beside a prediction, so the user reads 72,229 tokens/s
/// with the error measured where such plans were checked. The figures are `planner validate
/// validation/`'s over the validation records (never the calibration runs the efficiency is
/// fitted to), grouped by `regime_of`; docs/validation.md §Regimes reports them, and
/// tests/report/test_accuracy.cpp recomputes every row from validation/, so the table cannot
/// drift from the records.

namespace planner {

/// How the data-parallel group holds the model state: replicated or with the optimizer (and
/// gradients) sharded (ZeRO 0-2: one reduction per step), ZeRO-3 gathering a layer at a time
/// (FSDP), or DeepSpeed 2021's ZeRO-3 issuing a collective per parameter tensor.
enum class StateSharding { replicated, zero3, zero3_per_tensor };

/// World size, in the steps the validation set's errors change over (one node; a few hundred
/// GPUs; up to 2,048; beyond, where only Llama 3's, MT-NLG's and the Megatron README's runs are).
enum class Scale { one_node, to_256, to_2048, beyond_2048 };

/// The features of a training plan that drive the time model's error, coarse enough that the
/// validation set measures most classes: the GEMMs' number format, the state sharding, MoE,
/// and scale. The finer features the search could exploit (the ZeRO-3 group's size, tp across
/// nodes, interleaving depth, cp at short sequences) are bounded by the validated envelope
/// (model/regime.hpp) instead.
struct Regime {
  bool fp8 = false;
  StateSharding sharding = StateSharding::replicated;
  bool moe = false;
  Scale scale = Scale::one_node;
  friend bool operator==(const Regime&, const Regime&) = default;
};

[[nodiscard]] inline Scale scale_of(std::int64_t gpus) noexcept {
  if (gpus <= 8) return Scale::one_node;
  if (gpus <= 256) return Scale::to_256;
  if (gpus <= 2048) return Scale::to_2048;
  return Scale::beyond_2048;
}

[[nodiscard]] inline Regime regime_of(const Model& m, const Cluster& c, const Plan& p) noexcept {
  Regime r;
  r.fp8 = m.precision.compute == Dtype::fp8;
  r.sharding = p.zero != 3                          ? StateSharding::replicated
               : p.zero3_collectives_per_layer > 1 ? StateSharding::zero3_per_tensor
                                                   : StateSharding::zero3;
  r.moe = is_moe(m);
  r.scale = scale_of(world_size(c));
  return r;
}

/// The time model's error on the validation runs of one regime.
struct ModelAccuracy {
  Regime regime;
  int records = 0;
  double median_abs_error = 0;  ///< of tokens/s per GPU, a fraction
  double max_abs_error = 0;
  double median_error = 0;      ///< signed: > 0 means the model predicts faster than measured
};

/// `planner validate validation/` at the commit that last changed the model, grouped by
/// regime_of (docs/validation.md §Regimes); tests/report/test_accuracy.cpp recomputes each row
/// and checks that no populated regime is missing.
inline constexpr std::array<ModelAccuracy, 18> model_accuracy{{
    // {fp8, sharding, MoE, scale}, runs, median |error|, worst |error|, median signed error
    {{false, StateSharding::replicated, false, Scale::one_node}, 2, 0.03723, 0.06013, 0.03723},
    {{false, StateSharding::replicated, false, Scale::to_256}, 17, 0.05334, 0.24321, 0.02173},
    {{false, StateSharding::replicated, false, Scale::to_2048}, 22, 0.04375, 0.31611, -0.01583},
    {{false, StateSharding::replicated, false, Scale::beyond_2048}, 10, 0.08802, 0.41635, 0.08682},
    {{false, StateSharding::replicated, true, Scale::to_256}, 5, 0.05961, 0.08802, 0.05961},
    {{false, StateSharding::replicated, true, Scale::to_2048}, 7, 0.09972, 0.19299, 0.09929},
    {{false, StateSharding::zero3, false, Scale::one_node}, 2, 0.43832, 0.87468, 0.43832},
    {{false, StateSharding::zero3, false, Scale::to_256}, 58, 0.11797, 0.46983, 0.07586},
    {{false, StateSharding::zero3, false, Scale::to_2048}, 4, 0.03433, 0.24858, 0.03433},
    {{false, StateSharding::zero3_per_tensor, false, Scale::to_2048}, 5, 0.11762, 0.19910, 0.03856},
    {{false, StateSharding::zero3_per_tensor, false, Scale::beyond_2048}, 1, 0.25348, 0.25348, 0.25348},
    {{true, StateSharding::replicated, false, Scale::one_node}, 4, 0.01535, 0.06692, 0.01535},
    {{true, StateSharding::replicated, false, Scale::to_256}, 28, 0.07769, 0.44131, 0.04153},
    {{true, StateSharding::replicated, false, Scale::to_2048}, 31, 0.08687, 0.47535, 0.05739},
    {{true, StateSharding::replicated, false, Scale::beyond_2048}, 14, 0.03421, 0.18619, 0.02039},
    {{true, StateSharding::replicated, true, Scale::to_256}, 7, 0.17403, 0.52251, 0.17403},
    {{true, StateSharding::replicated, true, Scale::to_2048}, 6, 0.11759, 0.20571, 0.11759},
    {{true, StateSharding::zero3, false, Scale::to_256}, 13, 0.09174, 0.72919, 0.09174},
}};

/// What a plan's prediction quotes: its regime's row, or, where no validation run shares the
/// regime, the nearest populated one (fewest differing features, scale counted by steps).
struct QuotedAccuracy {
  Regime regime;          ///< the plan's
  ModelAccuracy row;      ///< its own regime's, or the nearest
  bool exact = true;      ///< false: no validation run in the plan's regime
  std::string outside;    ///< why the plan lies outside the validated envelope; empty inside
};

/// The nearest populated regime to `r` (itself when populated).
[[nodiscard]] const ModelAccuracy& nearest_accuracy(const Regime& r) noexcept;

/// The accuracy to quote for `p`: training timed with the catalog's fitted rate only. A typed
/// `gpu.flops` or `efficiency`, or a rate measured with `step_time_per_micro_batch`, is the
/// user's number, whose error the validation set does not measure.
[[nodiscard]] std::optional<QuotedAccuracy> plan_accuracy(const Context& ctx, const Plan& p);

/// Why `p` lies outside the validated envelope, in words with its figure and the limit
/// ("ZeRO-3 over 1,024 ranks; validated runs shard over 128 at most"); empty when inside.
[[nodiscard]] std::string outside_envelope_reason(const ValidatedEnvelope& e, const Model& m,
                                                  const Cluster& c, const Plan& p);

/// The regime in words: "16-bit, ZeRO-3, dense, 257-2,048 GPUs".
[[nodiscard]] std::string regime_text(const Regime& r);

/// "Error of this time model on 12 published runs of this kind (16-bit, ...): 6.3 % median,
/// 36.1 % at worst (planner validate validation/)"; with a bias, which way it leans; the
/// nearest regime's, said so, where none is validated.
[[nodiscard]] std::string accuracy_sentence(const QuotedAccuracy& a);

/// The line beside a recommendation ranked for trust when the fastest plan overall lies
/// outside the validated envelope: "Faster if the model holds outside its validated runs: PLAN,
/// 12.3 % faster; no published run validates it: REASON (--rank raw recommends it)".
[[nodiscard]] std::string unvalidated_sentence(const Context& ctx, const Evaluation& best,
                                               const Evaluation& unvalidated);

/// "with 0.1 % to spare; measured peaks have run up to 8.6 % above what the planner predicts
/// the caching allocator reserves (12 published runs)": a ledger without the headroom
/// (model/memory_accuracy.hpp has_memory_headroom).
[[nodiscard]] std::string memory_headroom_note(const MemoryLedger& l);

/// The clause the memory line adds when the recommendation lacks that headroom: the note, then
/// ": with that headroom, PLAN (64.8 GiB), 5.5 % slower" (or "no plan fits with that
/// headroom").
[[nodiscard]] std::string memory_headroom_clause(const Context& ctx, const Evaluation& best,
                                                 const std::optional<Evaluation>& roomy);

/// The line when no plan fits inside the envelope and the raw ranking answers.
[[nodiscard]] std::string envelope_empty_sentence(const Context& ctx, const Plan& best);

}  // namespace planner

#pragma once
#include <string>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/model/evaluate.hpp"

/// The headline time of a plan cut into the parts that add up to it, for the tables of the
/// Markdown report and the stacked bar of the HTML page (docs/output.md §md, §html).
/// Training: a step is m micro-batch slots (dense, attention, recompute, score-matrix I/O,
/// memory-bound ops, tp traffic, exposed cp ring, stage sends) plus the pipeline bubble, the exposed dp traffic and
/// the straggler wait (model/step_time.hpp, training_time; model/evaluate.hpp). Serving: the
/// time per output token is the decode step — the larger of the weight and KV reads and the
/// compute, plus tp and stage traffic (model/serving/decode.hpp) — stretched by the prefills
/// that interrupt it (model/serving/serving_time.hpp: TPOT = step / (1 − ρ)).

namespace planner {

struct TimePart {
  std::string name;              ///< as the text report names it
  double per_micro_batch = 0;    ///< training: seconds per micro-batch; 0 when not per micro-batch
  double seconds = 0;            ///< its share of the headline time
};

/// The non-zero parts, in the text report's order; their seconds sum to headline_seconds.
[[nodiscard]] std::vector<TimePart> time_parts(const Context& ctx, const Evaluation& e);

/// The step (training) or the time per output token (serving).
[[nodiscard]] double headline_seconds(const Context& ctx, const Evaluation& e);

/// "step" or "per token".
[[nodiscard]] const char* headline_time_name(const Context& ctx);

}  // namespace planner

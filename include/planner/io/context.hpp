#pragma once
#include "planner/inputs/scenario.hpp"
#include "planner/model/evaluate.hpp"

/// The evaluator's context prepared from a checked scenario (docs/model.md §7).

namespace planner {

/// The effective FLOP rate: the cluster's figure, or, when the workload gives a measured time
/// per micro-batch, the rate that time implies (model/evaluate.hpp `measured_rate`). Throws
/// InputError when the measurement is shorter than untiled attention's memory traffic alone,
/// or implies a rate above the loader's limit for gpu.flops.
[[nodiscard]] Context make_context(const Scenario& s);

}  // namespace planner

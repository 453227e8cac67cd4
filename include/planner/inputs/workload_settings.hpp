#pragma once
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"

/// The plan fields a training workload sets for every candidate: how the framework runs what
/// the plan's degrees do not decide (its overlaps, the pipeline split, ZeRO-3's issue pattern,
/// its elementwise kernels). One place, so that the search's candidates, a pinned plan's
/// defaults and `planner memory`'s plan built from flags are timed alike.

namespace planner {

/// Sets `p`'s workload-given fields from `t`; `p.pp` must be set (the pipeline split applies
/// only with stages).
inline void apply_workload_settings(const Training& t, Plan& p) noexcept {
  p.tp_comm_overlap = t.tp_comm_overlap;
  p.pp_comm_overlap = t.pp_comm_overlap;
  p.tables_in_pipeline_split = p.pp > 1 && t.tables_in_pipeline_split;
  p.zero3_collectives_per_layer = t.zero3_collectives_per_layer;
  p.zero3_blocking_gathers = t.zero3_blocking_gathers;
  p.unsharded_gradient_accumulation = t.unsharded_gradient_accumulation;
  p.eager_elementwise = t.eager_elementwise;
  p.tp_saves_gathered_inputs = t.tp_saves_gathered_inputs;
}

}  // namespace planner

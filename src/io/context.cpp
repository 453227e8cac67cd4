#include "planner/io/context.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "planner/base/error.hpp"
#include "planner/inputs/framework_defaults.hpp"

namespace planner {

Context make_context(const Scenario& s) {
  // Serving engines load the multi-token-prediction modules only for speculative decoding
  // (vLLM's "deepseek_mtp" speculative method), which the planner does not model: serving
  // plans the main model (docs/moe.md §8).
  Model model = s.model;
  if (s.workload.kind == WorkloadKind::serving) model.mtp_layers = 0;
  // What the named framework allocates where the scenario is silent (Megatron-LM's fp32 main
  // gradients): the ledger of the job it will launch.
  Workload workload = s.workload;
  apply_framework_defaults(s.constraints.framework, model, workload);
  Context ctx{with_counts(model), s.cluster, workload, flops_for(s.cluster.gpu, s.model.precision.compute),
              false, s.stragglers, s.constraints};
  if (s.workload.kind != WorkloadKind::training ||
      !(s.workload.training.step_time_per_micro_batch_seconds > 0)) {
    return ctx;
  }
  const MeasuredRate r = measured_rate(s);
  if (r.measured_seconds <= r.memory_traffic_seconds) {
    throw InputError(s.origin, "/workload/step_time_per_micro_batch",
                     fmt::format("the measured {:.4g} s is no longer than the {:.4g} s the "
                                 "reference plan's untiled attention needs just to move its "
                                 "score matrices through memory; check the value or pin a "
                                 "plan with flash_attention",
                                 r.measured_seconds, r.memory_traffic_seconds));
  }
  ctx.flops_per_second = r.flops_per_second;
  // Above the loader's limit for gpu.flops the measurement is off by orders of magnitude;
  // a time of 1e-300 s even made the rate infinite and every time zero.
  if (!(ctx.flops_per_second <= 1e21)) {
    const std::string rate = std::isfinite(ctx.flops_per_second)
                                 ? fmt::format("{:.4g}", ctx.flops_per_second)
                                 : std::string("more than 1e308");
    throw InputError(s.origin, "/workload/step_time_per_micro_batch",
                     fmt::format("the measured {:.4g} s implies {} FLOP/s for the reference "
                                 "plan's {:.4g} FLOP, above the limit of 1e21 FLOP/s; check "
                                 "the value",
                                 r.measured_seconds, rate, r.flops));
  }
  ctx.calibrated = true;
  return ctx;
}

}  // namespace planner

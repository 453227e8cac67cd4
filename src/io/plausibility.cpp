#include "planner/io/plausibility.hpp"

#include <fmt/format.h>

#include <cmath>

#include "planner/base/error.hpp"
#include "planner/io/context.hpp"
#include "planner/base/one_line.hpp"

namespace planner {
namespace {

/// The count the shape gives: model.hpp's total_params without the given `params`.
double shape_params(const Model& m) {
  Model shape = m;
  shape.params = 0;
  return total_params(shape);
}

std::string params_formula(const Model& m) {
  return fmt::format("L·(2h² + 2h·h_kv + {}·h·f + 4h) + V·h{} + 2h", m.gated_mlp ? 3 : 2,
                     m.tied_embeddings ? "" : "·2");
}

/// FLOP/s a measured step time implies, when the scenario gives one (make_context's figure;
/// make_context also throws for what it refuses itself).
double implied_rate(const Scenario& s) {
  const Context ctx = make_context(s);
  return ctx.calibrated ? ctx.flops_per_second : 0;
}

/// The GPU's peak for the model's compute format, as make_context takes it.
double peak_rate(const Scenario& s) { return flops_for(s.cluster.gpu, s.model.precision.compute); }

/// Where that peak is written in the scenario.
std::string peak_pointer(const Scenario& s) {
  const Dtype d = s.model.precision.compute;
  if (s.cluster.gpu.flops_by_dtype[static_cast<std::size_t>(d)] > 0) {
    return fmt::format("/cluster/gpu/flops_by_dtype/{}", to_string(d));
  }
  return "/cluster/gpu/flops";
}

}  // namespace

void check_plausible(const Scenario& s) {
  const Model& m = s.model;
  if (m.params > 0) {
    const double shape = shape_params(m);
    const double ratio = m.params / shape;
    // Below the shape's count the shape cannot be built from that many weights: an error.
    // Above it the rest may be weights the shape does not describe (experts, a toy shape in
    // a hand calculation): a warning (plausibility_warnings).
    if (ratio < 1 / params_tolerance) {
      throw InputError(
          s.origin, "/model/params",
          fmt::format("params ({:.4g}) is {:.3g} times the {:.4g} the shape gives ({}, "
                      "docs/model.md §1); expected within a factor of {:g}: fix params or the "
                      "shape, or leave params out to use the shape's count",
                      m.params, ratio, shape, params_formula(m), params_tolerance));
    }
  }
  if (s.workload.kind == WorkloadKind::training) {
    const double tokens = s.workload.training.global_batch_tokens;
    if (tokens < static_cast<double>(m.seq_len)) {
      throw InputError(s.origin, "/workload/global_batch_tokens",
                       fmt::format("global_batch_tokens ({:.10g}) is less than one sequence of "
                                   "seq_len = {} tokens, and a step trains on whole sequences; "
                                   "raise it to at least {} or lower /model/seq_len",
                                   tokens, m.seq_len, m.seq_len));
    }
    const double rate = implied_rate(s);
    const double peak = peak_rate(s);
    if (peak > 0 && rate > measured_peak_tolerance * peak) {
      throw InputError(
          s.origin, "/workload/step_time_per_micro_batch",
          fmt::format("the measured {:.4g} s implies {:.4g} FLOP/s, {:.3g} times the GPU's "
                      "peak of {:.4g} FLOP/s ({}), and no GPU runs faster than its peak (at "
                      "most {:g}× is accepted); check the value and its unit",
                      s.workload.training.step_time_per_micro_batch_seconds, rate, rate / peak,
                      peak, peak_pointer(s), measured_peak_tolerance));
    }
  }
}

std::vector<std::string> plausibility_warnings(const Scenario& s) {
  std::vector<std::string> out;
  const Model& m = s.model;
  const std::string origin = one_line(s.origin, 200);
  if (m.params > 0) {
    const double shape = shape_params(m);
    const double ratio = m.params / shape;
    if (ratio > params_warning || ratio < 1 / params_warning) {
      out.push_back(fmt::format("{}: /model/params: params ({:.4g}) is {:.3g} times the {:.4g} "
                                "the shape gives (docs/model.md §1); check params or the shape",
                                origin, m.params, ratio, shape));
    }
  }
  if (s.workload.kind == WorkloadKind::training) {
    const double rate = implied_rate(s);
    const double peak = peak_rate(s);
    if (peak > 0 && rate > peak) {
      out.push_back(fmt::format("{}: /workload/step_time_per_micro_batch: the measured {:.4g} s "
                                "implies {:.4g} FLOP/s, {:.3g} times the GPU's peak of {:.4g} "
                                "FLOP/s; check the value, or {}",
                                origin, s.workload.training.step_time_per_micro_batch_seconds,
                                rate, rate / peak, peak, peak_pointer(s)));
    }
  }
  return out;
}

}  // namespace planner

#include "time_parts.hpp"

#include <algorithm>

namespace planner {

namespace {

std::vector<TimePart> training_parts(const TrainingTime& t) {
  const double m = static_cast<double>(t.micro_batches);
  struct Row {
    const char* name;
    double seconds;
    bool per_micro_batch;
  };
  const Row rows[] = {
      {"dense 6*P*D", t.dense_seconds, true},
      {"attention", t.attention_seconds, true},
      {"recompute", t.recompute_seconds, true},
      {"score-matrix I/O", t.scores_io_seconds, true},
      {"memory-bound ops", t.elementwise_seconds, true},
      {"tp traffic", t.tp_seconds, true},
      {"cp ring (exposed)", t.cp_exposed_seconds, true},
      {"stage sends", t.pp_seconds, true},
      {"pipeline bubble", t.bubble_seconds, false},
      {"dp traffic (exposed)", t.dp.exposed_seconds, false},
      {"straggler wait", t.straggler_seconds, false},
  };
  std::vector<TimePart> out;
  for (const Row& r : rows) {
    if (r.seconds <= 0) continue;
    out.push_back({r.name, r.per_micro_batch ? r.seconds : 0.0,
                   r.per_micro_batch ? m * r.seconds : r.seconds});
  }
  return out;
}

std::vector<TimePart> serving_parts(const ServingTime& t) {
  const DecodeStep& d = t.decode;
  std::vector<TimePart> out;
  // decode.hpp: the GEMMs pay the larger of their weight read and their FLOPs, the
  // attention the larger of its cache read and its FLOPs.
  out.push_back({d.gemm_compute_bound ? "decode GEMMs" : "weight read", 0, d.gemm_kernel_seconds});
  out.push_back({d.attention_kernel_seconds > d.kv_read_seconds ? "decode attention"
                                                                : "KV-cache read",
                 0, d.attention_kernel_seconds});
  out.push_back({"tp all-reduces", 0, d.tp_seconds});
  out.push_back({"ep all-to-alls", 0, d.ep.seconds});
  out.push_back({"stage sends", 0, d.pp_seconds});
  out.push_back({"prefill interruptions", 0, t.per_token_seconds - d.seconds});
  std::erase_if(out, [](const TimePart& p) { return p.seconds <= 0; });
  return out;
}

}  // namespace

std::vector<TimePart> time_parts(const Context& ctx, const Evaluation& e) {
  return ctx.workload.kind == WorkloadKind::training ? training_parts(e.training)
                                                     : serving_parts(e.serving);
}

double headline_seconds(const Context& ctx, const Evaluation& e) {
  return ctx.workload.kind == WorkloadKind::training ? e.training.step_seconds
                                                     : e.serving.per_token_seconds;
}

const char* headline_time_name(const Context& ctx) {
  return ctx.workload.kind == WorkloadKind::training ? "step" : "per token";
}

}  // namespace planner

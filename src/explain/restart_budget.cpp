#include "planner/explain/restart_budget.hpp"

#include <algorithm>

namespace planner {

namespace {

/// The budget's remedies, each holding every other component at its current value.
void remedies(RestartBudget& b, const Resilience& r) {
  const double budget = *b.budget_seconds;
  const double without_load = b.recovery_seconds - b.read_seconds;
  if (budget > without_load) b.read_bandwidth_needed = b.state.total_bytes / (budget - without_load);
  const double fixed_lost = b.checkpoint_seconds + b.write_behind_seconds;
  const double interval = budget - b.restart_seconds - fixed_lost;
  if (interval > 0) {
    b.interval_needed = interval;
    b.goodput_at_interval_needed =
        goodput(interval, b.checkpoint_seconds, b.restart_seconds + b.write_behind_seconds,
                b.cluster_mtbf_seconds);
    if (b.write_behind_seconds > interval) b.write_bandwidth_needed = b.state.total_bytes / interval;
  }
  const double without_detect = b.recovery_seconds - r.restart.detect_seconds;
  if (budget > without_detect) b.detect_needed = budget - without_detect;
}

}  // namespace

RestartBudget restart_budget(const Context& ctx, const Evaluation& e, const Resilience& r) {
  RestartBudget b;
  const Plan& p = e.plan;
  b.state = checkpoint_state(ctx.model, ctx.workload.training, p, e.memory, r.checkpoint);
  b.gpus = gpus(p);
  b.nodes = std::max<std::int64_t>(1, (b.gpus + ctx.cluster.gpus_per_node - 1) /
                                          ctx.cluster.gpus_per_node);
  const Storage& s = r.storage;
  b.write_seconds =
      transfer_seconds(b.state.total_bytes, b.nodes, s.write_bytes_per_second, s.node_bytes_per_second);
  b.read_seconds =
      transfer_seconds(b.state.total_bytes, b.nodes, s.read_bytes_per_second, s.node_bytes_per_second);
  b.host_copy_seconds = b.state.rank_bytes() / r.checkpoint.host_copy_bytes_per_second;
  if (r.checkpoint.asynchronous) {
    b.checkpoint_seconds = b.host_copy_seconds;
    b.write_behind_seconds = b.write_seconds;
  } else {
    b.checkpoint_seconds = b.write_seconds;
  }
  b.cluster_mtbf_seconds = r.gpu_mtbf_seconds / static_cast<double>(b.gpus);
  b.young_daly_seconds = young_daly_interval_seconds(b.checkpoint_seconds, b.cluster_mtbf_seconds);
  b.interval_seconds = r.checkpoint.interval_seconds.value_or(b.young_daly_seconds);

  const RestartTimes& t = r.restart;
  b.restart_seconds =
      t.detect_seconds + t.reschedule_seconds + t.start_seconds + b.read_seconds + t.warmup_seconds;
  const double segment = b.interval_seconds + b.checkpoint_seconds;
  b.lost_work_expected_seconds = segment / 2.0 + b.write_behind_seconds;
  b.lost_work_worst_seconds = segment + b.write_behind_seconds;
  b.recovery_seconds = b.restart_seconds + b.lost_work_worst_seconds;
  // A write-behind checkpoint becomes durable w later, so each failure also loses w of work:
  // in Daly's formula that adds to the restart.
  b.goodput = goodput(b.interval_seconds, b.checkpoint_seconds,
                      b.restart_seconds + b.write_behind_seconds, b.cluster_mtbf_seconds);
  b.failures_per_day = 86400.0 / b.cluster_mtbf_seconds;
  b.components = {{{"detect", t.detect_seconds},
                   {"reschedule", t.reschedule_seconds},
                   {"start", t.start_seconds},
                   {"load", b.read_seconds},
                   {"warmup", t.warmup_seconds},
                   {"lost_work", b.lost_work_worst_seconds}}};
  // Ties go to the earlier component (max_element keeps the first largest).
  b.binding = std::max_element(b.components.begin(), b.components.end(),
                               [](const BudgetComponent& x, const BudgetComponent& y) {
                                 return x.seconds < y.seconds;
                               })->name;
  b.budget_seconds = r.budget_seconds;
  if (b.budget_seconds) {
    b.met = b.recovery_seconds <= *b.budget_seconds;
    if (!b.met) remedies(b, r);
  }
  b.replica_gpus = p.tp * p.pp * p.cp;
  b.gradient_ranks = e.training.dp.ranks;
  b.gradient_bytes = e.training.dp.gradient_bytes;
  return b;
}

}  // namespace planner

// The restart-budget section of `planner scaling` (docs/output.md §planner scaling).
#include <fmt/format.h>

#include "planner/report/scaling_report.hpp"
#include "planner/io/text.hpp"

namespace planner {

using nlohmann::json;

namespace {

std::string state_text(const RestartBudget& b, const Resilience& r) {
  const CheckpointState& c = b.state;
  std::string out = fmt::format(
      "Checkpoint, per rank (the most loaded, as the memory ledger): weights {}, fp32 master {}, "
      "optimizer moments {}, gradients {}, RNG states {}, data-loader position {} B; "
      "{} in all.\n",
      bytes_text(c.weights_bytes), bytes_text(c.master_bytes), bytes_text(c.moments_bytes),
      r.checkpoint.gradients ? bytes_text(c.gradients_bytes) : std::string("not saved"),
      bytes_text(c.rng_bytes), c.data_loader_bytes, bytes_text(c.rank_bytes()));
  out += fmt::format(
      "Checkpoint of the job (one copy of each parameter's state, every rank's own state): {} "
      "on {} GPUs in {} node{}.\n",
      bytes_text(c.total_bytes), b.gpus, b.nodes, b.nodes == 1 ? "" : "s");
  out += fmt::format("Write {} at {} ({}); read {} at {}.\n", duration_text(b.write_seconds),
                     gb_per_s(r.storage.write_bytes_per_second),
                     r.storage.node_bytes_per_second > 0
                         ? fmt::format("at most {} per node", gb_per_s(r.storage.node_bytes_per_second))
                         : std::string("no per-node limit given"),
                     duration_text(b.read_seconds), gb_per_s(r.storage.read_bytes_per_second));
  if (r.checkpoint.asynchronous) {
    out += fmt::format("Asynchronous: the copy to host memory ({} at {}) stops training; the "
                       "write follows behind ({}).\n",
                       duration_text(b.host_copy_seconds),
                       gb_per_s(r.checkpoint.host_copy_bytes_per_second),
                       duration_text(b.write_behind_seconds));
    if (b.write_behind_seconds > b.interval_seconds) {
      out += "Warning: the write behind takes longer than the interval; checkpoints queue.\n";
    }
  } else {
    out += "Synchronous: training waits for the write.\n";
  }
  return out;
}

std::string failure_text(const RestartBudget& b, const Resilience& r) {
  std::string out = fmt::format(
      "Failures: per-GPU MTBF {}, so the job fails every {} ({:.3g} per day).\n",
      duration_text(r.gpu_mtbf_seconds), duration_text(b.cluster_mtbf_seconds),
      b.failures_per_day);
  out += fmt::format(
      "Checkpoint interval {} ({} Young-Daly sqrt(2·delta·M) = {} for delta {} per checkpoint "
      "and M {}).\n",
      duration_text(b.interval_seconds),
      r.checkpoint.interval_seconds ? "the policy's;" : "the optimum,",
      duration_text(b.young_daly_seconds), duration_text(b.checkpoint_seconds),
      duration_text(b.cluster_mtbf_seconds));
  out += fmt::format(
      "Goodput {:.2f} % (useful training over wall time); each failure costs the restart {} plus "
      "{} of lost work on average.\n",
      100.0 * b.goodput, duration_text(b.restart_seconds),
      duration_text(b.lost_work_expected_seconds));
  return out;
}

std::string budget_text(const RestartBudget& b) {
  std::string out =
      b.budget_seconds
          ? fmt::format("Restart budget {} (from a failure until training is back at the failed "
                        "step, worst case):\n",
                        duration_text(*b.budget_seconds))
          : std::string("Restart (no budget given):\n");
  for (const BudgetComponent& c : b.components) {
    out += fmt::format("  {:<10} {:>10}{}\n", c.name, duration_text(c.seconds),
                       c.name == b.binding ? "  <- binding" : "");
  }
  out += fmt::format("  {:<10} {:>10}  (restart alone {})\n", "total",
                     duration_text(b.recovery_seconds), duration_text(b.restart_seconds));
  if (!b.budget_seconds) return out;
  if (b.met) return out + "Met.\n";
  out += fmt::format("Not met: {} over; the largest component is {}.\n",
                     duration_text(b.recovery_seconds - *b.budget_seconds), b.binding);
  if (b.interval_needed) {
    out += fmt::format("  Checkpoint at most every {} (goodput then {:.2f} %).\n",
                       duration_text(*b.interval_needed), 100.0 * b.goodput_at_interval_needed);
    if (b.write_bandwidth_needed) {
      out += fmt::format("    (the write behind takes longer than that: write at {} or more, or "
                         "checkpoints queue)\n",
                         gb_per_s(*b.write_bandwidth_needed));
    }
  }
  if (b.read_bandwidth_needed) {
    out += fmt::format("  Or read checkpoints at {} or more.\n", gb_per_s(*b.read_bandwidth_needed));
  }
  if (b.detect_needed) {
    out += fmt::format("  Or detect failures within {} (collective timeout).\n",
                       duration_text(*b.detect_needed));
  }
  if (!b.interval_needed && !b.read_bandwidth_needed && !b.detect_needed) {
    out += "  No single change meets it: the other components alone exceed the budget.\n";
  }
  return out;
}

std::string runbook_text(const RestartBudget& b, const Resilience& r) {
  std::string out = "Runbook:\n";
  if (b.gradient_ranks > 1) {
    out += fmt::format(
        "  A rank that skips a batch misses the step's gradient reduction (all-reduce, or "
        "reduce-scatter under ZeRO): the other {} of its {} data-parallel ranks wait in it ({} "
        "of gradients each) until the {} collective timeout fires.\n",
        b.gradient_ranks - 1, b.gradient_ranks, bytes_text(b.gradient_bytes),
        duration_text(r.restart.detect_seconds));
  } else {
    out += fmt::format(
        "  There is no gradient all-reduce (one replica): a rank that skips a batch hangs its "
        "tensor and pipeline collectives until the {} collective timeout fires.\n",
        duration_text(r.restart.detect_seconds));
  }
  out += fmt::format(
      "  One failed GPU stops its model replica ({} GPU{}: tp·pp·cp) and, without elastic "
      "training, the whole job ({} GPUs); the restart then costs {}.\n",
      b.replica_gpus, b.replica_gpus == 1 ? "" : "s", b.gpus, duration_text(b.restart_seconds));
  return out;
}

}  // namespace

std::string restart_budget_text(const RestartBudget& b, const Resilience& r) {
  return "Resilience of the plan:\n" + state_text(b, r) + failure_text(b, r) + budget_text(b) +
         runbook_text(b, r);
}

json restart_budget_json(const RestartBudget& b) {
  const CheckpointState& c = b.state;
  json components = json::object();
  for (const BudgetComponent& x : b.components) components[std::string(x.name)] = x.seconds;
  auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return json{
      {"checkpoint",
       {{"rank", {{"weights", c.weights_bytes}, {"master", c.master_bytes},
                  {"moments", c.moments_bytes}, {"gradients", c.gradients_bytes},
                  {"rng", c.rng_bytes}, {"data_loader", c.data_loader_bytes},
                  {"total", c.rank_bytes()}}},
        {"total", c.total_bytes},
        {"write", b.write_seconds},
        {"read", b.read_seconds},
        {"host_copy", b.host_copy_seconds},
        {"critical_path", b.checkpoint_seconds},
        {"write_behind", b.write_behind_seconds},
        {"interval", b.interval_seconds},
        {"young_daly_interval", b.young_daly_seconds}}},
      {"failures", {{"job_mtbf", b.cluster_mtbf_seconds}, {"per_day", b.failures_per_day}}},
      {"goodput", b.goodput},
      {"lost_work", {{"expected", b.lost_work_expected_seconds}, {"worst", b.lost_work_worst_seconds}}},
      {"restart", b.restart_seconds},
      {"components", components},
      {"recovery", b.recovery_seconds},
      {"binding", std::string(b.binding)},
      {"budget", optional(b.budget_seconds)},
      {"met", b.met},
      {"remedies",
       {{"interval", optional(b.interval_needed)},
        {"read_bandwidth", optional(b.read_bandwidth_needed)},
        {"write_bandwidth", optional(b.write_bandwidth_needed)},
        {"detect", optional(b.detect_needed)}}},
      {"runbook",
       {{"gradient_ranks", b.gradient_ranks},
        {"gradient_bytes", b.gradient_bytes},
        {"replica_gpus", b.replica_gpus},
        {"job_gpus", b.gpus}}}};
}

}  // namespace planner

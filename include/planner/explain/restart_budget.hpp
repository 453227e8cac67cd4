#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "planner/model/evaluate.hpp"
#include "planner/model/checkpoint.hpp"

/// The restart budget of a training plan: checkpoint cost and interval, each restart component,
/// goodput, whether "restart under N minutes" holds and what would make it hold, and the
/// runbook facts (what a hang blocks, what a failure stops). docs/resilience.md §4–§7.

namespace planner {

/// One part of the time from a failure until training is back where it failed.
struct BudgetComponent {
  std::string_view name;
  double seconds = 0;
};

struct RestartBudget {
  CheckpointState state;
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;
  double write_seconds = 0;      ///< whole checkpoint to storage
  double read_seconds = 0;       ///< whole checkpoint from storage (the restart's load)
  double host_copy_seconds = 0;  ///< one rank's state to host memory (asynchronous)
  double checkpoint_seconds = 0; ///< δ: what each checkpoint costs the training critical path
  double write_behind_seconds = 0;  ///< asynchronous: the write after the copy, else 0
  double cluster_mtbf_seconds = 0;  ///< per-GPU MTBF / GPUs
  double young_daly_seconds = 0;
  double interval_seconds = 0;      ///< the policy's, else Young–Daly's
  double restart_seconds = 0;       ///< detect + reschedule + start + load + warm-up
  double lost_work_expected_seconds = 0;  ///< (τ + δ)/2 + write-behind
  double lost_work_worst_seconds = 0;     ///< τ + δ + write-behind
  double recovery_seconds = 0;            ///< restart + worst-case lost work
  double goodput = 0;
  double failures_per_day = 0;
  std::array<BudgetComponent, 6> components{};  ///< restart parts, then lost work (worst case)
  std::string_view binding;                     ///< the largest component
  std::optional<double> budget_seconds;
  bool met = true;
  // What would meet the budget (set only when it is not met and the remedy exists).
  std::optional<double> read_bandwidth_needed;  ///< aggregate bytes/s that fits the load
  std::optional<double> interval_needed;        ///< longest interval that fits the lost work
  double goodput_at_interval_needed = 0;
  /// Asynchronous, when the interval needed is shorter than the write behind: the aggregate
  /// write rate at which each write ends within that interval (else checkpoints queue).
  std::optional<double> write_bandwidth_needed;
  std::optional<double> detect_needed;  ///< timeout that fits when the rest is at its minimum
  // Runbook facts.
  std::int64_t replica_gpus = 0;     ///< tp·pp·cp: what one failed GPU stops at once
  std::int64_t gradient_ranks = 0;   ///< dp·cp ranks in the gradient all-reduce (1: none)
  double gradient_bytes = 0;         ///< bf16 gradient buffer each of them all-reduces
};

/// Evaluates the resilience inputs for one evaluated training plan.
[[nodiscard]] RestartBudget restart_budget(const Context& ctx, const Evaluation& e,
                                           const Resilience& r);

}  // namespace planner

#pragma once
#include <optional>
#include <string>
#include <vector>

#include "planner/model/evaluate.hpp"
#include "planner/search/search.hpp"

/// The explanation of a recommended plan, in the five parts of the worked solution
/// (docs/output.md): binding constraint, axes, tiers and bandwidth, failure mode accepted,
/// what would change the answer — plus the simpler answers and why they lose.

namespace planner {

/// The share of compute the worked solution allows communication (scenario A: "a 20 % comm
/// budget"). Used only to state a bandwidth requirement in the explanation, never to rank.
inline constexpr double comm_budget = 0.20;

struct BindingConstraint {
  std::string kind;    ///< "state memory", "activation memory", "throughput", "decode latency"
  bool quadratic_dominates = false;  ///< activation memory: the s² term outweighs the rest
  std::string detail;  ///< the numbers that show it
};

struct AxisNote {
  std::string axis;    ///< "dp", "tp", "pp", "cp", "zero", "recompute", "flash_attention", …
  std::int64_t degree = 1;
  bool used = false;
  std::string tier;    ///< "intra_node" / "inter_node" / "" when unused
  std::string why;
};

/// One axis's traffic: what it moves, on which tier, whether it hides, and the bandwidth it
/// needs.
struct TrafficNote {
  std::string axis;
  std::string tier;
  std::string collective;  ///< e.g. "all-reduce", "reduce-scatter + all-gather", "ring K/V"
  std::string algorithm;
  double message_bytes = 0;
  double messages_per_step = 0;
  double seconds_per_step = 0;     ///< all of this axis's traffic in one step
  double compute_seconds_per_step = 0;
  double exposed_seconds_per_step = 0;
  bool critical_path = false;      ///< cannot overlap compute (tp, pp)
  double hide_bandwidth = 0;       ///< lowest bandwidth (bytes/s) at which it still hides; 0 = n/a
  double budget_bandwidth = 0;     ///< lowest bandwidth within comm_budget of compute; 0 = n/a
  std::string summary;             ///< one sentence with the figures
};

/// A simpler or alternative answer and the number that rejects it.
struct Alternative {
  std::string name;    ///< "pure data parallel", "without tp", …
  std::optional<Evaluation> best;  ///< its best fitting plan, if any fits
  std::string verdict;             ///< "fits, 19.0 % slower: …" or "does not fit: needs …"
  std::vector<TrafficNote> traffic;  ///< the traffic of its best plan
};

/// Where the recommendation flips as one input moves.
struct Threshold {
  std::string parameter;  ///< JSON pointer into the scenario
  double base_value = 0;  ///< the scenario's value, base units
  double value = 0;       ///< the flip point, base units
  std::string direction;  ///< "below" or "above"
  Plan plan;              ///< the recommendation on the other side
  std::string summary;
};

struct Explanation {
  BindingConstraint binding;
  std::vector<AxisNote> axes;
  std::vector<TrafficNote> traffic;
  std::string failure_mode;
  std::vector<Alternative> alternatives;
  std::vector<Threshold> thresholds;
  /// Threshold scans that ran out of their work budget ("POINTER below|above"); empty for
  /// every ordinary scenario (thresholds.hpp, threshold_work_budget).
  std::vector<std::string> thresholds_not_searched;
  std::vector<std::string> notes;  ///< extra figures (e.g. the ring figure next to the pick)
};

[[nodiscard]] BindingConstraint binding_constraint(const Context& ctx);
[[nodiscard]] std::vector<TrafficNote> traffic_notes(const Context& ctx, const Evaluation& e);
[[nodiscard]] std::string failure_mode(const Context& ctx, const Evaluation& e);

/// Full explanation of `best`, the winner of `result`. `with_thresholds` runs the planner
/// again for every threshold input (the costly part).
[[nodiscard]] Explanation explain(const Context& ctx, const SearchResult& result,
                                  bool with_thresholds);

/// Short description of a plan: "tp 8 (intra_node) × dp 8, ZeRO-1, SP, flash, selective".
[[nodiscard]] std::string describe(const Context& ctx, const Plan& p);

/// Whether two plans are the same answer (axes, tiers, ZeRO, recompute, flash, SP), ignoring
/// the micro-batch split, which moves with every input.
[[nodiscard]] bool same_answer(const Context& ctx, const Plan& a, const Plan& b);

}  // namespace planner

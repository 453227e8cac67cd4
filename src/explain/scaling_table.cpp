#include "planner/explain/scaling_table.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "planner/base/error.hpp"

namespace planner {

namespace {

/// Keeps the intermediate network domains (docs/scenario-format.md §domains) that still lie
/// strictly between one node and the resized world, and divide it.
void trim_domains(Cluster& c) {
  const std::int64_t world = world_size(c);
  for (std::size_t k = c.tiers.size() - 1; k-- > 1;) {
    const std::int64_t d = c.tiers[k].domain_gpus;
    if (d >= world || world % d != 0) c.tiers.erase(c.tiers.begin() + static_cast<long>(k));
  }
}

}  // namespace

Cluster cluster_for(const Cluster& c, std::int64_t gpus, const std::string& origin) {
  Cluster out = c;
  if (gpus <= c.gpus_per_node) {
    out.nodes = 1;
    out.gpus_per_node = gpus;
    trim_domains(out);
    return out;
  }
  if (gpus % c.gpus_per_node != 0) {
    const std::string node = std::to_string(c.gpus_per_node);
    throw InputError(origin, "/plan/dp",
                     std::to_string(gpus) + " GPUs are not a whole number of " + node +
                         "-GPU nodes; choose data-parallel sizes whose GPU count is a "
                         "multiple of " + node);
  }
  out.nodes = gpus / c.gpus_per_node;
  trim_domains(out);
  return out;
}

std::vector<std::int64_t> default_dp_sizes(std::int64_t base_dp) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t dp = 1; dp < base_dp; dp *= 2) sizes.push_back(dp);
  sizes.push_back(base_dp);
  return sizes;
}

namespace {

/// The base plan resized to `dp` replicas. Weak scaling keeps the replica's micro-batches;
/// strong scaling spreads the base plan's global batch, rounding each replica's share up to
/// whole micro-batches (so the global batch may grow a little, as the search does).
Plan resized(const Plan& base, ScalingMode mode, std::int64_t dp) {
  Plan p = base;
  p.dp = dp;
  if (mode == ScalingMode::strong) {
    const std::int64_t sequences = base.dp * base.micro_batch * base.grad_accum;
    const std::int64_t per_replica = (sequences + dp - 1) / dp;
    p.grad_accum = std::max<std::int64_t>(1, (per_replica + p.micro_batch - 1) / p.micro_batch);
  }
  return p;
}

}  // namespace

ScalingTable scaling_table(const Context& ctx, const Plan& base, ScalingMode mode,
                           const std::vector<std::int64_t>& dp_sizes,
                           const std::string& origin) {
  ScalingTable table;
  table.mode = mode;
  for (const std::int64_t dp : dp_sizes) {
    ScalingRow r;
    r.plan = resized(base, mode, dp);
    r.gpus = gpus(r.plan);
    Context at = ctx;
    at.cluster = cluster_for(ctx.cluster, r.gpus, origin);
    const Evaluation e = evaluate(at, r.plan);
    r.fits = e.fits();
    r.compute_seconds = static_cast<double>(r.plan.grad_accum) * e.training.compute_seconds();
    r.straggler_seconds = e.training.straggler_seconds;
    r.step_seconds = e.training.step_seconds;
    r.communication_seconds = r.step_seconds - r.compute_seconds - r.straggler_seconds;
    r.global_sequences = e.training.global_sequences;
    r.sequences_per_second = r.global_sequences / r.step_seconds;
    table.rows.push_back(r);
  }
  if (table.rows.empty()) return table;
  const ScalingRow& first = table.rows.front();
  const double first_dp = static_cast<double>(first.plan.dp);
  const double per_replica = first.sequences_per_second / first_dp;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    ScalingRow& r = table.rows[i];
    r.speedup = r.sequences_per_second / first.sequences_per_second;
    r.efficiency = r.speedup / (static_cast<double>(r.plan.dp) / first_dp);
    if (i == 0) {
      r.marginal = 1.0;
      continue;
    }
    const ScalingRow& prev = table.rows[i - 1];
    const double added = static_cast<double>(r.plan.dp - prev.plan.dp);
    r.marginal = added == 0 ? 0.0
                            : (r.sequences_per_second - prev.sequences_per_second) /
                                  (added * per_replica);
    if (!table.stops_paying && r.sequences_per_second <= prev.sequences_per_second) {
      table.stops_paying = i;
    }
  }
  return table;
}

}  // namespace planner

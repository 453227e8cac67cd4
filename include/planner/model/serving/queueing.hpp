#pragma once
#include <cmath>

/// Waiting for prefill under Poisson arrivals (docs/model.md §8.4). One engine serves prompts
/// one at a time, each taking the same prefill time: an M/D/1 queue.

namespace planner {

struct QueueWait {
  double utilisation = 0;     ///< ρ = arrival rate · service time
  double mean_seconds = 0;    ///< mean wait before service
  double quantile_seconds = 0;  ///< wait at the requested quantile
  bool stable = true;         ///< ρ < 1; otherwise the queue grows without bound
};

/// M/D/1: the Pollaczek–Khinchine mean wait with a deterministic service time T,
/// W = ρ·T / (2·(1 − ρ)) (Kleinrock 1975, Queueing Systems I, Eq. 5.73 with C_s² = 0).
/// The quantile uses the exponential tail of the heavy-traffic approximation (Kingman 1962;
/// Kleinrock 1976, Queueing Systems II, §2.3): a request waits with probability ρ, and a
/// waiting request waits an exponential time of mean W/ρ, so P(wait > t) = ρ·e^(−t·ρ/W) and
/// the q-quantile is (W/ρ)·ln(ρ/(1 − q)) when ρ > 1 − q, else 0. tests/test_serving.cpp
/// checks it against a seeded simulation of the queue.
[[nodiscard]] inline QueueWait md1_wait(double arrivals_per_second, double service_seconds,
                                        double quantile) noexcept {
  QueueWait q;
  q.utilisation = arrivals_per_second * service_seconds;
  if (!(q.utilisation < 1.0)) {
    q.stable = false;
    return q;
  }
  if (q.utilisation <= 0) return q;
  q.mean_seconds = q.utilisation * service_seconds / (2.0 * (1.0 - q.utilisation));
  if (q.utilisation > 1.0 - quantile) {
    q.quantile_seconds =
        q.mean_seconds / q.utilisation * std::log(q.utilisation / (1.0 - quantile));
  }
  return q;
}

}  // namespace planner

#pragma once
#include <algorithm>
#include <cmath>

/// Waiting for prefill (docs/model.md §8.4). One engine serves prompts one at a time, each
/// taking the same prefill time: an M/D/1 queue under Poisson arrivals (a request rate), a
/// closed network of one queue and the decoding users under a fixed concurrency.

namespace planner {

struct QueueWait {
  double utilisation = 0;     ///< ρ = arrival rate · service time
  double mean_seconds = 0;    ///< mean wait before service
  double quantile_seconds = 0;  ///< wait at the requested quantile
  bool stable = true;         ///< ρ < 1; otherwise the queue grows without bound
};

/// The tail of a wait that is 0 with probability 1 − p and otherwise exponential with mean
/// W/p: P(wait > t) = p·e^(−t·p/W), so the q-quantile is (W/p)·ln(p/(1 − q)) when p > 1 − q,
/// else 0 (the exponential tail of Kingman's heavy-traffic approximation, as md1_wait).
[[nodiscard]] inline double exponential_tail_quantile(double mean_seconds, double p_wait,
                                                      double quantile) noexcept {
  if (!(p_wait > 1.0 - quantile) || !(mean_seconds > 0)) return 0;
  return mean_seconds / p_wait * std::log(p_wait / (1.0 - quantile));
}

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
  q.quantile_seconds = exponential_tail_quantile(q.mean_seconds, q.utilisation, quantile);
  return q;
}

/// Waiting for prefill in a closed loop: `users` sequences per engine, each decoding for
/// `think_seconds` (its output) and then needing `service_seconds` of the engine's prefill
/// for the request that replaces it. A closed queueing network of one queue and one delay
/// station, solved by exact mean-value analysis (Reiser and Lavenberg 1980, J. ACM 27(2),
/// the MVA recursion R(n) = S·(1 + Q(n − 1)), X(n) = n / (Z + R(n)), Q(n) = X(n)·R(n)):
/// one user never waits, and the wait rises toward N·S − Z as prefill saturates. Exact for
/// exponential service and an approximation for deterministic prefills; past 4,096 users the
/// recursion gives way to its asymptote, max(S, N·S − Z) (Denning and Buzen 1978, §5,
/// asymptotic bounds), to bound the work. The quantile uses the exponential tail with the
/// station's utilisation as the probability of waiting.
[[nodiscard]] inline QueueWait closed_loop_wait(double users, double think_seconds,
                                                double service_seconds, double quantile) noexcept {
  QueueWait q;
  if (!(users > 1.0) || !(service_seconds > 0)) return q;
  const double n_users = std::floor(users);
  double queue = 0, response = service_seconds, throughput = 0;
  if (n_users <= 4096) {
    for (double n = 1; n <= n_users; n += 1) {
      response = service_seconds * (1.0 + queue);
      throughput = n / (think_seconds + response);
      queue = throughput * response;
    }
  } else {
    response = std::max(service_seconds, n_users * service_seconds - think_seconds);
    throughput = n_users / (think_seconds + response);
  }
  q.utilisation = std::min(1.0, throughput * service_seconds);
  q.mean_seconds = std::max(0.0, response - service_seconds);
  q.quantile_seconds = exponential_tail_quantile(q.mean_seconds, q.utilisation, quantile);
  return q;
}

}  // namespace planner

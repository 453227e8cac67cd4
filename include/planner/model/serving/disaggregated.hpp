#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/serving/decode.hpp"
#include "planner/model/serving/prefill.hpp"
#include "planner/model/serving/queueing.hpp"
#include "planner/model/serving/serving_time.hpp"

/// Disaggregated serving (docs/model.md §8.5; Zhong et al. 2024, DistServe, arXiv
/// 2401.09670): a pool of prefill engines and a pool of decode engines, each with its own tp,
/// and the prompt's KV cache sent from one to the other. Decodes never wait for prefills.

namespace planner {

struct Disaggregated {
  std::int64_t prefill_tp = 1, prefill_engines = 1;
  std::int64_t decode_tp = 1, decode_engines = 1;
  [[nodiscard]] std::int64_t gpus() const noexcept {
    return prefill_tp * prefill_engines + decode_tp * decode_engines;
  }
};

struct DisaggregatedTime {
  Disaggregated shape;
  bool fits = false;               ///< both pools' ledgers fit
  PrefillTime prefill;             ///< one prompt on a prefill engine
  DecodeStep decode;               ///< one step of a decode engine
  QueueWait queue;                 ///< prompts waiting for a prefill engine
  double kv_transfer_bytes = 0;    ///< the prompt's whole cache
  double kv_transfer_seconds = 0;
  std::size_t transfer_tier = 0;
  double requests_per_second = 0;  ///< over the deployment
  double per_token_seconds = 0;
  double ttft_seconds = 0;
  double tokens_per_second = 0;
  double tokens_per_second_per_gpu = 0;
  bool overloaded = false;
  bool meets_slo = false;
};

/// Closed loop (concurrency C): each decode engine holds ⌈C / engines⌉ sequences and steps
/// without prefill stalls, so TPOT = step and requests finish at C / (o·TPOT); open loop
/// (rate R): the decode pool's steady batch as §8.4 with no prefill share. Either way the
/// prefill pool is an M/D/1 queue per engine at rate / engines. The cache of n prompt tokens,
/// 2·L·g·(h/a)·bytes each, moves over the tier holding both pools (the node when they fit in
/// one, as DistServe §4.3 places them), each of min(tp_p, tp_d) rank pairs sending its share.
/// TTFT = wait + prefill + transfer.
[[nodiscard]] inline DisaggregatedTime disaggregated_time(const Model& m, const Cluster& c,
                                                          const Serving& w, const Disaggregated& d,
                                                          double flops_per_second) noexcept {
  DisaggregatedTime t;
  t.shape = d;
  Plan pre;
  pre.tp = d.prefill_tp;
  pre.dp = d.prefill_engines;
  pre.micro_batch = 1;
  Plan dec;
  dec.tp = d.decode_tp;
  dec.dp = d.decode_engines;
  dec.micro_batch = engine_batch(w, d.decode_engines);
  const MemoryLedger pre_ledger = serving_ledger(m, c, w, pre);
  const MemoryLedger dec_ledger = serving_ledger(m, c, w, dec);
  t.fits = pre_ledger.fits() && dec_ledger.fits();
  // A prefill engine samples the first token itself and hands the cache over (DistServe,
  // Zhong et al. 2024 §3): no decode step of its own, whatever first_token says.
  Serving prefill_engine = w;
  prefill_engine.first_token = FirstToken::prefill;
  t.prefill =
      prefill_time(m, c, prefill_engine, pre, pre_ledger.weights_bytes, flops_per_second);
  const double o = static_cast<double>(w.output_tokens);
  double batch = static_cast<double>(dec.micro_batch);
  if (w.request_rate_per_second > 0) {
    t.requests_per_second = w.request_rate_per_second;
    const double steady = steady_batch(m, c, w, dec, dec_ledger.weights_bytes, flops_per_second,
                                       t.requests_per_second / static_cast<double>(dec.dp), 0);
    t.overloaded = steady < 0;
    if (!t.overloaded) batch = std::max(steady, 1.0);
  }
  t.decode = decode_step(m, c, w, dec, batch, dec_ledger.weights_bytes, flops_per_second);
  t.per_token_seconds = t.decode.seconds;
  if (w.request_rate_per_second <= 0) {
    t.requests_per_second = static_cast<double>(w.concurrency) / (o * t.per_token_seconds);
  }
  t.queue = md1_wait(t.requests_per_second / static_cast<double>(pre.dp), t.prefill.stage_seconds,
                     w.slo_percentile);
  t.overloaded = t.overloaded || !t.queue.stable;
  t.transfer_tier = c.network_index();  // the innermost tier whose domain holds both pools
  for (std::size_t k = 0; k < c.network_index(); ++k) {
    if (domain_gpus(c, k) >= d.gpus()) {
      t.transfer_tier = k;
      break;
    }
  }
  const Plan one_gpu;
  t.kv_transfer_bytes = kv_bytes_per_token(m, one_gpu, KvSharding::replicate) *
                        static_cast<double>(prompt_tokens(w));
  const double pairs = static_cast<double>(std::min(d.prefill_tp, d.decode_tp));
  t.kv_transfer_seconds = cheapest_collective(Collective::point_to_point, 2,
                                              t.kv_transfer_bytes / pairs, c.tiers[t.transfer_tier])
                              .seconds();
  t.ttft_seconds = t.queue.quantile_seconds + t.prefill.seconds + t.kv_transfer_seconds;
  // Overloaded pools cap the rate at what they serve: the prefill engines n_p / T, the
  // decode engines n_d · b / (o · step(b)) at their full batch b (serving_time.hpp).
  const double decode_full = static_cast<double>(dec.micro_batch);
  const double decode_capacity =
      static_cast<double>(dec.dp) *
      saturation_rate(decode_full, o,
                      decode_step(m, c, w, dec, decode_full, dec_ledger.weights_bytes,
                                  flops_per_second)
                          .seconds,
                      0);
  const double served =
      t.overloaded ? std::min({t.requests_per_second,
                               static_cast<double>(pre.dp) / t.prefill.stage_seconds,
                               decode_capacity})
                   : t.requests_per_second;
  t.tokens_per_second = served * o;
  t.tokens_per_second_per_gpu = t.tokens_per_second / static_cast<double>(d.gpus());
  t.meets_slo = t.fits && !t.overloaded && t.per_token_seconds <= w.slo_per_token_seconds &&
                (w.slo_ttft_seconds <= 0 || t.ttft_seconds <= w.slo_ttft_seconds);
  return t;
}

}  // namespace planner

#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/serving/batching.hpp"
#include "planner/model/serving/decode.hpp"
#include "planner/model/serving/kv_cache.hpp"
#include "planner/model/serving/prefill.hpp"
#include "planner/model/serving/queueing.hpp"

/// A serving engine under continuous batching (docs/model.md §8): decode step, prefill,
/// their interference, queueing for prefill, and the SLO verdicts.

namespace planner {

struct ServingTime {
  DecodeStep decode;     ///< one iteration at the engine's (steady-state) batch
  PrefillTime prefill;   ///< one prompt alone
  /// Staggered users and request rates: the prompts prefilled together and what each costs
  /// the decoding batch (batching.hpp); the lockstep rounds time their own prefills.
  PromptForward prompt;
  /// closed_loop lockstep: the first prompt of the opening round, alone on the idle engine,
  /// to its first token; zero otherwise.
  double round_lead_seconds = 0;
  /// closed_loop lockstep: the opening round's other prompts, prefilled together after the
  /// lead's, to their first tokens; zero otherwise.
  double round_prefill_seconds = 0;
  /// first_token decode_step: the decode step that yields a request's first token, at the
  /// batch it joins (included in the TTFT); zero when the prefill yields it.
  double first_token_step_seconds = 0;
  /// closed_loop lockstep: the prompts of the opening round (admitted_prompts: more than
  /// `slots` when the prompts' caches fit where the whole contexts' do not); zero otherwise.
  double round_prompts = 0;
  /// Sequences the engine holds at once (memory.hpp serving_slots); fewer than its users when
  /// their caches do not all fit, and the others wait for a slot.
  double slots = 0;
  double slot_wait_seconds = 0;  ///< mean wait for a free slot; 0 when every user has one
  double prefill_share = 0;        ///< ρ: fraction of the engine's time spent in prefill
  double requests_per_second = 0;  ///< per engine; 0 when the output length is not given
  /// The most requests per second one engine completes, whatever the latency: its full
  /// batch decoding, each sequence's prefill stalling it once (0 without an output length).
  double saturation_requests_per_second = 0;
  QueueWait queue;                 ///< waiting for prefill (request rate or concurrency)
  double iteration_wait_seconds = 0;  ///< at the percentile: the decode step a prompt lands in
  double per_token_seconds = 0;    ///< time per output token (TPOT)
  double ttft_seconds = 0;         ///< time to first token at the SLO percentile
  double ttft_mean_seconds = 0;    ///< its mean
  bool ttft_unbounded = false;     ///< overloaded: the queue, and so TTFT, grows without bound
  std::int64_t replicas = 1;
  double tokens_per_second = 0;    ///< generated tokens over all replicas
  double slo_margin_seconds = 0;   ///< TPOT SLO minus TPOT (negative: missed)
  double ttft_margin_seconds = 0;  ///< TTFT SLO minus TTFT; 0 without a TTFT SLO
  bool overloaded = false;  ///< arrivals exceed what the engine can prefill and decode
  bool meets_slo = true;    ///< not overloaded, TPOT and (when given) TTFT within targets
};

/// The most requests per second an engine completes with `batch` sequences decoding, each
/// request's prefill stalling the batch once: b / (o·step(b) + b·T_prefill) (the closed-loop
/// rate below; T_prefill = 0 for a decode-only engine of a disaggregated deployment).
[[nodiscard]] inline double saturation_rate(double batch, double output_tokens,
                                            double step_seconds, double prefill_seconds) noexcept {
  return batch / (output_tokens * step_seconds + batch * prefill_seconds);
}

/// The steady-state batch under a request rate λ per engine (Little's law, Little 1961):
/// B = λ · output_tokens · TPOT(B), TPOT(B) = step(B) / (1 − ρ). step grows with B, so the
/// iteration from B = 0 rises to the least fixed point; none at or below `limit` (the
/// engine's batch, what fits in memory) means the engine is overloaded. Returns the batch,
/// or a negative number when overloaded.
[[nodiscard]] inline double steady_batch(const Model& m, const Cluster& c, const Serving& w,
                                         const Plan& p, double weights_bytes,
                                         double flops_per_second, double per_engine_rate,
                                         double prefill_share) noexcept {
  const double limit = static_cast<double>(p.micro_batch);
  const double inflow = per_engine_rate * static_cast<double>(w.output_tokens);
  double batch = 0;
  for (int i = 0; i < 2000; ++i) {
    const double step = decode_step(m, c, w, p, std::max(batch, 1.0), weights_bytes,
                                    flops_per_second).seconds;
    const double next = inflow * step / (1.0 - prefill_share);
    if (next > limit) return -1;
    const bool settled = std::abs(next - batch) <= 1e-9 * std::max(1.0, next);
    batch = next;
    if (settled) break;
  }
  return batch;
}

/// Judges the figures against the targets; an unbounded TTFT misses any TTFT target.
inline void judge(const Serving& w, ServingTime& t) noexcept {
  t.slo_margin_seconds = w.slo_per_token_seconds - t.per_token_seconds;
  t.ttft_margin_seconds = w.slo_ttft_seconds > 0 && !t.ttft_unbounded
                              ? w.slo_ttft_seconds - t.ttft_seconds
                              : 0;
  t.meets_slo = !t.overloaded && t.slo_margin_seconds >= 0 && t.ttft_margin_seconds >= 0;
}

/// Users a lockstep round admits at once (docs/model.md §8.4, admission): an engine that
/// allocates its cache's blocks as tokens come admits a request while its prompt's blocks are
/// free (vLLM's BlockSpaceManager.can_allocate counts the prompt's blocks, Kwon et al. 2023
/// §4.1), and pre-empts running sequences later if the cache fills. That TurboMind v0.1 did the
/// same is read from its measurements, not its code: at 64 clients × 128-token prompts
/// Llama-2-7B's first tokens came within one round's prefill (0.535 s) although the 64 whole
/// contexts do not fit (docs/model.md §8.4). So the opening round takes every user whose prompt fits beside the weights and
/// the reserve, at least the `full` slots whole contexts leave, at most the engine's users. The
/// rounds after it are the whole-context rounds of `full` (sequences end together and free
/// the cache, and the steady state holds what the whole contexts allow).
[[nodiscard]] inline double admitted_prompts(const Model& m, const Serving& w, const Plan& p,
                                             const MemoryLedger& ledger, double users,
                                             double full) noexcept {
  if (w.concurrency <= 0 || users <= full) return std::min(users, full);
  const double prompt_bytes = kv_bytes_per_token(m, p, w.kv_sharding) *
                              static_cast<double>(block_rounded_tokens(w, prompt_tokens(w)));
  const double free_bytes = ledger.capacity_bytes - (ledger.total_bytes() - ledger.kv_cache_bytes);
  if (!(prompt_bytes > 0) || !(free_bytes > 0)) return full;
  return std::clamp(std::floor(free_bytes / prompt_bytes), full, users);
}

/// Closed loop (a fixed concurrency): every finished request is replaced at once, so each of
/// the b sequences costs its prefill once per output_tokens steps: per engine
/// λ = b / (o·step + b·T_prefill), ρ = λ·T_prefill and TPOT = step / (1 − ρ)
/// = step + b·T_prefill / o (Agrawal et al. 2024, Sarathi-Serve, §2.3: prefills stall the
/// decodes batched with them); a replacement prompt waits for the prefills of the others
/// (queueing.hpp, closed_loop_wait: one user never waits). Open loop (a request rate): the
/// steady batch above; a prompt arrives during a decode step and waits for it to end (the
/// residual of a deterministic interval: uniform on [0, step], mean step/2; Kleinrock 1975
/// §5.2), when the engine is decoding, and for the prefills ahead of it (M/D/1). TTFT =
/// waits + prefill. The most an engine completes is its closed-loop rate at its full batch,
/// b / (o·step(b) + b·T_prefill): step(b)/b falls with b, so no smaller batch does better. A
/// rate above it is overloaded: the engine serves at that rate, TPOT is the full engine's, and
/// the queue (so TTFT) grows without bound. Without an output length neither interference nor
/// a rate is modelled: TPOT is the step.
[[nodiscard]] inline ServingTime serving_time(const Model& m, const Cluster& c, const Serving& w,
                                              const Plan& p, const MemoryLedger& ledger,
                                              double flops_per_second) noexcept {
  ServingTime t;
  t.replicas = p.dp;
  t.prefill = prefill_time(m, c, w, p, ledger.weights_bytes, flops_per_second);
  const double o = static_cast<double>(w.output_tokens);
  const double users = static_cast<double>(p.micro_batch);
  const double full = serving_slots(m, w, p, ledger);  // what the engine holds at once
  t.slots = full;
  // The prompts' forward at the full batch (batching.hpp); under a request rate, again at
  // the steady batch below. engine_prefill: the engine's busy time per prompt.
  t.prompt = prompt_forward(m, c, w, p, full, ledger.weights_bytes, flops_per_second);
  double engine_prefill = t.prompt.engine_seconds;
  Plan held = p;
  held.micro_batch = static_cast<std::int64_t>(full);
  double batch = full;
  t.decode = decode_step(m, c, w, p, full, ledger.weights_bytes, flops_per_second);
  if (w.output_tokens > 0) {
    t.saturation_requests_per_second = saturation_rate(full, o, t.decode.seconds, engine_prefill);
  }
  const bool open_loop = w.request_rate_per_second > 0 && w.output_tokens > 0;
  double iteration_wait_mean = 0;
  if (open_loop) {
    t.requests_per_second = w.request_rate_per_second / static_cast<double>(p.dp);
    t.overloaded = !(t.requests_per_second < t.saturation_requests_per_second);
    const double steady =
        t.overloaded ? -1
                     : steady_batch(m, c, w, held, ledger.weights_bytes, flops_per_second,
                                    t.requests_per_second,
                                    t.requests_per_second * engine_prefill);
    t.overloaded = steady < 0;
    if (t.overloaded) {
      t.requests_per_second = t.saturation_requests_per_second;  // what it completes
    } else {
      batch = std::max(steady, 1.0);
      t.prompt = prompt_forward(m, c, w, p, batch, ledger.weights_bytes, flops_per_second);
      engine_prefill = t.prompt.engine_seconds;
      t.decode = decode_step(m, c, w, p, batch, ledger.weights_bytes, flops_per_second);
      t.queue = md1_wait(t.requests_per_second, engine_prefill, w.slo_percentile);
      const double decoding = std::min(1.0, steady);  // share of the time a step is running
      t.iteration_wait_seconds = decoding * w.slo_percentile * t.decode.seconds;
      iteration_wait_mean = decoding * 0.5 * t.decode.seconds;
    }
    t.prefill_share = t.requests_per_second * engine_prefill;
  } else if (w.output_tokens > 0 && w.closed_loop == ClosedLoop::lockstep) {
    // Lockstep (§8.4): each round the users' identical requests come together and decode o
    // steps together, no prompt interrupting them. Users given as a `concurrency` are clients
    // that send them one after another (threads of one process), and an idle engine starts on
    // the first at once (TurboMind v0.1's Request.h dequeue blocks only while nothing is
    // queued, then takes what is), so a round opens with its lead prompt alone; the others,
    // queued meanwhile, are prefilled together at the next iteration. A `batch` is a static
    // batch submitted whole (gptSessionBenchmark, benchmark_latency): one forward, no lead.
    // Users queued for a slot (the rounds after the opening one) are all waiting when it
    // frees: their round is prefilled together. A prompt's first token comes with its
    // prefill, or with the decode step after it (first_token decode_step, at the batch then
    // running); the o − 1 others follow, one per step.
    const double step = t.decode.seconds;
    const auto first_token_step = [&](double running) {
      return w.first_token == FirstToken::decode_step
                 ? decode_step(m, c, w, p, running, ledger.weights_bytes, flops_per_second).seconds
                 : 0.0;
    };
    const auto prefill_of = [&](double prompts) {
      return prompts > 0
                 ? prefill_time(m, c, w, p, ledger.weights_bytes, flops_per_second, prompts).seconds
                 : 0.0;
    };
    const double leads = w.concurrency > 0 ? 1.0 : 0.0;  // users served alone as a round opens
    const double lead = leads > 0 ? prefill_of(1) + first_token_step(1) : 0.0;
    // The round's other n − leads users, prefilled together after the lead.
    const auto rest_seconds = [&](double n) {
      return n > leads ? prefill_of(n - leads) + first_token_step(n) : 0.0;
    };
    // A round of queued users: all n prefilled together.
    const double queued_first_token = prefill_of(full) + first_token_step(full);
    // The engine's round, what the throughput counts: users that fit all come back together
    // and open each round on an idle engine; past the slots, queued users fill each round.
    const bool queued = users > full;
    const double round_seconds =
        (queued ? queued_first_token : lead + rest_seconds(full)) + (o - 1.0) * step;
    const double round_prefills =
        queued ? prefill_of(full) : prefill_of(leads) + prefill_of(full - leads);
    t.requests_per_second = full / round_seconds;
    t.prefill_share = round_prefills / round_seconds;
    t.per_token_seconds = step;
    // The opening round admits `first` users (admitted_prompts); the users past it form
    // further rounds of `full`, served one after another after the opening one: k of them,
    // and a user among them waits for the opening round and the ones before its own.
    const double first = admitted_prompts(m, w, p, ledger, users, full);
    const double rest = rest_seconds(first);
    t.round_lead_seconds = lead;
    t.round_prefill_seconds = rest;
    t.first_token_step_seconds = first_token_step(first);
    t.round_prompts = first;
    const double opening_seconds = lead + rest + (o - 1.0) * step;
    const double later = users - first;
    const double rounds = std::ceil(later / full);
    const double queued_round = queued_first_token + (o - 1.0) * step;
    // A later user's first token: the opening round, the later rounds before its own, then
    // its own round's prefill.
    const auto later_ttft = [&](double rounds_before) {
      return opening_seconds + rounds_before * queued_round + queued_first_token;
    };
    t.slot_wait_seconds =
        later > 0 ? later / users * (opening_seconds + 0.5 * (rounds - 1.0) * queued_round) : 0.0;
    const double opening_total = leads * lead + (first - leads) * (lead + rest);
    t.ttft_mean_seconds = (opening_total + later * later_ttft(0.5 * (rounds - 1.0))) / users;
    // The user at the percentile, counted in arrival order: the lead, the rest of the opening
    // round, or the later round it falls in.
    const double at = w.slo_percentile * users;
    const double later_rounds_before = std::max(0.0, std::ceil((at - first) / full) - 1.0);
    t.ttft_seconds = at <= leads   ? lead
                     : at <= first ? lead + rest
                                   : later_ttft(later_rounds_before);
    t.tokens_per_second = static_cast<double>(p.dp) * t.requests_per_second * o;
    if (w.concurrency > 0) {
      t.tokens_per_second *= std::min(1.0, static_cast<double>(w.concurrency) /
                                               (static_cast<double>(p.dp) * full));
    }
    judge(w, t);
    return t;
  } else if (w.output_tokens > 0) {
    t.requests_per_second = t.saturation_requests_per_second;
    t.prefill_share = t.requests_per_second * engine_prefill;
    const double decoding_seconds = o * t.decode.seconds / (1.0 - t.prefill_share);
    t.queue = closed_loop_wait(full, decoding_seconds, engine_prefill, w.slo_percentile);
    // Users past the slots: the engine stays full, completing λ requests a second, so a user's
    // cycle is users / λ (Little 1961); what it does not spend decoding, prefilling or queueing
    // for prefill it waits for a slot.
    if (users > full) {
      t.slot_wait_seconds = std::max(0.0, users / t.requests_per_second - decoding_seconds -
                                              t.prompt.first_token_seconds -
                                              t.queue.mean_seconds);
    }
  }
  t.per_token_seconds = t.decode.seconds / (1.0 - t.prefill_share);
  t.ttft_unbounded = t.overloaded;
  // first_token decode_step: the prompt's last token rides the next step of the running batch.
  if (w.first_token == FirstToken::decode_step) t.first_token_step_seconds = t.decode.seconds;
  if (!t.ttft_unbounded) {
    t.ttft_seconds = t.prompt.first_token_seconds + t.queue.quantile_seconds +
                     t.iteration_wait_seconds + t.slot_wait_seconds + t.first_token_step_seconds;
    t.ttft_mean_seconds = t.prompt.first_token_seconds + t.queue.mean_seconds +
                          iteration_wait_mean + t.slot_wait_seconds + t.first_token_step_seconds;
  }
  const double engine_tokens = w.output_tokens > 0 && (open_loop || t.overloaded)
                                   ? t.requests_per_second * o
                                   : batch / t.per_token_seconds;
  t.tokens_per_second = static_cast<double>(p.dp) * engine_tokens;
  if (w.concurrency > 0 && !open_loop) {
    // Replicas hold ⌈concurrency / dp⌉ users each, `full` of them at once; only
    // `concurrency` users exist, so some slots may idle.
    t.tokens_per_second *= std::min(1.0, static_cast<double>(w.concurrency) /
                                             (static_cast<double>(p.dp) * full));
  }
  judge(w, t);
  return t;
}

/// The largest request rate one engine serves within the targets (TPOT, TTFT at the
/// percentile, not overloaded): bisection on the rate, which only makes every figure worse,
/// between 0 and the rate at which prefill alone fills the engine (ρ = 1). 0 when even a
/// trickle misses. Needs `output_tokens`.
[[nodiscard]] inline double max_request_rate(const Model& m, const Cluster& c, Serving w,
                                             const Plan& p, const MemoryLedger& ledger,
                                             double flops_per_second) noexcept {
  const double prefill = prefill_time(m, c, w, p, ledger.weights_bytes, flops_per_second)
                             .stage_seconds;
  auto meets = [&](double per_engine) {
    w.request_rate_per_second = per_engine * static_cast<double>(p.dp);
    return serving_time(m, c, w, p, ledger, flops_per_second).meets_slo;
  };
  // Without a prefill forward (one-token prompts whose token a decode step takes) the engine's
  // saturation rate bounds what it completes instead.
  // Prompts batched together (batching.hpp) cost the engine less than one alone, so the
  // engine's full-batch rate may exceed 1/prefill: the larger of the two bounds it.
  const double saturation =
      serving_time(m, c, w, p, ledger, flops_per_second).saturation_requests_per_second;
  double hi = prefill > 0 ? std::max(1.0 / prefill, saturation) : saturation;
  if (!(hi > 0) || !std::isfinite(hi)) return 0;
  double lo = 0;
  if (!meets(hi * 1e-6)) return 0;
  for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (meets(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace planner

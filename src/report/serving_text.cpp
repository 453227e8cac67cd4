#include "serving_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "planner/io/text.hpp"
#include "planner/model/collectives.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/search/disaggregated.hpp"
#include "planner/search/rank.hpp"

namespace planner {

using nlohmann::json;

json serving_time_json(const Context& ctx, const ServingTime& t) {
  const DecodeStep& d = t.decode;
  const PrefillTime& p = t.prefill;
  json j{{"weight_read", d.weight_read_seconds},
              {"kv_read", d.kv_read_seconds},
              {"decode_compute", d.compute_seconds},
              {"decode_gemm", d.gemm_kernel_seconds},
              {"decode_attention", d.attention_kernel_seconds},
              {"layer_fixed", d.fixed_seconds},
              {"compute_bound", d.compute_bound},
              {"gemm_compute_bound", d.gemm_compute_bound},
              {"tp", d.tp_seconds},
              {"tp_algorithm", std::string(to_string(d.tp_collective.algorithm))},
              {"pp", d.pp_seconds},
              {"decode_step", d.seconds},
              {"batch", d.batch},
              {"per_token", t.per_token_seconds},
              {"slo_margin", t.slo_margin_seconds},
              {"prefill", json{{"prompt_tokens", p.prompt_tokens},
                               {"chunks", p.chunks},
                               {"flops", p.flops},
                               {"compute", p.compute_seconds},
                               {"memory", p.memory_seconds},
                               {"fixed", p.fixed_seconds},
                               {"tp", p.tp_seconds},
                               {"pp", p.pp_seconds},
                               {"seconds", p.seconds}}},
              {"prompts_per_forward", t.prompt.prompts},
              {"prompt_engine_seconds", t.prompt.engine_seconds},
              {"prompt_first_token", t.prompt.first_token_seconds},
              {"batching", std::string(ctx.workload.serving.batching == Batching::mixed
                                           ? "mixed"
                                           : "separate")},
              {"prefill_share", t.prefill_share},
              {"requests_per_second", t.requests_per_second},
              {"queue_wait", json{{"mean", t.queue.mean_seconds},
                                  {"quantile", t.queue.quantile_seconds}}},
              {"iteration_wait", t.iteration_wait_seconds},
              {"round_lead", t.round_lead_seconds},
              {"round_prefill", t.round_prefill_seconds},
              {"first_token_step", t.first_token_step_seconds},
              {"round_prompts", t.round_prompts},
              {"slots", t.slots},
              {"slot_wait", t.slot_wait_seconds},
              {"saturation_requests_per_second", t.saturation_requests_per_second},
              {"ttft", t.ttft_unbounded ? json(nullptr) : json(t.ttft_seconds)},
              {"ttft_mean", t.ttft_unbounded ? json(nullptr) : json(t.ttft_mean_seconds)},
              {"ttft_margin", t.ttft_margin_seconds},
              {"overloaded", t.overloaded},
              {"meets_slo", t.meets_slo},
              {"replicas", t.replicas},
              {"tokens_per_second", t.tokens_per_second}};
  // Only for mixture-of-experts models (docs/moe.md §6), so dense output is unchanged.
  if (is_moe(ctx.model)) {
    j["weight_read_bytes"] = d.weight_read_bytes;
    j["expert_read_fraction"] = d.expert_read_fraction;
    j["ep_all_to_all"] = d.ep.seconds;
    j["ep_all_to_all_count"] = d.ep.all_to_alls;
    j["ep_message_bytes"] = d.ep.message_bytes;
    j["prefill"]["ep"] = p.ep_seconds;
  }
  return j;
}

namespace {

/// A request rate as people write it: three significant digits below 1,000 ("19.2"), whole
/// numbers above ("100000", never "1e+05").
std::string rate_text(double per_second) {
  return per_second >= 1000 ? fmt::format("{:.0f}", per_second)
                            : fmt::format("{:.3g}", per_second);
}

std::string margin_text(double margin) {
  return fmt::format("{} by {}", margin >= 0 ? "met" : "missed", seconds_text(std::abs(margin)));
}

}  // namespace

std::string ttft_text(const ServingTime& t) {
  return t.ttft_unbounded ? std::string("unbounded") : seconds_text(t.ttft_seconds);
}

std::string serving_time_text(const Context& ctx, const ServingTime& t) {
  const Serving& w = ctx.workload.serving;
  const DecodeStep& d = t.decode;
  std::string out;
  out += fmt::format("  weight read        {:>12}\n", seconds_text(d.weight_read_seconds));
  out += fmt::format("  KV-cache read      {:>12}", seconds_text(d.kv_read_seconds));
  out += d.kv_reads > 1 ? fmt::format("   (each KV head loaded {:.0f} times: once per query head, "
                                      "decode_attention per_query_head)\n",
                                      d.kv_reads)
                        : std::string("\n");
  out += fmt::format("  decode compute     {:>12}   ({:.0f} sequences; {})\n",
                     seconds_text(d.compute_seconds), d.batch,
                     d.gemm_compute_bound ? "the GEMMs compute-bound, the cache read after them"
                                     : "below the reads: memory-bound");
  if (d.fixed_seconds > 0) {
    out += fmt::format("  layer fixed costs  {:>12}   ({} per layer: kernel floors and launch "
                       "gaps)\n",
                       seconds_text(d.fixed_seconds), seconds_text(w.layer_step_seconds));
  }
  out += fmt::format("  tp all-reduces     {:>12}   ({} x {}, {})\n", seconds_text(d.tp_seconds),
                     d.tp_messages, seconds_text(d.tp_collective.seconds()),
                     to_string(d.tp_collective.algorithm));
  out += serving_expert_time_lines(t);
  if (d.pp_seconds > 0) out += fmt::format("  stage sends        {:>12}\n", seconds_text(d.pp_seconds));
  if (t.prefill_share > 0) {
    out += fmt::format("  decode step        {:>12}   ({:.1f} % of the engine's time prefills)\n",
                       seconds_text(d.seconds), 100 * t.prefill_share);
  }
  out += fmt::format("  per token          {:>12}   SLO {} ({})\n",
                     seconds_text(t.per_token_seconds), seconds_text(w.slo_per_token_seconds),
                     margin_text(t.slo_margin_seconds));
  if (t.prefill.prompt_tokens > 0) {
    out += fmt::format("  prefill            {:>12}   ({} prompt tokens in {} chunk{}, {:.1f} "
                       "TFLOP per GPU)\n",
                       seconds_text(t.prefill.seconds), t.prefill.prompt_tokens, t.prefill.chunks,
                       t.prefill.chunks == 1 ? "" : "s", t.prefill.flops / 1e12);
  } else {
    out += fmt::format("  prefill            {:>12}   (the one-token prompt goes straight to the "
                       "first-token decode step)\n",
                       "none");
  }
  if (t.prompt.prompts > 1 || t.prompt.decoding_alongside > 0) {
    out += fmt::format("  prompts together   {:>12.1f}   ({}; each costs the engine {})\n",
                       t.prompt.prompts,
                       t.prompt.decoding_alongside > 0
                           ? fmt::format("in the decode iteration of {:.0f} sequences, first "
                                         "tokens after {}",
                                         t.prompt.decoding_alongside,
                                         seconds_text(t.prompt.first_token_seconds))
                           : fmt::format("one prefill forward, first tokens after {}",
                                         seconds_text(t.prompt.first_token_seconds)),
                       seconds_text(t.prompt.engine_seconds));
  }
  if (w.request_rate_per_second > 0) {
    out += fmt::format("  queue for prefill  {:>12}   (p{:.0f}; mean {}, {:.2f} requests/s per "
                       "engine)\n",
                       seconds_text(t.queue.quantile_seconds), 100 * w.slo_percentile,
                       seconds_text(t.queue.mean_seconds), t.requests_per_second);
  }
  if (t.iteration_wait_seconds > 0) {
    out += fmt::format("  decode step ahead  {:>12}   (p{:.0f}: a prompt waits for the step it "
                       "lands in)\n",
                       seconds_text(t.iteration_wait_seconds), 100 * w.slo_percentile);
  }
  if (t.slot_wait_seconds > 0) {
    out += fmt::format("  wait for a slot    {:>12}   (mean: {:.0f} users, the caches of {:.0f} "
                       "fit; the rest queue)\n",
                       seconds_text(t.slot_wait_seconds),
                       static_cast<double>(ctx.workload.serving.concurrency > 0
                                               ? engine_batch(w, t.replicas)
                                               : w.batch),
                       t.slots);
  }
  if (t.round_lead_seconds > 0) {
    out += fmt::format("  round lead         {:>12}   (lockstep: the round's first prompt, alone "
                       "on the idle engine)\n",
                       seconds_text(t.round_lead_seconds));
  }
  if (t.round_prefill_seconds > 0 && t.round_lead_seconds > 0) {
    out += fmt::format("  round prefill      {:>12}   (lockstep: its other {:.0f} prompts, "
                       "together after it; their first tokens wait for both)\n",
                       seconds_text(t.round_prefill_seconds), t.round_prompts - 1);
  } else if (t.round_prefill_seconds > 0) {
    out += fmt::format("  round prefill      {:>12}   (a static batch: the round's {:.0f} prompts "
                       "prefilled together; every first token waits for it)\n",
                       seconds_text(t.round_prefill_seconds), t.round_prompts);
  }
  if (t.first_token_step_seconds > 0) {
    out += fmt::format("  first-token step   {:>12}   (the engine prefills all but the prompt's "
                       "last token, which the next decode step takes)\n",
                       seconds_text(t.first_token_step_seconds));
  }
  if (w.request_rate_per_second <= 0 && t.queue.mean_seconds > 0) {
    out += fmt::format("  queue for prefill  {:>12}   (p{:.0f}; mean {}: the other {:.0f} "
                       "sequences' replacement prompts)\n",
                       seconds_text(t.queue.quantile_seconds), 100 * w.slo_percentile,
                       seconds_text(t.queue.mean_seconds), d.batch - 1);
  }
  out += fmt::format("  first token        {:>12}", ttft_text(t));
  if (w.slo_ttft_seconds > 0) {
    out += fmt::format("   SLO {} ({})", seconds_text(w.slo_ttft_seconds),
                       t.ttft_unbounded ? std::string("missed: the queue grows without bound")
                                        : margin_text(t.ttft_margin_seconds));
  }
  out += "\n";
  if (t.overloaded) {
    out += fmt::format("  overloaded: requests arrive faster than the engine completes them "
                       "({} requests/s per engine at most); it serves that many and the "
                       "queue grows without bound\n",
                       rate_text(t.saturation_requests_per_second));
  }
  out += fmt::format("  throughput         {:>12.0f} tokens/s over {} replicas\n",
                     t.tokens_per_second, t.replicas);
  return out;
}

std::string serving_headline(const Context& ctx, const Evaluation& e) {
  return fmt::format("{} per token ({} SLO), first token {}, {:.0f} tokens/s, {} of {} per GPU",
                     seconds_text(e.serving.per_token_seconds),
                     seconds_text(ctx.workload.serving.slo_per_token_seconds),
                     ttft_text(e.serving), e.serving.tokens_per_second,
                     gib_text(e.memory.total_bytes()), gib_text(e.memory.capacity_bytes));
}

namespace {

struct Capacity {
  double per_engine = 0;   ///< requests/s one engine serves within the targets
  std::int64_t engines = 0;  ///< engines the scenario's rate needs; 0 when none suffices
};

Capacity capacity(const Context& ctx, const Evaluation& e) {
  Capacity c;
  c.per_engine = max_request_rate(ctx.model, ctx.cluster, ctx.workload.serving, e.plan, e.memory,
                                  ctx.flops_per_second);
  if (c.per_engine > 0) {
    c.engines = static_cast<std::int64_t>(
        std::ceil(ctx.workload.serving.request_rate_per_second / c.per_engine));
  }
  return c;
}

}  // namespace

json serving_capacity_json(const Context& ctx, const Evaluation& e) {
  if (ctx.workload.serving.request_rate_per_second <= 0) return json::object();
  const Capacity c = capacity(ctx, e);
  return json{{"max_requests_per_second_per_engine", c.per_engine},
              {"engines_for_rate", c.engines},
              {"gpus_per_engine", e.plan.tp * e.plan.pp}};
}

std::string serving_capacity_text(const Context& ctx, const Evaluation& e) {
  const Serving& w = ctx.workload.serving;
  if (w.request_rate_per_second <= 0) return {};
  const Capacity c = capacity(ctx, e);
  if (c.engines == 0) {
    return "  capacity: one engine misses the targets even at a trickle of requests\n";
  }
  const std::int64_t gpus = e.plan.tp * e.plan.pp;
  return fmt::format("  capacity: one engine of {} GPU{} serves up to {} requests/s within the "
                     "targets; {} requests/s need {} engine{} ({} GPUs; {} here)\n",
                     gpus, gpus == 1 ? "" : "s", rate_text(c.per_engine),
                     rate_text(w.request_rate_per_second), c.engines, c.engines == 1 ? "" : "s",
                     c.engines * gpus, e.plan.dp);
}

namespace {

/// One row of the comparison: an aggregated plan or a disaggregated split.
struct Deployment {
  std::string kind;  ///< "aggregated" or "disaggregated"
  std::string description;
  double per_token = 0, ttft = 0, tokens_per_gpu = 0;
  bool meets = false;
  bool overloaded = false;  ///< TTFT unbounded
};

std::string split_text(const Disaggregated& d) {
  return fmt::format("prefill {} x tp {} + decode {} x tp {}", d.prefill_engines, d.prefill_tp,
                     d.decode_engines, d.decode_tp);
}

std::vector<Deployment> deployments(const Context& ctx, const std::vector<Evaluation>& aggregated) {
  std::vector<Deployment> out;
  const double gpus = static_cast<double>(world_size(ctx.cluster));
  for (const Evaluation& e : aggregated) {
    out.push_back({"aggregated", describe(ctx, e.plan), e.serving.per_token_seconds,
                   e.serving.ttft_seconds, e.serving.tokens_per_second / gpus,
                   e.serving.meets_slo, e.serving.ttft_unbounded});
  }
  for (const DisaggregatedTime& t : search_disaggregated(ctx)) {
    out.push_back({"disaggregated", split_text(t.shape), t.per_token_seconds, t.ttft_seconds,
                   t.tokens_per_second_per_gpu, t.meets_slo, t.overloaded});
  }
  return out;
}

/// The frontier among the deployments that meet the targets (all of them when none does).
std::vector<std::size_t> frontier(const std::vector<Deployment>& all) {
  const bool any = std::any_of(all.begin(), all.end(), [](const Deployment& d) { return d.meets; });
  std::vector<double> tokens, per_token;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (any && !all[i].meets) continue;
    index.push_back(i);
    tokens.push_back(all[i].tokens_per_gpu);
    per_token.push_back(all[i].per_token);
  }
  std::vector<std::size_t> front = pareto_front(tokens, per_token);
  for (std::size_t& i : front) i = index[i];
  return front;
}

}  // namespace

std::string disaggregation_text(const Context& ctx, const std::vector<Evaluation>& aggregated) {
  if (!disaggregation_applies(ctx)) return {};
  const std::vector<Deployment> all = deployments(ctx, aggregated);
  std::string out = "\nAggregated and disaggregated deployments (Pareto front: output tokens/s per "
                    "GPU against time per output token";
  out += std::any_of(all.begin(), all.end(), [](const Deployment& d) { return d.meets; })
             ? ", among those meeting the targets)\n"
             : "; none meets the targets)\n";
  out += fmt::format("  {:<14} {:<36} {:>10} {:>12} {:>12}\n", "kind", "deployment",
                     "per token", "first token", "tok/s/GPU");
  for (std::size_t i : frontier(all)) {
    const Deployment& d = all[i];
    out += fmt::format("  {:<14} {:<36} {:>10} {:>12} {:>12.1f}\n", d.kind, d.description,
                       seconds_text(d.per_token),
                       d.overloaded ? std::string("unbounded") : seconds_text(d.ttft),
                       d.tokens_per_gpu);
  }
  return out;
}

json disaggregation_json(const Context& ctx, const std::vector<Evaluation>& aggregated) {
  if (!disaggregation_applies(ctx)) return json(nullptr);
  const std::vector<Deployment> all = deployments(ctx, aggregated);
  json front = json::array();
  for (std::size_t i : frontier(all)) {
    const Deployment& d = all[i];
    front.push_back(json{{"kind", d.kind}, {"deployment", d.description},
                         {"per_token", d.per_token},
                         {"ttft", d.overloaded ? json(nullptr) : json(d.ttft)},
                         {"tokens_per_second_per_gpu", d.tokens_per_gpu},
                         {"meets_slo", d.meets}});
  }
  return json{{"pareto", front}};
}


std::string slo_missed_line(const Context& ctx, const Evaluation& e) {
  const ServingTime& t = e.serving;
  const Serving& w = ctx.workload.serving;
  if (t.meets_slo) return {};
  if (t.overloaded) {
    const double engine = t.saturation_requests_per_second;
    return fmt::format("SLO MISSED: {} requests/s exceed the {} the best deployment "
                       "completes ({} engine{} of {} GPU{}, {} requests/s each at most); it "
                       "is overloaded, its queue and first-token time grow without bound; at "
                       "that rate it would take at least {} such engines\n",
                       rate_text(w.request_rate_per_second),
                       rate_text(engine * static_cast<double>(e.plan.dp)), e.plan.dp,
                       e.plan.dp == 1 ? "" : "s", e.plan.tp * e.plan.pp,
                       e.plan.tp * e.plan.pp == 1 ? "" : "s", rate_text(engine),
                       static_cast<std::int64_t>(std::ceil(w.request_rate_per_second / engine)));
  }
  std::string out;
  if (t.slo_margin_seconds < 0) {
    out += fmt::format("SLO MISSED by {}: {} per output token against the {} target\n",
                       seconds_text(-t.slo_margin_seconds), seconds_text(t.per_token_seconds),
                       seconds_text(w.slo_per_token_seconds));
  }
  if (t.ttft_margin_seconds < 0) {
    out += fmt::format("SLO MISSED by {}: {} to the first token (p{:.0f}) against the {} target\n",
                       seconds_text(-t.ttft_margin_seconds), seconds_text(t.ttft_seconds),
                       100 * w.slo_percentile, seconds_text(w.slo_ttft_seconds));
  }
  return out;
}

}  // namespace planner

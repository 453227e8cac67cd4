#include "planner/explain/thresholds.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "planner/base/workers.hpp"
#include "planner/search/answer.hpp"
#include "planner/search/search.hpp"
#include "threshold_probe.hpp"

namespace planner {

std::optional<Plan> recommend(const Context& ctx) {
  SearchOptions options;
  options.keep = 1;
  options.accounting = false;  // only the winner is needed
  const SearchResult r = search(ctx, options);
  if (!r.found()) return std::nullopt;
  return r.ranked.front().plan;
}

namespace {

using namespace threshold_detail;

/// Serving: the load (per-engine batch or total concurrency, and the request rate), the
/// prompt (input tokens, else the whole context) and the targets.
void serving_inputs(const Serving& w, std::vector<Input>& out) {
  if (w.concurrency > 0) {
    out.push_back({"/workload/concurrency",
                   [](const Context& c) { return static_cast<double>(c.workload.serving.concurrency); },
                   [](Context& c, double v) {
                     c.workload.serving.concurrency = static_cast<std::int64_t>(v);
                   },
                   64, true, "sequences", 1});
  } else {
    out.push_back({"/workload/batch",
                   [](const Context& c) { return static_cast<double>(c.workload.serving.batch); },
                   [](Context& c, double v) {
                     c.workload.serving.batch = static_cast<std::int64_t>(v);
                   },
                   64, true, "sequences", 1});
  }
  if (w.request_rate_per_second > 0) {
    out.push_back({"/workload/request_rate",
                   [](const Context& c) { return c.workload.serving.request_rate_per_second; },
                   [](Context& c, double v) { c.workload.serving.request_rate_per_second = v; },
                   100, false, "requests/s", 1});
  }
  if (w.input_tokens > 0) {
    // The reserved context grows with the prompt when it only held prompt + output.
    out.push_back({"/workload/input_tokens",
                   [](const Context& c) { return static_cast<double>(c.workload.serving.input_tokens); },
                   [](Context& c, double v) {
                     Serving& s = c.workload.serving;
                     s.input_tokens = static_cast<std::int64_t>(v);
                     s.context_tokens = std::max(s.context_tokens, s.input_tokens + s.output_tokens);
                   },
                   64, true, "tokens", 1});
  } else {
    out.push_back({"/workload/context_tokens",
                   [](const Context& c) {
                     return static_cast<double>(c.workload.serving.context_tokens);
                   },
                   [](Context& c, double v) {
                     c.workload.serving.context_tokens = static_cast<std::int64_t>(v);
                   },
                   64, true, "tokens", 1});
  }
  out.push_back({"/workload/slo_per_token",
                 [](const Context& c) { return c.workload.serving.slo_per_token_seconds; },
                 [](Context& c, double v) { c.workload.serving.slo_per_token_seconds = v; },
                 100, false, "ms", 1e-3});
  if (w.slo_ttft_seconds > 0) {
    out.push_back({"/workload/slo_ttft",
                   [](const Context& c) { return c.workload.serving.slo_ttft_seconds; },
                   [](Context& c, double v) { c.workload.serving.slo_ttft_seconds = v; },
                   100, false, "ms", 1e-3});
  }
}

/// Sequence lengths are probed in whole blocks: multiples of the scenario's own power-of-two
/// factor up to 128 tokens (the key block of FlashAttention-2's kernels, docs/model.md §6) and
/// of the recommendation's cp. The search requires cp | seq_len (model/legality.hpp), so one
/// token off a length the recommendation divides is a length it cannot run at: probed token
/// by token, q3 (8,192 tokens, cp 2) reported "at or below 8191 tokens", a divisibility
/// artefact rather than a length at which another plan wins.
std::int64_t seq_len_step(const Context& c, const Plan& best) {
  std::int64_t pow2 = 1;
  while (pow2 < 128 && c.model.seq_len % (pow2 * 2) == 0) pow2 *= 2;
  return std::lcm(pow2, std::max<std::int64_t>(best.cp, 1));
}

/// The global batch is probed in whole sequences: the search reads it only as the number of
/// sequences a step runs, rounded up (model/evaluate.hpp target_sequences and
/// sequences_per_replica: ceil(ceil(T)/dp) = ceil(T/dp)), so every batch between two multiples
/// of the sequence length has the answer of the larger one, and the flip points are multiples
/// of it. Bisected in relative steps of 10^-3 instead, q4 reported "0.25792 M tokens" (62.97
/// sequences) for a flip at 63 sequences, after 10 probes where 5 find the exact one.
std::int64_t global_batch_step(const Context& c, const Plan&) { return c.model.seq_len; }

std::vector<Input> inputs(const Context& ctx) {
  std::vector<Input> out;
  out.push_back({"/cluster/inter_node/bandwidth",
                 [](const Context& c) { return c.cluster.network_tier().bandwidth_bytes_per_second; },
                 [](Context& c, double v) { c.cluster.network_tier().bandwidth_bytes_per_second = v; },
                 100, false, "GB/s", 1e9, true});
  out.push_back({"/cluster/intra_node/bandwidth",
                 [](const Context& c) { return c.cluster.node_tier().bandwidth_bytes_per_second; },
                 [](Context& c, double v) { c.cluster.node_tier().bandwidth_bytes_per_second = v; },
                 100, false, "GB/s", 1e9, true});
  if (ctx.workload.kind == WorkloadKind::training) {
    out.push_back({"/model/seq_len",
                   [](const Context& c) { return static_cast<double>(c.model.seq_len); },
                   [](Context& c, double v) { c.model.seq_len = static_cast<std::int64_t>(v); },
                   64, true, "tokens", 1, false, seq_len_step});
    out.push_back({"/workload/global_batch_tokens",
                   [](const Context& c) { return c.workload.training.global_batch_tokens; },
                   [](Context& c, double v) { c.workload.training.global_batch_tokens = v; },
                   100, true, "tokens", 1, false, global_batch_step});
  } else {
    serving_inputs(ctx.workload.serving, out);
  }
  out.push_back({"/cluster/gpu/memory",
                 [](const Context& c) { return c.cluster.gpu.memory_bytes; },
                 [](Context& c, double v) { c.cluster.gpu.memory_bytes = v; }, 8, false, "GiB",
                 gib});
  return out;
}


/// Scan from the scenario's value in factor-2 steps (one direction) up to `range`, then
/// bisect the first bracket where the recommendation differs from `best`: over a candidate
/// set where the input moves every plan monotonically (CandidateProbe), else with a whole
/// search per probe.
std::optional<Threshold> scan(const Context& base, const Input& in, const Plan& best,
                              bool downward, ScanBudget& budget, double base_fastest,
                              Bisection bisection) {
  const double start = in.get(base);
  const double limit = downward ? start / in.range : start * in.range;
  // Integer inputs move in whole steps: the next multiple of `grain` (Input::step) toward
  // `limit` (or past it upward, so that the range is covered), never below one step.
  const double grain = in.step ? static_cast<double>(in.step(base, best)) : 1.0;
  auto whole = [&](double x, bool down) {
    return down ? std::floor(x / grain) * grain : std::ceil(x / grain) * grain;
  };
  auto at = [&](double v) {
    Context ctx = base;
    in.set(ctx, v);
    return budget.equals(ctx);
  };
  auto valid = [&](double v) {
    if (in.integer && v < grain) return false;
    if (in.pointer == "/cluster/gpu/memory" && v <= base.cluster.gpu.reserve_bytes) return false;
    return v > 0;
  };
  const Monotone kind =
      bisection == Bisection::candidates ? monotone_kind(base, in) : Monotone::none;
  // Candidates for the bracket [worse, better] (values of the input), where the fastest time
  // at `worse` is known; none where it is not (nothing fits there) or too many qualify.
  std::optional<CandidateProbe> probe;
  auto make_probe = [&](double better, double worse, double worse_fastest) {
    if (kind == Monotone::none || !std::isfinite(worse_fastest)) return;
    Context at_better = base;
    in.set(at_better, better);
    const double within = band_limit(worse_fastest) * (1.0 + 1e-9);  // rounding's slack
    if (auto candidates = budget.within(at_better, within)) {
      probe.emplace(base, in, kind, better, worse, worse_fastest, std::move(*candidates));
    }
  };
  auto answer_at = [&](double v) { return probe ? probe->at(v, budget) : at(v); };
  // A training input that changes the space itself (no candidate set serves it): each probe
  // asks only whether `best` is still one of the equals (ScanBudget::keeps, two pruned
  // searches instead of the band's), and the plan that takes over is looked up once, at the
  // flip point. The factor-2 steps of a downward bandwidth or memory scan ask the same, and
  // list the band (its fastest time starts the candidate set) only at the step that flips.
  // The reference (Bisection::whole_searches) lists the band at every probe.
  const bool training = base.workload.kind == WorkloadKind::training;
  const bool decide = bisection == Bisection::candidates && kind == Monotone::none && training;
  const bool decide_steps = decide || (kind != Monotone::none && downward);
  double answer_seconds = std::numeric_limits<double>::infinity();  // at the last keeps_at
  auto keeps_at = [&](double v) {
    Context ctx = base;
    in.set(ctx, v);
    return budget.keeps(ctx, base, best, &answer_seconds);
  };
  // Upward, the start is the worse end of the whole range: one candidate set serves the
  // factor-2 steps and the bisection. Downward the far end's fastest time is not known.
  if (!downward) make_probe(limit, start, base_fastest);
  double same_fastest = base_fastest;  // the fastest seconds per token at same_value
  double same_value = start;
  double v = start;
  for (int step = 0; step < 64; ++step) {
    double next = downward ? v / 2 : v * 2;
    if (downward ? next < limit : next > limit) next = limit;
    if (in.integer) next = whole(next, downward);
    if (next == v || !valid(next)) return std::nullopt;
    Answer plans;
    bool kept = false;
    if (!probe && decide_steps) {
      kept = keeps_at(next);
      // A bandwidth step down that flips: every plan's time only rose from same_value, and
      // the fastest at `next` is below the answer's own time there, so the plans within the
      // band of that time at same_value hold the answer at `next` and every probe of the
      // bracket (CandidateProbe); the first probe, at `next`, narrows them to the band of the
      // exact fastest. One search at same_value instead of two (the band at `next`, then
      // the candidates for the band of its fastest).
      if (!kept && kind == Monotone::bandwidth) {
        make_probe(same_value, next, answer_seconds);
        if (probe) plans = probe->at(next, budget);
      }
      if (!kept && !decide && !probe) plans = at(next);
    } else {
      plans = answer_at(next);
      kept = same(base, plans, best);
    }
    if (!kept) {
      // Bisect between same_value (same answer) and next (different).
      double lo = same_value, hi = next;
      std::optional<Plan> other = first(plans);
      if (probe) {
        probe->narrowed(next, lo, hi);
      } else {
        const double worse = std::min(lo, hi);
        make_probe(std::max(lo, hi), worse, worse == next ? plans.fastest_seconds : same_fastest);
      }
      for (int i = 0; i < 40; ++i) {
        const double mid = in.integer ? whole((lo + hi) / 2, true) : std::sqrt(lo * hi);
        if (in.integer ? std::abs(hi - lo) <= grain : std::abs(hi / lo - 1) < 1e-3) break;
        if (mid == lo || mid == hi) break;
        if (decide) {
          (keeps_at(mid) ? lo : hi) = mid;
          continue;
        }
        const Answer mp = answer_at(mid);
        if (same(base, mp, best)) {
          lo = mid;
        } else {
          hi = mid;
          other = first(mp);
        }
        if (probe) probe->narrowed(mid, lo, hi);
      }
      if (decide) other = first(at(hi));
      Threshold t;
      t.parameter = in.pointer;
      t.base_value = start;
      t.value = hi;
      t.side = downward ? ThresholdSide::below : ThresholdSide::above;
      t.plan = other;
      t.gpus_per_node = base.cluster.gpus_per_node;
      t.unit = in.unit;
      t.unit_scale = in.unit_scale;
      return t;
    }
    if (probe) probe->narrowed(next, next, limit);
    same_value = next;
    same_fastest = plans.fastest_seconds;
    v = next;
    if (v == limit) return std::nullopt;
  }
  return std::nullopt;
}

/// GPUs per node, with the world size kept: the nearest divisor of the world below (or above)
/// the scenario's at which the recommendation changes. Like the other scans it stays near the
/// scenario's value — the 8 nearest divisors each way, within a factor of 64 — so a world
/// with hundreds of divisors cannot make it rerun the search hundreds of times.
std::optional<Threshold> node_size(const Context& base, const Plan& best, bool downward,
                                   ScanBudget& budget, Bisection bisection) {
  const std::int64_t world = world_size(base.cluster);
  const std::vector<std::int64_t> sizes = divisors(world);
  const std::int64_t now = base.cluster.gpus_per_node;
  std::vector<std::int64_t> order;
  for (std::int64_t d : sizes) {
    const bool near = downward ? d < now && d * 64 >= now : d > now && d <= now * 64;
    if (near) order.push_back(d);
  }
  if (downward) std::reverse(order.begin(), order.end());
  constexpr std::size_t max_probes = 8;
  if (order.size() > max_probes) order.resize(max_probes);
  for (std::int64_t d : order) {
    Context ctx = base;
    ctx.cluster.gpus_per_node = d;
    ctx.cluster.nodes = world / d;
    // As scan's `decide`: whether `best` stays, then (once) the plan that takes over.
    const bool decide = bisection == Bisection::candidates &&
                        base.workload.kind == WorkloadKind::training;
    Answer plans;
    if (decide ? !budget.keeps(ctx, ctx, best) : !same(ctx, plans = budget.equals(ctx), best)) {
      if (decide) plans = budget.equals(ctx);
      Threshold t;
      t.parameter = "/cluster/gpus_per_node";
      t.base_value = static_cast<double>(now);
      t.value = static_cast<double>(d);
      t.side = downward ? ThresholdSide::below : ThresholdSide::above;
      t.plan = first(plans);
      t.gpus_per_node = d;
      t.world_kept = true;
      return t;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> threshold_parameters(const Context& ctx) {
  std::vector<std::string> out;
  for (const Input& in : inputs(ctx)) out.push_back(in.pointer);
  out.push_back("/cluster/gpus_per_node");
  return out;
}

std::vector<Threshold> find_thresholds(const Context& ctx, const Plan& best, unsigned threads,
                                       std::vector<ScanGivenUp>* not_searched,
                                       std::int64_t search_work, Bisection bisection,
                                       double known_fastest_seconds) {
  // Every scan is an independent task (a pure function of the context); tasks run on a small
  // pool and each writes its own slot, and the slots are read in task order, so the output is
  // the serial result whatever the thread count and timing.
  const std::vector<Input> scanned = inputs(ctx);
  const std::size_t tasks = 2 * scanned.size() + 2;
  std::vector<char> gave_up(tasks, 0);
  const bool hopeless = search_work > threshold_search_limit;
  // The fastest seconds per token at the scenario's own values, where a scan's first bracket
  // starts (CandidateProbe): the caller's own search found it (SearchResult::fastest_seconds),
  // or one search here, shared by every scan.
  double base_fastest = std::numeric_limits<double>::infinity();
  const bool wanted =
      ctx.workload.kind == WorkloadKind::training && bisection == Bisection::candidates;
  if (wanted && known_fastest_seconds > 0) {
    base_fastest = known_fastest_seconds;
  } else if (wanted && !hopeless) {
    try {
      ScanBudget budget;
      base_fastest = budget.equals(ctx).fastest_seconds;
    } catch (const OutOfBudget&) {
      // left infinite: the scans bisect with whole searches
    }
  }
  auto run = [&](std::size_t i) -> std::optional<Threshold> {
    const bool downward = i % 2 == 0;
    if (hopeless) {
      gave_up[i] = 1;
      return std::nullopt;
    }
    ScanBudget budget;
    try {
      if (i / 2 < scanned.size()) {
        return scan(ctx, scanned[i / 2], best, downward, budget, base_fastest, bisection);
      }
      return node_size(ctx, best, downward, budget, bisection);
    } catch (const OutOfBudget&) {
      gave_up[i] = 1;
      return std::nullopt;
    }
  };
  std::vector<std::optional<Threshold>> found(tasks);
  for_each_task(tasks, threads, [&](std::size_t i) { found[i] = run(i); });
  std::vector<Threshold> out;
  for (std::size_t i = 0; i < tasks; ++i) {
    if (found[i]) out.push_back(std::move(*found[i]));
    if (gave_up[i] && not_searched) {
      not_searched->push_back(
          {i / 2 < scanned.size() ? scanned[i / 2].pointer : "/cluster/gpus_per_node",
           i % 2 == 0 ? ThresholdSide::below : ThresholdSide::above});
    }
  }
  return out;
}

}  // namespace planner

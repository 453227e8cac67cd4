#include "planner/search/disaggregated.hpp"

#include <algorithm>
#include <numeric>

#include "planner/search/search.hpp"

namespace planner {

bool disaggregation_applies(const Context& ctx) noexcept {
  const Serving& w = ctx.workload.serving;
  return ctx.workload.kind == WorkloadKind::serving && w.output_tokens > 0 &&
         (w.concurrency > 0 || w.request_rate_per_second > 0) && world_size(ctx.cluster) <= 1024;
}

std::vector<DisaggregatedTime> search_disaggregated(const Context& ctx) {
  std::vector<DisaggregatedTime> out;
  if (!disaggregation_applies(ctx)) return out;
  const Model& m = ctx.model;
  const std::int64_t world = world_size(ctx.cluster);
  std::vector<std::int64_t> tps;
  for (std::int64_t tp : divisors(ctx.cluster.gpus_per_node)) {
    if (m.heads % tp == 0 && (m.kv_heads % tp == 0 || tp % m.kv_heads == 0)) tps.push_back(tp);
  }
  for (std::int64_t tp_p : tps) {
    for (std::int64_t tp_d : tps) {
      for (std::int64_t n_p = 1; n_p * tp_p < world; ++n_p) {
        const std::int64_t rest = world - n_p * tp_p;
        if (rest % tp_d != 0) continue;
        const Disaggregated d{tp_p, n_p, tp_d, rest / tp_d};
        if (ctx.workload.serving.request_rate_per_second <= 0 &&
            d.decode_engines > ctx.workload.serving.concurrency) {
          continue;  // an idle decode engine: a smaller pool serves the same users
        }
        const DisaggregatedTime t = disaggregated_time(m, ctx.cluster, ctx.workload.serving, d,
                                                       ctx.flops_per_second);
        if (t.fits) out.push_back(t);
      }
    }
  }
  return out;
}

std::vector<std::size_t> pareto_front(const std::vector<double>& tokens_per_gpu,
                                      const std::vector<double>& per_token) {
  std::vector<std::size_t> order(per_token.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (per_token[a] != per_token[b]) return per_token[a] < per_token[b];
    if (tokens_per_gpu[a] != tokens_per_gpu[b]) return tokens_per_gpu[a] > tokens_per_gpu[b];
    return a < b;
  });
  std::vector<std::size_t> front;
  double best = -1;
  for (std::size_t i : order) {
    if (tokens_per_gpu[i] > best) {
      front.push_back(i);
      best = tokens_per_gpu[i];
    }
  }
  return front;
}

}  // namespace planner

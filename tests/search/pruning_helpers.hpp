#pragma once
// What the search's speed-up tests share (test_pruning.cpp, test_search_reuse.cpp): random
// small scenarios, a cycle of search filters, and the checks that two searches answer alike.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/search/search.hpp"

namespace planner::pruning_test {

/// A small random scenario (at most 32 GPUs). Ranges span the cases where state memory,
/// activation memory or the network binds, with the inter-node tier sometimes the faster one.
class RandomScenario {
 public:
  explicit RandomScenario(std::uint64_t seed) : rng_(seed) {}

  Context next(bool serving) {
    Context ctx;
    Model& m = ctx.model;
    const std::int64_t heads_choices[] = {4, 8, 12, 16, 32};
    m.heads = pick(heads_choices);
    const std::int64_t head_dims[] = {32, 64, 128};
    m.hidden = m.heads * pick(head_dims);
    std::vector<std::int64_t> kv;
    for (std::int64_t d = 1; d <= m.heads; ++d) {
      if (m.heads % d == 0) kv.push_back(d);
    }
    m.kv_heads = kv[index(kv.size())];
    m.layers = integer(1, 40);
    m.gated_mlp = coin();
    m.ffn_hidden = m.gated_mlp ? (8 * m.hidden / 3 + 63) / 64 * 64 : 4 * m.hidden;
    m.vocab = integer(500, 64000);
    m.tied_embeddings = coin();
    const std::int64_t seqs[] = {256, 1024, 2048, 3000, 4096, 8192, 32768};
    m.seq_len = pick(seqs);

    Cluster& c = ctx.cluster;
    const std::int64_t node_sizes[] = {1, 2, 4, 8};
    c.gpus_per_node = pick(node_sizes);
    const std::int64_t node_counts[] = {1, 2, 3, 4};
    c.nodes = pick(node_counts);
    c.gpu.memory_bytes = log_uniform(2, 192) * gib;
    c.gpu.reserve_bytes = coin() ? 0.0 : std::floor(0.1 * c.gpu.memory_bytes);
    c.gpu.memory_bandwidth_bytes_per_second = log_uniform(1e12, 6e12);
    c.gpu.flops_per_second = log_uniform(50e12, 1000e12);
    c.node_tier() = {log_uniform(50e9, 900e9), log_uniform(1e-6, 20e-6), 0, true, "intra_node"};
    c.network_tier() = {log_uniform(5e9, 400e9), log_uniform(1e-6, 30e-6), 0, false, "inter_node"};
    ctx.flops_per_second = c.gpu.flops_per_second;

    if (serving) {
      ctx.workload.kind = WorkloadKind::serving;
      ctx.workload.serving.batch = integer(1, 64);
      ctx.workload.serving.context_tokens = integer(128, 16384);
      ctx.workload.serving.slo_per_token_seconds = log_uniform(1e-3, 100e-3);
      ctx.workload.serving.memory_bandwidth_efficiency = 0.7;
    } else {
      const double world = static_cast<double>(c.nodes * c.gpus_per_node);
      ctx.workload.training.global_batch_tokens =
          std::round(log_uniform(1, 8 * world)) * static_cast<double>(m.seq_len);
    }
    return ctx;
  }

 private:
  bool coin() { return (rng_() & 1) == 1; }
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  template <std::size_t n>
  std::int64_t pick(const std::int64_t (&values)[n]) {
    return values[index(n)];
  }
  double log_uniform(double lo, double hi) {
    const double u = static_cast<double>(rng_() >> 11) / 9007199254740992.0;  // [0, 1)
    return lo * std::pow(hi / lo, u);
  }
  std::mt19937_64 rng_;
};

inline bool same_plan(const Plan& a, const Plan& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep &&
         a.zero == b.zero &&
         a.recompute == b.recompute && a.flash_attention == b.flash_attention &&
         a.sequence_parallel == b.sequence_parallel && a.micro_batch == b.micro_batch &&
         a.grad_accum == b.grad_accum && a.placement == b.placement;
}

/// The restrictions the explanation searches with, in turn.
inline SearchFilter filter_for(int i) {
  SearchFilter f;
  switch (i % 7) {
    case 1: f.pin(Axis::tp, 1); f.pin(Axis::pp, 1); f.pin(Axis::cp, 1); break;  // pure dp
    case 2: f.require(Axis::pp); break;             // with pipeline stages
    case 3: f.require(Axis::cp); break;             // with context parallelism
    case 4: f.zero = 3; break;
    case 5: f.pin(Axis::tp, 2); f.tp_inside_node = true; break;
    case 6: f.recompute = Recompute::full; break;
    default: break;                                 // unrestricted
  }
  return f;
}

inline void require_same_ranking(const SearchResult& pruned, const SearchResult& full) {
  REQUIRE(pruned.ranked.size() == full.ranked.size());
  REQUIRE(pruned.keys.size() == full.keys.size());
  for (std::size_t i = 0; i < full.ranked.size(); ++i) {
    INFO("rank " << i + 1);
    CHECK(same_plan(pruned.ranked[i].plan, full.ranked[i].plan));
    CHECK_FALSE(pruned.keys[i] < full.keys[i]);
    CHECK_FALSE(full.keys[i] < pruned.keys[i]);
    CHECK(pruned.ranked[i].memory.total_bytes() == full.ranked[i].memory.total_bytes());
    CHECK(pruned.ranked[i].training.tokens_per_second ==
          full.ranked[i].training.tokens_per_second);
    CHECK(pruned.ranked[i].serving.per_token_seconds == full.ranked[i].serving.per_token_seconds);
  }
}

/// The ranking, and the accounting (counts and closest rejections) too.
inline void require_same(const SearchResult& pruned, const SearchResult& full) {
  require_same_ranking(pruned, full);
  CHECK(pruned.evaluated == full.evaluated);
  CHECK(pruned.feasible == full.feasible);
  CHECK(pruned.rejected_by_kind == full.rejected_by_kind);
  REQUIRE(pruned.rejected.size() == full.rejected.size());
  for (std::size_t i = 0; i < full.rejected.size(); ++i) {
    CHECK(same_plan(pruned.rejected[i].plan, full.rejected[i].plan));
    CHECK(pruned.rejected[i].kind == full.rejected[i].kind);
    CHECK(pruned.rejected[i].reason == full.rejected[i].reason);
    CHECK(pruned.rejected[i].excess == full.rejected[i].excess);
  }
}

}  // namespace planner::pruning_test

// What one search leaves for the next on the same thread (src/search/enumerate.hpp Scratch:
// its pools, its rows' compute terms, the counts that order a row's two checks). A winner
// search after another on a different model, GPU or rate must answer as the exhaustive
// search does: anything of the first read by the second would be bounds of another machine,
// and bounds too high prune the true winner. (Written for a cache of compute terms kept
// between searches, tried and taken out: it saved instructions but no time.)
#include <catch2/catch.hpp>

#include <cstdint>

#include "planner/io/context.hpp"
#include "planner/search/search.hpp"
#include "pruning_helpers.hpp"

using namespace planner;
using namespace planner::pruning_test;

namespace {

/// A context whose compute costs differ from `ctx`'s in one of four ways (`which`): a quarter
/// of the rate, a quarter of the elementwise bandwidth, attention at a fifth of the GEMM rate,
/// or the sequence twice as long. Every one makes some compute term larger.
Context slower(Context ctx, int which) {
  switch (which % 4) {
    case 0:
      ctx.flops_per_second *= 0.25;
      break;
    case 1:
      ctx.cluster.gpu.elementwise_bytes_per_second =
          0.25 * ctx.cluster.gpu.memory_bandwidth_bytes_per_second;
      break;
    case 2:
      ctx.cluster.gpu.attention_rate = {0.2, 0};
      break;
    default:
      ctx.model.seq_len *= 2;
      ctx.workload.training.global_batch_tokens *= 2;
      break;
  }
  return ctx;
}

}  // namespace

TEST_CASE("A winner search after one on a slower machine or model answers as the exhaustive "
          "search",
          "[pruning]") {
  RandomScenario random(20261207);
  std::int64_t found = 0, moe = 0;
  for (int i = 0; i < 400; ++i) {
    Context ctx = random.next(false);
    if (i % 2 == 1) {  // half of them with routed experts (the expert traffic bounded first)
      ctx.model.moe.experts = std::int64_t{4} << (i % 3);
      ctx.model.moe.top_k = 2;
      ctx.model.moe.expert_ffn_hidden = ctx.model.ffn_hidden / 2;
      ++moe;
    }
    ctx.cluster.gpu.elementwise_bytes_per_second = ctx.cluster.gpu.memory_bandwidth_bytes_per_second;
    SearchOptions options;
    options.accounting = false;
    INFO("scenario " << i << ", slower by way " << i % 4);
    // The first search fills the kept terms with the slower machine's (or model's); the second,
    // on `ctx`, must not read them.
    (void)search(slower(ctx, i), options);
    const SearchResult winner = search(ctx, options);
    // And the same search again, with the terms of `ctx` kept: the same answer.
    const SearchResult again = search(ctx, options);
    options.accounting = true;
    options.prune = false;
    const SearchResult full = search(ctx, options);
    require_same_ranking(winner, full);
    require_same_ranking(again, full);
    found += full.found() ? 1 : 0;
  }
  CHECK(found > 200);  // not vacuous: most of them have a plan to rank
  CHECK(moe == 200);
}

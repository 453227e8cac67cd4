// Speed-ups that must not change a result. The pruned search (SearchOptions::prune, the
// default) against the exhaustive one on random small scenarios: the same ranked list, rank
// keys, counts and closest rejections; the winner-only search (accounting off) with the same
// ranked list. The pruning argument is in src/search.cpp and docs/performance.md §Pruning;
// this is its check on cases nobody chose by hand. Also: tree_depth in integers, and the
// threshold scans on threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/model/collectives.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/search/search.hpp"
#include "planner/explain/thresholds.hpp"
#include "planner/report/explain_text.hpp"
#include "pruning_helpers.hpp"

using namespace planner;
using namespace planner::pruning_test;

TEST_CASE("Pruned, winner-only and exhaustive training searches rank identically on random "
          "scenarios",
          "[pruning]") {
  RandomScenario random(20240611);
  const std::size_t keeps[] = {1, 2, 5, 10};
  std::int64_t timed_pruned = 0, timed_full = 0, found = 0;
  for (int i = 0; i < 2000; ++i) {
    const Context ctx = random.next(false);
    SearchOptions options;
    options.keep = keeps[i % 4];
    options.filter = filter_for(i / 4);
    INFO("scenario " << i << ": " << ctx.model.layers << " layers, h " << ctx.model.hidden
                     << ", s " << ctx.model.seq_len << ", " << ctx.cluster.nodes << " x "
                     << ctx.cluster.gpus_per_node << " GPUs, keep " << options.keep);
    options.prune = true;
    const SearchResult pruned = search(ctx, options);
    options.accounting = false;
    const SearchResult winner = search(ctx, options);
    options.accounting = true;
    options.prune = false;
    const SearchResult full = search(ctx, options);
    require_same(pruned, full);
    require_same_ranking(winner, full);
    timed_pruned += pruned.timed;
    timed_full += full.timed;
    found += full.found() ? 1 : 0;
  }
  // Not vacuous: most scenarios have plans to rank (1658 of the 2000 when written), and
  // pruning skipped most time evaluations (127,530 of 378,479 once the exhaustive search too
  // skips the rank orders no framework runs with a variant's ZeRO stage; 266,397 of 1,669,581
  // before, when it timed them).
  CHECK(found > 1000);
  CHECK(timed_pruned * 2 < timed_full);
}

TEST_CASE("A search for a plan faster than a limit answers as the unrestricted one when its "
          "fastest is faster, and with nothing faster otherwise",
          "[pruning]") {
  // SearchOptions::faster_than_seconds (plan_report.cpp asks whether any plan outside the
  // validated envelope beats the recommendation): limits on either side of each scenario's
  // fastest plan, from a fifth slower to a fifth faster.
  RandomScenario random(20261207);
  const double factors[] = {0.8, 0.99, 1.0, 1.001, 1.01, 1.2};
  int answered = 0, refused = 0;
  for (int i = 0; i < 300; ++i) {
    const Context ctx = random.next(false);
    SearchOptions options;
    options.keep = 1;
    options.accounting = false;
    options.filter = filter_for(i);
    const SearchResult full = search(ctx, options);
    if (!full.found()) continue;
    // The answer is in the band of the fastest plan, so the fastest is at most its time.
    const double answer_seconds = 1.0 / full.ranked.front().training.tokens_per_second;
    for (const double f : factors) {
      SearchOptions limited = options;
      limited.faster_than_seconds = f * answer_seconds;
      const SearchResult r = search(ctx, limited);
      INFO("scenario " << i << ", limit " << f << " x the answer's time");
      if (f > 1.0) {
        // The fastest plan is faster than the limit: the same answer.
        require_same_ranking(r, full);
        ++answered;
      } else {
        // Whatever comes back is no faster than the limit (the caller reports nothing).
        if (r.found()) {
          CHECK(1.0 / r.ranked.front().training.tokens_per_second >=
                limited.faster_than_seconds * (1.0 - 1e-12));
        }
        ++refused;
      }
    }
  }
  CHECK(answered > 300);
  CHECK(refused > 100);
}

TEST_CASE("A decision search finds a plan faster than a limit by more than the band exactly "
          "when the exhaustive search's fastest plan is",
          "[pruning]") {
  // SearchOptions::decide_below_seconds (the threshold scans' "is the recommendation still one
  // of the equals", explain/threshold_probe.hpp): for limits around each scenario's fastest
  // time, a plan comes back exactly when band_limit(fastest) < limit, where the fastest is the
  // exhaustive search's (every plan timed), and what comes back is itself below the limit.
  RandomScenario random(20261208);
  const double factors[] = {0.9, 1.0, 1.0099, 1.0101, 1.02, 1.5};
  int yes = 0, no = 0;
  for (int i = 0; i < 300; ++i) {
    Context ctx = random.next(false);
    ctx.constraints.trusted = i % 3 == 1;
    SearchOptions options;
    options.keep = 1;
    options.filter = filter_for(i);
    options.prune = false;
    options.whole_band = true;  // for fastest_seconds: the ranked answer is the band's simplest
    const SearchResult full = search(ctx, options);
    if (!full.found()) continue;
    const double fastest = full.fastest_seconds;
    // The pruned searches report the same fastest time without listing the band (plan's
    // thresholds start from the recommendation's search's, SearchResult::fastest_seconds).
    SearchOptions ranked;
    ranked.keep = 1 + static_cast<std::size_t>(i % 5);
    ranked.filter = options.filter;
    CHECK(search(ctx, ranked).fastest_seconds == fastest);
    ranked.accounting = false;
    CHECK(search(ctx, ranked).fastest_seconds == fastest);
    for (const double f : factors) {
      SearchOptions decide;
      decide.keep = 1;
      decide.accounting = false;
      decide.filter = options.filter;
      decide.decide_below_seconds = f * fastest;
      const SearchResult r = search(ctx, decide);
      INFO("scenario " << i << ", limit " << f << " x the fastest time");
      const bool expected = band_limit(fastest) < decide.decide_below_seconds;
      REQUIRE(r.found() == expected);
      if (r.found()) {
        CHECK(band_limit(1.0 / r.ranked.front().training.tokens_per_second) <
              decide.decide_below_seconds);
      }
      ++(expected ? yes : no);
    }
  }
  CHECK(yes > 300);
  CHECK(no > 300);
}

TEST_CASE("Winner-only and exhaustive searches rank identically under each framework's rules",
          "[pruning]") {
  // The winner enumeration keeps a micro-batch only when a variant the settings allow fits
  // (search.cpp fitting_micro_batches): under Megatron-LM's rules that is ZeRO-1 at most,
  // under torchtitan's a pipeline is ZeRO-2 with unsharded accumulation, and the trusted
  // envelope drops more. Each framework's space, with and without pipelining, must rank as
  // the exhaustive search does.
  RandomScenario random(20261206);
  const Framework frameworks[] = {Framework::megatron, Framework::torchtitan,
                                  Framework::deepspeed, Framework::unrestricted, Framework::any};
  std::int64_t found = 0;
  for (int i = 0; i < 500; ++i) {
    Context ctx = random.next(false);
    ctx.constraints.framework = frameworks[i % 5];
    ctx.constraints.trusted = i % 7 == 3;
    if (ctx.constraints.framework == Framework::torchtitan && i % 2 == 0) {
      ctx.workload.training.unsharded_gradient_accumulation = true;
    }
    SearchOptions options;
    options.keep = 1 + static_cast<std::size_t>(i % 4);
    options.filter = filter_for(i / 5);
    INFO("scenario " << i << ", framework " << to_string(ctx.constraints.framework));
    options.accounting = false;
    const SearchResult winner = search(ctx, options);
    options.accounting = true;
    options.prune = false;
    const SearchResult full = search(ctx, options);
    require_same_ranking(winner, full);
    found += full.found() ? 1 : 0;
  }
  CHECK(found > 200);  // not vacuous: most of them have plans to rank
}

TEST_CASE("Pruned and exhaustive searches agree on random mixture-of-experts scenarios",
          "[pruning][moe]") {
  // The same check with routed experts and the ep axis (docs/moe.md): FLOPs, the all-to-all
  // and the expert gradients' traffic keep the bounds' monotonicity.
  RandomScenario random(20261130);
  std::int64_t with_ep = 0;
  for (int i = 0; i < 300; ++i) {
    Context ctx = random.next(false);
    Moe& moe = ctx.model.moe;
    moe.experts = std::int64_t{4} << (i % 3);
    moe.top_k = 1 + i % 2;
    moe.expert_ffn_hidden = ctx.model.ffn_hidden / (1 + i % 4);
    moe.shared_experts = i % 5 == 0 ? 1 : 0;
    moe.first_dense_layers = i % 3 == 0 ? std::min<std::int64_t>(1, ctx.model.layers - 1) : 0;
    moe.imbalance = 1.0 + 0.1 * (i % 4);
    moe.overlap_all_to_all = i % 2 == 1;
    SearchOptions options;
    options.keep = 1 + static_cast<std::size_t>(i % 5);
    options.filter = filter_for(i / 3);
    INFO("scenario " << i);
    options.prune = true;
    const SearchResult pruned = search(ctx, options);
    options.accounting = false;  // the winner search, which bounds the expert traffic first
    const SearchResult winner = search(ctx, options);
    options.accounting = true;
    options.prune = false;
    const SearchResult full = search(ctx, options);
    require_same(pruned, full);
    require_same_ranking(winner, full);
    if (full.found() && full.ranked.front().plan.ep > 1) ++with_ep;
  }
  CHECK(with_ep > 10);  // not vacuous: ep > 1 wins in some of them
}

TEST_CASE("Pruned and exhaustive serving searches agree on random scenarios", "[pruning]") {
  RandomScenario random(7);
  for (int i = 0; i < 100; ++i) {
    const Context ctx = random.next(true);
    SearchOptions options;
    options.keep = 1 + static_cast<std::size_t>(i % 5);
    options.prune = true;
    const SearchResult pruned = search(ctx, options);
    options.prune = false;
    const SearchResult full = search(ctx, options);
    INFO("scenario " << i);
    require_same(pruned, full);
  }
}

TEST_CASE("Ties within one time step are decided as without pruning", "[pruning]") {
  // Two nodes of 4 with equal tiers: every placement of a plan has the same time, so whole
  // families of plans share a time step and only the simplicity keys separate them. The
  // pruning bound may discard only plans whose time step is strictly worse than the last
  // kept one's; with keep = 10 the list is full of same-step plans.
  Context ctx;
  ctx.model.layers = 8;
  ctx.model.hidden = 1024;
  ctx.model.heads = 8;
  ctx.model.kv_heads = 8;
  ctx.model.ffn_hidden = 4096;
  ctx.model.vocab = 32000;
  ctx.model.seq_len = 2048;
  ctx.cluster.nodes = 2;
  ctx.cluster.gpus_per_node = 4;
  ctx.cluster.gpu.memory_bytes = 80 * gib;
  ctx.cluster.gpu.memory_bandwidth_bytes_per_second = 2e12;
  ctx.cluster.gpu.flops_per_second = 100e12;
  ctx.cluster.node_tier() = {100e9, 5e-6, 0, true, "intra_node"};
  ctx.cluster.network_tier() = {100e9, 5e-6, 0, false, "inter_node"};
  ctx.flops_per_second = 100e12;
  ctx.workload.training.global_batch_tokens = 64 * 2048.0;
  SearchOptions options;
  options.keep = 10;
  const SearchResult pruned = search(ctx, options);
  options.prune = false;
  const SearchResult full = search(ctx, options);
  options.prune = true;
  options.accounting = false;
  const SearchResult winner = search(ctx, options);
  REQUIRE(full.ranked.size() == 10);
  CHECK(full.keys.front().time == full.keys.back().time);
  require_same(pruned, full);
  require_same_ranking(winner, full);
}

TEST_CASE("tree_depth counts in integers exactly what ceil(log2 n) gives, for every world size",
          "[pruning][speed]") {
  // collectives.hpp computes a tree's depth as the bit width of n − 1 instead of
  // ceil(log2(n)) (a speed-up of the time model that must not change a result): compare
  // the two for every group size up to the 2^24 GPUs a scenario may have.
  std::int64_t differ = 0;
  for (std::int64_t n = 1; n <= (std::int64_t{1} << 24); ++n) {
    if (tree_depth(n) != std::ceil(std::log2(static_cast<double>(n)))) ++differ;
  }
  CHECK(differ == 0);
}

TEST_CASE("Threshold scans on threads give the serial result", "[pruning][speed]") {
  // find_thresholds runs its scans on a pool; each writes its own slot and the slots are read
  // in order, so 2 or 8 threads must return what 1 thread does, field for field.
  for (const char* name : {"b.json", "d.json", "llama3-405b.json"}) {
    INFO(name);
    const Context ctx =
        make_context(load_scenario_file(std::string(PLANNER_SOURCE_DIR) + "/scenarios/" + name));
    const std::optional<Plan> best = recommend(ctx);
    REQUIRE(best);
    const std::vector<Threshold> serial = find_thresholds(ctx, *best, 1);
    CHECK_FALSE(serial.empty());
    for (unsigned threads : {2u, 8u}) {
      const std::vector<Threshold> parallel = find_thresholds(ctx, *best, threads);
      REQUIRE(parallel.size() == serial.size());
      for (std::size_t i = 0; i < serial.size(); ++i) {
        CHECK(parallel[i].parameter == serial[i].parameter);
        CHECK(parallel[i].side == serial[i].side);
        CHECK(parallel[i].value == serial[i].value);
        CHECK(parallel[i].base_value == serial[i].base_value);
        REQUIRE(parallel[i].plan.has_value() == serial[i].plan.has_value());
        if (serial[i].plan) CHECK(same_plan(*parallel[i].plan, *serial[i].plan));
        CHECK(threshold_summary(ctx, parallel[i]) == threshold_summary(ctx, serial[i]));
      }
    }
  }
}

TEST_CASE("Distinct placements keep one order for every assignment of tiers, ep's included",
          "[pruning]") {
  // The search times one order per distinct tuple of group tiers (search.hpp); ep is folded
  // into dp·cp rather than placed, so its tier (model/placement.hpp, ep_inside_domain) must
  // count too. Every tier tuple that some order of the axes gives must have a representative.
  for (const std::int64_t per_node : {2, 4, 8}) {
    Cluster c;
    c.nodes = 16 / per_node;
    c.gpus_per_node = per_node;
    for (const std::int64_t tp : {1, 2}) {
      for (const std::int64_t cp : {1, 2, 4}) {
        for (const std::int64_t ep : {2, 4, 8}) {
          Plan base;
          base.tp = tp;
          base.cp = cp;
          base.pp = 2;
          base.dp = 16 / (tp * cp * 2);
          base.ep = ep;
          if (base.dp < 1 || (base.dp * base.cp) % ep != 0) continue;
          auto tuple = [&](const Placement& order) {
            Plan p = base;
            p.placement = order;
            std::vector<std::size_t> t;
            for (const AxisInfo& row : axes) t.push_back(axis_tier(p, c, row.axis));
            return t;
          };
          std::vector<std::vector<std::size_t>> every, kept;
          Placement order = default_placement;
          std::sort(order.begin(), order.end());
          do {
            every.push_back(tuple(order));
          } while (std::next_permutation(order.begin(), order.end()));
          for (const Placement& p : distinct_placements(base, c)) kept.push_back(tuple(p));
          std::sort(every.begin(), every.end());
          every.erase(std::unique(every.begin(), every.end()), every.end());
          std::sort(kept.begin(), kept.end());
          INFO(per_node << " per node, tp " << tp << ", cp " << cp << ", ep " << ep);
          CHECK(kept == every);
        }
      }
    }
  }
}

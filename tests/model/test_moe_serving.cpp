// Expert parallelism in serving (issue 10; docs/moe.md §6): the experts a decode step touches,
// the dispatch and combine all-to-all, the ledger under ep against tp, and the search, each
// figure worked by hand from the Mixtral-8x7B preset's shape.

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/serving/expert_serving.hpp"

using namespace planner;
using nlohmann::json;

namespace {

const std::string serving_dir = PLANNER_SOURCE_DIR;
const std::string mixtral_serving = "scenarios/mixtral-8x7b-serving-h100.json";

/// The bundled Mixtral serving scenario (8 x H100, 32 concurrent requests, 1024 in / 256
/// out), on `nodes` nodes of 8 GPUs.
Scenario mixtral_engine(int nodes = 1) {
  json doc = read_json_file(serving_dir + "/" + mixtral_serving);
  doc["cluster"]["nodes"] = nodes;
  return load_scenario(doc, serving_dir + "/" + mixtral_serving);
}

Plan plan(std::int64_t tp, std::int64_t dp, std::int64_t ep, const Serving& w) {
  Plan p;
  p.tp = tp;
  p.dp = dp;
  p.ep = ep;
  p.micro_batch = engine_batch(w, dp);
  return p;
}

/// The average number of distinct experts touched when each of `tokens` tokens picks one of
/// the k-subsets of E experts, every subset equally likely: an exhaustive count.
double enumerated_touched(int experts, int top_k, int tokens) {
  std::vector<unsigned> subsets;
  for (unsigned s = 0; s < (1u << experts); ++s) {
    if (__builtin_popcount(s) == top_k) subsets.push_back(s);
  }
  double sum = 0, count = 0;
  std::vector<std::size_t> pick(static_cast<std::size_t>(tokens), 0);
  while (true) {
    unsigned used = 0;
    for (std::size_t i : pick) used |= subsets[i];
    sum += __builtin_popcount(used);
    ++count;
    std::size_t d = 0;
    while (d < pick.size() && ++pick[d] == subsets.size()) pick[d++] = 0;
    if (d == pick.size()) break;
  }
  return sum / count;
}

}  // namespace

TEST_CASE("Expected experts touched: E(1 - (1 - k/E)^B) against counting", "[moe][serving]") {
  // One token touches exactly its k experts.
  CHECK(expected_experts_touched(8, 2, 1) == Approx(2.0));
  // Two tokens, top-2 of 8: 2 + 2 minus the expected overlap 2·2/8 = 0.5, so 3.5;
  // the formula: 8·(1 − (6/8)²) = 8·(1 − 0.5625) = 3.5.
  CHECK(expected_experts_touched(8, 2, 2) == Approx(3.5));
  CHECK(enumerated_touched(8, 2, 2) == Approx(3.5));
  // Three tokens, top-2 of 4: 4·(1 − (1/2)³) = 3.5; top-1 of 4: 4·(1 − (3/4)³) = 2.3125.
  CHECK(expected_experts_touched(4, 2, 3) == Approx(3.5));
  CHECK(enumerated_touched(4, 2, 3) == Approx(3.5));
  CHECK(expected_experts_touched(4, 1, 3) == Approx(2.3125));
  CHECK(enumerated_touched(4, 1, 3) == Approx(2.3125));
  // Mixtral at batch 32: an expert is idle with probability (6/8)^32 = 1.0045e-4.
  CHECK(8.0 - expected_experts_touched(8, 2, 32) == Approx(8 * 1.00452e-4).epsilon(1e-4));
}

TEST_CASE("Mixtral serving memory per GPU: ep 8 against tp 8, by hand", "[moe][serving]") {
  const Scenario s = mixtral_engine();
  const Serving& w = s.workload.serving;
  // From the preset's shape (tests/model/test_moe.cpp): total 46,703,058,944 parameters, of
  // which the routed experts are 32 layers × 8 × 3·4096·14336 = 45,097,156,608; the rest
  // (attention, router, norms, embeddings) 1,605,902,336.
  const double total = 46703058944.0;
  const double routed = 32.0 * 8 * 3 * 4096 * 14336;
  REQUIRE(routed == 45097156608.0);
  const double rest = total - routed;
  // tp 8: everything split 8 ways, 2 bytes each: 11,675,764,736 B.
  const MemoryLedger tp8 = serving_ledger(s.model, s.cluster, w, plan(8, 1, 1, w));
  CHECK(tp8.weights_bytes == Approx(total / 8 * 2));
  CHECK(tp8.weights_bytes == Approx(11675764736.0));
  // ep 8 (tp 1, 8 replicas): the rest whole, the experts 8 ways:
  // (1,605,902,336 + 5,637,144,576)·2 = 14,486,093,824 B.
  const MemoryLedger ep8 = serving_ledger(s.model, s.cluster, w, plan(1, 8, 8, w));
  CHECK(ep8.weights_bytes == Approx((rest + routed / 8) * 2));
  CHECK(ep8.weights_bytes == Approx(14486093824.0));
  // KV cache: tp 8 keeps one of the 8 KV heads per GPU for 32 sequences, ep 8 all 8 heads for
  // its 4: 2·32 layers·heads·128·2 B × batch × 1280 reserved tokens, 671,088,640 B both.
  CHECK(tp8.kv_cache_bytes == Approx(2.0 * 32 * 1 * 128 * 2 * 32 * 1280));
  CHECK(ep8.kv_cache_bytes == Approx(2.0 * 32 * 8 * 128 * 2 * 4 * 1280));
  // With the 6 GiB reserve: 18,789,304,320 B against 21,599,633,408 B.
  CHECK(tp8.total_bytes() == Approx(18789304320.0));
  CHECK(ep8.total_bytes() == Approx(21599633408.0));
  // Without ep the 8 replicas would hold everything: 93.4 GB of weights, over 80 GiB.
  CHECK(!serving_ledger(s.model, s.cluster, w, plan(1, 8, 1, w)).fits());
}

TEST_CASE("A decode step reads the non-expert weights and the experts touched", "[moe][serving]") {
  const Scenario s = mixtral_engine();
  const Serving& w = s.workload.serving;
  const Plan p = plan(1, 8, 8, w);  // 4 sequences per replica, 32 tokens in the ep group
  const MemoryLedger l = serving_ledger(s.model, s.cluster, w, p);
  const DecodeStep d = decode_step(s.model, s.cluster, w, p, 4, l.weights_bytes, 400e12);
  // The GPU holds one expert per layer, 5,637,144,576 parameters in all; each is idle with
  // probability (6/8)^(8·4): 14,486,093,824 − 0.75^32 · 11,274,289,152 B are read.
  const double idle = std::pow(0.75, 32);
  CHECK(d.expert_read_fraction == Approx(1 - idle));
  CHECK(d.weight_read_bytes == Approx(14486093824.0 - idle * 11274289152.0));
  // At batch 1 on a single engine (tp 8, no ep) each layer reads 2 of its 8 experts: the
  // rest split 8 ways plus a quarter of the experts, 2 B each.
  const Plan one = plan(8, 1, 1, w);
  const double one_weights = serving_ledger(s.model, s.cluster, w, one).weights_bytes;
  const DecodeStep d1 = decode_step(s.model, s.cluster, w, one, 1, one_weights, 400e12);
  CHECK(d1.weight_read_bytes == Approx((1605902336.0 + 45097156608.0 / 4) / 8 * 2));
}

TEST_CASE("Serving all-to-all by hand: bytes, latency-bound decode, prefill", "[moe][serving]") {
  const Scenario s = mixtral_engine();
  const Serving& w = s.workload.serving;
  const Plan p = plan(2, 4, 4, w);  // 8 sequences per replica
  const MemoryLedger l = serving_ledger(s.model, s.cluster, w, p);
  const DecodeStep d = decode_step(s.model, s.cluster, w, p, 8, l.weights_bytes, 400e12);
  // Each tp rank sends its 8/2 tokens to 2 experts: M = 4·2·4096·2 B = 65,536 B.
  const double m = 4.0 * 2 * 4096 * 2;
  CHECK(d.ep.message_bytes == Approx(m));
  // Pairwise exchange inside the node (450 GB/s, 3 us): 3 peers, M/4 to each.
  const double one = 3 * (3e-6 + m / 4 / 450e9);
  CHECK(d.ep.all_to_all.seconds() == Approx(one));
  // The same as collectives.hpp's pairwise all-to-all on one tier.
  CHECK(one == Approx(collective_cost(Collective::all_to_all, Algorithm::pairwise, 4, m,
                                      s.cluster.tiers[0]).seconds()));
  // Latency-bound: 3 hops of 3 us against 0.11 us on the wire.
  CHECK(d.ep.all_to_all.latency_seconds > 50 * d.ep.all_to_all.wire_seconds);
  // Dispatch and combine in each of the 32 MoE layers, on the step's critical path.
  CHECK(d.ep.all_to_alls == 64);
  CHECK(d.ep.seconds == Approx(64 * one));
  // Plus each of the 32 layers' fixed cost on a catalog H100 (data/gpus.json serving_read).
  CHECK(d.fixed_seconds == Approx(32 * 65.3e-6));
  CHECK(d.seconds == Approx(std::max(d.weight_read_seconds + d.kv_read_seconds,
                                     d.compute_seconds) +
                            32 * 65.3e-6 + d.tp_seconds + 64 * one));
  // Prefill: the 1024-token prompt in one chunk, 512 tokens per tp rank:
  // M = 512·2·4096·2 B = 8 MiB, twice per MoE layer.
  const double mp = 512.0 * 2 * 4096 * 2;
  const PrefillTime pre = prefill_time(s.model, s.cluster, w, p, l.weights_bytes, 400e12);
  CHECK(pre.ep_seconds == Approx(64 * 3 * (3e-6 + mp / 4 / 450e9)));
}

TEST_CASE("An ep group across two nodes pays the network for its far peers", "[moe][serving]") {
  const Scenario s = mixtral_engine(2);
  const Serving& w = s.workload.serving;
  const Plan p = plan(2, 8, 8, w);  // 16 GPUs: ranks r, r+2, …, r+14, four on each node
  const MemoryLedger l = serving_ledger(s.model, s.cluster, w, p);
  const DecodeStep d = decode_step(s.model, s.cluster, w, p, 4, l.weights_bytes, 400e12);
  CHECK(d.ep.tier == 1);
  CHECK(d.ep.ranks_in_node == 4);
  // 4 sequences, 2 per tp rank: M = 2·2·4096·2 B; 3 peers on NVLink, 4 at 400 Gb/s and 10 us.
  const double m = 2.0 * 2 * 4096 * 2;
  const double one = 3 * (3e-6 + m / 8 / 450e9) + 4 * (10e-6 + m / 8 / 50e9);
  CHECK(d.ep.all_to_all.seconds() == Approx(one));
  // Half of what each rank sends leaves its node, 64 times a step.
  CHECK(d.ep.inter_node_bytes == Approx(64 * 0.5 * m));
}

TEST_CASE("planner plan on Mixtral serving searches ep and explains it", "[moe][serving][cli]") {
  const auto r = cli_harness::run({"plan", mixtral_serving, "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  std::set<std::int64_t> eps;
  for (const json& p : j.at("ranked")) eps.insert(p.value("ep", 1));
  CHECK(eps.count(1) == 1);
  CHECK(*eps.rbegin() > 1);
  bool ep_axis = false;
  for (const json& a : j.at("axes")) {
    if (a.at("axis") != "ep") continue;
    ep_axis = true;
    CHECK_THAT(a.at("why").get<std::string>(), Catch::Contains("experts"));
  }
  CHECK(ep_axis);
  CHECK(j.at("best").at("time").contains("ep_all_to_all"));
  CHECK(j.at("best").at("time").contains("expert_read_fraction"));
  const auto csv = cli_harness::run({"plan", mixtral_serving, "--format", "csv"});
  REQUIRE(csv.code == 0);
  CHECK_THAT(csv.out.substr(0, csv.out.find('\n')), Catch::EndsWith(",ep,ep_tier,etp"));
  // A dense serving scenario keeps ep = 1 and its CSV columns.
  const auto dense = cli_harness::run({"plan", "scenarios/llama31-70b-serving-h100.json",
                                       "--format", "csv"});
  REQUIRE(dense.code == 0);
  CHECK_THAT(dense.out, !Catch::Contains("ep_tier"));
}

TEST_CASE("A pinned serving plan whose ep does not divide the experts exits 2",
          "[moe][serving][cli]") {
  json doc = read_json_file(serving_dir + "/" + mixtral_serving);
  doc["plan"] = {{"tp", 2}, {"dp", 4}, {"ep", 4}};
  const std::string good = serving_dir + "/build/moe_serving_ep4.json";
  std::ofstream(good) << doc.dump();
  CHECK(cli_harness::run({"plan", good}).code == 0);  // serving plans may pin ep now
  doc["plan"] = {{"tp", 8}, {"dp", 1}, {"ep", 3}};
  const std::string bad = serving_dir + "/build/moe_serving_ep3.json";
  std::ofstream(bad) << doc.dump();
  // `memory` evaluates the pinned plan itself: bad input, exit 2, the pointer named.
  const auto r = cli_harness::run({"memory", bad});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/plan/ep") && Catch::Contains("divide the 8"));
  // `plan` too: an ep the model rules out is a mistake about the model, not a plan a changed
  // cluster broke (docs/errors.md §Plans), so it is not ignored as other pinned plans are.
  const auto searched = cli_harness::run({"plan", bad});
  CHECK(searched.code == 2);
  CHECK_THAT(searched.err, Catch::Contains("/plan/ep") && Catch::Contains("divide the 8"));
  // An ep that only the world size breaks (4 does not divide dp·cp = 2 here) stays a warning
  // for `plan`, which searches without it.
  doc["plan"] = {{"tp", 4}, {"dp", 2}, {"ep", 4}};
  std::ofstream(bad) << doc.dump();
  const auto world = cli_harness::run({"plan", bad});
  CHECK(world.code == 0);
  CHECK_THAT(world.err, Catch::Contains("/plan/ep") && Catch::Contains("ignored"));
}

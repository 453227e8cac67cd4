// Hybrid sharding (HSDP, Plan::dp_shard): ZeRO's state sharded inside groups of dp_shard·cp
// ranks and replicated across dp / dp_shard groups, whose reduced gradient shards are
// all-reduced once per step (MiCS, Zhang et al. 2022, arXiv 2205.00119, §3.3; PyTorch FSDP
// HYBRID_SHARD; docs/model.md §3 and §4). Memory against the fully sharded ledger, traffic
// against α–β figures worked by hand, and the loader's, the search's and the exports' handling.
#include <catch2/catch.hpp>

#include <string>

#include "cli_harness.hpp"
#include "planner/model/legality.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/step_time.hpp"
#include "model/small_model.hpp"

using namespace planner;

namespace {

using test_models::small_model;

// Two 8-GPU nodes; no latency, no peer memory, flat collectives, overlap free: every
// collective is a plain ring at the tier's bandwidth (collectives.hpp).
Cluster two_nodes() {
  Cluster c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.gpu.memory_bytes = 80e9;
  c.gpu.memory_bandwidth_bytes_per_second = 3.35e12;
  c.gpu.flops_per_second = 6.5e14;
  c.tiers = {Tier{100e9, 0, 8, false, "intra_node", 0.0},
             Tier{50e9, 0, 0, false, "inter_node", 0.0}};
  for (Tier& t : c.tiers) t.hierarchical = false;
  return c;
}

// dp 16 over the two nodes, ZeRO-1 in shard groups of one node: 2 replicas.
Plan node_shards() {
  Plan p;
  p.dp = 16;
  p.zero = 1;
  p.dp_shard = 8;
  return p;
}

Training training() {
  Training w;
  w.bytes_per_param = 16;
  return w;
}

}  // namespace

TEST_CASE("hybrid sharding: the state is divided by the shard group, not by dp", "[hsdp]") {
  const Model m = small_model();
  const Cluster c = two_nodes();
  Plan full;
  full.dp = 16;
  full.zero = 3;
  Plan hybrid = full;
  hybrid.dp_shard = 8;
  CHECK(shard_dp(hybrid) == 8);
  CHECK(state_replicas(hybrid) == 2);
  CHECK(state_shard_ranks(hybrid) == 8);
  CHECK(state_replicas(full) == 1);
  // dp_shard = dp is the fully sharded plan.
  Plan same = full;
  same.dp_shard = 16;
  CHECK(state_replicas(same) == 1);
  const MemoryLedger f = training_ledger(m, c, training(), full);
  const MemoryLedger h = training_ledger(m, c, training(), hybrid);
  // 16 ranks share the state in one case, 8 in the other: each line of it exactly doubles.
  CHECK(h.weights_bytes == Approx(2.0 * f.weights_bytes));
  CHECK(h.gradients_bytes == Approx(2.0 * f.gradients_bytes));
  CHECK(h.optimizer_bytes == Approx(2.0 * f.optimizer_bytes));
  // What does not depend on the sharding is unchanged.
  CHECK(h.activations_bytes == f.activations_bytes);
  CHECK(h.zero3_gather_bytes == f.zero3_gather_bytes);
  // And it equals the fully sharded ledger of a plan whose dp is the shard group.
  Plan eight = full;
  eight.dp = 8;
  CHECK(training_ledger(m, c, training(), eight).optimizer_bytes == Approx(h.optimizer_bytes));
}

TEST_CASE("hybrid sharding: the groups' tiers follow the placement", "[hsdp]") {
  const Cluster c = two_nodes();
  const Plan p = node_shards();
  // Default placement (tp, cp, dp, pp): the shard group is ranks 0-7, one node; a replica
  // group is ranks r and r + 8, one in each node.
  const HybridGroup shard = shard_group(p, c);
  CHECK(shard.tier == 0);
  CHECK(shard.ranks_per_node == 8);
  const HybridGroup replica = replica_group(p, c);
  CHECK(replica.tier == 1);
  CHECK(replica.ranks_per_node == 1);
  // Shard groups of 4 with tp 2: ranks 0, 2, 4, 6 (tp's stride 2), still one node; the
  // replicas r, r + 8: across.
  Plan q;
  q.tp = 2;
  q.dp = 8;
  q.zero = 1;
  q.dp_shard = 4;
  CHECK(shard_group(q, c).tier == 0);
  CHECK(shard_group(q, c).ranks_per_node == 4);
  CHECK(replica_group(q, c).tier == 1);
  // Shard groups of 2 out of 16: ranks {0, 1}, {2, 3}, ...; the 8 replicas of a shard are
  // ranks 0, 2, ..., 14: 4 of them in each node, so their group crosses nodes.
  Plan r = p;
  r.dp_shard = 2;
  CHECK(shard_group(r, c).tier == 0);
  CHECK(replica_group(r, c).tier == 1);
  CHECK(replica_group(r, c).ranks_per_node == 4);
}

TEST_CASE("hybrid sharding: ZeRO-1 traffic by hand", "[hsdp]") {
  const Model m = small_model();
  const Cluster c = two_nodes();
  const Plan p = node_shards();
  // Windows far longer than the traffic: only the edge buckets show.
  const DataParallelTraffic t = data_parallel_traffic(m, c, p, 100.0, 100.0);
  const double g = t.gradient_bytes;  // the bf16 gradient, 2 bytes a parameter
  CHECK(g == Approx(2.0 * gpu_params(m, p).replicated));
  CHECK(t.ranks == 8);
  CHECK(t.tier == 0);
  CHECK(t.replicas == 2);
  CHECK(t.replica_tier == 1);
  // By hand. Shard group: 8 ranks in a node at 100 GB/s, no latency: a ring reduce-scatter
  // and an all-gather of G each take (7/8)·G / 1e11, in 4 one-layer buckets.
  const double rs = 7.0 / 8.0 * g / 100e9;
  // Replicas: 2 ranks, one per node, at 50 GB/s: a ring all-reduce of the G/8 shard is
  // 2·(1/2)·(G/8) / 5e10.
  const double ar = (g / 8.0) / 50e9;
  CHECK(t.replica_all_reduce.seconds() == Approx(ar));
  CHECK(t.replica_seconds == Approx(ar));
  CHECK(t.comm_seconds == Approx(2.0 * rs + ar));
  // Exposed: the last reduce-scatter bucket, the first gather bucket, the last all-reduce
  // bucket (the backward's window, less the reduce-scatter, still hides the rest).
  CHECK(t.replica_exposed_seconds == Approx(ar / 4.0));
  CHECK(t.exposed_seconds == Approx(rs / 4.0 + rs / 4.0 + ar / 4.0));
  // Bytes each rank sends: (7/8)·G twice in the node, (1/2)·(G/8) twice across.
  CHECK(t.bytes_per_step == Approx(2.0 * 7.0 / 8.0 * g + 2.0 * 0.5 * g / 8.0));
  CHECK(t.replica_bytes_per_step == Approx(g / 8.0));
  // Fully sharded over the 16 ranks instead, the group spans both nodes and pays the 50 GB/s
  // tier: (15/16)·G / 5e10 each way, 3.75e-11·G s against the hybrid plan's
  // (1.75 + 0.25)e-11·G s: 1.875 times as long.
  Plan full = p;
  full.dp_shard = 0;
  const DataParallelTraffic f = data_parallel_traffic(m, c, full, 100.0, 100.0);
  CHECK(f.tier == 1);
  CHECK(f.comm_seconds == Approx(2.0 * 15.0 / 16.0 * g / 50e9));
  CHECK(f.replicas == 1);
  CHECK(f.replica_seconds == 0.0);
  CHECK(f.comm_seconds == Approx(1.875 * t.comm_seconds));
}

TEST_CASE("hybrid sharding: the replicas' all-reduce hides only in what the backward leaves",
          "[hsdp]") {
  const Model m = small_model();
  const Cluster c = two_nodes();
  const Plan p = node_shards();
  const DataParallelTraffic wide = data_parallel_traffic(m, c, p, 100.0, 100.0);
  const double rs = wide.backward_comm_seconds;
  const double ar = wide.replica_seconds;
  REQUIRE(rs > 0);
  REQUIRE(ar > 0);
  // A backward exactly as long as the reduce-scatter leaves no window: the whole all-reduce
  // is exposed (exposed_seconds: max(one bucket, comm - 0)).
  const DataParallelTraffic tight = data_parallel_traffic(m, c, p, 100.0, rs);
  CHECK(tight.replica_exposed_seconds == Approx(ar));
  // Half the all-reduce's time left over: the other half is exposed.
  const DataParallelTraffic half = data_parallel_traffic(m, c, p, 100.0, rs + ar / 2.0);
  CHECK(half.replica_exposed_seconds == Approx(ar / 2.0));
}

TEST_CASE("hybrid sharding: legality", "[hsdp]") {
  const Model m = small_model();
  const Cluster c = two_nodes();
  Plan p = node_shards();
  CHECK_FALSE(first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan));
  p.dp_shard = 3;  // does not divide 16
  REQUIRE(first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan));
  CHECK(first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan)->kind ==
        ViolationKind::dp_shard_dp);
  p.dp_shard = 8;
  p.zero = 0;  // nothing to shard
  CHECK(first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan)->kind ==
        ViolationKind::dp_shard_zero);
  p.dp_shard = 16;  // dp_shard = dp: not hybrid, so ZeRO-0 is fine
  CHECK_FALSE(first_violation(m, c, WorkloadKind::training, p, LegalityScope::plan));
  p.dp_shard = 8;  // serving holds no training state
  CHECK(first_violation(m, c, WorkloadKind::serving, p, LegalityScope::plan)->kind ==
        ViolationKind::dp_shard_serving);
}

TEST_CASE("hybrid sharding: bad input is one clear line, exit 2", "[hsdp][cli]") {
  const auto bad = cli_harness::run({"memory", "scenarios/q2-llama-3.1-70b-64-h100.json", "--tp",
                                     "8", "--dp", "8", "--zero", "1", "--dp-shard", "3"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("/plan/dp_shard") != std::string::npos);
  CHECK(bad.err.find("dp_shard (3) must divide dp (8)") != std::string::npos);
  const auto zero0 = cli_harness::run({"memory", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                       "--tp", "8", "--dp", "8", "--zero", "0", "--dp-shard", "2"});
  CHECK(zero0.code == 2);
  CHECK(zero0.err.find("needs zero >= 1") != std::string::npos);
  const auto fix = cli_harness::run(
      {"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--fix", "replicas=0"});
  CHECK(fix.code == 2);
  CHECK(fix.err.find("at least 1 copy") != std::string::npos);
}

TEST_CASE("hybrid sharding: planner memory prices it and says so", "[hsdp][cli]") {
  // Llama 3.1 70B on 64 H100 (8 nodes): tp 8 fills a node, so a shard group of 4 dp ranks
  // spans 4 nodes, and 2 replicas of it make up the 8. (Shard groups of 2 would hold 49 GiB of
  // optimizer state per GPU, 12 B x 8.8e9 / 2, and not fit.)
  const auto r = cli_harness::run({"memory", "scenarios/q2-llama-3.1-70b-64-h100.json", "--tp",
                                   "8", "--dp", "8", "--zero", "1", "--dp-shard", "4",
                                   "--recompute", "full", "--flash", "on", "--format", "json"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"dp_shard\": 4") != std::string::npos);
  CHECK(r.out.find("\"dp_replicas\": 2") != std::string::npos);
  const auto text = cli_harness::run({"memory", "scenarios/q2-llama-3.1-70b-64-h100.json", "--tp",
                                      "8", "--dp", "8", "--zero", "1", "--dp-shard", "4",
                                      "--recompute", "full", "--flash", "on"});
  REQUIRE(text.code == 0);
  CHECK(text.out.find("sharded over 4 ranks x 2 replicas (HSDP)") != std::string::npos);
  CHECK(text.out.find("hybrid sharding: 2 replicas") != std::string::npos);
}

TEST_CASE("hybrid sharding: --fix replicas bounds the search", "[hsdp][search]") {
  // replicas=1 rules hybrid sharding out; replicas>=2 keeps only hybrid plans.
  const auto none = cli_harness::run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                      "--fix", "replicas=1", "--format", "json", "--top", "5",
                                      "--no-thresholds"});
  REQUIRE(none.code == 0);
  CHECK(none.out.find("\"dp_shard\"") == std::string::npos);
  const auto only = cli_harness::run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--fix",
                                      "replicas>=2,zero>=1", "--format", "json", "--top", "1",
                                      "--no-thresholds"});
  REQUIRE(only.code == 0);
  CHECK(only.out.find("\"dp_shard\"") != std::string::npos);
}

TEST_CASE("hybrid sharding: each framework's launch arguments", "[hsdp][export]") {
  // Scenario B's 64 GPUs as dp 64 in shard groups of one node (8 ranks), 8 replicas.
  auto pinned = [](int zero) {
    return "/plan={\"dp\": 64, \"zero\": " + std::to_string(zero) +
           ", \"dp_shard\": 8, \"recompute\": \"full\", \"flash_attention\": true}";
  };
  // torchtitan config/job_config.py: FSDP2 over data_parallel_shard_degree, replicated over
  // data_parallel_replicate_degree.
  const auto titan = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "torchtitan", "--set", pinned(3)});
  REQUIRE(titan.code == 0);
  CHECK(titan.out.find("data_parallel_replicate_degree = 8\n") != std::string::npos);
  CHECK(titan.out.find("data_parallel_shard_degree = 8\n") != std::string::npos);
  // Megatron-LM arguments.py: the distributed optimizer's copies across the data-parallel
  // domain.
  const auto megatron = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "megatron", "--set", pinned(1)});
  REQUIRE(megatron.code == 0);
  CHECK(megatron.out.find("--num-distributed-optimizer-instances 8") != std::string::npos);
  // DeepSpeed zero/config.py mics_shard_size: MiCS, a stage-3 engine.
  const auto ds = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "deepspeed", "--set", pinned(3)});
  REQUIRE(ds.code == 0);
  CHECK(ds.out.find("\"mics_shard_size\": 8") != std::string::npos);
  const auto ds1 = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "deepspeed", "--set", pinned(1)});
  CHECK(ds1.code == 2);
  CHECK(ds1.err.find("MiCS") != std::string::npos);
}

TEST_CASE("hybrid sharding: a CSV column says the shard group", "[hsdp][csv]") {
  // Searched (no replicas bound): the rows end with dp_shard, dp for a fully sharded plan, and
  // then the interleaving depth every training row ends with.
  const auto searched = cli_harness::run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                          "--fix", "replicas>=2", "--format", "csv",
                                          "--no-thresholds"});
  REQUIRE(searched.code == 0);
  const std::string header = searched.out.substr(0, searched.out.find('\n'));
  CHECK_THAT(header, Catch::EndsWith(",dp_shard,virtual_stages"));
  // With replicas=1 (scenario A's constraints) the columns are as before.
  const auto a = cli_harness::run({"plan", "scenarios/a.json", "--format", "csv",
                                   "--no-thresholds"});
  REQUIRE(a.code == 0);
  CHECK(a.out.substr(0, a.out.find('\n')).find("dp_shard") == std::string::npos);
}

TEST_CASE("hybrid sharding: the explanation times the other way of sharding", "[hsdp][explain]") {
  // A dense training answer sharded over the whole group, where the search may try hybrid
  // sharding: the alternatives include the best hybrid plan, with its verdict.
  const auto r = cli_harness::run(
      {"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--no-thresholds", "--full"});
  REQUIRE(r.code == 0);
  const auto at = r.out.find("   - hybrid sharding (HSDP): ");
  REQUIRE(at != std::string::npos);
  CHECK(r.out.find("(HSDP)", at + 30) != std::string::npos);  // its plan is a hybrid one
  // Scenario A rules hybrid sharding out (replicas=1): no such alternative.
  const auto a = cli_harness::run({"plan", "scenarios/a.json", "--no-thresholds"});
  REQUIRE(a.code == 0);
  CHECK(a.out.find("hybrid sharding") == std::string::npos);
}

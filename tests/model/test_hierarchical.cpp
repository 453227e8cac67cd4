// Two-level collectives (collectives.hpp hierarchical_collective, docs/model.md §4): a group
// with several ranks in each node reduce-scatters inside the node, crosses the network with
// every rank's 1/inside share on its own rail, and all-gathers inside (NCCL's multi-rail rings,
// src/graph/tuning.cc: bus bandwidth = channels × NIC speed). Figures worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "answer_key_inputs.hpp"
#include "planner/model/step_time.hpp"

using namespace planner;

namespace {

// The worked scenarios' tiers: 300 GB/s and 5 us inside a node, 50 GB/s and 15 us across.
const Tier node{300e9, 5e-6, 8, true, "intra_node"};
const Tier network{50e9, 15e-6, 0, false, "inter_node"};

}  // namespace

TEST_CASE("hierarchical all-reduce and reduce-scatter, by hand", "[collectives][hierarchical]") {
  // 16e9 B over 64 ranks, 8 per node (8 nodes).
  // Reduce-scatter inside: 7/8 · 16e9 / 300e9 = 46.667 ms, 7 · 5 us = 35 us.
  // All-reduce of each rank's 2e9 B over 8 nodes: ring 2 · 7/8 · 2e9 / 50e9 = 70 ms + 2 · 7 ·
  // 15 us = 0.21 ms (the tree, 80 ms + 90 us, loses). All-gather inside as the reduce-scatter.
  const CollectiveCost ar = hierarchical_collective(Collective::all_reduce, 64, 8, 16e9, node, network);
  CHECK(ar.algorithm == Algorithm::hierarchical);
  CHECK(ar.wire_seconds == Approx(2 * 46.6667e-3 + 70e-3).epsilon(1e-5));
  CHECK(ar.latency_seconds == Approx(2 * 35e-6 + 210e-6));
  // The flat ring pays the whole buffer at one GPU's 50 GB/s: 632 ms (the worked scenario A).
  CHECK(cheapest_collective(Collective::all_reduce, 64, 16e9, network).seconds() ==
        Approx(0.632).epsilon(1e-3));
  CHECK(group_collective(Collective::all_reduce, 64, 8, 16e9, node, network, false).seconds() ==
        Approx(ar.seconds()));
  // Reduce-scatter: the inside phase, then 7/8 · 2e9 / 50e9 = 35 ms + 7 · 15 us across.
  const CollectiveCost rs =
      hierarchical_collective(Collective::reduce_scatter, 64, 8, 16e9, node, network);
  CHECK(rs.seconds() == Approx(46.6667e-3 + 35e-6 + 35e-3 + 105e-6).epsilon(1e-5));
  // All-gather: the same two phases in the other order.
  CHECK(hierarchical_collective(Collective::all_gather, 64, 8, 16e9, node, network).seconds() ==
        Approx(rs.seconds()));
}

TEST_CASE("hierarchical collectives: where there is nothing to split, the flat cost",
          "[collectives][hierarchical]") {
  const double flat = cheapest_collective(Collective::all_reduce, 64, 16e9, network).seconds();
  // One rank per node, or every rank in one node: one level.
  CHECK(hierarchical_collective(Collective::all_reduce, 64, 1, 16e9, node, network).seconds() ==
        Approx(flat));
  CHECK(hierarchical_collective(Collective::all_reduce, 64, 64, 16e9, node, network).seconds() ==
        Approx(flat));
  // A tier marked flat (the worked scenarios' ring model) never splits.
  Tier flat_only = network;
  flat_only.hierarchical = false;
  CHECK(group_collective(Collective::all_reduce, 64, 8, 16e9, node, flat_only, false).seconds() ==
        Approx(flat));
  // A small message is latency-bound: the two levels' 2 · 7 hops inside and 2 · 7 across
  // (ring) or 2 · 3 (tree) against the flat tree's 2 · 6 across; the choice is whichever of
  // the two forms is cheaper, never more than either.
  const double small = 1e3;
  const double g = group_collective(Collective::all_reduce, 64, 8, small, node, network, false)
                       .seconds();
  CHECK(g <= cheapest_collective(Collective::all_reduce, 64, small, network).seconds());
  CHECK(g <= hierarchical_collective(Collective::all_reduce, 64, 8, small, node, network).seconds());
}

TEST_CASE("the search's floor is below every two-level split on slower tiers",
          "[collectives][hierarchical][pruning]") {
  // hierarchical_floor stands in for every placement (search/enumerate.hpp ideal_network), so
  // it must not exceed the cost of any split of the group on tiers no faster than its own.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::array<Collective, 3> ops{Collective::all_reduce, Collective::reduce_scatter,
                                      Collective::all_gather};
  const Tier best{900e9, 1e-6, 0, true, "ideal"};
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t inside = std::int64_t{1} << (rng() % 5);         // 1 … 16 per node
    const std::int64_t ranks = inside * (1 + static_cast<std::int64_t>(rng() % 200));
    const double bytes = std::pow(10.0, 2.0 + 8.0 * unit(rng));
    Tier in{best.bandwidth_bytes_per_second * (0.2 + 0.8 * unit(rng)),
            best.latency_seconds * (1.0 + 10.0 * unit(rng)), 8, true, "in"};
    Tier out{best.bandwidth_bytes_per_second * (0.01 + 0.99 * unit(rng)),
             best.latency_seconds * (1.0 + 30.0 * unit(rng)), 0, false, "out"};
    for (Collective op : ops) {
      INFO("ranks " << ranks << " inside " << inside << " bytes " << bytes);
      const double floor = hierarchical_floor(op, ranks, bytes, best).seconds();
      CHECK(floor <= hierarchical_collective(op, ranks, inside, bytes, in, out).seconds() *
                         (1 + 1e-12));
      CHECK(floor <= cheapest_collective(op, ranks, bytes, out).seconds() * (1 + 1e-12));
      // …and the same on the best tier itself, for every split the ranks allow.
      for (std::int64_t i = 2; i < ranks && i <= 64; ++i) {
        if (ranks % i != 0) continue;
        CHECK(floor <= hierarchical_collective(op, ranks, i, bytes, best, best).seconds() *
                           (1 + 1e-12));
      }
    }
  }
}

TEST_CASE("ranks of a data-parallel group per node", "[placement][hierarchical]") {
  Cluster c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  Plan p;  // Megatron-LM's order tp, cp, dp, pp
  p.dp = 64;
  CHECK(dense_group_ranks_per_node(p, c) == 8);
  p.dp = 8;
  p.tp = 8;
  CHECK(dense_group_ranks_per_node(p, c) == 1);  // tp fills the node: one dp rank per node
  p.tp = 2;
  p.cp = 4;
  p.dp = 2;
  p.pp = 4;
  CHECK(dense_group_ranks_per_node(p, c) == 4);  // the 4 cp ranks; dp's stride is 8
  p.tp = 4;
  p.cp = 1;
  p.dp = 8;
  p.pp = 2;
  CHECK(dense_group_ranks_per_node(p, c) == 2);  // 8 / tp
}

TEST_CASE("the data-parallel gradient all-reduce runs in two levels where the tier allows",
          "[hierarchical][data_parallel]") {
  // dp = 64 ZeRO-0 on 8 nodes of 8: one buffer of 2 B × 8e9 parameters = 16e9 B, the case
  // worked above: 163.6 ms in two levels against the flat ring's 632 ms.
  const Model m = answer_key::model_a();  // the worked scenario A's 8B
  Cluster c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.tiers = {node, network};
  Plan p;
  p.dp = 64;
  p.zero = 0;
  const DataParallelTraffic two = data_parallel_traffic(m, c, p, 1.0, 1.0);
  CHECK(two.gradient_bytes == Approx(16e9));
  CHECK(two.buffer.algorithm == Algorithm::hierarchical);
  CHECK(two.buffer.seconds() == Approx(2 * 46.6667e-3 + 70e-3 + 2 * 35e-6 + 210e-6).epsilon(1e-5));
  c.network_tier().hierarchical = false;
  const DataParallelTraffic flat = data_parallel_traffic(m, c, p, 1.0, 1.0);
  CHECK(flat.buffer.algorithm == Algorithm::ring);
  CHECK(flat.buffer.seconds() == Approx(0.632).epsilon(1e-3));
}

TEST_CASE("ranks of an expert-data-parallel group per node", "[placement][hierarchical][moe]") {
  Cluster c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  Plan p;
  p.dp = 64;
  p.ep = 8;  // the node's 8 ranks hold 8 different expert shards: one copy of each per node
  CHECK(expert_data_parallel_ranks(p) == 8);
  CHECK(expert_group_ranks_per_node(p, c) == 1);
  p.ep = 4;  // 4 shards in a node, each held twice there
  CHECK(expert_data_parallel_ranks(p) == 16);
  CHECK(expert_group_ranks_per_node(p, c) == 2);
  p.ep = 16;  // the ep group spans 2 nodes: its 8 ranks in a node are all different
  CHECK(expert_group_ranks_per_node(p, c) == 1);
  p.dp = 16;
  p.tp = 4;
  p.etp = 1;  // 4 tp × 2 dp ranks in a node; ep 8 over tp/etp · dp: all 8 differ
  p.ep = 8;
  CHECK(expert_data_parallel_ranks(p) == 8);
  CHECK(expert_group_ranks_per_node(p, c) == 1);
}

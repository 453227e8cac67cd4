// Multi-rail collectives (collectives.hpp multi_rail_collective, docs/model.md §4): a group
// with several ranks in each node runs NCCL's ring (or tree) with one channel per NIC, so the
// node's ranks cross the network on their own rails at once (NCCL src/graph/tuning.cc: an
// inter-node ring's busBw is nChannels × the NIC's speed; its latency (nsteps − nInterSteps)
// intra-node steps and nInterSteps inter-node ones). Figures worked by hand.
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

TEST_CASE("multi-rail all-reduce and reduce-scatter, by hand", "[collectives][multi_rail]") {
  // 16e9 B over 64 ranks, 8 per node (8 nodes). The node's 8 rails carry 8 × 50 = 400 GB/s,
  // more than each rank's 300 GB/s of NVLink, so the bus runs at 300 GB/s.
  // Ring all-reduce: wire 2 · 63/64 · 16e9 / 300e9 = 105.0 ms; latency 2 · ((64 − 8) · 5 us
  // + (8 − 1) · 15 us) = 2 · (280 + 105) us = 770 us: 105.770 ms.
  // Tree all-reduce: wire 2 · 16e9 / 300e9 = 106.667 ms; latency 2 · (7 · 5 + ⌈log2 8⌉ · 15)
  // us = 160 us: 106.827 ms, so the ring is cheaper.
  const CollectiveCost ar = multi_rail_collective(Collective::all_reduce, 64, 8, 16e9, node, network);
  CHECK(ar.algorithm == Algorithm::multi_rail_ring);
  CHECK(ar.wire_seconds == Approx(105.0e-3).epsilon(1e-9));
  CHECK(ar.latency_seconds == Approx(770e-6).epsilon(1e-9));
  CHECK(multi_rail_tree_cost(64, 8, 16e9, node, network).seconds() ==
        Approx(106.667e-3 + 160e-6).epsilon(1e-5));
  // The flat ring pays the whole buffer at one GPU's 50 GB/s: 632 ms (the worked scenario A).
  CHECK(cheapest_collective(Collective::all_reduce, 64, 16e9, network).seconds() ==
        Approx(0.632).epsilon(1e-3));
  CHECK(group_collective(Collective::all_reduce, 64, 8, 16e9, node, network).seconds() ==
        Approx(ar.seconds()));
  // Reduce-scatter: one pass, 63/64 · 16e9 / 300e9 = 52.5 ms + 56 · 5 + 7 · 15 us = 385 us.
  const CollectiveCost rs =
      multi_rail_collective(Collective::reduce_scatter, 64, 8, 16e9, node, network);
  CHECK(rs.seconds() == Approx(52.5e-3 + 385e-6).epsilon(1e-9));
  CHECK(multi_rail_collective(Collective::all_gather, 64, 8, 16e9, node, network).seconds() ==
        Approx(rs.seconds()));
  // Two ranks per node: the rails carry 2 · 50 = 100 GB/s, below NVLink, and set the bus:
  // 63/64 · 16e9 / 100e9 = 157.5 ms; latency (64 − 32) · 5 + 31 · 15 us = 625 us.
  CHECK(multi_rail_collective(Collective::all_gather, 64, 2, 16e9, node, network).seconds() ==
        Approx(157.5e-3 + 625e-6).epsilon(1e-9));
}

TEST_CASE("multi-rail collectives: where there are no rails, the flat cost",
          "[collectives][multi_rail]") {
  const double flat = cheapest_collective(Collective::all_reduce, 64, 16e9, network).seconds();
  // One rank per node, or every rank in one node: one level.
  CHECK(multi_rail_collective(Collective::all_reduce, 64, 1, 16e9, node, network).seconds() ==
        Approx(flat));
  CHECK(multi_rail_collective(Collective::all_reduce, 64, 64, 16e9, node, network).seconds() ==
        Approx(flat));
  // A tier marked flat (the worked scenarios' ring model) never uses its rails.
  Tier flat_only = network;
  flat_only.hierarchical = false;
  CHECK(group_collective(Collective::all_reduce, 64, 8, 16e9, node, flat_only).seconds() ==
        Approx(flat));
  // A small message is latency-bound: the multi-rail ring's 2 · (56 · 5 + 7 · 15) us and the
  // tree's 2 · (7 · 5 + 3 · 15) us against the flat tree's 2 · 6 · 15 us; the choice is
  // whichever is cheapest, never more than either.
  const double small = 1e3;
  const double g = group_collective(Collective::all_reduce, 64, 8, small, node, network).seconds();
  CHECK(g <= cheapest_collective(Collective::all_reduce, 64, small, network).seconds());
  CHECK(g <= multi_rail_collective(Collective::all_reduce, 64, 8, small, node, network).seconds());
  CHECK(g == Approx(2 * (7 * 5e-6 + 3 * 15e-6) + 2 * small / 300e9));
}

TEST_CASE("the search's ideal tier is below every multi-rail split on slower tiers",
          "[collectives][multi_rail][pruning]") {
  // The pruning bound prices every data-parallel collective flat on one ideal tier (the larger
  // bandwidth, the smaller latency: search/enumerate.hpp ideal_network), so the flat cost
  // there must not exceed any placement's multi-rail cost on tiers no faster than it.
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
      const double floor = cheapest_collective(op, ranks, bytes, best).seconds();
      CHECK(floor <= group_collective(op, ranks, inside, bytes, in, out).seconds() * (1 + 1e-12));
      // …and the same on the best tier itself, for every split the ranks allow.
      for (std::int64_t i = 2; i < ranks && i <= 64; ++i) {
        if (ranks % i != 0) continue;
        CHECK(floor <= multi_rail_collective(op, ranks, i, bytes, best, best).seconds() *
                           (1 + 1e-12));
      }
    }
  }
}

TEST_CASE("ranks of a data-parallel group per node", "[placement][multi_rail]") {
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

TEST_CASE("the data-parallel gradient all-reduce runs on every rail where the tier allows",
          "[multi_rail][data_parallel]") {
  // dp = 64 ZeRO-0 on 8 nodes of 8: one buffer of 2 B × 8e9 parameters = 16e9 B, the case
  // worked above: 105.77 ms on the node's rails against the flat ring's 632 ms.
  const Model m = answer_key::model_a();  // the worked scenario A's 8B
  Cluster c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.tiers = {node, network};
  Plan p;
  p.dp = 64;
  p.zero = 0;
  const DataParallelTraffic rails = data_parallel_traffic(m, c, p, 1.0, 1.0);
  CHECK(rails.gradient_bytes == Approx(16e9));
  CHECK(rails.buffer.algorithm == Algorithm::multi_rail_ring);
  CHECK(rails.buffer.seconds() == Approx(105.0e-3 + 770e-6).epsilon(1e-9));
  c.network_tier().hierarchical = false;
  const DataParallelTraffic flat = data_parallel_traffic(m, c, p, 1.0, 1.0);
  CHECK(flat.buffer.algorithm == Algorithm::ring);
  CHECK(flat.buffer.seconds() == Approx(0.632).epsilon(1e-3));
}

TEST_CASE("ranks of an expert-data-parallel group per node", "[placement][multi_rail][moe]") {
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

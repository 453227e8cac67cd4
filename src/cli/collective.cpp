#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <ostream>
#include <vector>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/base/units.hpp"
#include "planner/cli/cli.hpp"
#include "planner/model/collectives.hpp"
#include "planner/report/report.hpp"

namespace planner::cli {

namespace {

using nlohmann::json;

struct CollectiveArgs {
  std::int64_t gpus = 0;
  double bandwidth_gb_per_s = 0;
  double latency_us = 0;
  double bytes = 0;
  std::string op = "all-reduce";
  bool across_nodes = false;
  /// Multi-rail forms (docs/model.md §4): the group's ranks in each node, and the node's fabric.
  std::int64_t per_node = 0;
  bool per_node_given = false;  ///< --per-node 0 or -4 was taken as "not given", silently
  double node_bandwidth_gb_per_s = 0;
  double node_latency_us = -1;  ///< -1: not given
  std::string format = "text";
};

Collective parse_collective(const std::string& s) {
  return collective_named(s).value_or(Collective::all_reduce);  // --op admits only names
}

int run_collective(const CollectiveArgs& a, std::ostream& out) {
  auto positive = [](double v, const char* flag) {
    if (!(v > 0) || !std::isfinite(v) || v > 1e18) {
      throw InputError("command line", "", fmt::format("{} must be a positive number, got {:g}",
                                                       flag, v));
    }
  };
  // The loader's range for a link, 1 B/s to 1e18 B/s: below it the wire time of a large
  // message overflows to infinity.
  auto link_rate = [](double gb_per_s, const char* flag) {
    if (gb_per_s < 1e-9 || gb_per_s > 1e9) {
      throw InputError("command line", "",
                       fmt::format("{} must be from 1e-09 to 1e+09 GB/s (1 B/s to 1e18 B/s), "
                                   "got {:g}",
                                   flag, gb_per_s));
    }
  };
  auto latency = [](double us, const char* flag) {
    if (!(us >= 0) || !std::isfinite(us) || us > 1e12) {
      throw InputError("command line", "",
                       fmt::format("{} must be >= 0 microseconds, got {:g}", flag, us));
    }
  };
  if (a.gpus < 1 || a.gpus > (std::int64_t{1} << 24)) {
    throw InputError("command line", "", fmt::format("--gpus must be between 1 and 16777216, "
                                                     "got {}", a.gpus));
  }
  positive(a.bandwidth_gb_per_s, "--bw");
  positive(a.bytes, "--bytes");
  link_rate(a.bandwidth_gb_per_s, "--bw");
  latency(a.latency_us, "--latency");
  const bool with_rails = a.per_node_given;
  if (with_rails) {
    if (a.per_node < 2 || a.per_node >= a.gpus || a.gpus % a.per_node != 0) {
      throw InputError("command line", "",
                       fmt::format("--per-node must be a divisor of --gpus from 2 to {} (the "
                                   "group's ranks in each node), got {}",
                                   a.gpus / 2, a.per_node));
    }
    if (a.node_bandwidth_gb_per_s == 0) {
      throw InputError("command line", "", "--per-node needs --node-bw (GB/s per GPU inside the "
                                           "node)");
    }
    positive(a.node_bandwidth_gb_per_s, "--node-bw");
    link_rate(a.node_bandwidth_gb_per_s, "--node-bw");
    if (a.node_latency_us == -1) {
      throw InputError("command line", "", "--per-node needs --node-latency (microseconds per "
                                           "hop inside the node)");
    }
    latency(a.node_latency_us, "--node-latency");
  }
  const bool inside = !a.across_nodes && !with_rails;
  Tier tier;
  tier.bandwidth_bytes_per_second = a.bandwidth_gb_per_s * 1e9;
  tier.latency_seconds = a.latency_us * 1e-6;
  tier.peer_memory = inside;
  Tier node;
  node.bandwidth_bytes_per_second = a.node_bandwidth_gb_per_s * 1e9;
  node.latency_seconds = a.node_latency_us * 1e-6;
  node.peer_memory = true;
  const Collective op = parse_collective(a.op);
  const CollectiveCost best =
      with_rails ? group_collective(op, a.gpus, a.per_node, a.bytes, node, tier)
                : cheapest_collective(op, a.gpus, a.bytes, tier, inside);
  json algorithms = json::array();
  std::string lines;
  std::vector<CollectiveCost> costs;
  for (Algorithm alg : all_algorithms) {
    if (available(op, alg, inside)) costs.push_back(collective_cost(op, alg, a.gpus, a.bytes, tier));
  }
  if (with_rails && has_rails(op, a.gpus, a.per_node)) {
    costs.push_back(multi_rail_ring_cost(op, a.gpus, a.per_node, a.bytes, node, tier));
    if (op == Collective::all_reduce) {
      costs.push_back(multi_rail_tree_cost(a.gpus, a.per_node, a.bytes, node, tier));
    }
  }
  for (const CollectiveCost& c : costs) {
    const Algorithm alg = c.algorithm;
    algorithms.push_back(json{{"algorithm", std::string(to_string(alg))},
                              {"seconds", c.seconds()},
                              {"latency_seconds", c.latency_seconds},
                              {"wire_seconds", c.wire_seconds}});
    // The worked solution's tools/collective_cost.py line, for each algorithm.
    lines += fmt::format("{:<9} single message {:.2f} MiB: {:.3f} ms (latency {:.1f} us + wire "
                         "{:.3f} ms){}\n",
                         to_string(alg), a.bytes / mib, c.seconds() * 1e3, c.latency_seconds * 1e6,
                         c.wire_seconds * 1e3, alg == best.algorithm ? "  <- cheapest" : "");
  }
  if (a.format == "json") {
    out << dump_json(json{{"schema_version", schema_version},
                          {"collective", std::string(to_string(op))},
                          {"gpus", a.gpus},
                          {"bytes", a.bytes},
                          {"bandwidth", tier.bandwidth_bytes_per_second},
                          {"latency", tier.latency_seconds},
                          {"inside_node", inside},
                          {"per_node", with_rails ? json(a.per_node) : json(nullptr)},
                          {"cheapest", std::string(to_string(best.algorithm))},
                          {"algorithms", algorithms}});
  } else {
    const std::string where =
        with_rails ? fmt::format(" (across nodes, {} per node at {:g} GB/s, {:g} us per hop)",
                                a.per_node, a.node_bandwidth_gb_per_s, a.node_latency_us)
        : inside  ? std::string(" (inside a node)")
                  : std::string(" (across nodes)");
    out << fmt::format("{} over {} GPUs at {:g} GB/s, {:g} us per hop{}:\n", to_string(op), a.gpus,
                       a.bandwidth_gb_per_s, a.latency_us, where);
    out << lines;
  }
  return exit_ok;
}

}  // namespace

Runner add_collective(CLI::App& sub) {
  auto a = std::make_shared<CollectiveArgs>();
  sub.add_option("--gpus", a->gpus, "Ranks in the group")->required();
  sub.add_option("--bw", a->bandwidth_gb_per_s, "Bandwidth per GPU, GB/s")->required();
  sub.add_option("--latency", a->latency_us, "Latency per hop, microseconds")->required();
  sub.add_option("--bytes", a->bytes, "Message size in bytes")->required();
  std::vector<std::string> op_names;
  for (const Named<Collective>& n : collective_names) op_names.emplace_back(n.name);
  sub.add_option("--op", a->op, "all-reduce, all-gather, reduce-scatter, all-to-all, point-to-point")
      ->check(CLI::IsMember(op_names))
      ->default_val("all-reduce");
  sub.add_flag("--across-nodes", a->across_nodes, "The group spans nodes (no one-shot)");
  CLI::Option* per_node = sub.add_option("--per-node", a->per_node,
                 "The group's ranks in each node: also price NCCL's multi-rail ring (and tree, "
                 "for all-reduce), the node's ranks crossing on their own rails at once; "
                 "implies --across-nodes and needs --node-bw and --node-latency");
  sub.add_option("--node-bw", a->node_bandwidth_gb_per_s, "With --per-node: the node's fabric, "
                                                          "GB/s per GPU");
  sub.add_option("--node-latency", a->node_latency_us,
                 "With --per-node: the node's latency per hop, microseconds");
  add_format(sub, a->format, {"text", "json"});
  return [a, per_node](std::ostream& out, std::ostream&) {
    a->per_node_given = per_node->count() > 0;
    return run_collective(*a, out);
  };
}

}  // namespace planner::cli

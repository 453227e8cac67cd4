#pragma once
// The serving tests' engine: Llama-3.1-70B on one 8 × H100 node, as
// scenarios/llama31-70b-serving-h100.json; figures worked by hand against it.
#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"

namespace serving_test {

using namespace planner;

/// Llama-3.1-70B (Dubey et al. 2024, Table 3) on one 8 × H100 node, as
/// scenarios/llama31-70b-serving-h100.json.
inline Model llama70b() {
  Model m;
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.gated_mlp = true;
  m.vocab = 128256;
  m.seq_len = 131072;
  return m;
}

/// Llama-3.1-8B (Dubey et al. 2024, Table 3) on the 70B's conventions.
inline Model llama31_8b() {
  Model m = llama70b();
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.ffn_hidden = 14336;
  return m;
}

inline Cluster h100_node() {
  Cluster c;
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.memory_bytes = 80 * gib;
  c.gpu.memory_bandwidth_bytes_per_second = 3.35e12;
  c.gpu.flops_per_second = 400e12;
  c.node_tier() = {450e9, 3e-6, 0, true, "intra_node"};
  c.network_tier() = {50e9, 10e-6, 0, false, "inter_node"};
  return c;
}

/// A tp-wide engine of `batch` sequences, replicated over the node's 8 GPUs.
inline Plan engine(std::int64_t tp, std::int64_t batch) {
  Plan p;
  p.tp = tp;
  p.dp = 8 / tp;
  p.micro_batch = batch;
  return p;
}

}  // namespace serving_test

#pragma once
// The inputs of the worked scenarios A–D, written from shared/ANSWER-KEY.md ("Shared inputs"
// and each scenario's heading), independently of the scenario files, so the model tests do
// not depend on the loader. test_scenarios.cpp checks that the files load to the same values.
#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/base/units.hpp"
#include "planner/inputs/workload.hpp"

namespace answer_key {

using namespace planner;

// 8 nodes × 8 MI300X: 192 GiB (10 GiB reserve), 5.3 TB/s, 400 TFLOP/s effective,
// intra-node 300 GB/s and 5 µs, inter-node 50 GB/s and 15 µs.
inline Cluster cluster() {
  Cluster c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.gpu.memory_bytes = 192 * gib;
  c.gpu.memory_bandwidth_bytes_per_second = 5.3e12;
  c.gpu.flops_per_second = 400e12;
  c.gpu.reserve_bytes = 10 * gib;
  c.node_tier() = {300e9, 5e-6, 0, true, "intra_node"};
  c.network_tier() = {50e9, 15e-6, 0, false, "inter_node"};
  // The seed costs every collective as one flat ring at a GPU's share (its shared inputs).
  c.network_tier().hierarchical = false;
  return c;
}

// GPT shape (MHA, ungated 4h MLP) with the parameter count given.
inline Model gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                 std::int64_t seq_len, double params, std::int64_t vocab = 32000) {
  Model m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.seq_len = seq_len;
  m.params = params;
  return m;
}

inline Model model_a() { return gpt(32, 4096, 32, 4096, 8e9); }
inline Model model_b() { return gpt(80, 8192, 64, 4096, 65e9); }
inline Model model_c() { return gpt(32, 4096, 32, 131072, 8e9); }
inline Model model_d() { return gpt(96, 12288, 96, 4096, 175e9, 50257); }

inline Training training_2m() {
  Training t;
  t.global_batch_tokens = 2e6;
  return t;
}

inline Serving serving_d() {
  Serving s;
  s.batch = 8;
  s.context_tokens = 4096;
  s.slo_per_token_seconds = 25e-3;
  s.memory_bandwidth_efficiency = 0.7;
  s.bytes_per_param = 2;
  return s;
}

inline Plan plan(std::int64_t dp, std::int64_t tp, std::int64_t pp, std::int64_t cp, int zero,
                 Recompute r, bool flash, bool sp, std::int64_t mb = 1, std::int64_t accum = 1) {
  Plan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.cp = cp;
  p.zero = zero;
  p.recompute = r;
  p.flash_attention = flash;
  p.sequence_parallel = sp;
  p.micro_batch = mb;
  p.grad_accum = accum;
  return p;
}

/// "To the precision printed": within half a unit of the last printed digit.
inline bool printed_as(double value, double printed, double last_digit) {
  return value >= printed - 0.5 * last_digit - 1e-12 && value <= printed + 0.5 * last_digit + 1e-12;
}

}  // namespace answer_key

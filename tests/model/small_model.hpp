#pragma once
// A four-layer model of Llama-3-8B's layer shape (GQA 32/8, SwiGLU, 14336-wide MLP), small
// enough that hand calculations over its buckets stay short: the model the overlap-cost and
// hybrid-sharding tests work their figures on.
#include "planner/inputs/model.hpp"

namespace test_models {

inline planner::Model small_model() {
  planner::Model m;
  m.layers = 4;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.gated_mlp = true;
  m.vocab = 32000;
  m.seq_len = 8192;
  return m;
}

}  // namespace test_models

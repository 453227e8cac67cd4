// The model's optional "moe" and "mla" objects (docs/scenario-format.md §model,
// docs/moe.md): strict keys, ranges, and the rules that tie them to the rest of the model.
#include "model_experts.hpp"

#include <fmt/format.h>

#include "scenario_rules.hpp"

namespace planner::json_input {

namespace {

inline constexpr IntRule expert_count{1, pow2(16)};
inline constexpr IntRule layer_count_or_none{0, pow2(20)};
inline constexpr IntRule latent_width{0, pow2(24)};
inline constexpr NumberRule capacity{0, true, 1e3,
                                     "a positive capacity factor such as 1.25 (omit it for "
                                     "dropless routing)"};
inline constexpr NumberRule imbalance_factor{1, false, 1e3,
                                             "a routed-load imbalance of at least 1, such as "
                                             "1.1 (1 = perfectly balanced)"};

}  // namespace

Moe read_moe(const json& v, const Model& m, const std::string& origin) {
  const Object o(v, "/model/moe", origin,
                 {"experts", "top_k", "expert_ffn_hidden", "shared_experts", "layer_freq",
                  "first_dense_layers", "capacity_factor", "imbalance", "overlap_all_to_all",
                  "shared_expert_overlap"});
  Moe e;
  e.experts = o.integer("experts", expert_count);
  e.top_k = o.integer("top_k", expert_count);
  e.expert_ffn_hidden = o.integer("expert_ffn_hidden", ffn_width, m.ffn_hidden);
  e.shared_experts = o.integer("shared_experts", layer_count_or_none, 0);
  e.layer_freq = o.integer("layer_freq", layer_count, 1);
  e.first_dense_layers = o.integer("first_dense_layers", layer_count_or_none, 0);
  e.capacity_factor = o.maybe_number("capacity_factor", capacity).value_or(0);
  e.imbalance = o.maybe_number("imbalance", imbalance_factor).value_or(1.0);
  e.overlap_all_to_all = o.flag("overlap_all_to_all", false);
  e.shared_expert_overlap = o.flag("shared_expert_overlap", false);
  if (e.top_k > e.experts) {
    o.fail_at("top_k", fmt::format("top_k ({}) must not exceed experts ({}); each token is "
                                   "routed to top_k distinct experts",
                                   e.top_k, e.experts));
  }
  if (e.first_dense_layers >= m.layers) {
    o.fail_at("first_dense_layers",
              fmt::format("first_dense_layers ({}) must be below layers ({}) so that some "
                          "layer has experts; remove \"moe\" for a dense model",
                          e.first_dense_layers, m.layers));
  }
  return e;
}

Mla read_mla(const json& v, const std::string& origin) {
  const Object o(v, "/model/mla", origin,
                 {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                  "v_head_dim"});
  Mla a;
  a.q_lora_rank = o.integer("q_lora_rank", latent_width, 0);
  a.kv_lora_rank = o.integer("kv_lora_rank", width);
  a.qk_rope_head_dim = o.integer("qk_rope_head_dim", width);
  a.qk_nope_head_dim = o.integer("qk_nope_head_dim", width);
  a.v_head_dim = o.integer("v_head_dim", width);
  return a;
}

}  // namespace planner::json_input

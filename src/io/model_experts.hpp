#pragma once
// The model's "moe" and "mla" objects (model_experts.cpp), read by read_model.
#include <string>

#include <nlohmann/json.hpp>

#include "planner/inputs/model.hpp"

namespace planner::json_input {

/// The "moe" object of a model whose other keys `m` already holds (layers, ffn_hidden).
[[nodiscard]] Moe read_moe(const nlohmann::json& v, const Model& m, const std::string& origin);
[[nodiscard]] Mla read_mla(const nlohmann::json& v, const std::string& origin);

}  // namespace planner::json_input

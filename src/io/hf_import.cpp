#include <fmt/format.h>

#include <array>
#include <utility>

#include "planner/base/error.hpp"
#include "planner/io/presets.hpp"

/// Hugging Face config.json → the planner's model object. The key names are those of
/// transformers' LlamaConfig (src/transformers/models/llama/configuration_llama.py), shared by
/// MistralConfig and Qwen2Config.

namespace planner {

using nlohmann::json;

namespace {

/// HF key → planner key, with the mapping's meaning.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> hf_keys{{
    {"num_hidden_layers", "layers"},
    {"hidden_size", "hidden"},
    {"num_attention_heads", "heads"},
    {"num_key_value_heads", "kv_heads"},
    {"intermediate_size", "ffn_hidden"},
    {"vocab_size", "vocab"},
    {"tie_word_embeddings", "tied_embeddings"},
    {"max_position_embeddings", "seq_len"},
}};

/// Architectures whose layer is the planner's: pre-norm attention (GQA or MHA, head_dim =
/// hidden / heads) and a gated (SwiGLU) MLP, without experts.
constexpr std::array<std::string_view, 3> gated_architectures{
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};

std::int64_t need_integer(const json& c, std::string_view key, const std::string& origin) {
  const auto it = c.find(std::string(key));
  if (it == c.end()) {
    throw InputError(origin, "/" + std::string(key),
                     fmt::format("missing; a config.json for this architecture has {}", key));
  }
  if (!it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    throw InputError(origin, "/" + std::string(key),
                     fmt::format("expected a positive integer, got {}", it->dump()));
  }
  return it->get<std::int64_t>();
}

void check_architecture(const json& c, const std::string& origin) {
  const auto arch = c.find("architectures");
  if (arch == c.end() || !arch->is_array() || arch->empty() || !(*arch)[0].is_string()) {
    throw InputError(origin, "/architectures",
                     "missing; expected a list such as [\"LlamaForCausalLM\"]");
  }
  const std::string name = (*arch)[0].get<std::string>();
  for (std::string_view a : gated_architectures) {
    if (name == a) return;
  }
  std::string why = "its layer shape is not one the planner models";
  if (name.find("Mixtral") != std::string::npos || c.contains("num_local_experts")) {
    why = "mixture-of-experts layers are not modelled yet";
  } else if (name.find("Gemma") != std::string::npos) {
    why = "its head_dim is not hidden_size / num_attention_heads, which the planner assumes";
  }
  throw InputError(origin, "/architectures/0",
                   fmt::format("cannot map {}: {}; supported: LlamaForCausalLM, "
                               "MistralForCausalLM, Qwen2ForCausalLM (or write the model's "
                               "layers, hidden, heads … in the scenario)",
                               name, why));
}

}  // namespace

std::string_view planner_key_for_hf(std::string_view hf_key) {
  for (const auto& [hf, ours] : hf_keys) {
    if (hf == hf_key) return ours;
  }
  if (hf_key == "hidden_act") return "gated_mlp";
  return {};
}

json model_from_hf(const json& c, const std::string& origin) {
  if (!c.is_object()) throw InputError(origin, "", "expected a config.json object");
  check_architecture(c, origin);
  json m = json::object();
  m["layers"] = need_integer(c, "num_hidden_layers", origin);
  m["hidden"] = need_integer(c, "hidden_size", origin);
  m["heads"] = need_integer(c, "num_attention_heads", origin);
  // LlamaConfig: num_key_value_heads defaults to num_attention_heads (no GQA).
  m["kv_heads"] = c.contains("num_key_value_heads")
                      ? need_integer(c, "num_key_value_heads", origin)
                      : m["heads"].get<std::int64_t>();
  m["ffn_hidden"] = need_integer(c, "intermediate_size", origin);
  if (c.contains("head_dim") && c["head_dim"].is_number_integer() &&
      c["head_dim"].get<std::int64_t>() * m["heads"].get<std::int64_t>() !=
          m["hidden"].get<std::int64_t>()) {
    throw InputError(origin, "/head_dim",
                     fmt::format("{} x num_attention_heads {} is not hidden_size {}: the planner "
                                 "assumes head_dim = hidden / heads",
                                 c["head_dim"].dump(), m["heads"].dump(), m["hidden"].dump()));
  }
  const auto act = c.find("hidden_act");
  if (act != c.end() && !(act->is_string() && (*act == "silu" || *act == "swish"))) {
    throw InputError(origin, "/hidden_act",
                     fmt::format("expected \"silu\" (the gated MLP of these architectures), got {}",
                                 act->dump()));
  }
  m["gated_mlp"] = true;  // LlamaMLP: down(act(gate(x)) * up(x))
  m["vocab"] = need_integer(c, "vocab_size", origin);
  const auto tie = c.find("tie_word_embeddings");
  // PretrainedConfig's default is true; LlamaConfig passes tie_word_embeddings=False.
  m["tied_embeddings"] = tie != c.end() && tie->is_boolean() && tie->get<bool>();
  m["seq_len"] = need_integer(c, "max_position_embeddings", origin);
  return m;
}

}  // namespace planner

#include <fmt/format.h>

#include <array>
#include <span>
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

/// Architectures whose layer is the planner's: pre-norm attention (GQA or MHA) and a gated
/// (SwiGLU) MLP, or routed experts of that MLP in every layer (Mixtral, Qwen3-MoE;
/// docs/moe.md §1). Dense Qwen3 (transformers' Qwen3Config) is Llama's layer with an RMSNorm
/// on each query and key head (2 · head_dim parameters a layer, not counted: 256 of Qwen3-8B's
/// 193 million) and an explicit head_dim. Gemma (transformers' GemmaConfig, GemmaMLP) is
/// Llama's layer with a GeLU gate (hidden_act "gelu", run as gelu_pytorch_tanh) in place of
/// SiLU, an explicit head_dim, and tied embeddings by default.
constexpr std::array<std::string_view, 7> gated_architectures{
    "LlamaForCausalLM",    "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
    "MixtralForCausalLM",  "Qwen3MoeForCausalLM", "GemmaForCausalLM"};

/// Whether the config is Gemma's, whose gate is GeLU and whose embeddings are tied unless the
/// file says otherwise (GemmaConfig: hidden_activation "gelu_pytorch_tanh", tie_word_embeddings
/// True; LlamaConfig and the others default to untied).
bool is_gemma(const json& c) {
  const auto arch = c.find("architectures");
  return arch != c.end() && arch->is_array() && !arch->empty() && (*arch)[0] == "GemmaForCausalLM";
}

std::int64_t need_integer(const json& c, std::string_view key, const std::string& origin) {
  const auto it = c.find(std::string(key));
  if (it == c.end()) {
    throw InputError(origin, "/" + std::string(key),
                     fmt::format("missing; a config.json for this architecture has {}", key));
  }
  // Up to 2^31: every config.json count is far smaller (vocabularies are ~10^5-10^6), and
  // products of two (head_dim × heads) stay inside int64; 2^62 × 2 overflowed (UBSan).
  constexpr std::int64_t max_count = std::int64_t{1} << 31;
  if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 ||
      it->get<std::int64_t>() > max_count) {
    throw InputError(origin, "/" + std::string(key),
                     fmt::format("expected a positive integer up to 2^31, got {}", it->dump()));
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
  if (c.contains("n_routed_experts") || c.contains("num_local_experts") ||
      c.contains("num_experts")) {
    why = "this mixture-of-experts layout is not imported (use a preset such as deepseek-v3 or "
          "write model.moe)";
  }
  throw InputError(origin, "/architectures/0",
                   fmt::format("cannot map {}: {}; supported: LlamaForCausalLM, "
                               "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
                               "MixtralForCausalLM, Qwen3MoeForCausalLM, GemmaForCausalLM (or "
                               "write the model's layers, hidden, heads … in the scenario)",
                               name, why));
}

/// Routed experts: Mixtral's num_local_experts with experts of intermediate_size
/// (MixtralConfig), Qwen3-MoE's num_experts of moe_intermediate_size (Qwen3MoeConfig), top-k
/// num_experts_per_tok in both. Qwen3-MoE layers are sparse when (i + 1) % decoder_sparse_step
/// == 0 and i is not in mlp_only_layers; only the all-sparse layout (1, []) is imported.
void read_experts(const json& c, const std::string& origin, json& m) {
  const bool mixtral = c.contains("num_local_experts");
  if (!mixtral && !c.contains("num_experts")) return;
  json moe = json::object();
  moe["experts"] = need_integer(c, mixtral ? "num_local_experts" : "num_experts", origin);
  moe["top_k"] = need_integer(c, "num_experts_per_tok", origin);
  moe["expert_ffn_hidden"] =
      mixtral ? m["ffn_hidden"].get<std::int64_t>() : need_integer(c, "moe_intermediate_size", origin);
  const auto step = c.find("decoder_sparse_step");
  const auto dense = c.find("mlp_only_layers");
  if ((step != c.end() && *step != 1) || (dense != c.end() && !dense->empty())) {
    throw InputError(origin, step != c.end() && *step != 1 ? "/decoder_sparse_step" : "/mlp_only_layers",
                     "only every layer sparse (decoder_sparse_step 1, mlp_only_layers []) is "
                     "imported; write model.moe with layer_freq and first_dense_layers instead");
  }
  m["moe"] = moe;
}

}  // namespace

std::string_view hf_key_for_planner(std::string_view planner_key, const json& config) {
  // The keys read_experts and model_from_hf take besides hf_keys (Mixtral names the expert
  // count num_local_experts, Qwen3-MoE num_experts): the first one the config holds.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> more{{
      {"num_local_experts", "moe/experts"},
      {"num_experts", "moe/experts"},
      {"num_experts_per_tok", "moe/top_k"},
      {"moe_intermediate_size", "moe/expert_ffn_hidden"},
      {"head_dim", "head_dim"},
  }};
  using Keys = std::span<const std::pair<std::string_view, std::string_view>>;
  for (const Keys table : {Keys(hf_keys), Keys(more)}) {
    for (const auto& [hf, ours] : table) {
      if (ours == planner_key && config.is_object() && config.contains(std::string(hf))) {
        return hf;
      }
    }
  }
  return {};
}

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
  if (c.contains("head_dim") && !c["head_dim"].is_null()) {
    const std::int64_t d = need_integer(c, "head_dim", origin);
    if (d * m["heads"].get<std::int64_t>() != m["hidden"].get<std::int64_t>()) m["head_dim"] = d;
  }
  read_experts(c, origin, m);
  const bool gemma = is_gemma(c);
  const auto act = c.find("hidden_act");
  const auto gated_by = [&](const json& a) {
    if (!a.is_string()) return false;
    if (gemma) return a == "gelu" || a == "gelu_pytorch_tanh";
    return a == "silu" || a == "swish";
  };
  if (act != c.end() && !gated_by(*act)) {
    throw InputError(origin, "/hidden_act",
                     fmt::format("expected {} (the gated MLP of this architecture), got {}",
                                 gemma ? "\"gelu\" or \"gelu_pytorch_tanh\"" : "\"silu\"",
                                 act->dump()));
  }
  // LlamaMLP and GemmaMLP alike: down(act(gate(x)) * up(x)), three matrices.
  m["gated_mlp"] = true;
  m["vocab"] = need_integer(c, "vocab_size", origin);
  const auto tie = c.find("tie_word_embeddings");
  // PretrainedConfig's default is true; LlamaConfig passes tie_word_embeddings=False, and
  // GemmaConfig True.
  m["tied_embeddings"] = tie != c.end() && tie->is_boolean() ? tie->get<bool>() : gemma;
  m["seq_len"] = need_integer(c, "max_position_embeddings", origin);
  return m;
}

}  // namespace planner

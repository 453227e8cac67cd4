#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "planner/base/error.hpp"
#include "planner/io/presets.hpp"
#include "planner/io/quantity.hpp"

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
/// (SwiGLU) MLP, or routed experts of that MLP (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek;
/// docs/moe.md §1). Dense Qwen3 (transformers' Qwen3Config) is Llama's layer with an RMSNorm
/// on each query and key head (2 · head_dim parameters a layer, not counted: 256 of Qwen3-8B's
/// 193 million) and an explicit head_dim. Gemma (transformers' GemmaConfig, GemmaMLP) is
/// Llama's layer with a GeLU gate (hidden_act "gelu", run as gelu_pytorch_tanh) in place of
/// SiLU, an explicit head_dim, and tied embeddings by default. Phi-3 and Phi-4
/// (transformers' Phi3Config, modeling_phi3.py) are Llama's layer with the Q/K/V and the
/// gate/up projections each fused into one matrix (qkv_proj, gate_up_proj): the same
/// parameters and FLOPs. DeepSeek-V2 and -V3 (DeepseekV2Config, DeepseekV3Config) are
/// multi-head latent attention with routed and shared experts (read_deepseek below).
constexpr std::array<std::string_view, 11> gated_architectures{
    "LlamaForCausalLM",      "MistralForCausalLM",    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",      "Phi3ForCausalLM",       "GemmaForCausalLM",
    "MixtralForCausalLM",    "Qwen2MoeForCausalLM",   "Qwen3MoeForCausalLM",
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"};

/// The config's first architecture name, or "" (check_architecture refuses that case).
std::string architecture_of(const json& c) {
  const auto arch = c.find("architectures");
  if (arch == c.end() || !arch->is_array() || arch->empty() || !(*arch)[0].is_string()) return {};
  return (*arch)[0].get<std::string>();
}

bool is_deepseek(const json& c) {
  const std::string a = architecture_of(c);
  return a == "DeepseekV2ForCausalLM" || a == "DeepseekV3ForCausalLM";
}

/// Whether the config is Gemma's, whose gate is GeLU and whose embeddings are tied unless the
/// file says otherwise (GemmaConfig: hidden_activation "gelu_pytorch_tanh", tie_word_embeddings
/// True; LlamaConfig and the others default to untied).
bool is_gemma(const json& c) { return architecture_of(c) == "GemmaForCausalLM"; }

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
  // Architectures users ask for whose layer differs from the planner's in what it costs.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> known{{
      {"Gemma2ForCausalLM", "it alternates sliding-window and global attention layers"},
      {"Gemma3ForCausalLM", "it interleaves sliding-window and global attention layers"},
      {"Phi3SmallForCausalLM", "its attention is block-sparse and its MLP GeGLU"},
  }};
  std::string why = "its layer shape is not one the planner models";
  for (const auto& [arch_name, reason] : known) {
    if (name == arch_name) why = std::string(reason) + ", which the planner's layer is not";
  }
  if (c.contains("n_routed_experts") || c.contains("num_local_experts") ||
      c.contains("num_experts")) {
    why = "this mixture-of-experts layout is not imported (use a preset such as deepseek-v3 or "
          "write model.moe)";
  }
  throw InputError(origin, "/architectures/0",
                   fmt::format("cannot map {}: {}; supported: {} (or write the model's "
                               "layers, hidden, heads … in the scenario)",
                               name, why, fmt::join(gated_architectures, ", ")));
}

/// An optional count: absent or null gives `fallback` (DeepseekV2Config's q_lora_rank is null
/// in DeepSeek-V2-Lite, which projects queries directly), else need_integer's checks, with 0
/// allowed where `zero_ok`.
std::int64_t optional_integer(const json& c, std::string_view key, const std::string& origin,
                              std::int64_t fallback, bool zero_ok = false) {
  const auto it = c.find(std::string(key));
  if (it == c.end() || it->is_null()) return fallback;
  if (zero_ok && it->is_number_integer() && it->get<std::int64_t>() == 0) return 0;
  return need_integer(c, key, origin);
}

/// DeepSeek-V2/V3 (DeepseekV2Config, DeepseekV3Config; the keys of deepseek-ai/DeepSeek-V3's
/// config.json): n_routed_experts experts of moe_intermediate_size, num_experts_per_tok per
/// token, n_shared_experts always-active experts of the same width, the first
/// first_k_dense_replace layers dense (intermediate_size wide) and after them every
/// moe_layer_freq-th layer sparse (modeling_deepseek.py: `layer_idx >= first_k_dense_replace
/// and layer_idx % moe_layer_freq == 0`, the planner's layer_freq rule); multi-head latent
/// attention of q_lora_rank (null: queries projected directly), kv_lora_rank and the
/// rope/nope/value head widths (docs/moe.md §2). The multi-token-prediction module
/// (num_nextn_predict_layers) is not imported, as the loader does not build it: training
/// with it adds model.mtp_layers.
void read_deepseek(const json& c, const std::string& origin, json& m) {
  json moe = json::object();
  moe["experts"] = need_integer(c, "n_routed_experts", origin);
  moe["top_k"] = need_integer(c, "num_experts_per_tok", origin);
  moe["expert_ffn_hidden"] = need_integer(c, "moe_intermediate_size", origin);
  const std::int64_t shared = optional_integer(c, "n_shared_experts", origin, 0, true);
  if (shared > 0) moe["shared_experts"] = shared;
  const std::int64_t first_dense = optional_integer(c, "first_k_dense_replace", origin, 0, true);
  if (first_dense > 0) moe["first_dense_layers"] = first_dense;
  const std::int64_t freq = optional_integer(c, "moe_layer_freq", origin, 1);
  if (freq != 1) moe["layer_freq"] = freq;
  m["moe"] = moe;
  json mla = json::object();
  const std::int64_t q_lora = optional_integer(c, "q_lora_rank", origin, 0, true);
  if (q_lora > 0) mla["q_lora_rank"] = q_lora;
  mla["kv_lora_rank"] = need_integer(c, "kv_lora_rank", origin);
  mla["qk_rope_head_dim"] = need_integer(c, "qk_rope_head_dim", origin);
  mla["qk_nope_head_dim"] = need_integer(c, "qk_nope_head_dim", origin);
  mla["v_head_dim"] = need_integer(c, "v_head_dim", origin);
  m["mla"] = mla;
}

/// Routed experts: Mixtral's num_local_experts with experts of intermediate_size
/// (MixtralConfig), Qwen2-MoE's and Qwen3-MoE's num_experts of moe_intermediate_size
/// (Qwen2MoeConfig, Qwen3MoeConfig), top-k num_experts_per_tok in all. Qwen2-MoE adds one
/// always-active expert shared_expert_intermediate_size wide (Qwen2MoeSparseMoeBlock
/// shared_expert, behind a sigmoid gate of h parameters, not counted): as wide as k routed
/// experts, it is k shared experts of their width (the same parameters and FLOPs, 3·h·f being
/// linear in f); Qwen1.5-MoE-A2.7B's 5632 = 4 × 1408. Qwen3-MoE layers are sparse when (i + 1) % decoder_sparse_step
/// == 0 and i is not in mlp_only_layers; only the all-sparse layout (1, []) is imported.
void read_experts(const json& c, const std::string& origin, json& m) {
  // An MoE architecture without its expert count was imported as a dense model, silently.
  const std::string arch = architecture_of(c);
  if (arch == "MixtralForCausalLM") (void)need_integer(c, "num_local_experts", origin);
  if (arch == "Qwen2MoeForCausalLM" || arch == "Qwen3MoeForCausalLM") {
    (void)need_integer(c, "num_experts", origin);
  }
  const bool mixtral = c.contains("num_local_experts");
  if (!mixtral && !c.contains("num_experts")) return;
  json moe = json::object();
  moe["experts"] = need_integer(c, mixtral ? "num_local_experts" : "num_experts", origin);
  moe["top_k"] = need_integer(c, "num_experts_per_tok", origin);
  moe["expert_ffn_hidden"] =
      mixtral ? m["ffn_hidden"].get<std::int64_t>() : need_integer(c, "moe_intermediate_size", origin);
  if (c.contains("shared_expert_intermediate_size") &&
      !c["shared_expert_intermediate_size"].is_null()) {
    const std::int64_t shared = need_integer(c, "shared_expert_intermediate_size", origin);
    const std::int64_t width = moe["expert_ffn_hidden"].get<std::int64_t>();
    if (shared % width != 0) {
      throw InputError(origin, "/shared_expert_intermediate_size",
                       fmt::format("{} is not a whole number of {}-wide experts; write "
                                   "model.moe.shared_experts and expert_ffn_hidden by hand",
                                   shared, width));
    }
    moe["shared_experts"] = shared / width;
  }
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
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> more{{
      {"num_local_experts", "moe/experts"},
      {"num_experts", "moe/experts"},
      {"n_routed_experts", "moe/experts"},
      {"n_shared_experts", "moe/shared_experts"},
      {"first_k_dense_replace", "moe/first_dense_layers"},
      {"moe_layer_freq", "moe/layer_freq"},
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

std::vector<std::string> hf_import_notes(const json& c) {
  std::vector<std::string> notes;
  if (!c.is_object()) return notes;
  // Sliding-window attention (Mistral 7B v0.1's 4096, Phi-3-mini-4k's 2047; Qwen2 configs name
  // a window with use_sliding_window false): each token attends to the last `window` tokens.
  const auto window = c.find("sliding_window");
  const auto use = c.find("use_sliding_window");
  const auto context = c.find("max_position_embeddings");
  const bool used = use == c.end() || !use->is_boolean() || use->get<bool>();
  if (used && window != c.end() && window->is_number_integer() && context != c.end() &&
      context->is_number_integer() && window->get<std::int64_t>() > 0 &&
      window->get<std::int64_t>() < context->get<std::int64_t>()) {
    notes.push_back(fmt::format(
        "this model attends over a sliding window of {} tokens; the planner times and stores "
        "attention over the whole sequence, so past {} tokens its attention figures are upper "
        "bounds",
        window->get<std::int64_t>(), window->get<std::int64_t>()));
  }
  // DeepSeek-V3's checkpoint carries its multi-token-prediction module (the HF README: 685B
  // with 14B of MTP weights); transformers' loader does not build it.
  const auto mtp = c.find("num_nextn_predict_layers");
  if (is_deepseek(c) && mtp != c.end() && mtp->is_number_integer() && mtp->get<std::int64_t>() > 0) {
    notes.push_back(fmt::format("the checkpoint's {} multi-token-prediction module(s) are not "
                                "imported; add \"mtp_layers\": {} to the model to train with them",
                                mtp->get<std::int64_t>(), mtp->get<std::int64_t>()));
  }
  return notes;
}

std::string_view planner_key_for_hf(std::string_view hf_key) {
  for (const auto& [hf, ours] : hf_keys) {
    if (hf == hf_key) return ours;
  }
  if (hf_key == "hidden_act") return "gated_mlp";
  return {};
}

/// Qwen2's attention has biases on Q, K and V only (modeling_qwen2.py: q_proj, k_proj and
/// v_proj bias=True, o_proj bias=False); the others follow attention_bias and mlp_bias
/// (LlamaConfig, both false by default), either one read as biases on every linear layer,
/// the nearest that Megatron-LM can build (add_bias_linear).
static std::string linear_bias_of(const json& c) {
  const std::string arch = architecture_of(c);
  if (arch == "Qwen2ForCausalLM" || arch == "Qwen2MoeForCausalLM") return "qkv";
  const auto flag = [&](const char* key) {
    const auto v = c.find(key);
    return v != c.end() && v->is_boolean() && v->get<bool>();
  };
  return flag("attention_bias") || flag("mlp_bias") ? "all" : "none";
}

/// The keys read as flags or rates must have their JSON type: `"tie_word_embeddings": "true"`
/// was ignored (read as the default). null stands for the default, as transformers reads it.
void check_value_types(const json& c, const std::string& origin) {
  for (const char* key : {"tie_word_embeddings", "attention_bias", "mlp_bias",
                          "use_sliding_window"}) {
    const auto it = c.find(key);
    if (it != c.end() && !it->is_null() && !it->is_boolean()) {
      throw InputError(origin, std::string("/") + key,
                       fmt::format("expected true or false, got {}", describe_value(*it)));
    }
  }
  const auto dropout = c.find("attention_dropout");
  if (dropout != c.end() && !dropout->is_null() &&
      !(dropout->is_number() && dropout->get<double>() >= 0 && dropout->get<double>() <= 1)) {
    throw InputError(origin, "/attention_dropout",
                     fmt::format("expected a probability from 0 to 1, got {}",
                                 describe_value(*dropout)));
  }
  const auto window = c.find("sliding_window");
  if (window != c.end() && !window->is_null() && !window->is_number_integer()) {
    throw InputError(origin, "/sliding_window",
                     fmt::format("expected a number of tokens or null, got {}",
                                 describe_value(*window)));
  }
}

json model_from_hf(const json& c, const std::string& origin) {
  if (!c.is_object()) throw InputError(origin, "", "expected a config.json object");
  check_architecture(c, origin);
  check_value_types(c, origin);
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
  if (is_deepseek(c)) {
    read_deepseek(c, origin, m);
  } else {
    read_experts(c, origin, m);
  }
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
  // Every architecture above is pre-norm with RMSNorm and rotary positions (the model's
  // defaults) and has no residual dropout; attention dropout is attention_dropout (0.0 in
  // LlamaConfig and the others), so at 0 no mask is kept.
  const auto attention_dropout = c.find("attention_dropout");
  m["dropout"] = attention_dropout != c.end() && attention_dropout->is_number() &&
                 attention_dropout->get<double>() > 0;
  m["linear_bias"] = linear_bias_of(c);
  return m;
}

}  // namespace planner

#include "scenario_sections.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <vector>
#include <fmt/format.h>
#include "planner/io/constraints.hpp"
#include "planner/io/presets.hpp"
#include "planner/base/one_line.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/read_input.hpp"
#include "planner/io/resilience_json.hpp"
#include "planner/model/legality.hpp"
#include "model_experts.hpp"
#include "scenario_rules.hpp"

namespace planner::json_input {

static void check_model(const Model& m, const std::string& origin) {
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    fail(origin, "/model/heads",
         fmt::format("heads ({}) must divide hidden ({}); try {}", m.heads, m.hidden,
                     nearest_divisors(m.hidden, m.heads)));
  }
  if (m.kv_heads > m.heads) {
    fail(origin, "/model/kv_heads",
         fmt::format("kv_heads ({}) must not exceed heads ({})", m.kv_heads, m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    fail(origin, "/model/kv_heads",
         fmt::format("kv_heads ({}) must divide heads ({}); try {}", m.kv_heads, m.heads,
                     nearest_divisors(m.heads, m.kv_heads)));
  }
  if (m.params > 0 && m.params <= embedding_params(m)) {
    fail(origin, "/model/params",
         fmt::format(
             "params ({:.4g}) must exceed the embedding parameters, vocab·hidden{} = {:.4g}; "
             "give the total parameter count, such as 8e9",
             m.params, m.tied_embeddings ? "" : "·2 (untied)", embedding_params(m)));
  }
}

static std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (const DtypeInfo& d : dtypes) names.push_back(d.name);
  return names;
}

static Precision read_precision(const json& v, const std::string& origin) {
  const Object o(v, "/model/precision", origin,
                 {"weights", "gradients", "activations", "kv_cache", "compute", "fp8_recipe"});
  Precision p;
  p.weights = o.maybe_choice("weights", dtype_choices).value_or(p.weights);
  p.gradients = o.maybe_choice("gradients", dtype_choices).value_or(p.gradients);
  p.gradients_stated = o.find("gradients") != nullptr;
  p.activations = o.maybe_choice("activations", dtype_choices).value_or(p.activations);
  p.kv_cache = o.maybe_choice("kv_cache", dtype_choices).value_or(p.kv_cache);
  p.compute = o.maybe_choice("compute", dtype_choices).value_or(p.compute);
  if (const auto recipe = o.maybe_choice("fp8_recipe", fp8_recipe_choices)) {
    if (p.compute != Dtype::fp8) {
      fail(origin, o.path("fp8_recipe"),
           "fp8_recipe says how FP8 GEMMs are scaled; set compute to \"fp8\" or remove it");
    }
    p.fp8_recipe = *recipe;
  }
  return p;
}

Model read_model(const json& v, const std::string& origin) {
  const Object o(v, "/model", origin,
                 {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "vocab",
                  "tied_embeddings", "dropout", "norm", "position_embedding", "linear_bias",
                  "seq_len", "params", "precision", "head_dim", "moe", "mla", "mtp_layers"});
  Model m;
  m.layers = o.integer("layers", layer_count);
  m.hidden = o.integer("hidden", width);
  m.heads = o.integer("heads", width);
  m.kv_heads = o.integer("kv_heads", width, m.heads);
  m.ffn_hidden = o.integer("ffn_hidden", ffn_width, 4 * m.hidden);
  m.gated_mlp = o.flag("gated_mlp", false);
  m.vocab = o.integer("vocab", vocab_size);
  m.tied_embeddings = o.flag("tied_embeddings", false);
  m.dropout = o.flag("dropout", true);
  m.norm = o.maybe_choice("norm", norm_choices).value_or(Norm::rms);
  m.position = o.maybe_choice("position_embedding", position_choices).value_or(Position::rotary);
  m.linear_bias = o.maybe_choice("linear_bias", linear_bias_choices).value_or(LinearBias::none);
  m.seq_len = o.integer("seq_len", token_count);
  m.params = o.maybe_number("params", param_count).value_or(0);
  if (const json* precision = o.find("precision")) {
    m.precision = read_precision(*precision, origin);
  }
  m.head_dim = o.integer("head_dim", width, 0);
  m.mtp_layers = o.integer("mtp_layers", mtp_count, 0);
  if (const json* moe = o.find("moe")) m.moe = read_moe(*moe, m, origin);
  if (const json* mla = o.find("mla")) m.mla = read_mla(*mla, origin);
  check_model(m, origin);
  return m;
}

/// The catalog entry named by /cluster/gpu/catalog, or nullptr when the GPU is described by
/// numbers alone. An unknown name is an error with the nearest catalogued name.
static const CatalogGpu* read_catalog_name(const Object& o, const std::string& origin) {
  const auto name = o.maybe_text("catalog");
  if (!name) return nullptr;
  if (const CatalogGpu* entry = find_catalog_gpu(*name)) return entry;
  const auto guess = closest_catalog_gpu(*name);
  fail(origin, o.path("catalog"),
       fmt::format("unknown GPU {}{}; expected one of: {} (data/gpus.json)", quote(*name),
                   guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : "",
                   catalog_gpu_names()));
}

/// A GPU given by numbers (memory, memory_bandwidth, flops), or named from the catalog
/// ("catalog": "H100-SXM") with any of those numbers as overrides. With a catalog GPU and no
/// flops, the effective rate is the bf16 dense peak times "efficiency", else the catalog's
/// default efficiency (`serving`: its serving efficiency where it has one; docs/scenario-format.md,
/// docs/validation.md).
static Gpu read_gpu(const json& v, const std::string& origin, const CatalogGpu*& entry,
                    bool serving) {
  entry = nullptr;
  const bool names_catalog = v.is_object() && v.contains("catalog");
  if (!names_catalog && v.is_object() && v.contains("efficiency")) {
    fail(origin, "/cluster/gpu/efficiency",
         "efficiency scales a catalog GPU's bf16 peak; name one with \"catalog\" (such as "
         "\"H100-SXM\") or give flops");
  }
  // Without a catalog name the key set (and so every message) is the one of numbers only.
  const Object o = names_catalog
                       ? Object(v, "/cluster/gpu", origin,
                                {"catalog", "memory", "memory_bandwidth", "flops", "flops_by_dtype",
                                 "efficiency", "reserve"})
                       : Object(v, "/cluster/gpu", origin,
                                {"memory", "memory_bandwidth", "flops", "flops_by_dtype", "reserve"});
  entry = read_catalog_name(o, origin);
  Gpu g;
  if (entry != nullptr) {
    g.compute_units = entry->compute_units;
    g.memory_bytes = o.maybe_quantity("memory", Dimension::bytes, gpu_memory)
                         .value_or(entry->memory_bytes);
    g.memory_bandwidth_bytes_per_second =
        o.maybe_quantity("memory_bandwidth", Dimension::bytes_per_second, hbm_bandwidth)
            .value_or(entry->memory_bandwidth_bytes_per_second);
    const auto flops = o.maybe_quantity("flops", Dimension::flops_per_second, compute_rate);
    const auto share = o.maybe_number("efficiency", efficiency);
    if (flops && share) {
      fail(origin, o.path("efficiency"),
           "give flops (an effective rate) or efficiency (a fraction of the bf16 peak), not "
           "both");
    }
    const double peak = entry->peak("bf16").value_or(0);
    // A serving engine's forward passes at the serving fit where the catalog has one (a
    // forward-only engine reaches a larger share than a training step's fit, which also
    // covers what the model leaves out of a backward; docs/model.md §8).
    const double fitted = serving && entry->serving_efficiency > 0 ? entry->serving_efficiency
                                                                   : entry->default_efficiency;
    g.flops_per_second = flops ? *flops : peak * share.value_or(fitted);
    // A rate from the peak is a GEMM rate: the memory-bound work is timed at HBM bandwidth.
    if (!flops) g.elementwise_bytes_per_second = g.memory_bandwidth_bytes_per_second;
    // ... and attention at its kernel's measured share of the GEMM rate (data/gpus.json
    // attention_rate), where the catalog has one for this GPU.
    if (!flops) g.attention_rates = attention_rates_of(*entry);
    g.fitted_rate = !flops && !share;
  } else {
    g.memory_bytes = o.quantity("memory", Dimension::bytes, gpu_memory);
    g.memory_bandwidth_bytes_per_second =
        o.quantity("memory_bandwidth", Dimension::bytes_per_second, hbm_bandwidth);
    g.flops_per_second = o.quantity("flops", Dimension::flops_per_second, compute_rate);
  }
  if (const json* rates = o.find("flops_by_dtype")) {
    const Object r(*rates, o.path("flops_by_dtype"), origin, dtype_names());
    // The 16-bit rate is gpu.flops (or the catalog's peak × efficiency); a second one here
    // replaced it for the GEMMs alone, silently (issue 32).
    for (const char* sixteen : {"bf16", "fp16"}) {
      if (r.find(sixteen) != nullptr) {
        fail(origin, r.path(sixteen),
             fmt::format("the 16-bit GEMM rate is /cluster/gpu/flops{}; give it there, once",
                         entry != nullptr ? " (or efficiency, a fraction of the bf16 peak)" : ""));
      }
    }
    for (const DtypeInfo& d : dtypes) {
      g.flops_by_dtype[static_cast<std::size_t>(d.dtype)] =
          r.maybe_quantity(d.name, Dimension::flops_per_second, compute_rate).value_or(0);
    }
  }
  if (entry != nullptr) {
    // Other formats the catalog knows run at the same fraction of their own dense peak as
    // bf16 does; FP8 then at its recipe's fitted ratio of it (check_precision in
    // scenario_json.cpp, once the model's recipe is known; docs/validation.md §FP8).
    const double share = g.flops_per_second / entry->peak("bf16").value_or(1);
    for (const DtypeInfo& d : dtypes) {
      g.peak_flops_by_dtype[static_cast<std::size_t>(d.dtype)] = entry->peak(d.name).value_or(0);
    }
    for (const DtypeInfo& d : dtypes) {
      double& rate = g.flops_by_dtype[static_cast<std::size_t>(d.dtype)];
      if (rate > 0 || d.dtype == Dtype::bf16 || d.dtype == Dtype::fp16) continue;
      rate = entry->peak(d.name).value_or(0) * share;
      if (d.dtype == Dtype::fp8 && rate > 0) g.fp8_rate_from_efficiency = true;
    }
  }
  const auto reserve = o.maybe_quantity("reserve", Dimension::bytes, reserve_size);
  g.reserve_bytes = reserve.value_or(0);
  if (entry != nullptr && !reserve) {
    // What a launched job holds beyond its tensors, which a scenario's reserve otherwise
    // states (data/gpus.json runtime_memory; docs/model.md §3): a catalog GPU is a real
    // device, so the ledger keeps back what PyTorch and NCCL take on it.
    g.reserve_bytes = runtime_memory().context_bytes.value;
    g.reserve_default = true;
    g.allocator_fraction = runtime_memory().allocator_fraction.value;
    g.eager_activation_fraction = runtime_memory().eager_activation_fraction.value;
  }
  if (g.reserve_bytes >= g.memory_bytes) {
    fail(origin, "/cluster/gpu/reserve",
         fmt::format("reserve ({}) must be less than memory ({}), or nothing is left for the model",
                     format_quantity(g.reserve_bytes, Dimension::bytes),
                     format_quantity(g.memory_bytes, Dimension::bytes)));
  }
  return g;
}

/// A tier's bandwidth as the catalog gives it (0: none), and why there is none.
struct TierDefault {
  double bandwidth = 0;
  double processor_usage = 0;  ///< the catalog fabric's (0 for a GPU given by numbers)
  std::string missing;  ///< added to the "missing required key" message
};

static Tier read_tier(const json& v, const std::string& pointer, const std::string& origin,
               const TierDefault& fallback = {}) {
  const bool network = pointer != "/cluster/intra_node";
  // Only a tier between nodes has the node's rails to run multi-rail collectives on.
  std::vector<std::string_view> keys{"bandwidth", "latency", "processor_usage"};
  if (network) keys.push_back("hierarchical");
  const Object o(v, pointer, origin, std::move(keys));
  Tier t;
  t.peer_memory = !network;
  if (network) t.hierarchical = o.flag("hierarchical", true);
  if (fallback.bandwidth > 0) {
    t.bandwidth_bytes_per_second =
        o.maybe_quantity("bandwidth", Dimension::bytes_per_second, link_bandwidth)
            .value_or(fallback.bandwidth);
  } else {
    if (!fallback.missing.empty() && o.find("bandwidth") == nullptr) {
      fail(origin, o.path("bandwidth"),
           fmt::format("missing required key (expected {}; {})", link_bandwidth.expect,
                       fallback.missing));
    }
    t.bandwidth_bytes_per_second =
        o.quantity("bandwidth", Dimension::bytes_per_second, link_bandwidth);
  }
  t.latency_seconds = o.quantity("latency", Dimension::seconds, link_latency);
  t.processor_usage =
      o.maybe_number("processor_usage", processor_share).value_or(fallback.processor_usage);
  return t;
}

constexpr std::string_view tier_expect = "an object with bandwidth and latency";

/// Network domains between the node and the network (docs/scenario-format.md §cluster), innermost
/// first: each spans a multiple of the previous domain's GPUs, and the world is a multiple of
/// the outermost, so every domain is a block of consecutive ranks (model/placement.hpp).
/// A domain's processor_usage defaults to the catalog's scale-up figure when its GPUs share
/// memory (an NVLink domain such as NVL72), else to the scale-out one.
static void read_domains(const json& v, Cluster& c, const std::string& origin,
                         const TierDefault& intra, const TierDefault& inter) {
  const std::string ptr = "/cluster/domains";
  if (!v.is_array() || v.size() > 2) {
    fail(origin, ptr,
         fmt::format("expected an array of at most 2 objects with name, gpus, bandwidth and "
                     "latency, got {}",
                     describe_value(v)));
  }
  std::int64_t inner = c.gpus_per_node;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = ptr + "/" + std::to_string(i);
    const Object o(v[i], at, origin,
                   {"name", "gpus", "bandwidth", "latency", "peer_memory", "processor_usage",
                    "hierarchical"});
    Tier t;
    t.name = read_string(o.need("name", "a name such as \"rack\""), origin, o.path("name"));
    for (const Tier& other : c.tiers) {
      if (t.name == other.name || t.name == "inter_node") {
        fail(origin, o.path("name"), fmt::format("the name {} is taken; choose another",
                                                 quote(t.name)));
      }
    }
    t.domain_gpus = o.integer("gpus", gpu_count);
    if (t.domain_gpus <= inner || t.domain_gpus % inner != 0) {
      fail(origin, o.path("gpus"),
           fmt::format("expected a multiple of {} greater than it (the GPUs of the tier "
                       "inside), got {}",
                       inner, t.domain_gpus));
    }
    if (world_size(c) % t.domain_gpus != 0 || t.domain_gpus >= world_size(c)) {
      fail(origin, o.path("gpus"),
           fmt::format("expected a proper divisor of the {} GPUs, got {}", world_size(c),
                       t.domain_gpus));
    }
    t.bandwidth_bytes_per_second =
        o.quantity("bandwidth", Dimension::bytes_per_second, link_bandwidth);
    t.latency_seconds = o.quantity("latency", Dimension::seconds, link_latency);
    t.peer_memory = o.flag("peer_memory", false);
    t.hierarchical = o.flag("hierarchical", true);
    t.processor_usage = o.maybe_number("processor_usage", processor_share)
                            .value_or(t.peer_memory ? intra.processor_usage
                                                    : inter.processor_usage);
    inner = t.domain_gpus;
    c.tiers.push_back(std::move(t));
  }
}

Cluster read_cluster(const json& v, const std::string& origin, bool serving) {
  const Object o(v, "/cluster", origin,
                 {"nodes", "gpus_per_node", "gpu", "intra_node", "domains", "inter_node"});
  Cluster c;
  c.nodes = o.integer("nodes", gpu_count);
  c.gpus_per_node = o.integer("gpus_per_node", gpu_count);
  // Each factor is at most 2^24, so this product cannot overflow.
  if (world_size(c) > max_world) {
    fail(origin, "/cluster",
         fmt::format("nodes·gpus_per_node = {}·{} = {} GPUs exceeds the limit of {}", c.nodes,
                     c.gpus_per_node, world_size(c), limit_text(max_world)));
  }
  const CatalogGpu* entry = nullptr;
  c.gpu = read_gpu(o.need("gpu", "an object with memory, memory_bandwidth and flops"), origin,
                   entry, serving);
  TierDefault intra, inter;
  if (entry != nullptr) {
    // The scale-up fabric's figure holds only while a node fits inside its domain.
    if (c.gpus_per_node <= entry->scale_up_domain_gpus) {
      intra.bandwidth = entry->scale_up_bandwidth_bytes_per_second;
    } else {
      intra.missing = fmt::format("the catalog's {} joins {} GPUs ({}) but gpus_per_node is {}",
                                  entry->name, entry->scale_up_domain_gpus,
                                  entry->scale_up_fabric, c.gpus_per_node);
    }
    inter.bandwidth = entry->scale_out_bandwidth_bytes_per_second();
    intra.processor_usage = entry->scale_up_processor_usage;
    inter.processor_usage = entry->scale_out_processor_usage;
    if (inter.bandwidth <= 0) {
      inter.missing = fmt::format("the catalog has no reference network for {}", entry->name);
    }
  }
  c.tiers.clear();
  c.tiers.push_back(
      read_tier(o.need("intra_node", tier_expect), "/cluster/intra_node", origin, intra));
  c.tiers.front().name = "intra_node";
  if (const json* domains = o.find("domains")) read_domains(*domains, c, origin, intra, inter);
  c.tiers.push_back(
      read_tier(o.need("inter_node", tier_expect), "/cluster/inter_node", origin, inter));
  c.tiers.back().name = "inter_node";
  return c;
}

}  // namespace planner::json_input

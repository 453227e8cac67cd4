#include "planner/io/catalog.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/gpu_catalog_data.hpp"  // generated from data/gpus.json
#include "planner/base/spelling.hpp"

namespace planner {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// The "value" of a sourced number; a null value (not catalogued) reads as 0.
double number(const json& entry, const char* key) {
  const json& field = entry.at(key);
  const json& value = field.is_object() ? field.at("value") : field;
  if (value.is_null()) return 0;
  if (!value.is_number()) throw std::runtime_error(std::string("catalog: non-numeric ") + key);
  return value.get<double>();
}

CatalogGpu read_entry(const json& e, double fallback_efficiency,
                      const std::string& fallback_basis) {
  CatalogGpu g;
  g.name = e.at("name").get<std::string>();
  for (const json& a : e.at("aliases")) g.aliases.push_back(a.get<std::string>());
  g.vendor = e.at("vendor").get<std::string>();
  for (const auto& item : e.at("peak_dense_flops").items()) {
    g.peaks.push_back(PeakRate{item.key(), number(e.at("peak_dense_flops"), item.key().c_str())});
  }
  g.memory_bytes = number(e, "memory");
  g.memory_bandwidth_bytes_per_second = number(e, "memory_bandwidth");
  g.compute_units = e.contains("compute_units") ? number(e, "compute_units") : 0.0;
  const json& up = e.at("scale_up");
  g.scale_up_fabric = up.at("fabric").get<std::string>();
  g.scale_up_bandwidth_bytes_per_second = number(up, "bandwidth_per_direction");
  g.scale_up_domain_gpus = static_cast<std::int64_t>(number(up, "domain_gpus"));
  g.scale_up_processor_usage = up.contains("processor_usage") ? number(up, "processor_usage") : 0;
  const json& out = e.at("scale_out");
  g.node_gpus = out.at("gpus_per_node").is_number() ? out.at("gpus_per_node").get<std::int64_t>()
                                                    : 0;
  g.nics_per_node = static_cast<std::int64_t>(number(out, "nics_per_node"));
  g.nic_bits_per_second = number(out, "nic_bits_per_second");
  g.scale_out_processor_usage =
      out.contains("processor_usage") ? number(out, "processor_usage") : 0;
  if (e.contains("variant_of")) g.variant_of = e.at("variant_of").at("value").get<std::string>();
  if (e.contains("default_efficiency")) {
    g.default_efficiency = number(e, "default_efficiency");
    g.efficiency_basis = e.at("default_efficiency").at("source").get<std::string>();
    g.efficiency_own = true;
  } else {
    g.default_efficiency = fallback_efficiency;
    g.efficiency_basis = fallback_basis;
  }
  if (e.contains("serving_efficiency")) {
    g.serving_efficiency = number(e, "serving_efficiency");
    if (!(g.serving_efficiency > 0 && g.serving_efficiency <= 1)) {
      throw std::runtime_error("catalog: serving_efficiency outside (0, 1] for " + g.name);
    }
  }
  if (!(g.memory_bytes > 0) || !(g.memory_bandwidth_bytes_per_second > 0) ||
      !g.peak("bf16") || !(g.default_efficiency > 0 && g.default_efficiency <= 1)) {
    throw std::runtime_error("catalog: incomplete entry " + g.name);
  }
  return g;
}

/// A fitted constant `table_name.key` with its source, inside (low, high]; outside is a build
/// defect in data/gpus.json, never a user's input.
SourcedValue sourced(const json& table, const std::string& table_name, const std::string& key,
                     double low, double high) {
  SourcedValue v{number(table, key.c_str()), table.at(key).at("source").get<std::string>()};
  if (!(v.value > low && v.value <= high)) {
    throw std::runtime_error(fmt::format("catalog: {}.{} outside ({:g}, {:g}]", table_name, key,
                                         low, high));
  }
  return v;
}

std::array<SourcedValue, fp8_recipe_count> parse_fp8_ratios(const json& doc) {
  const json& table = doc.at("fp8_efficiency_ratio");
  std::array<SourcedValue, fp8_recipe_count> out{};
  for (std::size_t i = 0; i < fp8_recipe_count; ++i) {
    out[i] = sourced(table, "fp8_efficiency_ratio", std::string(fp8_recipe_names[i]), 0, 1.5);
  }
  return out;
}

ServingRead parse_serving_read(const json& doc) {
  const json& table = doc.at("serving_read");
  return {sourced(table, "serving_read", "weights_efficiency", 0, 1),
          sourced(table, "serving_read", "kv_efficiency", 0, 1),
          sourced(table, "serving_read", "layer_step_seconds", 0, 1e-3)};
}

RuntimeMemory parse_runtime_memory(const json& doc) {
  const json& table = doc.at("runtime_memory");
  return {sourced(table, "runtime_memory", "allocator_fraction", 0, 0.5),
          sourced(table, "runtime_memory", "eager_activation_fraction", 0, 1.0),
          sourced(table, "runtime_memory", "context_bytes", 0, 16.0 * 1024 * 1024 * 1024)};
}

AttentionRateTable parse_attention_rate(const json& doc) {
  const json& table = doc.at("attention_rate");
  AttentionRateTable out;
  for (const json& name : table.at("gpus").at("value")) out.gpus.push_back(name.get<std::string>());
  out.gpus_source = table.at("gpus").at("source").get<std::string>();
  for (std::size_t i = 0; i < attention_kernel_count; ++i) {
    const std::string kernel(attention_kernel_names[i]);
    const std::string name = "attention_rate." + kernel;
    out.limit[i] = sourced(table.at(kernel), name, "limit", 0, 1);
    out.half_tokens[i] = sourced(table.at(kernel), name, "half_tokens", 0, 1e6);
  }
  return out;
}

std::vector<CatalogGpu> parse_gpus(const json& doc) {
  const json& fallback = doc.at("default_efficiency");
  const double efficiency = number(doc, "default_efficiency");
  const std::string basis = fallback.at("source").get<std::string>();
  std::vector<CatalogGpu> out;
  for (const json& e : doc.at("gpus")) out.push_back(read_entry(e, efficiency, basis));
  return out;
}

/// Every table of data/gpus.json, read from one parse of it: the document is 70 kB of sourced
/// values, and parsing it was a tenth of a search's instructions when each table parsed it
/// again (the Mixtral training scenario read it twice).
struct CatalogTables {
  std::vector<CatalogGpu> gpus;
  std::array<SourcedValue, fp8_recipe_count> fp8_ratios;
  ServingRead serving;
  RuntimeMemory runtime;
  AttentionRateTable attention;
};

const CatalogTables& catalog_tables() {
  static const CatalogTables tables = [] {
    const json doc = json::parse(gpu_catalog_text());
    return CatalogTables{parse_gpus(doc), parse_fp8_ratios(doc), parse_serving_read(doc),
                         parse_runtime_memory(doc), parse_attention_rate(doc)};
  }();
  return tables;
}

}  // namespace

std::optional<double> CatalogGpu::peak(std::string_view dtype) const noexcept {
  for (const PeakRate& p : peaks) {
    if (p.dtype == dtype && p.flops_per_second > 0) return p.flops_per_second;
  }
  return std::nullopt;
}

double CatalogGpu::scale_out_bandwidth_bytes_per_second() const noexcept {
  if (node_gpus <= 0 || nics_per_node <= 0 || !(nic_bits_per_second > 0)) return 0;
  return static_cast<double>(nics_per_node) * nic_bits_per_second / 8.0 /
         static_cast<double>(node_gpus);
}

std::string_view gpu_catalog_text() {
  // The build embeds the file in pieces (cmake/embed_text.cmake); join them once.
  static const std::string text = [] {
    std::string joined;
    for (std::string_view piece : embedded::gpu_catalog_json_pieces) joined += piece;
    return joined;
  }();
  return text;
}

const std::vector<CatalogGpu>& gpu_catalog() { return catalog_tables().gpus; }

const SourcedValue& fp8_efficiency_ratio(Fp8Recipe recipe) {
  return catalog_tables().fp8_ratios[static_cast<std::size_t>(recipe)];
}

const ServingRead& serving_read() { return catalog_tables().serving; }

const RuntimeMemory& runtime_memory() { return catalog_tables().runtime; }

const AttentionRateTable& attention_rate_table() { return catalog_tables().attention; }

std::array<AttentionRate, attention_kernel_count> attention_rates_of(const CatalogGpu& gpu) {
  const AttentionRateTable& t = attention_rate_table();
  std::array<AttentionRate, attention_kernel_count> out{};
  if (std::find(t.gpus.begin(), t.gpus.end(), gpu.name) == t.gpus.end()) return out;
  for (std::size_t i = 0; i < attention_kernel_count; ++i) {
    out[i] = {t.limit[i].value, t.half_tokens[i].value};
  }
  return out;
}

const CatalogGpu* find_catalog_gpu(std::string_view name) {
  const std::string wanted = lower(name);
  for (const CatalogGpu& g : gpu_catalog()) {
    if (lower(g.name) == wanted) return &g;
    for (const std::string& a : g.aliases) {
      if (lower(a) == wanted) return &g;
    }
  }
  return nullptr;
}

std::optional<std::string> closest_catalog_gpu(std::string_view name) {
  // Compare in lower case so that "h100-smx" still finds "H100-SXM"; answer the canonical name.
  std::vector<std::string> spellings;
  std::vector<const CatalogGpu*> owners;
  for (const CatalogGpu& g : gpu_catalog()) {
    spellings.push_back(lower(g.name));
    owners.push_back(&g);
    for (const std::string& a : g.aliases) {
      spellings.push_back(lower(a));
      owners.push_back(&g);
    }
  }
  const auto guess = closest(lower(name), spellings);
  if (!guess) return std::nullopt;
  for (std::size_t i = 0; i < spellings.size(); ++i) {
    if (spellings[i] == *guess) return owners[i]->name;
  }
  return std::nullopt;
}

std::string catalog_gpu_names() {
  std::string out;
  for (const CatalogGpu& g : gpu_catalog()) {
    if (!out.empty()) out += ", ";
    out += g.name;
  }
  return out;
}

}  // namespace planner

#include "planner/io/presets.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "planner/base/error.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/scenario_json.hpp"

namespace planner {

using nlohmann::json;

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const PresetText& p : model_preset_texts()) names.emplace_back(p.name);
  return names;
}

json model_preset(std::string_view name) {
  for (const PresetText& p : model_preset_texts()) {
    if (p.name == name) return json::parse(p.json_text);
  }
  return nullptr;
}

namespace {

/// The model object a "preset" or "hf_config" value names.
json base_model(const json& model, const std::string& origin, const std::string& base_dir) {
  if (model.contains("preset") && model.contains("hf_config")) {
    throw InputError(origin, "/model/hf_config", "give either \"preset\" or \"hf_config\", not both");
  }
  if (const auto it = model.find("preset"); it != model.end()) {
    if (!it->is_string()) {
      throw InputError(origin, "/model/preset",
                       fmt::format("expected a preset name (planner list models), got {}",
                                   it->dump()));
    }
    const std::string name = it->get<std::string>();
    const json preset = model_preset(name);
    if (preset.is_null()) {
      const auto names = model_preset_names();
      const auto guess = closest(name, names);
      throw InputError(origin, "/model/preset",
                       fmt::format("unknown preset \"{}\"{}; planner list models shows them all",
                                   name, guess ? fmt::format(" (did you mean \"{}\"?)", *guess)
                                               : std::string()));
    }
    return preset.at("model");
  }
  const json& path = model.at("hf_config");
  if (!path.is_string()) {
    throw InputError(origin, "/model/hf_config",
                     fmt::format("expected the path of a config.json, got {}", path.dump()));
  }
  std::filesystem::path file = path.get<std::string>();
  if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
  json m = model_from_hf(read_json_file(file.string()), file.string());
  m.erase("seq_len");  // the context window; the scenario gives its own sequence length
  return m;
}

}  // namespace

json expand_model(const json& model, const std::string& origin, const std::string& base_dir) {
  if (!model.is_object()) return model;
  for (const auto& [key, value] : model.items()) {
    const std::string_view ours = planner_key_for_hf(key);
    if (!ours.empty()) {
      throw InputError(origin, "/model/" + key,
                       fmt::format("a Hugging Face key: this file calls it \"{}\" (or give the "
                                   "whole config.json as \"hf_config\": \"path\")",
                                   ours));
    }
  }
  if (!model.contains("preset") && !model.contains("hf_config")) return model;
  json out = base_model(model, origin, base_dir);
  for (const auto& [key, value] : model.items()) {
    if (key != "preset" && key != "hf_config") out[key] = value;
  }
  return out;
}

}  // namespace planner

// docs/scenario.schema.json: every bundled scenario validates against it, and on a sample of
// bad files the loader and the schema agree (both refuse). The validator is
// json_schema_subset.hpp (the keywords the schema uses, nothing else).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "json_schema_subset.hpp"
#include "planner/base/error.hpp"
#include "planner/io/scenario_json.hpp"

using nlohmann::json;

namespace {

const std::filesystem::path schema_dir{PLANNER_SOURCE_DIR};

json read_doc(const std::filesystem::path& p) {
  std::ifstream in(p);
  REQUIRE(in);
  return json::parse(in);
}

const json_schema_subset::Validator& schema() {
  static const json_schema_subset::Validator v(read_doc(schema_dir / "docs/scenario.schema.json"));
  return v;
}

std::string joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) out += e + "\n";
  return out;
}

/// Whether the loader accepts `doc` (origin: a file in `folder`, for relative hf_config paths).
bool loads(const json& doc, const std::string& origin) {
  try {
    (void)planner::load_scenario(doc, origin);
    return true;
  } catch (const planner::InputError&) {
    return false;
  }
}

/// The files the planner reads as scenarios, with the scenario inside each: a scenario file
/// itself; a training validation record's scenario keys (src/report/validate.cpp
/// scenario_keys); a serving record's "scenario" object.
std::vector<std::pair<std::string, json>> bundled_scenarios() {
  std::vector<std::pair<std::string, json>> out;
  for (const auto& entry : std::filesystem::directory_iterator(schema_dir / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    out.emplace_back(std::filesystem::relative(entry.path(), schema_dir).string(),
                     read_doc(entry.path()));
  }
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(schema_dir / "validation")) {
    if (entry.path().extension() != ".json") continue;
    const json record = read_doc(entry.path());
    if (!record.is_object()) continue;
    const std::string name = std::filesystem::relative(entry.path(), schema_dir).string();
    if (record.contains("scenario")) {
      out.emplace_back(name, record.at("scenario"));
    } else if (record.contains("model") && record.contains("cluster")) {
      json s;
      for (const char* key : {"name", "description", "model", "cluster", "workload", "plan"}) {
        if (record.contains(key)) s[key] = record.at(key);
      }
      out.emplace_back(name, s);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("The scenario schema is draft 2020-12", "[schema]") {
  const json s = read_doc(schema_dir / "docs/scenario.schema.json");
  CHECK(s.at("$schema") == "https://json-schema.org/draft/2020-12/schema");
  CHECK(s.at("additionalProperties") == false);
}

TEST_CASE("Every bundled scenario validates against the schema and loads", "[schema]") {
  const auto scenarios = bundled_scenarios();
  // scenarios/ holds 19 files, validation/ 50 training and 8 serving records at least.
  CHECK(scenarios.size() >= 70);
  for (const auto& [name, doc] : scenarios) {
    INFO(name);
    CHECK(joined(schema().errors(doc)).empty());
    CHECK(loads(doc, (schema_dir / name).string()));
  }
}

TEST_CASE("The loader and the schema refuse the same bad files", "[schema]") {
  const json base = read_doc(schema_dir / "scenarios/a.json");
  const std::string origin = (schema_dir / "scenarios/a.json").string();
  REQUIRE(schema().errors(base).empty());
  // Each edit breaks one rule of docs/scenario-format.md: {pointer, value; null removes}.
  const std::vector<std::pair<std::string, json>> edits{
      {"/modle", json::object()},                           // unknown top-level key
      {"/model/hiden", 4096},                               // unknown model key
      {"/model/layers", nullptr},                           // missing required key
      {"/model/layers", 0},                                 // below the range
      {"/model/layers", 3.5},                               // not an integer
      {"/model/gated_mlp", "true"},                         // a string for a bool
      {"/model/precision", json{{"weights", "bf12"}}},      // unknown dtype
      {"/model/preset", "llama-3.1-8b"},                    // with hf_config below: both
      {"/cluster/gpu/memory", "192"},                       // a quantity without a unit
      {"/cluster/gpu/memory", "192 GB/s"},                  // a unit of another dimension
      {"/cluster/gpu/memory", -5},                          // negative
      {"/cluster/inter_node/latency", nullptr},             // latency is always required
      {"/cluster/domains", json::array({1, 2, 3})},         // more than two domains
      {"/workload/kind", "inference"},                      // unknown kind
      {"/workload/slo_per_token", "25 ms"},                 // a serving key in training
      {"/workload/bytes_per_param", 2},                     // below 4 for training
      {"/plan", json{{"zero", 4}}},                         // ZeRO stage 0-3
      {"/plan", json{{"recompute", "partial"}}},            // unknown recompute
      {"/plan", json{{"placement", json::array({"tp"})}}},  // not a permutation
      {"/expect", json{{"tp_tier", "rack"}}},               // unknown tier
      {"/stragglers", json{{"distribution", "gaussian"}}},  // jitter required
      {"/resilience", json{{"gpu_mtbf", "50677 h"}}},       // storage required
      {"/constraints", json{{"framework", "jax"}}},         // unknown framework
      {"/constraints", json{{"fix", "tp=8,zero<=7"}}},      // ZeRO bound out of range
  };
  for (const auto& [pointer, value] : edits) {
    INFO(pointer << " = " << value.dump());
    json doc = base;
    const json::json_pointer at(pointer);
    if (value.is_null()) {
      doc[at.parent_pointer()].erase(at.back());
    } else {
      doc[at] = value;
    }
    if (pointer == "/model/preset") doc["model"]["hf_config"] = "config.json";
    CHECK_FALSE(schema().errors(doc).empty());
    CHECK_FALSE(loads(doc, origin));
  }
}

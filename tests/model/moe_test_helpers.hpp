#pragma once
// Helpers shared by test_moe.cpp and test_moe_more.cpp (split to stay under 500 lines).
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include "cli_harness.hpp"
#include "planner/base/error.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/legality.hpp"

namespace moe_test_helpers {

using namespace planner;
using nlohmann::json;


const std::string source_dir = PLANNER_SOURCE_DIR;

/// A training scenario on `nodes` × 8 GPUs (80 GiB, 400 TFLOP/s; NVLink 450 GB/s, 50 GB/s
/// across nodes) around `model`, as if it were a file in tests/data/.
inline json scenario_doc(const json& model, int nodes = 1) {
  const json gpu = {{"memory", "80 GiB"}, {"memory_bandwidth", "3.35 TB/s"}, {"flops", "400 TFLOP/s"}};
  const json cluster = {{"nodes", nodes},
                        {"gpus_per_node", 8},
                        {"gpu", gpu},
                        {"intra_node", {{"bandwidth", "450 GB/s"}, {"latency", "3 us"}}},
                        {"inter_node", {{"bandwidth", "50 GB/s"}, {"latency", "10 us"}}}};
  return {{"model", model},
          {"cluster", cluster},
          {"workload", {{"kind", "training"}, {"global_batch_tokens", 1048576}}}};
}

inline Scenario load(const json& doc) { return load_scenario(doc, source_dir + "/tests/data/scenario.json"); }

/// `doc` written to build/NAME, for the command-line tests; returns the path.
inline std::string write_scenario(const json& doc, const std::string& name) {
  const std::string path = source_dir + "/build/" + name;
  std::ofstream(path) << doc.dump();
  return path;
}

const json mixtral = {{"preset", "mixtral-8x7b"}, {"seq_len", 4096}};

inline Model preset(const char* name) {
  return load(scenario_doc({{"preset", name}, {"seq_len", 4096}})).model;
}

}  // namespace moe_test_helpers

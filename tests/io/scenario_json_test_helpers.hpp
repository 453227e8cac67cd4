#pragma once
// Helpers shared by test_scenario_json.cpp and test_scenario_plan.cpp (split to stay under 500 lines).
#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include "planner/base/error.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/base/spelling.hpp"

namespace scenario_json_test_helpers {

using planner::Dimension;
using planner::InputError;


// A small valid training scenario; each error test changes one thing with --set syntax.
constexpr std::string_view base_scenario = R"({
  "name": "base",
  "model": {"layers": 32, "hidden": 4096, "heads": 32, "vocab": 128256, "seq_len": 4096},
  "cluster": {
    "nodes": 8, "gpus_per_node": 8,
    "gpu": {"memory": "192 GiB", "memory_bandwidth": "4.8 TB/s", "flops": "400 TFLOP/s",
            "reserve": "10 GiB"},
    "intra_node": {"bandwidth": "450 GB/s", "latency": "5 us"},
    "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}
  },
  "workload": {"kind": "training", "global_batch_tokens": 4194304}
})";

/// The message of the InputError thrown by `f`, or "no error".
template <typename F>
inline std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

inline std::string load_text_error(std::string_view text) {
  return error_of([&] { (void)planner::load_scenario_text(text, "a.json"); });
}

inline nlohmann::json base_with(std::initializer_list<std::string_view> sets) {
  auto doc = planner::parse_json_text(base_scenario, "a.json");
  for (const auto set : sets) planner::apply_override(doc, set);
  return doc;
}

/// Loads the base scenario with the given overrides; returns the error text.
inline std::string error_with(std::initializer_list<std::string_view> sets) {
  return error_of([&] { (void)planner::load_scenario(base_with(sets), "a.json"); });
}

inline double bytes(std::string_view text) {
  return planner::parse_quantity_text(text, Dimension::bytes, "q", "/q");
}

inline std::string quantity_error(std::string_view text, Dimension d) {
  return error_of([&] { (void)planner::parse_quantity_text(text, d, "a.json", "/x"); });
}

}  // namespace scenario_json_test_helpers

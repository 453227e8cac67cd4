// The serving read constants of data/gpus.json (serving_read) are fitted to the public
// microbenchmarks in data/microbenchmarks/hbm_and_step_overheads.json as that file's notes say;
// this test refits them from the raw tables and checks the catalog holds the fit, so neither
// can change without the other.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "planner/io/catalog.hpp"

using nlohmann::json;

namespace {

json read_data(const char* relative) {
  std::ifstream in(std::filesystem::path(PLANNER_SOURCE_DIR) / relative);
  return json::parse(in);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Least-squares line y = a + b·x.
std::pair<double, double> line(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(y.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  const double b = sxy / sxx;
  return {my - b * mx, b};
}

/// The index of a named column; the test fails (rather than reading past a row) without it.
std::size_t column(const json& table, const char* name) {
  const json& c = table.at("columns");
  const auto it = std::find(c.begin(), c.end(), json(name));
  REQUIRE(it != c.end());
  return static_cast<std::size_t>(it - c.begin());
}

bool has_column(const json& table, const char* name) {
  const json& c = table.at("columns");
  return std::find(c.begin(), c.end(), json(name)) != c.end();
}

}  // namespace

TEST_CASE("serving read constants refit from their microbenchmarks", "[serving][calibration]") {
  const json data = read_data("data/microbenchmarks/hbm_and_step_overheads.json");
  std::vector<double> weights, kv_fraction, layer_fixed;
  for (const json& r : data.at("records")) {
    const std::string fit = r.value("planner_fit", "");
    const json& t = r.contains("table") ? r.at("table") : json();
    if (fit == "weights_read") {
      weights.push_back(r.at("achieved_fraction_of_datasheet").get<double>());
    } else if (fit == "kv_read") {
      // time = fixed + bytes / (fraction × datasheet bandwidth), one line per sweep.
      const std::string prefix = r.value("planner_fit_row_prefix", "");
      const bool split = has_column(t, "read_bytes");
      std::vector<double> bytes, seconds;
      for (const json& row : t.at("rows")) {
        if (!prefix.empty() && row[0].get<std::string>().rfind(prefix, 0) != 0) continue;
        if (split) {
          bytes.push_back(row[column(t, "read_bytes")].get<double>() +
                          row[column(t, "write_bytes")].get<double>());
          seconds.push_back(row[column(t, "gpu_time_s")].get<double>());
        } else {
          bytes.push_back(row[column(t, "kv_bytes_derived")].get<double>());
          seconds.push_back(row[column(t, "time_s")].get<double>());
        }
      }
      const auto [fixed, per_byte] = line(bytes, seconds);
      kv_fraction.push_back(
          1 / per_byte / r.at("hardware").at("datasheet_bandwidth_bytes_per_second").get<double>());
    } else if (fit == "layer_step") {
      // gpt-fast's batch-1 decode: seconds per token less 2 all-reduces per layer (3 µs each at
      // tp > 1) = layers × fixed + weight bytes per GPU / bandwidth, one line per model. Layers
      // and parameters: Touvron et al. 2023 (arXiv 2307.09288) Table 1 and the Llama 3 paper
      // (arXiv 2407.21783) Table 3, parameter counts from the checkpoints' model cards.
      const std::map<std::string, std::pair<double, double>> shape{
          {"Llama-2-7B", {32, 6.74e9}},   {"Llama-3.1-8B", {32, 8.03e9}},
          {"Llama-2-70B", {80, 68.98e9}}, {"Llama-3.1-70B", {80, 70.55e9}}};
      const json excluded = r.value("planner_fit_excluded_models", json::array());
      for (const auto& [model, lp] : shape) {
        if (std::find(excluded.begin(), excluded.end(), model) != excluded.end()) continue;
        std::vector<double> bytes, seconds;
        for (const json& row : t.at("rows")) {
          if (row[0] != json(model) || row[1] != json("bf16")) continue;
          const double tp = row[2].get<double>();
          bytes.push_back(2 * lp.second / tp);
          seconds.push_back(1 / row[4].get<double>() - (tp > 1 ? 2 * lp.first * 3e-6 : 0));
        }
        layer_fixed.push_back(line(bytes, seconds).first / lp.first);
      }
    }
  }
  REQUIRE(weights.size() == 4);
  REQUIRE(kv_fraction.size() == 3);
  REQUIRE(layer_fixed.size() == 3);
  const planner::ServingRead& read = planner::serving_read();
  CHECK(read.weights_efficiency.value == Approx(median_of(weights)).margin(5e-4));
  CHECK(read.kv_efficiency.value == Approx(median_of(kv_fraction)).margin(5e-4));
  CHECK(read.layer_step_seconds.value == Approx(median_of(layer_fixed)).margin(0.05e-6));
}

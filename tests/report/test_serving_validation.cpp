// Published serving measurements (validation/serving/*.json) against the model. Each record
// embeds its scenario, the measured figure and where it was published, the validation target,
// and the error the record reports. The test keeps the report honest: a record said to be
// within target must be, and every recorded error must still be the model's error (a model
// change that moves one fails here until tools/serving_records.py refreshes the records).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/base/error.hpp"
#include "planner/report/serving_accuracy.hpp"
#include "planner/report/validate_serving.hpp"

using namespace planner;
using nlohmann::json;

namespace {

std::filesystem::path serving_dir() {
  return std::filesystem::path(PLANNER_SOURCE_DIR) / "validation/serving";
}

json read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

}  // namespace

TEST_CASE("published serving measurements: errors as recorded", "[serving][validation]") {
  int records = 0;
  for (const auto& entry : std::filesystem::directory_iterator(serving_dir())) {
    if (entry.path().extension() != ".json") continue;
    ++records;
    const json record = read(entry.path());
    INFO(entry.path().filename().string());
    REQUIRE(is_serving_record(record));
    REQUIRE(record.at("source").at("row").get<std::string>().size() > 0);
    const ServingResult r = validate_serving_record(record, entry.path().string());
    REQUIRE(r.error().has_value());
    CHECK(*r.error() == Approx(record.at("recorded_error").get<double>()).margin(0.01));
    CHECK((std::abs(*r.error()) <= r.target) == record.at("within_target").get<bool>());
    // The records test the defaults a user gets: a catalog GPU, nothing typed.
    const json& gpu = record.at("scenario").at("cluster").at("gpu");
    CHECK(gpu.contains("catalog"));
    CHECK_FALSE(gpu.contains("flops"));
    CHECK_FALSE(record.at("scenario").at("workload").contains("memory_bandwidth_efficiency"));
  }
  CHECK(records >= 20);
}

TEST_CASE("validate reports serving records per metric", "[serving][validation][cli]") {
  const cli_harness::Run r =
      cli_harness::run({"validate", "validation/serving", "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("records").empty());  // no training record in that folder
  const json& by = j.at("serving").at("by_metric");
  for (const char* metric : {"ttft", "per_token", "throughput", "all"}) {
    INFO(metric);
    REQUIRE(by.contains(metric));
    CHECK(by.at(metric).at("records").get<int>() > 0);
    CHECK(by.at(metric).at("max_abs_error").get<double>() >=
          by.at(metric).at("median_abs_error").get<double>());
  }
  // The whole folder takes its serving subfolder too.
  const cli_harness::Run all = cli_harness::run({"validate", "validation/"});
  CHECK(all.out.find("serving records, current model") != std::string::npos);
  CHECK(all.out.find("time per output token") != std::string::npos);
}

TEST_CASE("a serving record with an unknown pointer is refused by name", "[serving][validation]") {
  json record = read(serving_dir() / "trtllm-h100-fp8-llama2-70b-tp4-in2048-ttft.json");
  record["measured"]["pointer"] = "/plan/time/nothing";
  CHECK_THROWS_WITH(validate_serving_record(record, "r.json"),
                    Catch::Contains("r.json: /measured/pointer") &&
                        Catch::Contains("/plan/time/per_token"));
  record["measured"]["pointer"] = "/plan/time/ttft";
  record["measured"]["value"] = -1;
  CHECK_THROWS_WITH(validate_serving_record(record, "r.json"),
                    Catch::Contains("/measured/value"));
  record["measured"]["value"] = 0.1;
  record["set"] = "fitted";
  CHECK_THROWS_WITH(validate_serving_record(record, "r.json"),
                    Catch::Contains("r.json: /set") && Catch::Contains("\"calibration\""));
  record["set"] = "calibration";
  CHECK(validate_serving_record(record, "r.json").calibration);
}

TEST_CASE("the calibration serving records are fitted to and reported apart",
          "[serving][validation][cli]") {
  // validation/serving/README.md: twelve single-node A100 records whose first token is a
  // compute-bound 2,048-token prefill fit data/gpus.json serving_efficiency; the summaries
  // that are quoted count the other 3,020 alone.
  int calibration = 0, validation = 0;
  for (const auto& entry : std::filesystem::directory_iterator(serving_dir())) {
    if (entry.path().extension() != ".json") continue;
    const json record = read(entry.path());
    const bool fitted = record.value("set", std::string()) == "calibration";
    (fitted ? calibration : validation) += 1;
    if (!fitted) continue;
    INFO(entry.path().filename().string());
    // One node, one prompt, its first token: what isolates the engine's GEMM rate.
    const json& s = record.at("scenario");
    CHECK(s.at("cluster").at("nodes") == 1);
    CHECK(s.at("cluster").at("gpu").at("catalog").get<std::string>().rfind("A100", 0) == 0);
    CHECK(record.at("measured").at("pointer").get<std::string>().rfind("/plan/time/ttft", 0) == 0);
    CHECK(s.at("workload").at("input_tokens") == 2048);
  }
  CHECK(calibration == 12);
  const auto r = cli_harness::run({"validate", "validation/serving", "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out).at("serving");
  CHECK(j.at("by_metric").at("all").at("records") == validation);
  CHECK(j.at("calibration_by_metric").at("all").at("records") == calibration);
}

TEST_CASE("The quoted serving accuracy is what the serving records give",
          "[serving][validation][accuracy]") {
  // Each metric's row of report/serving_accuracy.hpp recomputed from validation/serving/'s
  // validation records: count, median and worst |error|, signed median (to the table's four
  // decimals).
  std::map<std::string, std::vector<double>> errors;
  for (const auto& entry : std::filesystem::directory_iterator(serving_dir())) {
    if (entry.path().extension() != ".json") continue;
    const ServingResult r = validate_serving_record(read(entry.path()), entry.path().string());
    REQUIRE(r.error().has_value());
    if (r.calibration) continue;  // fitted to (data/gpus.json serving_efficiency): not quoted
    errors[r.metric].push_back(*r.error());
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  REQUIRE(errors.size() == serving_accuracy.size());
  for (const ServingAccuracy& a : serving_accuracy) {
    INFO(a.metric << ": recompute with tools/serving_records.py and copy the figures");
    const std::vector<double>& e = errors.at(std::string(a.metric));
    std::vector<double> abs_e;
    for (const double x : e) abs_e.push_back(std::abs(x));
    CHECK(static_cast<int>(e.size()) == a.records);
    CHECK(median(abs_e) == Approx(a.median_abs_error).margin(5e-5));
    CHECK(*std::max_element(abs_e.begin(), abs_e.end()) == Approx(a.max_abs_error).margin(5e-5));
    CHECK(median(e) == Approx(a.median_error).margin(5e-5));
  }
}

TEST_CASE("A serving prediction on the catalog's figures quotes the measured error, one on typed "
          "figures does not",
          "[serving][accuracy][cli]") {
  const json record = read(serving_dir() / "trtllm-v1.0-h100-fp8-llama3.1-8b-tp1-128-128-"
                                           "throughput.json");
  json scenario = record.at("scenario");
  const std::string file = "/tmp/planner-serving-quote-" + std::to_string(::getpid()) + ".json";
  std::ofstream(file) << scenario.dump();
  cli_harness::Run r = cli_harness::run({"memory", file});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Error of this serving model on 3020 published measurements"));
  CHECK_THAT(r.out, Catch::Contains("time per output token 15.3 % median (931 records)"));
  r = cli_harness::run({"plan", file, "--no-thresholds", "--format", "json"});
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out).at("accuracy").at("ttft").at("records") == 999);
  for (const char* format : {"md", "html"}) {
    r = cli_harness::run({"plan", file, "--no-thresholds", "--format", format});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("Error of this serving model on 3020 published measurements"));
  }
  // The user's own bandwidth fraction: a number the records do not measure.
  scenario["workload"]["memory_bandwidth_efficiency"] = 0.7;
  std::ofstream(file) << scenario.dump();
  r = cli_harness::run({"memory", file});
  std::remove(file.c_str());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, !Catch::Contains("Error of this serving model"));
}

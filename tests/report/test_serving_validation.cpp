// Published serving measurements (validation/serving/*.json) against the model. Each record
// embeds its scenario, the measured figure and where it was published, the validation target,
// and the error the record reports. The test keeps the report honest: a record said to be
// within target must be, and every recorded error must still be the model's error (a model
// change that moves one fails here until tools/serving_records.py refreshes the records).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/base/error.hpp"
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
}

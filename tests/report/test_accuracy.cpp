// The accuracy `planner plan` quotes beside a prediction (report/accuracy.hpp): each row of its
// table recomputed from the published runs in validation/, so the quoted figures cannot drift
// from the records; and where the quote appears (a catalog GPU at its fitted rate) and where it
// does not (a typed rate, serving).

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/validate.hpp"

using namespace planner;

TEST_CASE("The quoted accuracy is what the validation records give", "[accuracy][validate]") {
  std::vector<ValidationRecord> records;
  for (const std::string& file :
       validation_files(std::string(PLANNER_SOURCE_DIR) + "/validation")) {
    std::ifstream in(file);
    records.push_back(load_validation_record(nlohmann::json::parse(in), file));
  }
  REQUIRE(records.size() > 90);
  for (const ModelAccuracy& row : model_accuracy) {
    INFO(row.key);
    std::vector<double> abs_errors, errors;
    for (const ValidationRecord& r : records) {
      if (r.set != "validation" || !r.scenario.plan) continue;
      if (accuracy_subset(r.scenario.model, *r.scenario.plan) != row.subset) continue;
      const std::optional<double> e = throughput_error(validate_record(r));
      REQUIRE(e);
      errors.push_back(*e);
      abs_errors.push_back(std::abs(*e));
    }
    double worst = 0;
    for (double e : abs_errors) worst = std::max(worst, e);
    CHECK(static_cast<int>(errors.size()) == row.records);
    // The table holds five decimals of each fraction.
    CHECK(median(abs_errors) == Approx(row.median_abs_error).margin(6e-6));
    CHECK(worst == Approx(row.max_abs_error).margin(6e-6));
    CHECK(median(errors) == Approx(row.median_error).margin(6e-6));
  }
}

TEST_CASE("plan quotes the accuracy for a catalog GPU at its fitted rate only",
          "[accuracy][cli]") {
  const auto q2 = cli_harness::run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                    "--no-thresholds"});
  REQUIRE(q2.code == 0);
  CHECK_THAT(q2.out, Catch::Contains("Error of this time model on 55 published BF16 and FP16 "
                                     "training runs: 6.3 % median, 36.1 % at worst"));
  // MFU's parenthesis names the rate it is against: H100-SXM's 989.4 TFLOP/s bf16 peak times
  // its fitted 0.5502 (data/gpus.json) = 544 TFLOP/s of GEMMs.
  CHECK_THAT(q2.out, Catch::Contains("% of the 544 TFLOP/s GEMM rate)"));
  const auto json = nlohmann::json::parse(
      cli_harness::run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--no-thresholds",
                        "--format", "json"})
          .out);
  CHECK(json.at("accuracy").at("subset") == "bf16");
  CHECK(json.at("accuracy").at("records") == 55);
  // The pinned plan of `planner memory` carries it too.
  const auto pinned = cli_harness::run({"memory", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                        "--tp", "8", "--zero", "1", "--sp", "on", "--flash", "on",
                                        "--recompute", "selective", "--format", "json"});
  REQUIRE(pinned.code == 0);
  CHECK(nlohmann::json::parse(pinned.out).at("accuracy").at("max_abs_error") ==
        Approx(model_accuracy[0].max_abs_error));
  // FP8 GEMMs: the FP8 records, and which way they err.
  const auto fp8 = cli_harness::run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                     "--no-thresholds", "--set",
                                     "/model/precision={\"compute\": \"fp8\"}"});
  REQUIRE(fp8.code == 0);
  CHECK_THAT(fp8.out, Catch::Contains("31 published FP8 training runs") &&
                          Catch::Contains("mostly predicting faster than measured"));
  // A typed rate is the user's number (scenario B's 400 TFLOP/s effective), and serving has
  // its own figures (validation/serving/README.md): no quote.
  for (const char* other : {"scenarios/b.json", "scenarios/llama31-70b-serving-h100.json"}) {
    INFO(other);
    const auto r = cli_harness::run({"plan", other, "--no-thresholds", "--format", "json"});
    CHECK_FALSE(nlohmann::json::parse(r.out).contains("accuracy"));
    CHECK_THAT(cli_harness::run({"plan", other, "--no-thresholds"}).out,
               !Catch::Contains("Error of this time model") && !Catch::Contains("GEMM rate"));
  }
}

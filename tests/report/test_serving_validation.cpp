// Published serving measurements (validation/serving/*.json) against the model. Each record
// embeds its scenario, the measured figure and where it was published, the validation target,
// and the error the record reports. The test keeps the report honest: a record said to be
// within target must be, and every recorded error must still be the model's error (a model
// change that moves one fails here until the record and its note are updated).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"

using namespace planner;
using nlohmann::json;

TEST_CASE("published serving measurements: errors as recorded", "[serving][validation]") {
  const std::filesystem::path dir = std::filesystem::path(PLANNER_SOURCE_DIR) / "validation/serving";
  int records = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++records;
    std::ifstream in(entry.path());
    const json record = json::parse(in);
    INFO(entry.path().filename().string());
    REQUIRE(record.at("source").at("row").get<std::string>().size() > 0);
    const Scenario s = load_scenario(record.at("scenario"), entry.path().string());
    REQUIRE(s.plan.has_value());
    const Context ctx = make_context(s);
    const Evaluation e = evaluate(ctx, *s.plan);
    const json report = evaluation_report_json(s, ctx, e);
    const json::json_pointer pointer(record.at("measured").at("pointer").get<std::string>());
    const double predicted = report.at(pointer).get<double>();
    const double measured = record.at("measured").at("value").get<double>();
    const double error = predicted / measured - 1;
    const double target = record.at("target").get<double>();
    CHECK(error == Approx(record.at("recorded_error").get<double>()).margin(0.01));
    CHECK((std::abs(error) <= target) == record.at("within_target").get<bool>());
  }
  CHECK(records >= 3);
}

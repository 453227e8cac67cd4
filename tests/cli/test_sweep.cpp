// `planner sweep`: the grid (parse_vary, shard_range), the output contract (shards, threads,
// JSONL, exit codes), golden files of the binary, and the acceptance test of issue 4: the
// sweep shows the plan change that `planner plan`'s threshold predicts, at the same value.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/base/error.hpp"
#include "planner/cli/sweep.hpp"

using nlohmann::json;
using planner::parse_vary;
using planner::shard_range;

namespace {

/// Enough of a scenario for parse_vary, which looks only at the value under the pointer
/// (an integer there makes range values integers).
json doc() {
  return json::parse(R"({"model": {"seq_len": 4096, "layers": 32},
                         "cluster": {"inter_node": {"bandwidth": "50 GB/s"}}})");
}

std::vector<double> numbers(const planner::SweepAxis& axis) {
  std::vector<double> out;
  for (const json& v : axis.values) out.push_back(v.get<double>());
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

cli_harness::Run sweep(std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep", "scenarios/a.json", "--no-progress"};
  args.insert(args.end(), extra.begin(), extra.end());
  return cli_harness::run(args);
}

/// The answer of a plan as same_answer (explain.hpp) compares it: axes, ZeRO, recompute,
/// tiled attention, sequence parallelism, and (when the JSON has them) the tiers; not the
/// micro-batch split.
std::string answer(const json& plan) {
  std::string out = fmt::format(
      "dp {} tp {} pp {} cp {} zero {} {} flash {} sp {}", plan.at("dp").get<int>(),
      plan.at("tp").get<int>(), plan.at("pp").get<int>(), plan.at("cp").get<int>(),
      plan.at("zero").get<int>(), plan.at("recompute").get<std::string>(),
      plan.at("flash_attention").get<bool>(), plan.at("sequence_parallel").get<bool>());
  if (plan.contains("placement")) {
    for (const char* axis : {"tp", "cp", "pp", "dp"}) {
      out += fmt::format(" {} {}", axis, plan.at("placement").at(axis).get<std::string>());
    }
  }
  return out;
}

/// The answers of the plans tied with the recommendation at `value` of `pointer` (the
/// tolerance band, docs/ranking.md §2), recommendation first.
std::vector<std::string> tied_answers(const std::string& pointer, double value) {
  const auto r = cli_harness::run({"plan", "scenarios/a.json", "--set",
                                   fmt::format("{}={:.17g}", pointer, value), "--format", "json",
                                   "--no-thresholds", "--top", "1000"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  const auto tied = j.at("tied").at("plans").get<std::size_t>();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tied && i < j.at("ranked").size(); ++i) {
    out.push_back(answer(j.at("ranked")[i]));
  }
  return out;
}

bool among(const std::vector<std::string>& list, const std::string& a) {
  return std::find(list.begin(), list.end(), a) != list.end();
}

std::string fields(const json& plan) {
  json copy = plan;
  copy.erase("placement");
  return answer(copy);
}

}  // namespace

TEST_CASE("parse_vary: a log range of 3 steps is both ends and their geometric mean",
          "[sweep][vary]") {
  // 5 · (400/5)^(1/2) = 5 · √80 = 44.7213595...; a plain number is in base units.
  const auto axis = parse_vary("/cluster/inter_node/bandwidth=5..400:3log", doc());
  CHECK(axis.pointer == "/cluster/inter_node/bandwidth");
  const std::vector<double> v = numbers(axis);
  REQUIRE(v.size() == 3);
  CHECK(v[0] == 5.0);
  CHECK(v[1] == Approx(44.72135955).epsilon(1e-9));
  CHECK(v[2] == 400.0);
  CHECK_FALSE(axis.values[1].is_number_integer());  // the scenario holds a quantity string
}

TEST_CASE("parse_vary: range ends may carry units", "[sweep][vary]") {
  // 5 GB/s = 5e9 B/s; the geometric mean of 5e9 and 4e11 is 4.472e10.
  const std::vector<double> v =
      numbers(parse_vary("/cluster/inter_node/bandwidth=5GB/s..400GB/s:3log", doc()));
  REQUIRE(v.size() == 3);
  CHECK(v[0] == Approx(5e9));
  CHECK(v[1] == Approx(4.472135955e10).epsilon(1e-9));
  CHECK(v[2] == Approx(4e11));
}

TEST_CASE("parse_vary: a linear range is evenly spaced", "[sweep][vary]") {
  // 1 to 2 in 5 steps: a step of (2 − 1)/4 = 0.25.
  const std::vector<double> v = numbers(parse_vary("/cluster/inter_node/bandwidth=1..2:5", doc()));
  REQUIRE(v.size() == 5);
  CHECK(v[0] == 1.0);
  CHECK(v[1] == 1.25);
  CHECK(v[2] == 1.5);
  CHECK(v[3] == 1.75);
  CHECK(v[4] == 2.0);
}

TEST_CASE("parse_vary: values at an integer field are rounded to integers", "[sweep][vary]") {
  // 10 to 20 in 4 steps: 10, 13.33, 16.67, 20 -> 10, 13, 17, 20.
  const auto axis = parse_vary("/model/seq_len=10..20:4", doc());
  REQUIRE(axis.values.size() == 4);
  for (const json& v : axis.values) CHECK(v.is_number_integer());
  CHECK(axis.values[0].get<int>() == 10);
  CHECK(axis.values[1].get<int>() == 13);
  CHECK(axis.values[2].get<int>() == 17);
  CHECK(axis.values[3].get<int>() == 20);
  // A log range too: 1000 · 4^(1/2) = 2000 exactly; 1000 · 4^(1/3) = 1587.4 -> 1587.
  const auto log = parse_vary("/model/layers=1000..4000:3log", doc());
  CHECK(log.values[1].get<int>() == 2000);
  const auto log4 = parse_vary("/model/layers=1000..4000:4log", doc());
  CHECK(log4.values[1].get<int>() == 1587);
  CHECK(log4.values[2].get<int>() == 2520);  // 1000 · 4^(2/3) = 2519.8
}

TEST_CASE("parse_vary: one step is the start, and a list is taken item by item", "[sweep][vary]") {
  CHECK(numbers(parse_vary("/cluster/inter_node/bandwidth=5..400:1log", doc())) ==
        std::vector<double>{5.0});
  const auto list = parse_vary("/model/layers=8,16,32", doc());
  REQUIRE(list.values.size() == 3);
  CHECK(list.values[0] == json(8));
  CHECK(list.values[2] == json(32));
  // Items that are not JSON are strings, so quantities need no quotes.
  const auto bw = parse_vary("/cluster/inter_node/bandwidth=25GB/s,50 GB/s", doc());
  REQUIRE(bw.values.size() == 2);
  CHECK(bw.values[0] == json("25GB/s"));
  CHECK(bw.values[1] == json("50 GB/s"));
}

TEST_CASE("parse_vary: malformed specifications are input errors", "[sweep][vary]") {
  for (const char* spec : {"model/layers=1,2", "/model/layers", "=1,2", "/model/layers=1..5",
                           "/model/layers=1..5:0", "/model/layers=1..5:x", "/model/layers=1..5:",
                           "/model/layers=0..5:3log", "/model/layers=1,,2",
                           "/model/layers=1..5:2000000"}) {
    INFO(spec);
    CHECK_THROWS_AS(parse_vary(spec, doc()), planner::InputError);
  }
}

TEST_CASE("shard_range splits the grid into consecutive slices", "[sweep][shard]") {
  // 10 points in 3 shards: [0·10/3, 1·10/3) = [0, 3), [3, 6), [6, 10).
  using R = std::pair<std::size_t, std::size_t>;
  CHECK(shard_range("", 10) == R{0, 10});
  CHECK(shard_range("1/3", 10) == R{0, 3});
  CHECK(shard_range("2/3", 10) == R{3, 6});
  CHECK(shard_range("3/3", 10) == R{6, 10});
  CHECK(shard_range("1/1", 10) == R{0, 10});
  // More shards than points: some are empty. 2 points in 4: [0,0), [0,1), [1,1), [1,2).
  CHECK(shard_range("1/4", 2) == R{0, 0});
  CHECK(shard_range("2/4", 2) == R{0, 1});
  CHECK(shard_range("4/4", 2) == R{1, 2});
  for (const char* bad : {"0/3", "4/3", "3", "a/3", "1/0", "/3", "1/", "-1/3", "1/3x"}) {
    INFO(bad);
    CHECK_THROWS_AS(shard_range(bad, 10), planner::InputError);
  }
}

TEST_CASE("sweep shards concatenate to the whole grid, in CSV and JSONL", "[sweep][shard]") {
  const std::vector<std::string> grid{"--vary",
                                      "/cluster/inter_node/bandwidth=10GB/s..200GB/s:5log",
                                      "--vary",
                                      "/model/seq_len=2048,4096",
                                      "--threads",
                                      "1"};
  for (const char* format : {"csv", "jsonl"}) {
    INFO(format);
    std::vector<std::string> args = grid;
    args.insert(args.end(), {"--format", format});
    const auto whole = sweep(args);
    REQUIRE(whole.code == 0);
    std::string joined;
    for (const char* shard : {"1/3", "2/3", "3/3"}) {
      std::vector<std::string> part = args;
      part.insert(part.end(), {"--shard", shard});
      const auto r = sweep(part);
      REQUIRE(r.code == 0);
      joined += r.out;
    }
    CHECK(joined == whole.out);
    // 5 × 2 = 10 points, plus the CSV header.
    CHECK(lines(whole.out).size() == (std::string(format) == "csv" ? 11u : 10u));
  }
  // More shards than points: shards 1 and 3 of 4 are empty (2 points: [0,0), [0,1), [1,1),
  // [1,2)), and the header still appears once, from shard 1.
  const std::vector<std::string> two{"--vary", "/model/seq_len=2048,4096", "--threads", "1"};
  const auto whole = sweep(two);
  std::string joined;
  for (const char* shard : {"1/4", "2/4", "3/4", "4/4"}) {
    std::vector<std::string> part = two;
    part.insert(part.end(), {"--shard", shard});
    joined += sweep(part).out;
  }
  CHECK(joined == whole.out);
  CHECK(lines(joined).size() == 3);
}

TEST_CASE("sweep output does not depend on the thread count", "[sweep][threads]") {
  for (const char* format : {"csv", "jsonl"}) {
    const std::vector<std::string> grid{"--vary",
                                        "/cluster/inter_node/bandwidth=5GB/s..400GB/s:9log",
                                        "--vary",
                                        "/model/seq_len=1024,2048,4096",
                                        "--format",
                                        format};
    std::vector<std::string> one = grid, two = grid;
    one.insert(one.end(), {"--threads", "1"});
    two.insert(two.end(), {"--threads", "2"});
    const auto a = sweep(one);
    const auto b = sweep(two);
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    CHECK(a.out == b.out);
  }
}

TEST_CASE("sweep JSONL: one JSON object per point, in grid order", "[sweep][jsonl]") {
  // The first --vary is the slowest-moving axis: (10, 2048), (10, 4096), (44.7, 2048), …
  const auto r = sweep({"--vary", "/cluster/inter_node/bandwidth=10GB/s..200GB/s:3log", "--vary",
                        "/model/seq_len=2048,4096", "--format", "jsonl", "--threads", "2"});
  REQUIRE(r.code == 0);
  const std::vector<std::string> rows = lines(r.out);
  REQUIRE(rows.size() == 6);
  const double bandwidths[] = {10e9, 44.72135955e9, 200e9};  // 10 · 20^(k/2) GB/s
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const json line = json::parse(rows[k]);
    REQUIRE(line.is_object());
    const json& point = line.at("point");
    CHECK(point.at("/cluster/inter_node/bandwidth").get<double>() ==
          Approx(bandwidths[k / 2]).epsilon(1e-9));
    CHECK(point.at("/model/seq_len").get<int>() == (k % 2 == 0 ? 2048 : 4096));
    CHECK(line.at("status") == "ok");
    CHECK(line.at("best").at("dp").get<int>() * line.at("best").at("tp").get<int>() *
              line.at("best").at("pp").get<int>() * line.at("best").at("cp").get<int>() ==
          64);
    CHECK(line.at("binding_constraint").is_string());
  }
}

TEST_CASE("sweep rows where nothing fits have status no_fit and exit 0", "[sweep]") {
  // 11 GiB less the 10 GiB reserve cannot hold 8e9 parameters' 16 B each, even sharded over
  // 64 GPUs (2 GB each for model state, plus activations); 192 GiB does.
  const auto r = sweep({"--vary", "/cluster/gpu/memory=11GiB,192GiB"});
  REQUIRE(r.code == 0);
  const std::vector<std::string> rows = lines(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].rfind("11GiB,no_fit,", 0) == 0);
  CHECK(rows[2].rfind("192GiB,ok,", 0) == 0);
  // Every row has the header's number of fields.
  const auto commas = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  CHECK(commas(rows[1]) == commas(rows[0]));
  CHECK(commas(rows[2]) == commas(rows[0]));
  const auto j = sweep({"--vary", "/cluster/gpu/memory=11GiB", "--format", "jsonl"});
  const json line = json::parse(j.out);
  CHECK(line.at("status") == "no_fit");
  CHECK(line.at("best").is_null());
}

TEST_CASE("bad --vary and --shard exit 2 with one line", "[sweep][errors]") {
  const std::vector<std::vector<std::string>> cases{
      {"--vary", "model/seq_len=1,2"},
      {"--vary", "/model/seq_len=1..5:0"},
      {"--vary", "/model/seq_len=1..5"},
      {"--vary", "/model/seq_len=1,2", "--vary", "/model/seq_len=3"},
      {"--vary", "/model/heads=30,32"},  // 30 does not divide hidden = 4096
      {"--vary", "/model/no_such_key=1"},
      {"--vary", "/model/seq_len=2048", "--shard", "4/3"},
      {"--vary", "/model/seq_len=2048", "--shard", "x"},
      // One pointer inside another's value, either order (fuzz_cli, December 2026: the outer
      // first made the inner one write into a number, an internal error, exit 3).
      {"--vary", "/model=10", "--vary", "/model/seq_len=1024"},
      {"--vary", "/model/seq_len=1024", "--vary", "/model=10"},
  };
  for (const auto& extra : cases) {
    INFO(extra.back());
    const auto r = sweep(extra);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::StartsWith("planner: error: "));
    CHECK(lines(r.err).size() == 1);
  }
  const auto bad_point = sweep({"--vary", "/model/heads=32,30"});
  CHECK_THAT(bad_point.err, Catch::Contains("scenarios/a.json (sweep point 2): /model/heads"));
  const auto twice = sweep({"--vary", "/model/seq_len=1,2", "--vary", "/model/seq_len=3"});
  CHECK_THAT(twice.err, Catch::Contains("/model/seq_len is already varied"));
  const auto nested = sweep({"--vary", "/model=10", "--vary", "/model/seq_len=1024"});
  CHECK_THAT(nested.err, Catch::Contains("/model/seq_len and /model (an earlier --vary) overlap"));
}

TEST_CASE("a long axis is checked at its ends first and its inner values when they run",
          "[sweep][errors]") {
  // 32..64 in 300 linear steps, rounded to integers: 32 five times (32 + 32·i/299 < 32.5 for
  // i ≤ 4), then 33 at point 6, which scenario A's 32 key/value heads do not divide. Both ends
  // (32, 64) pass the up-front check, so the five rows of 32 come out and point 6 stops the
  // sweep with its one line, exit 2 (issue 32: the first row of a 10^6-value axis waited for
  // every value to be checked).
  const auto r = sweep({"--vary", "/model/heads=32..64:300"});
  CHECK(r.code == 2);
  CHECK(lines(r.out).size() == 1 + 5);
  CHECK(lines(r.err).size() == 1);
  CHECK_THAT(r.err, Catch::Contains("scenarios/a.json (sweep point 6): /model/heads"));
  // At 256 values or fewer every value is still checked before any row: nothing printed.
  const auto short_axis = sweep({"--vary", "/model/heads=32..64:256"});
  CHECK(short_axis.code == 2);
  CHECK(short_axis.out.empty());
}

TEST_CASE("golden output of the binary's sweep of scenario A, CSV and JSONL", "[sweep][golden]") {
  // Regression tests of the real binary (UPDATE_GOLDEN=1 rewrites the files; review the diff).
  const std::string grid =
      "sweep scenarios/a.json --vary /cluster/inter_node/bandwidth=5GB/s..400GB/s:8log "
      "--vary /model/seq_len=2048,8192 --threads 2 --no-progress --format ";
  for (const char* format : {"csv", "jsonl"}) {
    int code = -1;
    const std::string out = cli_harness::run_binary(grid + format, code);
    CHECK(code == 0);
    CHECK(cli_harness::matches_golden(std::string("tests/golden/sweep_a.") + format, out));
  }
}

TEST_CASE("A sweep of scenario A over inter-node bandwidth changes the plan where plan's "
          "threshold says",
          "[sweep][acceptance]") {
  const std::string pointer = "/cluster/inter_node/bandwidth";
  const auto plan = cli_harness::run({"plan", "scenarios/a.json", "--format", "json"});
  REQUIRE(plan.code == 0);
  const json report = json::parse(plan.out);
  const std::string scenario_answer = answer(report.at("best"));
  std::vector<json> thresholds;
  for (const json& t : report.at("thresholds")) {
    if (t.at("parameter") == pointer) thresholds.push_back(t);
  }
  REQUIRE_FALSE(thresholds.empty());

  // Which side of the thresholds a bandwidth is on: beyond one, the answer is another.
  auto beyond = [&](double bandwidth) {
    for (const json& t : thresholds) {
      const double v = t.at("value").get<double>();
      if (t.at("direction") == "below" ? bandwidth <= v : bandwidth >= v) return true;
    }
    return false;
  };

  // The coarse grid, 5 to 400 GB/s: on the scenario's side of the thresholds the scenario's
  // answer is the recommendation or tied with it (within 1 %: thresholds are drawn between
  // classes of tied plans, docs/ranking.md §4), and beyond them the answer is another and the
  // scenario's is not among the tied plans.
  const auto coarse = sweep({"--vary", pointer + "=5GB/s..400GB/s:40log", "--format", "jsonl"});
  REQUIRE(coarse.code == 0);
  int inside = 0, outside = 0;
  for (const std::string& row : lines(coarse.out)) {
    const json line = json::parse(row);
    const double bandwidth = line.at("point").at(pointer).get<double>();
    INFO(bandwidth / 1e9 << " GB/s");
    const std::vector<std::string> tied = tied_answers(pointer, bandwidth);
    REQUIRE_FALSE(tied.empty());
    CHECK(tied.front() == answer(line.at("best")));
    if (beyond(bandwidth)) {
      ++outside;
      CHECK(answer(line.at("best")) != scenario_answer);
      CHECK_FALSE(among(tied, scenario_answer));
    } else {
      ++inside;
      CHECK(among(tied, scenario_answer));
    }
  }
  CHECK(inside > 0);
  CHECK(outside > 0);

  // Around each threshold, at the bisection's resolution (0.1 %): at the value itself and
  // 0.2 % and 0.4 % beyond it the sweep recommends the threshold's plan and the scenario's is
  // not tied with it; 0.2 % and 0.4 % on the scenario's side, the scenario's plan is tied.
  for (const json& t : thresholds) {
    const double v = t.at("value").get<double>();
    const bool below = t.at("direction") == "below";
    INFO(t.at("summary").get<std::string>());
    const double factors[] = {1.004, 1.002, 1.0, 1 / 1.002, 1 / 1.004};
    std::string list;
    for (double f : factors) list += fmt::format("{}{:.17g}", list.empty() ? "" : ",", v * f);
    const auto fine = sweep({"--vary", pointer + "=" + list, "--format", "jsonl"});
    REQUIRE(fine.code == 0);
    const std::vector<std::string> rows = lines(fine.out);
    REQUIRE(rows.size() == 5);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const json best = json::parse(rows[k]).at("best");
      const bool other_side = below ? factors[k] <= 1.0 : factors[k] >= 1.0;
      INFO("x " << factors[k]);
      const std::vector<std::string> tied = tied_answers(pointer, v * factors[k]);
      if (other_side) {
        CHECK(fields(best) == fields(t.at("plan")));
        CHECK(answer(best) != scenario_answer);
        CHECK_FALSE(among(tied, scenario_answer));
      } else {
        CHECK(among(tied, scenario_answer));
      }
    }
  }
}

TEST_CASE("a measured step time calibrates the rate once: a sweep over the shape holds it",
          "[sweep][calibration]") {
  // Scenario A pins a plan with a measured time per micro-batch; the FLOP rate it implies
  // (planner memory's effective_flops) belongs to the GPU, not to the shape. At 4× the
  // sequence length the measured time would imply a rate above twice the peak, which stopped
  // the sweep at that point; held, the sweep runs, and each point's plan is the plan of the
  // same scenario with that rate given as gpu.flops and no measured time.
  const cli_harness::Run memory =
      cli_harness::run({"memory", "scenarios/a.json", "--format", "json"});
  REQUIRE(memory.code == 0);
  const double rate = json::parse(memory.out).at("effective_flops").get<double>();
  const cli_harness::Run swept = cli_harness::run(
      {"sweep", "scenarios/a.json", "--vary", "/model/seq_len=16384", "--format", "jsonl",
       "--no-progress"});
  INFO(swept.err);
  REQUIRE(swept.code == 0);
  const json point = json::parse(swept.out);
  REQUIRE(point.at("status") == "ok");
  CHECK(point.at("best").at("time").at("mfu").get<double>() <= 1.0);

  json a = json::parse(std::ifstream(std::string(PLANNER_SOURCE_DIR) + "/scenarios/a.json"));
  a["workload"].erase("step_time_per_micro_batch");
  const std::string path =
      (std::filesystem::temp_directory_path() / "planner-test-a-explicit-rate.json").string();
  std::ofstream(path) << a.dump();
  const cli_harness::Run explicit_rate = cli_harness::run(
      {"plan", path, "--set", "/model/seq_len=16384", "--set",
       fmt::format("/cluster/gpu/flops={}", rate), "--format", "json"});
  std::filesystem::remove(path);
  INFO(explicit_rate.err);
  REQUIRE(explicit_rate.code == 0);
  const json best = json::parse(explicit_rate.out).at("best");
  CHECK(point.at("best").at("description") == best.at("description"));
  CHECK(point.at("best").at("time").at("step").get<double>() ==
        Approx(best.at("time").at("step").get<double>()).epsilon(1e-12));
}

TEST_CASE("a sweep over the measured step time itself calibrates at each point",
          "[sweep][calibration]") {
  // Twice the measured time is half the rate: a compute-bound winner's step takes longer.
  const cli_harness::Run swept = cli_harness::run(
      {"sweep", "scenarios/a.json", "--vary", "/workload/step_time_per_micro_batch=0.7s,1.4s",
       "--format", "jsonl", "--no-progress"});
  INFO(swept.err);
  REQUIRE(swept.code == 0);
  const std::vector<std::string> rows = lines(swept.out);
  REQUIRE(rows.size() == 2);
  const double fast = json::parse(rows[0]).at("best").at("time").at("step").get<double>();
  const double slow = json::parse(rows[1]).at("best").at("time").at("step").get<double>();
  CHECK(slow > 1.5 * fast);
}

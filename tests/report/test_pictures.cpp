// Issue 13, readable output and pictures: `plan --format md` (golden files, and the tables'
// figures checked by hand), `plan --format html` and `sweep --format html` (self-contained,
// every drawn number in a data attribute, checked against hand calculations of scenario B).
// The page in a real browser: tests/browser_test.sh.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/model/schedule.hpp"

using cli_harness::run;

namespace {

/// Every value of `attribute` on elements whose tag and attributes match `element` (a regex
/// fragment such as `rect class="ledger"`), in document order.
std::vector<std::string> attribute_values(const std::string& html, const std::string& element,
                                          const std::string& attribute) {
  std::vector<std::string> out;
  const std::regex tag("<" + element + "[^>]*>");
  const std::regex value(" " + attribute + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    std::smatch m;
    const std::string t = it->str();
    if (std::regex_search(t, m, value)) out.push_back(m[1]);
  }
  return out;
}

std::map<std::string, double> ledger_of(const std::string& html) {
  const auto lines = attribute_values(html, R"(rect [^>]*class="ledger")", "data-line");
  const auto bytes = attribute_values(html, R"(rect [^>]*class="ledger")", "data-bytes");
  REQUIRE(lines.size() == bytes.size());
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < lines.size(); ++i) out[lines[i]] = std::stod(bytes[i]);
  return out;
}

// Scenario B's recommendation, tp 2 x dp 32, ZeRO-1, micro-batch 1 x 16 (tests/golden/b.txt;
// ZeRO-2 with sequence parallelism is no framework's, docs/constraints.md),
// by hand from scenarios/b.json: 65e9 parameters, bf16 weights and gradients (2 B each),
// 16 B of model state per parameter, 400 TFLOP/s, sequences of 4096 tokens.
constexpr double params = 65e9;
constexpr double weights_bytes = params * 2 / 2;                // split over tp 2
constexpr double gradients_bytes = params * 2 / 2;              // ZeRO-1: split over tp alone
constexpr double optimizer_bytes = params * (16 - 2 - 2) / 2 / 32;  // the other 12 B, sharded
// 6·P·D per micro-batch of 1 sequence split over tp 2, 16 micro-batches a step (Kaplan 2020).
constexpr double dense_step_seconds = 16 * 6 * params * (1 * 4096) / 2 / 400e12;

}  // namespace

TEST_CASE("plan --format md: golden files of scenarios B and D", "[pictures][golden]") {
  for (const char* name : {"b", "d"}) {
    int code = -1;
    const std::string out = cli_harness::run_binary(
        std::string("plan scenarios/") + name + ".json --format md", code);
    CHECK(code == 0);
    CHECK(cli_harness::matches_golden(std::string("tests/golden/") + name + ".md", out));
  }
}

TEST_CASE("plan --format md: the memory table adds up and matches the hand calculation",
          "[pictures][B]") {
  const auto r = run({"plan", "scenarios/b.json", "--format", "md", "--no-thresholds"});
  REQUIRE(r.code == 0);
  // Order: the plan, then the memory and time tables, then why, then what would change it.
  const auto at = [&](const char* heading) { return r.out.find(heading); };
  CHECK(at("**Recommendation:**") < at("## Memory per GPU"));
  CHECK(at("## Memory per GPU") < at("## Time per step"));
  CHECK(at("## Time per step") < at("## Why"));
  CHECK(at("## Why") < at("## What would change the answer"));
  const std::regex row(R"(\| ([a-z\\_]+) \| [0-9.]+ \| ([0-9]+) \|)");
  std::map<std::string, double> lines;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row); it != std::sregex_iterator(); ++it) {
    lines[(*it)[1]] = std::stod((*it)[2]);
  }
  CHECK(lines.at("weights") == weights_bytes);
  CHECK(lines.at("gradients") == gradients_bytes);
  CHECK(lines.at("optimizer") == optimizer_bytes);
  double sum = 0;
  for (const auto& [name, bytes] : lines) sum += bytes;
  std::smatch total;
  REQUIRE(std::regex_search(r.out, total, std::regex(R"(\| \*\*total\*\* \| \*\*[0-9.]+\*\* \| \*\*([0-9]+)\*\* \|)")));
  CHECK(sum == std::stod(total[1]));
  // The dense row: 6·65e9·4096/2/400e12 = 1.9968 s per micro-batch, x 16 = 31.9488 s per step.
  CHECK_THAT(r.out, Catch::Contains("| dense 6\\*P\\*D | 2.00 s | 31.95 s |"));
}

TEST_CASE("plan --format html: the SVG elements carry the ledger's and the step's numbers",
          "[pictures][B]") {
  const auto r = run({"plan", "scenarios/b.json", "--format", "html"});
  REQUIRE(r.code == 0);
  const std::string& page = r.out;
  // Self-contained: no script, nothing fetched.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  const std::map<std::string, double> ledger = ledger_of(page);
  CHECK(ledger.at("weights") == weights_bytes);
  CHECK(ledger.at("gradients") == gradients_bytes);
  CHECK(ledger.at("optimizer") == optimizer_bytes);
  double sum = 0;
  for (const auto& [name, bytes] : ledger) sum += bytes;
  const auto total = attribute_values(page, R"(g class="total")", "data-bytes");
  REQUIRE(total.size() == 1);
  CHECK(sum == std::stod(total.front()));
  const auto capacity = attribute_values(page, R"(rect [^>]*class="capacity")", "data-bytes");
  REQUIRE(capacity.size() == 1);
  CHECK(std::stod(capacity.front()) == 192.0 * 1024 * 1024 * 1024);  // "192 GiB"
  // The stacked bar: the parts add up to the step; the dense part by hand.
  const auto parts = attribute_values(page, R"(rect [^>]*class="time-part")", "data-part");
  const auto seconds = attribute_values(page, R"(rect [^>]*class="time-part")", "data-seconds");
  REQUIRE(parts.size() == seconds.size());
  double step = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    step += std::stod(seconds[i]);
    if (parts[i] == "dense 6*P*D") CHECK(std::stod(seconds[i]) == Approx(dense_step_seconds).epsilon(1e-8));
  }
  const auto step_total = attribute_values(page, R"(g class="time-total")", "data-seconds");
  REQUIRE(step_total.size() == 1);
  CHECK(step == Approx(std::stod(step_total.front())).epsilon(1e-8));
  // The thresholds: one bar each, as many as the plan's JSON lists.
  const auto as_json = run({"plan", "scenarios/b.json", "--format", "json"});
  REQUIRE(as_json.code == 0);
  const std::size_t thresholds = nlohmann::json::parse(as_json.out).at("thresholds").size();
  CHECK(thresholds > 0);
  CHECK(attribute_values(page, R"(rect [^>]*class="threshold")", "data-value").size() == thresholds);
  // The ranked table: as many rows as --top (5).
  const auto ranked = attribute_values(page, R"(td [^>]*data-seconds)", "data-seconds");
  CHECK(ranked.size() == 5);
}

TEST_CASE("plan --format html: the pipeline schedule ends after m + (p - 1)/v slots",
          "[pictures][B]") {
  const auto r = run({"plan", "scenarios/b.json", "--format", "html", "--no-thresholds"});
  REQUIRE(r.code == 0);
  // The recommendation has no pipeline (pp = 1, m = 16): 16 slots. The best plan with pipeline
  // stages is pp 2 with m = 31 micro-batches, plain 1F1B: 31 + (2 - 1) = 32 slots (Narayanan et
  // al. 2021, arXiv 2104.04473, §2.2.1: the bubble is p - 1 slots; §2.2.2 divides it by v).
  const auto slots = attribute_values(r.out, R"(g class="schedule-end")", "data-slots");
  REQUIRE(slots.size() == 2);
  CHECK(std::stod(slots[0]) == Approx(16));
  CHECK(std::stod(slots[1]) == Approx(32));
  // 2·p·v·m passes: 2·1·1·16 + 2·2·1·31.
  CHECK(attribute_values(r.out, R"(rect [^>]*class="pass )", "data-stage").size() == 32 + 124);
}

/// The pinned plan's schedule picture in a page, or "" when it has none.
static std::string pinned_schedule(const std::string& html) {
  const std::size_t at = html.find("<svg id=\"schedule-pinned\"");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</svg>", at) - at);
}

/// The slots at which the one schedule in `svg` ends (its "schedule-end" group's data-slots).
static double schedule_end_slots(const std::string& svg) {
  const auto slots = attribute_values(svg, R"(g class="schedule-end")", "data-slots");
  REQUIRE(slots.size() == 1);
  return std::stod(slots.front());
}

TEST_CASE("plan --format html: an interleaved pinned plan's schedule", "[pictures][B]") {
  // B pinned at tp 4 x pp 8 x dp 2, m = 248, v = 2 (80 layers = 8 stages x 2 chunks x 5):
  // 248 + (8 - 1)/2 = 251.5 slots (Narayanan et al. 2021 §2.2.2), 2·8·2·248 = 7936 passes.
  const auto r = run({"plan", "scenarios/b.json", "--format", "html", "--no-thresholds", "--set",
                      R"(/plan={"dp":2,"tp":4,"pp":8,"cp":1,"zero":1,"recompute":"selective",)"
                      R"("flash_attention":true,"sequence_parallel":true,"micro_batch":1,)"
                      R"("grad_accum":248,"virtual_stages":2})"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("interleaved 1F1B, 2 model chunks per stage"));
  const std::string svg = pinned_schedule(r.out);
  REQUIRE_FALSE(svg.empty());
  CHECK(schedule_end_slots(svg) == Approx(251.5));
  CHECK(attribute_values(svg, R"(rect [^>]*class="pass )", "data-chunk").size() == 7936);
}

TEST_CASE("plan --format html: a deep interleaved schedule is drawn shortened rather than dropped",
          "[pictures][B]") {
  // B pinned at pp 8, v = 10 (80 layers = 8 stages x 10 chunks x 1), m = 248: 2·8·10·248 =
  // 39,680 passes, past the 10,000 drawn. At most 10,000 / (2·8·10) = 62 micro-batches fit, 56
  // as a multiple of p: 56 + (8 - 1)/10 = 56.7 slots (Narayanan et al. 2021 §2.2.2), 8,960
  // passes, and a note says so. It used to print "Too many passes to draw."
  const auto r = run({"plan", "scenarios/b.json", "--format", "html", "--no-thresholds", "--set",
                      R"(/plan={"dp":2,"tp":4,"pp":8,"cp":1,"zero":1,"recompute":"selective",)"
                      R"("flash_attention":true,"sequence_parallel":true,"micro_batch":1,)"
                      R"("grad_accum":248,"virtual_stages":10})"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Drawn with 56 of its 248 micro-batches"));
  const std::string svg = pinned_schedule(r.out);
  REQUIRE_FALSE(svg.empty());
  CHECK(schedule_end_slots(svg) == Approx(56.7));
  CHECK(attribute_values(svg, R"(rect [^>]*class="pass )", "data-chunk").size() == 8960);
}

/// B with `layers` layers (their parameters scaled, 812.5 M a layer) pinned at pp 64 with
/// `virtual_stages` chunks per stage and 64 micro-batches of one sequence: its HTML page.
static cli_harness::Run deep_b_page(int layers, int virtual_stages) {
  return run({"plan", "scenarios/b.json", "--format", "html", "--no-thresholds", "--set",
              fmt::format("/model/layers={}", layers), "--set",
              fmt::format("/model/params={}", 812500000LL * layers), "--set",
              "/workload/global_batch_tokens=262144", "--set",
              fmt::format(R"(/plan={{"dp":1,"tp":1,"pp":64,"cp":1,"zero":1,"recompute":"full",)"
                          R"("flash_attention":true,"sequence_parallel":false,"micro_batch":1,)"
                          R"("grad_accum":64,"virtual_stages":{}}})",
                          virtual_stages)});
}

TEST_CASE("plan --format html: a pipeline whose p micro-batches alone pass the cap is drawn "
          "with p, every pass with its hover title",
          "[pictures][B]") {
  // B with 128 layers pinned at pp 64, v 2 (one layer per chunk), m 64: its p micro-batches
  // alone are 2·64·2·64 = 16,384 passes, past the 10,000 of a shortened drawing; drawn whole
  // (m = p) in 64 + (64 - 1)/2 = 95.5 slots (Narayanan et al. 2021 §2.2.2). It was not drawn.
  const auto r = deep_b_page(128, 2);
  REQUIRE(r.code == 0);
  const std::string svg = pinned_schedule(r.out);
  REQUIRE_FALSE(svg.empty());
  CHECK(schedule_end_slots(svg) == Approx(95.5));
  const auto passes = attribute_values(svg, R"(rect [^>]*class="pass )", "data-chunk");
  CHECK(passes.size() == 16384);
  // Each pass says what it is on hover (it was only up to 1,000 passes).
  std::size_t titles = 0;
  for (std::size_t at = svg.find("<title>stage "); at != std::string::npos;
       at = svg.find("<title>stage ", at + 1)) {
    ++titles;
  }
  CHECK(titles == 16384);
}

TEST_CASE("plan --format html: a pipeline too deep for its p micro-batches is drawn on its "
          "first and last stages",
          "[pictures][B]") {
  // B with 192 layers pinned at pp 64, v 3, m 64: even m = p is 2·64·3·64 = 24,576 passes,
  // past the 20,000 of a whole drawing (it was not drawn). The ends are drawn: k = floor(10,000
  // / (4·3·64)) = 13 stages at each end, 2·26·3·64 = 9,984 passes, the step still
  // 64 + (64 - 1)/3 = 85 slots (Narayanan et al. 2021 §2.2.2), and a note names the stages.
  const auto r = deep_b_page(192, 3);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Drawn on stages 1-13 and 52-64 of its 64"));
  const std::string svg = pinned_schedule(r.out);
  REQUIRE_FALSE(svg.empty());
  CHECK(schedule_end_slots(svg) == Approx(85.0));
  const auto stages = attribute_values(svg, R"(rect [^>]*class="pass )", "data-stage");
  CHECK(stages.size() == 9984);
  for (const std::string& stage : stages) {
    const int s = std::stoi(stage);
    CHECK((s < 13 || s >= 51));
  }
}

TEST_CASE("timed_schedule: 1F1B on 4 stages and 8 micro-batches, by hand", "[pictures][schedule]") {
  planner::Plan p;
  p.pp = 4;
  p.grad_accum = 8;
  // Forward 1/3 of a slot, backward 2/3 (backward = 2 x forward FLOPs, no recompute).
  const auto passes = planner::timed_schedule(p, 1.0 / 3.0);
  REQUIRE(passes.size() == 2 * 4 * 8);
  double end = 0;
  for (const auto& t : passes) end = std::max(end, t.end);
  CHECK(end == Approx(8 + 4 - 1));  // m + p - 1 slots (Narayanan et al. 2021 §2.2.1)
  // Stage 4 (the last) starts its first forward after three forwards upstream: at 1 slot.
  for (const auto& t : passes) {
    if (t.stage == 3 && t.op.forward && t.op.micro_batch == 0) CHECK(t.start == Approx(1.0));
    // The first stage runs its last backward last of all.
    if (t.stage == 0 && !t.op.forward && t.op.micro_batch == 7) CHECK(t.end == Approx(11.0));
  }
  // No stage runs two passes at once.
  for (std::int64_t s = 0; s < 4; ++s) {
    double free_at = 0;
    for (const auto& t : passes) {
      if (t.stage != s) continue;
      CHECK(t.start >= free_at - 1e-12);
      free_at = t.end;
    }
  }
}

TEST_CASE("timed_schedule: interleaved, the bubble shrinks to (p - 1)/v slots", "[pictures][schedule]") {
  // Narayanan et al. 2021 §2.2.2: with v chunks per stage the bubble is (p - 1)/v slots.
  struct Case {
    std::int64_t pp, v, m;
    double slots;
  };
  for (const Case c : {Case{4, 2, 8, 8 + 3.0 / 2}, Case{2, 3, 4, 4 + 1.0 / 3}, Case{8, 2, 16, 16 + 7.0 / 2},
                       Case{4, 4, 8, 8 + 3.0 / 4}}) {
    planner::Plan p;
    p.pp = c.pp;
    p.virtual_stages = c.v;
    p.grad_accum = c.m;
    const auto passes = planner::timed_schedule(p, 1.0 / 3.0);
    INFO("pp " << c.pp << " v " << c.v << " m " << c.m);
    REQUIRE(passes.size() == static_cast<std::size_t>(2 * c.pp * c.v * c.m));
    double end = 0;
    for (const auto& t : passes) end = std::max(end, t.end);
    CHECK(end == Approx(c.slots));
  }
  // Stage 1 of pp 4, v 2 (Megatron-LM's warm-up): 2·(4 - 0 - 1) + (2 - 1)·4 = 10 forwards first.
  planner::Plan p;
  p.pp = 4;
  p.virtual_stages = 2;
  p.grad_accum = 8;
  const auto ops = planner::interleaved_stage_timeline(p, 0);
  std::size_t leading = 0;
  while (ops[leading].forward) ++leading;
  CHECK(leading == 11);  // the warm-up, then the first steady forward
  // The forwards take micro-batches 0-3 through chunk 0, then 0-3 through chunk 1.
  CHECK(ops[4].micro_batch == 0);
  CHECK(ops[4].chunk == 1);
}

TEST_CASE("sweep --format html draws one point per grid point", "[pictures][sweep]") {
  const auto r = run({"sweep", "scenarios/a.json", "--vary",
                      "/cluster/inter_node/bandwidth=10GB/s..100GB/s:4log", "--format", "html",
                      "--threads", "1"});
  REQUIRE(r.code == 0);
  const auto xs = attribute_values(r.out, R"(circle [^>]*class="point")", "data-x");
  REQUIRE(xs.size() == 4);
  // 10, 21.5, 46.4, 100 GB/s: a geometric range of 4 points (10^(1/3) apart).
  CHECK(std::stod(xs[0]) == Approx(10e9));
  CHECK(std::stod(xs[1]) == Approx(10e9 * std::cbrt(10.0)));
  CHECK(std::stod(xs[3]) == Approx(100e9));
  CHECK(r.out.find("<script") == std::string::npos);
}

TEST_CASE("md and html outputs carry no history words and escape the scenario's text",
          "[pictures][vocabulary]") {
  for (const char* format : {"md", "html"}) {
    for (const char* name : {"a", "b", "c", "d"}) {
      const auto r = run({"plan", std::string("scenarios/") + name + ".json", "--format", format,
                          "--no-thresholds"});
      INFO(format << " " << name);
      REQUIRE(r.code == 0);
      std::string lower = r.out;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      CHECK(lower.find("seed") == std::string::npos);
      CHECK(lower.find("worked solution") == std::string::npos);
      CHECK(lower.find("answer key") == std::string::npos);
    }
  }
  const auto r = run({"plan", "scenarios/a.json", "--format", "html", "--no-thresholds", "--set",
                      "/name=\"<script>x</script> & *"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("<script>x") == std::string::npos);
  CHECK_THAT(r.out, Catch::Contains("&lt;script&gt;x&lt;/script&gt; &amp; *"));
}

TEST_CASE("md and html say when a serving plan misses its SLO, and exit 1", "[pictures][D]") {
  for (const char* format : {"md", "html"}) {
    const auto r = run({"plan", "scenarios/d.json", "--format", format, "--no-thresholds", "--set",
                        "/workload/slo_per_token=10ms"});
    INFO(format);
    CHECK(r.code == 1);
    // D's best plan takes 18.8 ms per token (tests/golden/d.txt): 8.8 ms over a 10 ms target.
    CHECK_THAT(r.out, Catch::Contains("SLO MISSED by 8.8 ms"));
  }
}

TEST_CASE("the serving pages carry the text's first-token breakdown and capacity",
          "[pictures][serving]") {
  for (const char* format : {"md", "html"}) {
    const auto r = run({"plan", "scenarios/llama31-8b-request-rate-h100.json", "--format", format,
                        "--no-thresholds"});
    INFO(format);
    CHECK(r.code == 0);
    // The lines of the text report (report/serving_text.cpp): queue, first token, capacity.
    CHECK_THAT(r.out, Catch::Contains("queue for prefill"));
    CHECK_THAT(r.out, Catch::Contains("first token"));
    CHECK_THAT(r.out, Catch::Contains("capacity: one engine"));
  }
}

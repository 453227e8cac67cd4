// The real CLI, in-process: figures of the answer key as the user sees them, exit codes,
// `check`, and golden files of the text and JSON output of scenarios A–D.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "planner/base/units.hpp"

using cli_harness::run;
using nlohmann::json;
using planner::gib;

TEST_CASE("collective prints the worked solution's line", "[cli][answer-key]") {
  // Seed, scenario D: tools/collective_cost.py --gpus 8 --bw 300 --latency 5 --bytes 196608
  // -> single message 0.19 MiB: 0.071 ms (latency 70.0 us + wire 0.001 ms).
  const auto r = run({"collective", "--gpus", "8", "--bw", "300", "--latency", "5", "--bytes",
                      "196608"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains(
                        "ring      single message 0.19 MiB: 0.071 ms (latency 70.0 us + wire 0.001 ms)\n"));
  // The other algorithms: one-shot 5 us + 7·196608/300e9 = 9.6 us, cheapest.
  CHECK_THAT(r.out, Catch::Contains("one-shot  single message 0.19 MiB: 0.010 ms (latency 5.0 us + "
                                    "wire 0.005 ms)  <- cheapest"));
}

TEST_CASE("collective prices the multi-rail forms with --per-node", "[cli][multi_rail]") {
  // Scenario A's gradient, 16e9 B over 64 ranks, 8 per node (docs/model.md §4, by hand): the
  // node's 8 rails (400 GB/s) outrun its 300 GB/s fabric, so the bus runs at 300 GB/s. Ring:
  // 2 · 63/64 · 16e9 / 300e9 = 105.000 ms + 2 · (56 · 5 + 7 · 15) us = 770 us; tree: 2 · 16e9
  // / 300e9 = 106.667 ms + 2 · (7 · 5 + 3 · 15) us = 160 us; against the flat ring's 632 ms.
  const auto r = run({"collective", "--gpus", "64", "--bw", "50", "--latency", "15", "--bytes",
                      "16e9", "--per-node", "8", "--node-bw", "300", "--node-latency", "5"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(across nodes, 8 per node at 300 GB/s, 5 us per hop)"));
  CHECK_THAT(r.out, Catch::Contains("ring      single message 15258.79 MiB: 631.890 ms"));
  CHECK_THAT(r.out, Catch::Contains("multi-rail ring single message 15258.79 MiB: 105.770 ms "
                                    "(latency 770.0 us + wire 105.000 ms)  <- cheapest"));
  CHECK_THAT(r.out, Catch::Contains("multi-rail tree single message 15258.79 MiB: 106.827 ms "
                                    "(latency 160.0 us + wire 106.667 ms)\n"));
  const auto j = run({"collective", "--gpus", "64", "--bw", "50", "--latency", "15", "--bytes",
                      "16e9", "--per-node", "8", "--node-bw", "300", "--node-latency", "5",
                      "--format", "json"});
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  CHECK(doc.at("cheapest") == "multi-rail ring");
  CHECK(doc.at("per_node") == 8);
}

TEST_CASE("plan says when the data-parallel traffic runs on every rail", "[cli][multi_rail]") {
  // The 70B scenario on 8 nodes of 8 H100s: its dp x cp group of 64 ranks holds 8 per node, so
  // its rings cross the network on the node's 8 rails at once.
  const auto r =
      run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--no-thresholds", "--full"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("as a multi-rail ring (8 ranks per node, each crossing on "
                                    "its own rail:"));
  CHECK_THAT(r.out, Catch::Contains("on 8 rails per node it crosses at"));
  // The worked scenarios keep the flat ring: no multi-rail wording.
  const auto b = run({"plan", "scenarios/b.json", "--no-thresholds", "--full"});
  REQUIRE(b.code == 0);
  CHECK_THAT(b.out, !Catch::Contains("multi-rail"));
  // The step hides all but the first and last buckets at the tier's 50 GB/s per GPU, so the
  // rate that the note says hides them must be at most that (it read 178.6 GB/s, the whole
  // volume at one GPU's share, before the note counted the node's 8 rails).
  const auto j = run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--no-thresholds",
                      "--format", "json"});
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  bool checked = false;
  for (const json& note : doc.at("traffic")) {
    if (note.at("algorithm") != "multi-rail ring") continue;
    CHECK(note.at("hide_bandwidth").get<double>() > 0);
    CHECK(note.at("hide_bandwidth").get<double>() <= 50e9);
    checked = true;
  }
  CHECK(checked);
}

TEST_CASE("plan says when ZeRO-3 runs per parameter tensor with blocking gathers",
          "[cli][zero3]") {
  // Scenario B pinned to FSDP over its 64 GPUs, as DeepSpeed's stage 3 of 2021 ran it.
  const auto r = run({"plan", "scenarios/b.json", "--no-thresholds", "--set",
                      "/plan={\"dp\": 64, \"zero\": 3, \"recompute\": \"selective\", "
                      "\"flash_attention\": true, \"grad_accum\": 8}",
                      "--set", "/workload/zero3_collectives_per_layer=12", "--set",
                      "/workload/zero3_blocking_gathers=true", "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  const json& pinned = j.at("pinned");
  CHECK(pinned.at("zero3_collectives_per_layer") == 12);
  CHECK(pinned.at("zero3_blocking_gathers") == true);
  const auto text = run({"plan", "scenarios/b.json", "--no-thresholds", "--full", "--set",
                         "/plan={\"dp\": 64, \"zero\": 3, \"recompute\": \"selective\", "
                         "\"flash_attention\": true, \"grad_accum\": 8}",
                         "--set", "/workload/zero3_collectives_per_layer=12", "--set",
                         "/workload/zero3_blocking_gathers=true"});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("in 12 collectives per layer") &&
                           Catch::Contains("the gathers block") &&
                           Catch::Contains("hides down to no bandwidth (its gathers block)"));
}

TEST_CASE("plan reports HFU beside MFU against a catalog GPU's peak", "[cli][hfu]") {
  // HFU counts MFU's model FLOPs plus the recomputation (Korthikanti et al. 2022 §6), so it is
  // at least MFU; a GPU given by numbers has no datasheet peak and reports neither.
  const auto r = run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--no-thresholds",
                      "--format", "json"});
  REQUIRE(r.code == 0);
  const json t = json::parse(r.out).at("best").at("time");
  CHECK(t.at("hfu_bf16_peak").get<double>() >= t.at("mfu_bf16_peak").get<double>());
  CHECK(t.at("hfu_bf16_peak").get<double>() < 1.0);
  const auto text = run({"plan", "scenarios/q2-llama-3.1-70b-64-h100.json", "--no-thresholds"});
  CHECK_THAT(text.out, Catch::Contains("; HFU ") && Catch::Contains(" % of the bf16 dense peak"));
  const auto b = run({"plan", "scenarios/b.json", "--no-thresholds", "--format", "json"});
  CHECK(!json::parse(b.out).at("best").at("time").contains("hfu_bf16_peak"));
}

TEST_CASE("memory reproduces scenario B's ledger from the file", "[cli][answer-key][B]") {
  const auto r = run({"memory", "scenarios/b.json", "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("schema_version").get<int>() == 2);
  const json& m = j.at("plan").at("memory");
  // Answer key B: params 15.1, grads 15.1, optimizer 11.4, activations 10.6 GiB.
  CHECK(m.at("weights").get<double>() / gib == Approx(15.13).margin(0.05));
  CHECK(m.at("gradients").get<double>() / gib == Approx(15.13).margin(0.05));
  CHECK(m.at("optimizer").get<double>() / gib == Approx(11.35).margin(0.05));
  CHECK(m.at("activations").get<double>() / gib == Approx(10.6).margin(0.05));
  // TP: 320 all-reduces of 64 MiB at 0.461 ms: 148 ms per micro-batch.
  CHECK(j.at("plan").at("time").at("tp").get<double>() * 1e3 == Approx(147.6).margin(0.5));
}

TEST_CASE("memory flags override the pinned plan", "[cli]") {
  // Scenario A without recompute and untiled attention: 97 GiB of activations, 226 GiB in
  // total with state and reserve (answer key), plus the output layer: does not fit → exit 1.
  const auto r = run({"memory", "scenarios/a.json", "--zero", "0", "--recompute", "none",
                      "--flash", "off", "--format", "json"});
  CHECK(r.code == 1);
  const json j = json::parse(r.out);
  CHECK(j.at("plan").at("memory").at("activations").get<double>() / gib == Approx(97).margin(0.5));
  CHECK_FALSE(j.at("fits").get<bool>());
}

TEST_CASE("plan A recommends 64-way data parallelism with 8 sequences per rank", "[cli][A]") {
  const auto r = run({"plan", "scenarios/a.json", "--format", "json", "--no-thresholds"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  const json& best = j.at("best");
  CHECK(best.at("dp").get<int>() == 64);
  CHECK(best.at("tp").get<int>() == 1);
  CHECK(best.at("micro_batch").get<int>() * best.at("grad_accum").get<int>() == 8);
  CHECK(j.at("binding_constraint").at("kind") == "throughput");
  // 632 ms of gradient traffic per step as one collective per buffer (answer key), ≈ 28 GB/s
  // for a 20 % budget. Issued in 32 one-layer buckets, each pays the ring's 63 × 15 µs
  // latency: 630 ms of wire + 2 collectives × 32 buckets × 0.945 ms = 690.48 ms (by hand).
  const json& dp = j.at("traffic").at(0);
  CHECK(dp.at("whole_buffer_seconds_per_step").get<double>() * 1e3 == Approx(632).margin(1));
  CHECK(dp.at("seconds_per_step").get<double>() * 1e3 == Approx(630.0 + 2 * 32 * 63 * 0.015).margin(0.05));
  CHECK(dp.at("budget_bandwidth").get<double>() / 1e9 == Approx(28).margin(0.5));
}

TEST_CASE("plan D prints the ring figure next to the algorithm it picks", "[cli][D]") {
  const auto r = run({"plan", "scenarios/d.json", "--no-thresholds"});
  REQUIRE(r.code == 0);
  // Ring: 192 × 0.071 ms = 13.66 ms per token; one-shot: 1.84 ms (answer key: ~2–4 ms).
  CHECK_THAT(r.out, Catch::Contains("ring 0.071 ms each, 13.66 ms per token"));
  CHECK_THAT(r.out, Catch::Contains("the planner picks one-shot"));
  CHECK_THAT(r.out, Catch::Contains("inside the 25.0 ms SLO by"));
  CHECK_THAT(r.out, Catch::Contains("Binding constraint: decode latency"));
}

TEST_CASE("check passes on A-D and reports drift with exit 1", "[cli][check]") {
  const auto ok = run({"check", "scenarios/a.json", "scenarios/b.json", "scenarios/c.json",
                       "scenarios/d.json"});
  CHECK(ok.code == 0);
  const auto drift = run({"check", "scenarios/d.json", "--set", "/expect/tp=4"});
  CHECK(drift.code == 1);
  CHECK_THAT(drift.out, Catch::Contains("/best/tp: expected 4, got 8"));
}

TEST_CASE("bad input exits 2 with one line naming the file", "[cli][errors]") {
  const auto r = run({"plan", "scenarios/a.json", "--set", "/model/heads=30"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::StartsWith("planner: error: scenarios/a.json: /model/"));
}

TEST_CASE("golden output of the binary's plan for scenarios A-D", "[cli][golden]") {
  // Regression tests of the real binary: any change of an answer or a figure shows up as a
  // diff to review (UPDATE_GOLDEN=1 rewrites the files).
  for (const char* name : {"a", "b", "c", "d"}) {
    const std::string file = std::string("scenarios/") + name + ".json";
    const std::string golden = std::string("tests/golden/") + name;
    for (const char* format : {"text", "json", "csv"}) {
      int code = -1;
      // Text: the full explanation (--full), every section pinned.
      const std::string full = std::string(format) == "text" ? " --full" : "";
      const std::string out =
          cli_harness::run_binary("plan " + file + " --format " + format + full, code);
      CHECK(code == 0);
      const std::string ext = std::string(format) == "text" ? ".txt" : std::string(".") + format;
      CHECK(cli_harness::matches_golden(golden + ext, out));
    }
  }
}

TEST_CASE("golden output of the binary's memory for scenarios A-D", "[cli][golden]") {
  for (const char* name : {"a", "b", "c", "d"}) {
    int code = -1;
    const std::string out = cli_harness::run_binary(
        std::string("memory scenarios/") + name + ".json --format json", code);
    CHECK(code == 0);
    CHECK(cli_harness::matches_golden(std::string("tests/golden/memory_") + name + ".json", out));
  }
}

TEST_CASE("plan drops a pinned plan that no longer fits the overridden cluster", "[cli]") {
  // A's pinned dp = 64 cannot hold on 1 GPU; `plan` searches anyway and says how it refills
  // the pin (dp = 1), while `memory`, which evaluates the pin as written, must refuse.
  const auto r = run({"plan", "scenarios/a.json", "--set", "/cluster/nodes=1", "--set",
                      "/cluster/gpus_per_node=1", "--no-thresholds", "--format", "json"});
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Catch::Contains("the pinned plan's dp is refilled to 1"));
  CHECK(json::parse(r.out).at("best").at("dp").get<int>() == 1);
  const auto m = run({"memory", "scenarios/a.json", "--set", "/cluster/nodes=1"});
  CHECK(m.code == 2);
  CHECK_THAT(m.err, Catch::Contains("/plan: world size is 8 GPUs"));
}

TEST_CASE("memory with flags times the plan as the search does: the workload's settings apply",
          "[cli]") {
  // The recommendation of a scenario whose workload runs eager kernels, evaluated again from
  // flags: the same step time (the plan built from flags takes the workload's framework
  // settings, inputs/workload_settings.hpp, as the search's candidates do).
  const std::string set = "/workload/elementwise_kernels=\"eager\"";
  const auto plan = cli_harness::run({"plan", "scenarios/q1-llama-3.1-8b-one-node.json", "--set",
                                      set, "--format", "json", "--no-thresholds"});
  REQUIRE(plan.code == 0);
  const auto best = nlohmann::json::parse(plan.out).at("best");
  CHECK(best.at("elementwise_kernels") == "eager");
  std::vector<std::string> args{"memory", "scenarios/q1-llama-3.1-8b-one-node.json", "--set", set,
                                "--format", "json"};
  for (const char* axis : {"tp", "pp", "cp", "dp"}) {
    args.push_back(std::string("--") + axis);
    args.push_back(std::to_string(best.at(axis).get<std::int64_t>()));
  }
  const std::vector<std::pair<const char*, std::string>> flags{
      {"--zero", std::to_string(best.at("zero").get<int>())},
      {"--recompute", best.at("recompute").get<std::string>()},
      {"--flash", best.at("flash_attention").get<bool>() ? "on" : "off"},
      {"--micro-batch", std::to_string(best.at("micro_batch").get<std::int64_t>())},
      {"--grad-accum", std::to_string(best.at("grad_accum").get<std::int64_t>())}};
  for (const auto& [flag, value] : flags) {
    args.emplace_back(flag);
    args.push_back(value);
  }
  if (best.at("tp").get<std::int64_t>() > 1) {
    args.emplace_back("--sp");
    args.emplace_back(best.at("sequence_parallel").get<bool>() ? "on" : "off");
  }
  const auto memory = cli_harness::run(args);
  REQUIRE(memory.code == 0);
  const auto evaluated = nlohmann::json::parse(memory.out);
  CHECK(evaluated.at("plan").at("elementwise_kernels") == "eager");
  CHECK(evaluated.at("plan").at("time").at("step").get<double>() ==
        Approx(best.at("time").at("step").get<double>()).epsilon(1e-12));
}

TEST_CASE("tp_saved_inputs gathered keeps the QKV, MLP and output-layer inputs whole",
          "[cli][activations]") {
  // Llama 3.1 70B (80 layers, h 8192) at 8192 tokens, tp 8 with SP, selective recompute, one
  // sequence a micro-batch: PyTorch's DTensor tensor parallelism keeps the gathered QKV and
  // MLP inputs (2·s·b·h bf16 bytes each) where Megatron-LM keeps their eighth, 4·s·b·h·7/8 a
  // layer more, and the output layer's gathered input, 2·s·b·h·7/8 more (docs/model.md §2).
  const std::vector<std::string> base{"memory", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                      "--tp", "8", "--pp", "1", "--cp", "1", "--sp", "on",
                                      "--zero", "3", "--recompute", "selective", "--flash", "on",
                                      "--micro-batch", "1", "--format", "json"};
  auto gathered = base;
  gathered.insert(gathered.end(), {"--set", "/workload/tp_saved_inputs=\"gathered\""});
  const auto shard_run = cli_harness::run(base);
  const auto gathered_run = cli_harness::run(gathered);
  REQUIRE(shard_run.code == 0);
  REQUIRE(gathered_run.code == 0);
  const auto a = nlohmann::json::parse(shard_run.out).at("plan");
  const auto b = nlohmann::json::parse(gathered_run.out).at("plan");
  const double sbh = 8192.0 * 8192.0;
  CHECK(b.at("memory").at("activations").get<double>() -
            a.at("memory").at("activations").get<double>() ==
        Approx(80 * 4 * sbh * 7 / 8));
  CHECK(b.at("memory").at("logits").get<double>() - a.at("memory").at("logits").get<double>() ==
        Approx(2 * sbh * 7 / 8));
  CHECK(b.at("tp_saved_inputs") == "gathered");
  CHECK_FALSE(a.contains("tp_saved_inputs"));
}

TEST_CASE("The interleaved bubble reads (p-1)/(v*m) with its own figures", "[cli][pp]") {
  // Issue 31: a plan with v virtual stages printed "bubble (p-1)/m = 1/8 = 1.6 %", where
  // 1.6 % is (p-1)/(v*m) = 1/(8*8) (Narayanan et al. 2021 §2.2.2).
  // q6 under Megatron-LM's rules interleaves (its default answer, FSDP since the 512-rank
  // FSDP runs joined validation/, does not pipeline).
  const auto json_run =
      cli_harness::run({"plan", "scenarios/q6-gpt-3-175b-1024-a100.json", "--no-thresholds",
                        "--framework", "megatron", "--format", "json"});
  REQUIRE(json_run.code == 0);
  const auto best = nlohmann::json::parse(json_run.out).at("best");
  const auto p = best.at("pp").get<std::int64_t>();
  const auto v = best.at("virtual_stages").get<std::int64_t>();
  const auto m = best.at("grad_accum").get<std::int64_t>();
  REQUIRE(v > 1);
  const auto text = cli_harness::run({"plan", "scenarios/q6-gpt-3-175b-1024-a100.json",
                                      "--no-thresholds", "--framework", "megatron"});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out,
             Catch::Contains(fmt::format("bubble (p-1)/(v*m) = {}/({}*{}) = {:.1f} % of the step",
                                         p - 1, v, m,
                                         100.0 * static_cast<double>(p - 1) /
                                             static_cast<double>(v * m))));
}

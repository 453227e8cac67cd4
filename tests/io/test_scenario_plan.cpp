// Split from test_scenario_json.cpp (files stay under 500 lines).
// Tests of the strict scenario loader, quantity parsing, --set overrides and plan validation.
// Error tests compare the whole message (STYLE P11, P14c): the text is the interface.

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

using planner::Dimension;
using planner::InputError;

#include "scenario_json_test_helpers.hpp"

using namespace scenario_json_test_helpers;

TEST_CASE("plan: world size must equal dp·tp·pp·cp", "[plan][errors]") {
  CHECK(error_with({"/plan={\"tp\": 8}"}) ==
        "a.json: /plan: world size is 64 GPUs (8 nodes × 8) but dp·tp·pp·cp = 1·8·1·1 = 8; set dp "
        "to 8");
  CHECK(error_with({"/plan={\"tp\": 3}"}) ==
        "a.json: /plan: world size is 64 GPUs (8 nodes × 8) but dp·tp·pp·cp = 1·3·1·1 = 3; the "
        "product must equal 64");
}

TEST_CASE("plan: tp must divide the heads and fit the KV heads", "[plan][errors]") {
  CHECK(error_with({"/cluster/nodes=12", "/plan={\"tp\": 3, \"dp\": 32}"}) ==
        "a.json: /plan/tp: tp (3) must divide heads (32); try 1, 2, 4, 8, 16, 32");
  CHECK(error_with({"/model/heads=64", "/model/kv_heads=8", "/cluster/nodes=32",
                    "/plan={\"tp\": 16, \"dp\": 16}"}) == "no error");
  // 48 heads in 12 KV groups: tp = 8 would split a group across ranks.
  CHECK(error_with({"/model/hidden=6144", "/model/heads=48", "/model/kv_heads=12",
                    "/plan={\"tp\": 8, \"dp\": 8}"}) ==
        "a.json: /plan/tp: tp (8) and kv_heads (12) must divide one another, so that KV heads are "
        "either split or replicated evenly across tp ranks; try 1, 2, 3, 4, 6, 12, ...");
}

TEST_CASE("plan: pp, cp, flash attention and sequence parallelism", "[plan][errors]") {
  CHECK(error_with({"/plan={\"pp\": 64}"}) ==
        "a.json: /plan/pp: pp (64) exceeds layers (32); each pipeline stage needs at least one "
        "layer");
  CHECK(error_with({"/plan={\"cp\": 8, \"dp\": 8}"}) ==
        "a.json: /plan/flash_attention: cp = 8 needs flash_attention: true (ring attention "
        "computes attention in tiles, as flash attention does)");
  CHECK(error_with({"/model/seq_len=4000", "/plan={\"cp\": 64, \"flash_attention\": true}"}) ==
        "a.json: /plan/cp: cp (64) must divide seq_len (4000); try 1, 2, 4, 5, 8, 10, ...");
  CHECK(error_with({"/plan={\"dp\": 64, \"sequence_parallel\": true}"}) ==
        "a.json: /plan/sequence_parallel: sequence_parallel needs tp > 1 (it splits activations "
        "across the tp ranks); set it to false or raise tp");
  CHECK(error_with({"/plan={\"dp\": 64, \"placement\": [\"tp\", \"dp\", \"dp\", \"pp\"]}"}) ==
        "a.json: /plan/placement/2: \"dp\" appears twice; expected a permutation of [\"tp\", "
        "\"cp\", \"dp\", \"pp\"], innermost axis first");
  CHECK(error_with({"/plan={\"dp\": 64, \"recompute\": \"ful\"}"}) ==
        "a.json: /plan/recompute: expected one of \"none\", \"selective\", \"op\", \"full\", "
        "got \"ful\" "
        "(did you mean \"full\"?)");
}

TEST_CASE("plan: serving plans use cp 1, zero 0 and grad_accum 1", "[plan][errors]") {
  const auto serving =
      "/workload={\"kind\": \"serving\", \"batch\": 8, \"context_tokens\": 4096, "
      "\"slo_per_token\": \"25 ms\"}";
  CHECK(error_with({serving, "/plan={\"dp\": 8, \"tp\": 8, \"zero\": 1}"}) ==
        "a.json: /plan/zero: a serving plan needs zero = 0 (there are no gradients or optimizer "
        "states to shard), got 1");
  CHECK(error_with({serving, "/plan={\"dp\": 8, \"tp\": 8, \"grad_accum\": 2}"}) ==
        "a.json: /plan/grad_accum: a serving plan needs grad_accum = 1 (there is no optimizer "
        "step), got 2");
  CHECK(error_with({serving, "/plan={\"dp\": 8, \"cp\": 8, \"flash_attention\": true}"}) ==
        "a.json: /plan/cp: a serving plan needs cp = 1 (context parallelism is modelled for "
        "training only), got 8");
  const auto s =
      planner::load_scenario(base_with({serving, "/plan={\"dp\": 8, \"tp\": 8}"}), "a.json");
  CHECK(s.plan->micro_batch == 8);  // a serving plan's micro-batch defaults to the batch
}

TEST_CASE("plan: validate_plan checks plans built in code", "[plan][errors]") {
  const auto s = planner::load_scenario_text(base_scenario, "a.json");
  planner::Plan p;
  p.dp = 64;
  CHECK(error_of([&] { planner::validate_plan(s, p, "--tp", ""); }) == "no error");
  p.grad_accum = 0;
  CHECK(error_of([&] { planner::validate_plan(s, p, "cli", "/flags"); }) ==
        "cli: /flags/grad_accum: expected a positive integer, got 0");
  p.grad_accum = 1;
  p.dp = std::int64_t{1} << 40;
  p.tp = std::int64_t{1} << 40;
  CHECK(error_of([&] { planner::validate_plan(s, p, "cli", ""); }) ==
        "cli: world size is 64 GPUs (8 nodes × 8) but dp·tp·pp·cp = "
        "1099511627776·1099511627776·1·1 = more than 2^63; the product must equal 64");
}

// ---- Expectations ----------------------------------------------------------------------------

TEST_CASE("expect: figures take numbers or quantities of any dimension", "[loader][errors]") {
  CHECK(error_with({"/expect={\"figures\": [{\"pointer\": \"best\", \"value\": 1}]}"}) ==
        "a.json: /expect/figures/0/pointer: expected a JSON pointer such as "
        "\"/best/time/per_token\", got \"best\" (JSON pointer must be empty or begin with '/' - "
        "was: 'best')");
  CHECK(error_with({"/expect={\"figures\": [{\"pointer\": \"/x\", \"value\": \"12\"}]}"}) ==
        "a.json: /expect/figures/0/value: \"12\" has no unit; write a unit (\"192 GiB\", \"15 "
        "us\", \"50 GB/s\") or, for a figure in base units, a bare JSON number");
  CHECK(error_with(
            {"/expect={\"figures\": [{\"pointer\": \"/x\", \"value\": 1, \"tolerance\": 2}]}"}) ==
        "a.json: /expect/figures/0/tolerance: expected a relative tolerance from 0 to 1, such as "
        "0.01, got 2");
  CHECK(error_with({"/expect={\"tp_tier\": \"intra\"}"}) ==
        "a.json: /expect/tp_tier: expected one of \"intra_node\", \"inter_node\", got \"intra\"");
}

// ---- Overrides ---------------------------------------------------------------------------

TEST_CASE("override: values are JSON when they parse, else strings", "[override]") {
  auto doc = base_with({"/cluster/nodes=16", "/cluster/inter_node/bandwidth=25GB/s",
                        "/model/gated_mlp=true", "/name=\"quoted\"", "/model/kv_heads=8",
                        "/plan={\"tp\": 8, \"dp\": 16}"});
  CHECK(doc["cluster"]["nodes"] == nlohmann::json(16));
  CHECK(doc["cluster"]["inter_node"]["bandwidth"] == nlohmann::json("25GB/s"));
  const auto s = planner::load_scenario(doc, "a.json");
  CHECK(s.cluster.nodes == 16);
  CHECK(s.cluster.network_tier().bandwidth_bytes_per_second == 25e9);
  CHECK(s.model.gated_mlp);
  CHECK(s.name == "quoted");
  CHECK(s.model.kv_heads == 8);  // a new key in an existing object
  REQUIRE(s.plan.has_value());
  CHECK(s.plan->dp == 16);
}

TEST_CASE("override: bad assignments and pointers", "[override][errors]") {
  auto doc = base_with({});
  const auto set_error = [&](std::string_view assignment) {
    return error_of([&] { planner::apply_override(doc, assignment); });
  };
  CHECK(set_error("/cluster/nodes") ==
        "--set: expected POINTER=VALUE, such as /cluster/nodes=16, got \"/cluster/nodes\"");
  CHECK(set_error("cluster/nodes=4") ==
        "--set: cluster/nodes: a JSON pointer starts with '/', such as /cluster/nodes (did you "
        "mean /cluster/nodes?)");
  CHECK(set_error("/a~2=1") ==
        "--set: /a~2: malformed JSON pointer: escape character '~' must be followed with '0' or "
        "'1'");
  CHECK(set_error("/cluster/gpux/memory=1") ==
        "--set: /cluster/gpux/memory: /cluster/gpux does not exist (did you mean 'gpu'?); --set "
        "adds keys only to existing objects");
  CHECK(set_error("/plan/tp=8") ==
        "--set: /plan/tp: /plan does not exist; --set adds keys only to existing objects, so set "
        "it whole: /plan={...}");
  CHECK(set_error("/model/layers/x=1") ==
        "--set: /model/layers/x: /model/layers is not an object; --set replaces keys of objects "
        "only");
  CHECK(set_error("/plan={\"tp\": 1, \"tp\": 2}") ==
        "--set: /plan/tp: duplicate key; each key may appear once in an object");
  const InputError e("--set", "/x", "m");
  CHECK(e.origin() == "--set");
  CHECK(e.pointer() == "/x");
}

// ---- Round trip and files -----------------------------------------------------------------

TEST_CASE("loader: a full scenario maps every key", "[loader]") {
  constexpr std::string_view full = R"({
    "name": "full", "description": "every key once",
    "model": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672,
              "gated_mlp": true, "vocab": 128256, "tied_embeddings": true, "seq_len": 8192,
              "params": 70e9},
    "cluster": {"nodes": 16, "gpus_per_node": 8,
                "gpu": {"memory": "141 GB", "memory_bandwidth": "4.8 TB/s", "flops": 989e12,
                        "reserve": "8 GiB"},
                "intra_node": {"bandwidth": "450 GB/s", "latency": "3 us"},
                "inter_node": {"bandwidth": "400 Gbps", "latency": 1e-5}},
    "workload": {"kind": "training", "global_batch_tokens": 4e6, "micro_batch": 2,
                 "step_time_per_micro_batch": "700 ms", "bytes_per_param": 18},
    "plan": {"dp": 4, "tp": 8, "pp": 2, "cp": 2, "zero": 1, "recompute": "selective",
             "flash_attention": true, "sequence_parallel": true, "grad_accum": 4,
             "placement": ["tp", "cp", "pp", "dp"]},
    "expect": {"dp": 4, "tp": 8, "pp": 2, "cp": 2, "micro_batch": 2, "grad_accum": 4,
               "sequences_per_replica": 8, "zero": 1, "recompute": "selective",
               "flash_attention": true, "sequence_parallel": true, "tp_tier": "intra_node",
               "figures": [{"pointer": "/best/time/per_token", "value": "25 ms"},
                           {"pointer": "/best/memory/total", "value": 62.2e9, "tolerance": 0.05}]}
  })";
  const auto s = planner::load_scenario_text(full, "full.json");
  CHECK(s.name == "full");
  const auto& m = s.model;
  CHECK((m.layers == 80 && m.hidden == 8192 && m.heads == 64 && m.kv_heads == 8));
  CHECK((m.ffn_hidden == 28672 && m.gated_mlp && m.vocab == 128256 && m.tied_embeddings));
  CHECK((m.seq_len == 8192 && m.params == 70e9));
  const auto& c = s.cluster;
  CHECK((c.nodes == 16 && c.gpus_per_node == 8));
  CHECK(c.gpu.memory_bytes == 141e9);
  CHECK(c.gpu.memory_bandwidth_bytes_per_second == 4.8e12);
  CHECK(c.gpu.flops_per_second == 989e12);
  CHECK(c.gpu.reserve_bytes == 8.0 * 1024 * 1024 * 1024);
  CHECK(c.node_tier().bandwidth_bytes_per_second == 450e9);
  CHECK(c.node_tier().latency_seconds == Approx(3e-6));
  CHECK(c.network_tier().bandwidth_bytes_per_second == 50e9);  // 400 Gbps / 8
  CHECK(c.network_tier().latency_seconds == 1e-5);
  CHECK(s.workload.kind == planner::WorkloadKind::training);
  const auto& t = s.workload.training;
  CHECK((t.global_batch_tokens == 4e6 && t.micro_batch == 2 && t.bytes_per_param == 18));
  CHECK(t.step_time_per_micro_batch_seconds == Approx(0.7));
  REQUIRE(s.plan.has_value());
  const auto& p = *s.plan;
  CHECK((p.dp == 4 && p.tp == 8 && p.pp == 2 && p.cp == 2 && p.zero == 1));
  CHECK(p.recompute == planner::Recompute::selective);
  CHECK((p.flash_attention && p.sequence_parallel));
  CHECK((p.micro_batch == 2 && p.grad_accum == 4));  // micro_batch defaults to the workload's
  CHECK(p.placement == planner::Placement{planner::Axis::tp, planner::Axis::cp, planner::Axis::pp,
                                          planner::Axis::dp});
  const auto& e = s.expect;
  CHECK((e.dp == 4 && e.tp == 8 && e.pp == 2 && e.cp == 2));
  CHECK((e.micro_batch == 2 && e.grad_accum == 4 && e.sequences_per_replica == 8 && e.zero == 1));
  CHECK(e.recompute == planner::Recompute::selective);
  CHECK((e.flash_attention == true && e.sequence_parallel == true));
  CHECK(e.tp_tier == "intra_node");
  REQUIRE(e.figures.size() == 2);
  CHECK(e.figures[0].pointer == "/best/time/per_token");
  CHECK(e.figures[0].value == Approx(0.025));
  CHECK(e.figures[0].relative_tolerance == 0.01);
  CHECK(e.figures[1].value == 62.2e9);
  CHECK(e.figures[1].relative_tolerance == 0.05);
  // Reloading the parsed document gives the same scenario.
  const auto again = planner::load_scenario(planner::parse_json_text(full, "x"), "full.json");
  CHECK(again.cluster.network_tier().bandwidth_bytes_per_second ==
        s.cluster.network_tier().bandwidth_bytes_per_second);
  CHECK(again.plan->placement == p.placement);
}

TEST_CASE("loader: files, and a missing file", "[loader][file]") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto path = (dir / ("planner_test_scenario_json_" + std::to_string(getpid()) + ".json")).string();
  {
    std::ofstream out(path);
    out << base_scenario;
  }
  const auto s = planner::load_scenario_file(path);
  std::filesystem::remove(path);
  CHECK(s.origin == path);
  CHECK(s.model.layers == 32);
  const auto missing = (dir / "planner_test_no_such_file.json").string();
  CHECK(error_of([&] { (void)planner::load_scenario_file(missing); }) ==
        missing + ": cannot open file: No such file or directory");
  CHECK(error_of([&] { (void)planner::read_json_file(missing); }) ==
        missing + ": cannot open file: No such file or directory");
  CHECK(error_of([&] { (void)planner::read_json_file(dir.string()); }) ==
        dir.string() + ": cannot read file: Is a directory");
  CHECK(planner::file_origin("-") == "<stdin>");
}

TEST_CASE("loader: - reads standard input", "[loader][file]") {
  std::istringstream input("{\"model\": 1}");
  auto* const saved = std::cin.rdbuf(input.rdbuf());
  const auto message = error_of([] { (void)planner::load_scenario_file("-"); });
  std::cin.rdbuf(saved);
  CHECK(message ==
        "<stdin>: /model: expected an object with keys layers, hidden, heads, kv_heads, "
        "ffn_hidden, gated_mlp, vocab, tied_embeddings, dropout, norm, position_embedding, "
        "linear_bias, seq_len, params, precision, "
        "head_dim, moe, mla, mtp_layers, got 1");
}

TEST_CASE("loader: ZeRO-3's collectives per layer and blocking gathers", "[loader][zero3]") {
  // The workload's settings reach every plan, the pinned one included.
  auto doc = base_with({"/workload/zero3_collectives_per_layer=12",
                        "/workload/zero3_blocking_gathers=true"});
  doc["plan"] = {{"dp", 64}, {"zero", 3}};
  const planner::Scenario s = planner::load_scenario(doc, "a.json");
  CHECK(s.workload.training.zero3_collectives_per_layer == 12);
  CHECK(s.workload.training.zero3_blocking_gathers);
  REQUIRE(s.plan);
  CHECK(s.plan->zero3_collectives_per_layer == 12);
  CHECK(s.plan->zero3_blocking_gathers);
  // Out of range or of the wrong type: one line naming the key and what it takes.
  CHECK(error_with({"/workload/zero3_collectives_per_layer=0"}) ==
        "a.json: /workload/zero3_collectives_per_layer: expected a positive integer, got 0");
  CHECK_THAT(error_with({"/workload/zero3_collectives_per_layer=2000"}),
             Catch::StartsWith("a.json: /workload/zero3_collectives_per_layer:") &&
                 Catch::Contains("1024"));
  CHECK_THAT(error_with({"/workload/zero3_blocking_gathers=1"}),
             Catch::StartsWith("a.json: /workload/zero3_blocking_gathers:") &&
                 Catch::Contains("true or false"));
  // PyTorch FSDP's root unit: off unless the workload says so.
  CHECK_FALSE(s.workload.training.fsdp_root_unit);
  CHECK(planner::load_scenario(base_with({"/workload/fsdp_root_unit=true"}), "a.json")
            .workload.training.fsdp_root_unit);
  CHECK_THAT(error_with({"/workload/fsdp_root_unit=\"yes\""}),
             Catch::StartsWith("a.json: /workload/fsdp_root_unit:") &&
                 Catch::Contains("true or false"));
}

TEST_CASE("loader: fp8_recipe goes with FP8 GEMMs and names a recipe", "[loader][errors]") {
  CHECK(error_with({"/model/precision={\"fp8_recipe\": \"rowwise\"}"}) ==
        "a.json: /model/precision/fp8_recipe: fp8_recipe says how FP8 GEMMs are scaled; set "
        "compute to \"fp8\" or remove it");
  CHECK_THAT(error_with({"/model/precision={\"compute\": \"fp8\", \"fp8_recipe\": \"rowwize\"}"}),
             Catch::StartsWith("a.json: /model/precision/fp8_recipe:") &&
                 Catch::Contains("rowwise"));
}

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

// ---- Quantities: hand-derived values ------------------------------------------------------

TEST_CASE("quantity: byte units, IEC and SI", "[quantity]") {
  CHECK(bytes("192 GiB") == 192.0 * 1024 * 1024 * 1024);  // 192 · 2^30
  CHECK(bytes("192GiB") == 192.0 * 1024 * 1024 * 1024);   // the space is optional
  CHECK(bytes("80 GB") == 80e9);
  CHECK(bytes("2.5e9 B") == 2.5e9);
  CHECK(bytes("1 KiB") == 1024);
  CHECK(bytes("1 TiB") == 1099511627776.0);  // 2^40
  CHECK(bytes("3 TB") == 3e12);
  CHECK(bytes(" 0.5 MiB ") == 524288);  // surrounding spaces are ignored
  CHECK(bytes("0 B") == 0);
}

TEST_CASE("quantity: bandwidth, time and compute units", "[quantity]") {
  const auto q = [](std::string_view text, Dimension d) {
    return planner::parse_quantity_text(text, d, "q", "/q");
  };
  CHECK(q("50 GB/s", Dimension::bytes_per_second) == 50e9);
  CHECK(q("4.8 TB/s", Dimension::bytes_per_second) == Approx(4.8e12));
  CHECK(q("1 GiB/s", Dimension::bytes_per_second) == 1073741824.0);
  CHECK(q("100 Gbps", Dimension::bytes_per_second) == 12.5e9);  // 100e9 bits / 8
  CHECK(q("400 Gb/s", Dimension::bytes_per_second) == 50e9);
  CHECK(q("200 Gbit/s", Dimension::bytes_per_second) == 25e9);
  CHECK(q("25 GBps", Dimension::bytes_per_second) == 25e9);  // capital B: bytes
  CHECK(q("15 us", Dimension::seconds) == Approx(15e-6));
  CHECK(q("15 \u00b5s", Dimension::seconds) == Approx(15e-6));
  CHECK(q("700 ms", Dimension::seconds) == Approx(0.7));
  CHECK(q("100 ns", Dimension::seconds) == Approx(1e-7));
  CHECK(q("2 s", Dimension::seconds) == 2);
  CHECK(q("400 TFLOP/s", Dimension::flops_per_second) == 400e12);
  CHECK(q("1.2 PFLOPS", Dimension::flops_per_second) == Approx(1.2e15));
  CHECK(q("989 TFLOPS", Dimension::flops_per_second) == 989e12);
}

TEST_CASE("quantity: a bare JSON number is in base units", "[quantity]") {
  CHECK(planner::parse_quantity(nlohmann::json(8e9), Dimension::bytes, "q", "/q") == 8e9);
  CHECK(planner::parse_quantity(nlohmann::json(5), Dimension::seconds, "q", "/q") == 5);
  CHECK(planner::parse_quantity(nlohmann::json("5 ms"), Dimension::seconds, "q", "/q") ==
        Approx(5e-3));
}

TEST_CASE("quantity: errors", "[quantity][errors]") {
  CHECK(quantity_error("192", Dimension::bytes) ==
        "a.json: /x: \"192\" has no unit; write a size in bytes with one of B, KB, MB, GB, TB, "
        "PB, KiB, MiB, GiB, TiB, PiB (such as \"80 GiB\"), or a bare JSON number in bytes");
  CHECK(quantity_error("abc", Dimension::seconds) ==
        "a.json: /x: cannot read \"abc\" as a time in seconds; write a number and a unit, such "
        "as \"15 us\"");
  CHECK(quantity_error("", Dimension::seconds) ==
        "a.json: /x: cannot read \"\" as a time in seconds; write a number and a unit, such as "
        "\"15 us\"");
  CHECK(quantity_error("nan GB", Dimension::bytes) ==
        "a.json: /x: \"nan GB\" is not a finite number");
  CHECK(quantity_error("inf GB/s", Dimension::bytes_per_second) ==
        "a.json: /x: \"inf GB/s\" is not a finite number");
  CHECK(quantity_error("-5 GB", Dimension::bytes) ==
        "a.json: /x: expected a non-negative size in bytes, got \"-5 GB\"");
  CHECK(quantity_error("1e400 GB", Dimension::bytes) == "a.json: /x: \"1e400 GB\" is out of range");
  CHECK(quantity_error("1e300 PB", Dimension::bytes) == "a.json: /x: \"1e300 PB\" is too large");
  CHECK(quantity_error("400 TFLOPs", Dimension::flops_per_second) ==
        "a.json: /x: unknown unit \"TFLOPs\" in \"400 TFLOPs\" (did you mean \"TFLOPS\"?); units "
        "for FLOP/s: FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s");
  CHECK(quantity_error("5 parsecs", Dimension::seconds) ==
        "a.json: /x: unknown unit \"parsecs\" in \"5 parsecs\"; units for seconds: s, ms, us, "
        "\u00b5s, ns");
  // Case carries meaning (bytes vs bits), so a case-only mismatch is offered, not guessed.
  CHECK(quantity_error("25 gb/s", Dimension::bytes_per_second) ==
        "a.json: /x: unknown unit \"gb/s\" in \"25 gb/s\" (did you mean \"GB/s\" or \"Gb/s\"?); "
        "units for bytes/s: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, GBps, "
        "Mb/s, Gb/s, Tb/s, Gbit/s, Gbps");
  CHECK(quantity_error("50 GB/s", Dimension::bytes) ==
        "a.json: /x: \"50 GB/s\" is a bandwidth in bytes/s, but a size in bytes is expected "
        "here (units for bytes: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)");
  CHECK(error_of([] {
          (void)planner::parse_quantity(nlohmann::json(true), Dimension::bytes_per_second, "a.json",
                                        "/x");
        }) ==
        "a.json: /x: expected a bandwidth in bytes/s (a number or a string such as "
        "\"50 GB/s\"), got true");
  CHECK(error_of([] {
          (void)planner::parse_quantity(nlohmann::json(-1), Dimension::bytes, "a.json", "/x");
        }) == "a.json: /x: expected a non-negative size in bytes, got -1");
}

TEST_CASE("quantity: format_quantity picks a readable unit", "[quantity]") {
  CHECK(planner::format_quantity(192.0 * 1024 * 1024 * 1024, Dimension::bytes) == "192 GiB");
  CHECK(planner::format_quantity(50e9, Dimension::bytes_per_second) == "50 GB/s");
  CHECK(planner::format_quantity(15e-6, Dimension::seconds) == "15 us");
  CHECK(planner::format_quantity(400e12, Dimension::flops_per_second) == "400 TFLOP/s");
  CHECK(planner::format_quantity(0, Dimension::seconds) == "0 s");
}

TEST_CASE("spelling: edit distance and closest candidate", "[spelling]") {
  CHECK(planner::edit_distance("hidden", "hidden") == 0);
  CHECK(planner::edit_distance("hiden", "hidden") == 1);
  CHECK(planner::edit_distance("hiddne", "hidden") == 1);  // adjacent swap
  CHECK(planner::edit_distance("", "abc") == 3);
  const std::vector<std::string> keys{"layers", "hidden", "heads"};
  CHECK(planner::closest("hiden", keys) == std::optional<std::string>("hidden"));
  CHECK(planner::closest("zzzzzz", keys) == std::nullopt);
  const std::vector<std::string> axes{"tp", "pp"};
  CHECK(planner::closest("xy", axes) == std::nullopt);  // short words get one edit only
}

// ---- Loading: one test per error class ----------------------------------------------------

TEST_CASE("loader: the base scenario loads", "[loader]") {
  const auto s = planner::load_scenario_text(base_scenario, "a.json");
  CHECK(s.origin == "a.json");
  CHECK(s.name == "base");
  CHECK(s.model.kv_heads == 32);       // default: heads
  CHECK(s.model.ffn_hidden == 16384);  // default: 4 · hidden
  CHECK(s.cluster.gpu.memory_bytes == 192.0 * 1024 * 1024 * 1024);
  CHECK_FALSE(s.plan.has_value());
  CHECK(s.expect.empty());
}

TEST_CASE("loader: malformed JSON gives line and column", "[loader][errors]") {
  CHECK(load_text_error("{\n  \"model\": {\n    \"layers\": 32,\n  }\n}") ==
        "a.json: malformed JSON at line 4, column 3: syntax error while parsing object key - "
        "unexpected '}'; expected string literal");
  CHECK(load_text_error("") ==
        "a.json: malformed JSON at line 1, column 1: syntax error while parsing value - "
        "unexpected end of input; expected '[', '{', or a literal");
  CHECK(load_text_error("[1e999]") == "a.json: malformed JSON: number overflow parsing '1e999'");
}

TEST_CASE("loader: a repeated key is an error", "[loader][errors]") {
  CHECK(load_text_error(R"({"model": {"layers": [1, {"a": 1, "a": 2}]}})") ==
        "a.json: /model/layers/1/a: duplicate key; each key may appear once in an object");
}

TEST_CASE("loader: nesting is bounded", "[loader][errors]") {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  CHECK(load_text_error(deep) ==
        "a.json: /0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/"
        "0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0: JSON nested deeper than 64 levels");
}

TEST_CASE("loader: wrong JSON types", "[loader][errors]") {
  CHECK(load_text_error("[1, 2]") ==
        "a.json: expected an object with keys name, description, model, cluster, workload, plan, "
        "expect, stragglers, resilience, constraints, got [1,2]");
  CHECK(error_with({"/model/hidden=\"4096\""}) ==
        "a.json: /model/hidden: expected a positive integer, got \"4096\"");
  CHECK(error_with({"/model/gated_mlp=1"}) ==
        "a.json: /model/gated_mlp: expected true or false, got 1");
  CHECK(error_with({"/name=5"}) == "a.json: /name: expected a string, got 5");
  CHECK(error_with({"/cluster/gpu=[1, 2]"}) ==
        "a.json: /cluster/gpu: expected an object with keys memory, memory_bandwidth, flops, "
        "flops_by_dtype, reserve, got [1,2]");
}

TEST_CASE("loader: missing required keys say what is expected", "[loader][errors]") {
  CHECK(load_text_error(R"({"model": {"layers": 32}})") ==
        "a.json: /model/hidden: missing required key (expected a positive integer)");
  CHECK(load_text_error(R"({})") ==
        "a.json: /model: missing required key (expected an object with layers, hidden, heads, "
        "vocab and seq_len, or a \"preset\" (planner list models) and seq_len)");
  const auto doc = base_with({});
  auto no_memory = doc;
  no_memory["cluster"]["gpu"].erase("memory");
  CHECK(error_of([&] { (void)planner::load_scenario(no_memory, "a.json"); }) ==
        "a.json: /cluster/gpu/memory: missing required key (expected a GPU memory size such as "
        "\"192 GiB\" (1 B to 2^60 B))");
}

TEST_CASE("loader: unknown keys, with and without a suggestion", "[loader][errors]") {
  CHECK(error_with({"/model/hiden=4096"}) ==
        "a.json: /model/hiden: unknown key (did you mean 'hidden'?)");
  CHECK(error_with({"/plan={\"tp\": 8, \"micro_bach\": 2}"}) ==
        "a.json: /plan/micro_bach: unknown key (did you mean 'micro_batch'?)");
  CHECK(error_with({"/cluster/gpu/colour=1"}) ==
        "a.json: /cluster/gpu/colour: unknown key; expected one of: memory, memory_bandwidth, "
        "flops, flops_by_dtype, reserve");
  CHECK(error_with({"/workload/batch=8"}) ==
        "a.json: /workload/batch: not a key of a training workload; expected one of: kind, "
        "global_batch_tokens, micro_batch, step_time_per_micro_batch, bytes_per_param, "
        "tp_comm_overlap, pp_comm_overlap, tables_in_pipeline_split, fused_cross_entropy, "
        "zero3_live_parameters, zero3_collectives_per_layer, zero3_blocking_gathers, "
        "fsdp_root_unit, unsharded_gradient_accumulation, elementwise_kernels, tp_saved_inputs, "
        "attention_kernel");
  // What a column-parallel GEMM keeps under SP: one of two words.
  CHECK(error_with({"/workload/tp_saved_inputs=\"all\""}).find("/workload/tp_saved_inputs") !=
        std::string::npos);
  // The kernels' choice: one of two words.
  CHECK(error_with({"/workload/elementwise_kernels=\"compiled\""}).find(
            "/workload/elementwise_kernels") != std::string::npos);
}

TEST_CASE("loader: integers reject fractions, negatives, zero and huge values",
          "[loader][errors]") {
  CHECK(error_with({"/model/layers=3.7"}) ==
        "a.json: /model/layers: expected a positive integer, got 3.7");
  CHECK(error_with({"/cluster/gpus_per_node=-8"}) ==
        "a.json: /cluster/gpus_per_node: expected a positive integer, got -8");
  CHECK(error_with({"/cluster/nodes=0"}) ==
        "a.json: /cluster/nodes: expected a positive integer, got 0");
  CHECK(error_with({"/model/hidden=8e9"}) ==
        "a.json: /model/hidden: expected a positive integer no greater than 16777216 (2^24), got "
        "8000000000.0");
  CHECK(error_with({"/model/layers=18446744073709551615"}) ==
        "a.json: /model/layers: expected a positive integer no greater than 1048576 (2^20), got "
        "18446744073709551615");
  CHECK(error_with({"/cluster/nodes=16777216"}) ==
        "a.json: /cluster: nodes·gpus_per_node = 16777216·8 = 134217728 GPUs exceeds the limit of "
        "16777216 (2^24)");
  CHECK(error_with({"/plan={\"dp\": 64, \"zero\": 4}"}) ==
        "a.json: /plan/zero: expected an integer from 0 to 3, got 4");
  // An integral float is an integer: 8e1 layers is 80 layers.
  CHECK(planner::load_scenario(base_with({"/model/layers=8e1"}), "a.json").model.layers == 80);
}

TEST_CASE("loader: quantity fields", "[loader][errors]") {
  CHECK(error_with({"/cluster/gpu/memory=192 Gib"}) ==
        "a.json: /cluster/gpu/memory: unknown unit \"Gib\" in \"192 Gib\" (did you mean "
        "\"GiB\"?); units for bytes: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB");
  CHECK(error_with({"/cluster/inter_node/bandwidth=25 GiB"}) ==
        "a.json: /cluster/inter_node/bandwidth: \"25 GiB\" is a size in bytes, but a bandwidth "
        "in bytes/s is expected here (units for bytes/s: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, "
        "MiB/s, GiB/s, TiB/s, GBps, Mb/s, Gb/s, Tb/s, Gbit/s, Gbps)");
  CHECK(error_with({"/cluster/gpu/memory=nan GB"}) ==
        "a.json: /cluster/gpu/memory: \"nan GB\" is not a finite number");
  CHECK(error_with({"/cluster/gpu/memory=0 GiB"}) ==
        "a.json: /cluster/gpu/memory: expected a GPU memory size such as \"192 GiB\" (1 B to 2^60 "
        "B), got \"0 GiB\"");
  CHECK(error_with({"/cluster/intra_node/latency=2 min"}) ==
        "a.json: /cluster/intra_node/latency: unknown unit \"min\" in \"2 min\"; units for "
        "seconds: s, ms, us, \u00b5s, ns");
  CHECK(error_with({"/cluster/gpu/reserve=200 GiB"}) ==
        "a.json: /cluster/gpu/reserve: reserve (200 GiB) must be less than memory (192 GiB), or "
        "nothing is left for the model");
}

TEST_CASE("loader: model consistency", "[loader][errors]") {
  CHECK(error_with({"/model/heads=48"}) ==
        "a.json: /model/heads: heads (48) must divide hidden (4096); try 32 or 64");
  CHECK(error_with({"/model/kv_heads=12"}) ==
        "a.json: /model/kv_heads: kv_heads (12) must divide heads (32); try 8 or 16");
  CHECK(error_with({"/model/kv_heads=64"}) ==
        "a.json: /model/kv_heads: kv_heads (64) must not exceed heads (32)");
  CHECK(error_with({"/model/params=1e8"}) ==
        "a.json: /model/params: params (1e+08) must exceed the embedding parameters, "
        "vocab·hidden·2 (untied) = 1.051e+09; give the total parameter count, such as 8e9");
}

TEST_CASE("loader: workload fields", "[loader][errors]") {
  CHECK(error_with({"/workload/kind=serve"}) ==
        "a.json: /workload/kind: expected one of \"training\", \"serving\", got \"serve\"");
  CHECK(error_with({"/workload/bytes_per_param=2"}) ==
        "a.json: /workload/bytes_per_param: expected a number of bytes per parameter from 4 to 64 "
        "(16 for mixed-precision Adam), got 2");
  CHECK(error_with({"/workload/global_batch_tokens=0"}) ==
        "a.json: /workload/global_batch_tokens: expected a positive number of tokens such as "
        "4194304 (at most 2^50), got 0");
  CHECK(error_with({"/workload={\"kind\": \"serving\", \"batch\": 8, \"context_tokens\": 4096}"}) ==
        "a.json: /workload/slo_per_token: missing required key (expected a positive time such as "
        "\"25 ms\" (at most 3600 s))");
}

// ---- Plans -------------------------------------------------------------------------------

// The decode attention kernel's KV reads (issue 30, long decodes of grouped-query models): a
// kernel with one thread block per query head loads each KV head once per query head; each
// figure is worked out here by hand.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_harness.hpp"
#include "planner/model/serving/decode.hpp"
#include "serving_test_helpers.hpp"

using namespace planner;

namespace {

/// Llama-2-70B (Touvron et al. 2023, arXiv 2307.09288): Llama-3.1-70B's layers (64 query
/// heads, 8 KV heads of 128) with a 32,000-token vocabulary.
Model llama2_70b() {
  Model m = serving_test::llama70b();
  m.vocab = 32000;
  m.seq_len = 4096;
  return m;
}

Plan tp_engine(std::int64_t tp, std::int64_t batch) {
  Plan p;
  p.tp = tp;
  p.micro_batch = batch;
  return p;
}

}  // namespace

TEST_CASE("a per-query-head kernel reads each KV head once per query head",
          "[serving][decode]") {
  const Model m = llama2_70b();
  // Grouped: one load per KV head, whatever the grouping.
  CHECK(kv_reads_per_element(m, tp_engine(2, 1), DecodeAttention::grouped) == 1.0);
  // Per query head: 64 / 8 = 8 query heads share each KV head on a rank while tp ≤ 8.
  CHECK(kv_reads_per_element(m, tp_engine(1, 1), DecodeAttention::per_query_head) == 8.0);
  CHECK(kv_reads_per_element(m, tp_engine(8, 1), DecodeAttention::per_query_head) == 8.0);
  // tp 16: each rank keeps one copied KV head and 64 / 16 = 4 query heads.
  CHECK(kv_reads_per_element(m, tp_engine(16, 1), DecodeAttention::per_query_head) == 4.0);
  // Falcon-180B's 232 query heads over 8 KV heads on tp 8: 29 loads of each.
  Model falcon = m;
  falcon.heads = 232;
  falcon.hidden = 14848;
  CHECK(kv_reads_per_element(falcon, tp_engine(8, 1), DecodeAttention::per_query_head) == 29.0);
  // Multi-head attention: one query head per KV head, one load either way.
  Model mha = m;
  mha.kv_heads = 64;
  CHECK(kv_reads_per_element(mha, tp_engine(2, 1), DecodeAttention::per_query_head) == 1.0);
}

TEST_CASE("the decode step's KV time scales with the kernel's reads, nothing else does",
          "[serving][decode]") {
  const Model m = llama2_70b();
  Cluster c = serving_test::h100_node();  // 8 GPUs; the engine uses 2 of them
  c.gpus_per_node = 2;
  Serving w;
  w.input_tokens = 2048;
  w.output_tokens = 2048;
  w.context_tokens = 4096;
  w.memory_bandwidth_efficiency = 1.0;
  const Plan p = tp_engine(2, 64);
  const double weights = 35e9;
  const DecodeStep grouped = decode_step(m, c, w, p, 64, weights, 400e12);
  w.decode_attention = DecodeAttention::per_query_head;
  const DecodeStep per_head = decode_step(m, c, w, p, 64, weights, 400e12);
  // KV per token on a rank: 2 · 80 · 4 heads · 128 · 2 B = 163,840 B; mean context
  // 2048 + 2048 / 2 = 3072 tokens; 64 sequences: 3.2212e10 B at 3.35 TB/s = 9.615 ms.
  CHECK(grouped.kv_read_seconds == Approx(163840.0 * 3072 * 64 / 3.35e12));
  CHECK(per_head.kv_read_seconds == Approx(8 * 163840.0 * 3072 * 64 / 3.35e12));
  CHECK(per_head.weight_read_seconds == grouped.weight_read_seconds);
  CHECK(per_head.flops == grouped.flops);
  CHECK(per_head.seconds - grouped.seconds ==
        Approx(per_head.kv_read_seconds - grouped.kv_read_seconds));
}

TEST_CASE("decode_attention is read from the scenario, a wrong value is refused",
          "[serving][decode][cli]") {
  nlohmann::json s = nlohmann::json::parse(
      cli_harness::read("validation/serving/trtllm-h100-fp8-llama2-70b-tp2-b64-2048-2048-"
                        "throughput.json"))
                         .at("scenario");
  const std::string file = "/tmp/planner-decode-attention-" + std::to_string(::getpid()) + ".json";
  const auto per_token = [&](const nlohmann::json& scenario) {
    std::ofstream(file) << scenario.dump();
    auto r = cli_harness::run({"memory", file, "--format", "json"});
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out).at("plan").at("time").at("kv_read").get<double>();
  };
  s["workload"]["decode_attention"] = "grouped";
  const double grouped = per_token(s);
  s["workload"]["decode_attention"] = "per_query_head";
  CHECK(per_token(s) == Approx(8 * grouped));  // 64 query heads over 8 KV heads
  s["workload"]["decode_attention"] = "per_head";
  std::ofstream(file) << s.dump();
  const auto r = cli_harness::run({"memory", file});
  std::remove(file.c_str());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/workload/decode_attention"));
  CHECK_THAT(r.err, Catch::Contains("per_query_head"));
}

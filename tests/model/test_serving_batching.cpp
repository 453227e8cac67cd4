// Prompts batched together and mixed into the decode iteration (issue 30, docs/model.md
// §8.4), the decode step as two kernels at their own rooflines (§8.2), and the engine's
// batch limit, each against figures worked out here by hand.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "cli_harness.hpp"
#include "planner/model/serving/batching.hpp"
#include "planner/model/serving/serving_time.hpp"
#include "serving_test_helpers.hpp"

using namespace planner;
using serving_test::h100_node;
using serving_test::llama31_8b;

namespace {

// Llama-3.1-8B (serving_test_helpers.hpp). One layer: Q, O 2·4096² = 33,554,432; K, V
// 2·4096·1024 = 8,388,608; gated MLP 3·4096·14336 = 176,160,768; two norms counted 4·4096 =
// 16,384 (as the 70B's 4·8192, test_serving.cpp): 218,120,192 parameters; 32 layers
// 6,979,846,144; the output layer V·h = 525,336,576.

/// 128-token prompts and 16-token answers on one GPU, bf16 everywhere, the datasheet
/// bandwidth (no fitted fractions) and no per-layer floors, so each term is a division.
Serving short_prompts(Batching b) {
  Serving w;
  w.input_tokens = 128;
  w.output_tokens = 16;
  w.context_tokens = 144;
  w.slo_per_token_seconds = 1;
  w.batching = b;
  return w;
}

Plan single_gpu(std::int64_t batch) {
  Plan p;
  p.micro_batch = batch;
  return p;
}

constexpr double streamed_weights = 16.06e9;  // what the GEMMs stream per step, given

}  // namespace

TEST_CASE("prompts prefilled together: the sequences a decode step ends, at least one",
          "[serving][batching]") {
  CHECK(prompts_per_forward(4096, 128) == 32);  // 4096 sequences each ending after 128 steps
  CHECK(prompts_per_forward(64, 16) == 4);
  CHECK(prompts_per_forward(20, 2000) == 1);    // one prompt every 100 steps: alone
  CHECK(prompts_per_forward(20, 0) == 1);       // no output length: one prompt
}

TEST_CASE("a prompt's cost to the engine, prefilled apart or mixed into the decode iteration, "
          "by hand",
          "[serving][batching]") {
  const Model m = llama31_8b();
  Cluster c = h100_node();
  c.gpus_per_node = 1;
  // 64 sequences of 16 tokens: 4 end per step, so 4 prompts (512 tokens) per forward.
  //
  // Their prefill: GEMMs 4·2·6,979,846,144·128 = 7.1474e12 FLOP over 512 rows, at 512 /
  // (512 + 24.97) = 0.95350 of the rate (gemm_rows.hpp), and the logits 4·2·525,336,576 =
  // 4.2027e9 FLOP over 4 rows, at 4 / 28.97 = 0.13807: 18.816 ms at 400 TFLOP/s, above the
  // 16.06 GB weight read (4.794 ms at 3.35 TB/s); attention 4·2·4096·128·129·32 = 1.7316e10
  // FLOP, 0.0433 ms, above its cache read (4 prompts · 128 tokens · 131,072 B = 67.1 MB,
  // 0.0200 ms): 18.859 ms for the four.
  const double prompt_gemm = (4 * 2 * 6979846144.0 * 128 / (512.0 / (512 + 24.97)) +
                              4 * 2 * 525336576.0 / (4.0 / (4 + 24.97))) /
                             400e12;
  const double prompt_attention = 4 * 2 * 4096.0 * 128 * 129 * 32 / 400e12;
  const double weight_read = streamed_weights / 3.35e12;
  CHECK(prompt_gemm * 1e3 == Approx(18.816).epsilon(1e-4));
  CHECK(prompt_attention * 1e3 == Approx(0.0433).epsilon(2e-3));
  CHECK(weight_read * 1e3 == Approx(4.794).epsilon(1e-3));
  {
    const PromptForward f =
        prompt_forward(m, c, short_prompts(Batching::separate), single_gpu(64), 64,
                       streamed_weights, 400e12);
    CHECK(f.prompts == 4);
    CHECK(f.first_token_seconds == Approx(prompt_gemm + prompt_attention));
    CHECK(f.engine_seconds == Approx((prompt_gemm + prompt_attention) / 4));  // 4.714 ms each
    CHECK(f.decoding_alongside == 0);
  }
  // Mixed: the other 60 decode beside them. Their step alone: GEMMs 2·(6,979,846,144 +
  // 525,336,576)·60 = 9.006e11 FLOP over 60 rows, at 60 / 84.97 = 0.70613 of the rate,
  // 3.189 ms, under the 4.794 ms weight read; attention over 128 + 16/2 = 136 cached tokens,
  // 60·136·131,072 B = 1.0695 GB, 0.3193 ms (its FLOPs, 4·4096·136·60·32 = 4.28e9, 0.0107 ms,
  // under it): 5.113 ms. With the prompts, the GEMMs over all tokens, max(4.794, 3.189 +
  // 18.816) = 22.005 ms (each at its own rows' share), then both attention kernels, 0.3193 +
  // 0.0433: 22.367 ms, 17.254 ms more than the step; 4.313 ms per prompt, where apart each
  // cost 4.714 (the weight read is the decodes').
  {
    const double decode_gemm =
        2 * (6979846144.0 + 525336576.0) * 60 / (400e12 * (60.0 / (60 + 24.97)));
    const double decode_cache = 60 * 136 * 131072.0 / 3.35e12;
    const double step = weight_read + decode_cache;
    const double mixed = std::max(weight_read, decode_gemm + prompt_gemm) + decode_cache +
                         prompt_attention;
    CHECK(step * 1e3 == Approx(5.113).epsilon(1e-3));
    CHECK(mixed * 1e3 == Approx(22.367).epsilon(1e-3));
    const PromptForward f =
        prompt_forward(m, c, short_prompts(Batching::mixed), single_gpu(64), 64, streamed_weights,
                       400e12);
    CHECK(f.prompts == 4);
    CHECK(f.decoding_alongside == 60);
    CHECK(f.engine_seconds == Approx((mixed - step) / 4));
    CHECK(f.engine_seconds * 1e3 == Approx(4.313).epsilon(1e-3));
    CHECK(f.first_token_seconds == Approx(mixed));
  }
  // One user: nothing decodes beside its prompt, which runs alone either way.
  {
    const PromptForward mixed = prompt_forward(m, c, short_prompts(Batching::mixed),
                                               single_gpu(1), 1, streamed_weights, 400e12);
    const PromptForward apart = prompt_forward(m, c, short_prompts(Batching::separate),
                                               single_gpu(1), 1, streamed_weights, 400e12);
    CHECK(mixed.prompts == 1);
    CHECK(mixed.decoding_alongside == 0);
    CHECK(mixed.engine_seconds == Approx(apart.engine_seconds));
    // A 128-token prompt alone: its GEMMs, 2·6,979,846,144·128 FLOP at 128 / 152.97 =
    // 0.83677 of the rate and the logits' 2·525,336,576 at 1 / 25.97, 5.407 ms, now above the
    // 4.794 ms weight read; then its attention.
    const double gemm = (2 * 6979846144.0 * 128 / (128.0 / (128 + 24.97)) +
                         2 * 525336576.0 / (1.0 / (1 + 24.97))) /
                        400e12;
    CHECK(gemm * 1e3 == Approx(5.407).epsilon(1e-3));
    CHECK(apart.engine_seconds == Approx(gemm + prompt_attention / 4).epsilon(1e-9));
  }
}

TEST_CASE("the engine's batch limit caps what its memory would hold", "[serving][batching]") {
  const Model m = llama31_8b();
  Cluster c = h100_node();
  c.gpus_per_node = 1;
  c.gpu.memory_bytes = 141 * gib;
  Serving w = short_prompts(Batching::mixed);
  w.concurrency = 30000;
  Plan p = single_gpu(30000);
  // 144 tokens of cache, 18.9 MB a sequence: thousands fit beside 16 GB of weights.
  const MemoryLedger open = serving_ledger(m, c, w, p);
  CHECK(serving_slots(m, w, p, open) > 4096);
  w.max_batch = 4096;
  const MemoryLedger capped = serving_ledger(m, c, w, p);
  CHECK(serving_slots(m, w, p, capped) == 4096);
  CHECK(capped.kv_cache_bytes == Approx(4096 * 144 * 131072.0));
  // The closed loop then decodes 4096 at a time, the other users waiting for a slot.
  const ServingTime t = serving_time(m, c, w, p, capped, 400e12);
  CHECK(t.slots == 4096);
  CHECK(t.decode.batch == 4096);
  CHECK(t.slot_wait_seconds > 0);
}

TEST_CASE("batching and max_batch are read from the scenario, a wrong value is refused",
          "[serving][batching][cli]") {
  nlohmann::json s = nlohmann::json::parse(
      cli_harness::read("validation/serving/trtllm-v1.0-h100-fp8-llama3.1-8b-tp1-128-128-"
                        "throughput.json"))
                         .at("scenario");
  const std::string file = "/tmp/planner-batching-" + std::to_string(::getpid()) + ".json";
  const auto time_of = [&](const nlohmann::json& scenario) {
    std::ofstream(file) << scenario.dump();
    auto r = cli_harness::run({"memory", file, "--format", "json"});
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out).at("plan").at("time");
  };
  const nlohmann::json mixed = time_of(s);
  CHECK(mixed.at("batching") == "mixed");
  CHECK(mixed.at("slots").get<double>() == s["workload"]["max_batch"].get<double>());
  // 128-token answers: a full batch ends 1/128 of itself per step, its replacements together.
  CHECK(mixed.at("prompts_per_forward").get<double>() ==
        Approx(mixed.at("slots").get<double>() / 128));
  s["workload"]["batching"] = "separate";
  const nlohmann::json apart = time_of(s);
  // Apart, the prompts' forward reads the weights again and stalls the decodes.
  CHECK(apart.at("prompt_engine_seconds").get<double>() >
        mixed.at("prompt_engine_seconds").get<double>());
  CHECK(apart.at("tokens_per_second").get<double>() < mixed.at("tokens_per_second").get<double>());
  s["workload"]["batching"] = "together";
  std::ofstream(file) << s.dump();
  auto r = cli_harness::run({"memory", file});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/workload/batching"));
  CHECK_THAT(r.err, Catch::Contains("mixed"));
  s["workload"]["batching"] = "mixed";
  s["workload"].erase("concurrency");
  s["workload"]["batch"] = 64;
  std::ofstream(file) << s.dump();
  r = cli_harness::run({"memory", file});
  std::remove(file.c_str());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/workload/max_batch"));
}

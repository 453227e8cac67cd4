// A lockstep closed loop (issue 30, time to first token under load): identical requests from
// users who start together arrive a round at a time; the round's prompts are prefilled in one
// forward and every first token waits for it. Figures worked out here by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_harness.hpp"
#include "planner/model/serving/serving_time.hpp"
#include "serving_test_helpers.hpp"

using namespace planner;
using serving_test::engine;

namespace {

Serving round_trip(std::int64_t input, std::int64_t output) {
  Serving w;
  w.input_tokens = input;
  w.output_tokens = output;
  w.context_tokens = input + output;
  w.slo_per_token_seconds = 1;
  return w;
}

}  // namespace

TEST_CASE("prompts prefilled together share the weight read and the fixed costs",
          "[serving][prefill]") {
  const Model m = serving_test::llama70b();
  const Cluster c = serving_test::h100_node();
  Serving w = round_trip(128, 128);
  w.layer_step_seconds = 65e-6;
  const Plan p = engine(8, 16);
  const double weights = 17.6e9;  // per GPU at tp 8, bf16
  const PrefillTime one = prefill_time(m, c, w, p, weights, 400e12);
  const PrefillTime sixteen = prefill_time(m, c, w, p, weights, 400e12, 16);
  // FLOPs add up: 16 prompts of 128 tokens do 16 times one prompt's GEMMs and attention.
  CHECK(sixteen.flops == Approx(16 * one.flops));
  CHECK(sixteen.compute_seconds == Approx(16 * one.compute_seconds));
  // One weight read (17.6 GB at 3.35 TB/s = 5.254 ms) and 16 prompts' cache writes:
  // KV per token per rank 2 · 80 · 1 head · 128 · 2 B = 40,960 B, 128 tokens each.
  CHECK(sixteen.memory_seconds == Approx(17.6e9 / 3.35e12 + 16 * 40960.0 * 128 / 3.35e12));
  // The layers' fixed costs once: 80 · 65 µs = 5.2 ms, as for one prompt.
  CHECK(sixteen.fixed_seconds == Approx(one.fixed_seconds));
  CHECK(sixteen.fixed_seconds == Approx(80 * 65e-6));
  // Sixteen prompts in one forward beat sixteen forwards of one.
  CHECK(sixteen.seconds < 16 * one.seconds);
}

TEST_CASE("lockstep rounds: the first token waits for the round's prefill, no prompt stalls "
          "the decodes",
          "[serving][queueing]") {
  const Model m = serving_test::llama70b();
  const Cluster c = serving_test::h100_node();
  Serving w = round_trip(2048, 256);
  const Plan p = engine(8, 32);
  const MemoryLedger l = serving_ledger(m, c, w, p);
  const ServingTime staggered = serving_time(m, c, w, p, l, 400e12);
  w.closed_loop = ClosedLoop::lockstep;
  const ServingTime lockstep = serving_time(m, c, w, p, l, 400e12);
  const double round =
      prefill_time(m, c, w, p, l.weights_bytes, 400e12, 32).seconds;  // 32 prompts at once
  // Every first token of the round comes when the round's prefill ends: mean and quantile.
  CHECK(lockstep.round_prefill_seconds == Approx(round));
  CHECK(lockstep.ttft_seconds == Approx(round));
  CHECK(lockstep.ttft_mean_seconds == Approx(round));
  // The decodes run uninterrupted: time per output token is the step itself.
  CHECK(lockstep.per_token_seconds == Approx(lockstep.decode.seconds));
  // A round completes 32 requests in R + 256 steps: 32 · 256 tokens per engine, one engine.
  CHECK(lockstep.tokens_per_second ==
        Approx(32.0 * 256 / (round + 256 * lockstep.decode.seconds)));
  // Staggered users find a prefill or two ahead of them, not the whole round's.
  CHECK(staggered.ttft_mean_seconds < lockstep.ttft_mean_seconds);
}

TEST_CASE("closed_loop is read from the scenario, contradictions are refused",
          "[serving][queueing][cli]") {
  nlohmann::json s = nlohmann::json::parse(
      cli_harness::read("validation/serving/lmdeploy-a100-fp16-llama2-7b-tp1-b16-128-128-"
                        "ttft.json"))
                         .at("scenario");
  const std::string file = "/tmp/planner-lockstep-" + std::to_string(::getpid()) + ".json";
  const auto run = [&](const nlohmann::json& scenario) {
    std::ofstream(file) << scenario.dump();
    return cli_harness::run({"memory", file, "--format", "json"});
  };
  auto r = run(s);
  REQUIRE(r.code == 0);
  const double lockstep_ttft =
      nlohmann::json::parse(r.out).at("plan").at("time").at("ttft_mean").get<double>();
  s["workload"]["closed_loop"] = "staggered";
  r = run(s);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("plan").at("time").at("ttft_mean").get<double>() <
        lockstep_ttft);
  s["workload"]["closed_loop"] = "lockstep";
  s["workload"]["request_rate"] = 2;
  r = run(s);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/workload/closed_loop: \"lockstep\" describes a fixed "
                                    "concurrency"));
  s["workload"].erase("request_rate");
  s["workload"].erase("output_tokens");
  s["workload"]["context_tokens"] = 256;
  r = run(s);
  std::remove(file.c_str());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("\"lockstep\" needs \"output_tokens\""));
}

TEST_CASE("users whose caches do not all fit wait for a slot, the engine runs what fits",
          "[serving][queueing]") {
  const Model m = serving_test::llama70b();
  Cluster c = serving_test::h100_node();
  c.gpus_per_node = 1;
  c.gpu.reserve_bytes = 0;
  Serving w = round_trip(16384, 16384);  // 32,768 reserved tokens a sequence
  w.concurrency = 100;
  Plan p = engine(1, 100);
  p.dp = 1;
  Model small = m;  // an 8-layer slice of it
  small.layers = 8;
  const MemoryLedger l = serving_ledger(small, c, w, p);
  // KV per sequence: 2 · 8 layers · 8 heads · 128 · 2 B · 32,768 tokens = 1.07 GB; the GPU's
  // 80 GiB less the weights holds floor((80 GiB − weights) / 1.07 GB) sequences, not 100.
  const double per_sequence = 2.0 * 8 * 8 * 128 * 2 * 32768;
  const double fit = std::floor((80.0 * gib - l.weights_bytes) / per_sequence);
  REQUIRE(fit < 100);
  CHECK(l.kv_cache_bytes == Approx(fit * per_sequence));
  CHECK(l.fits());
  const ServingTime staggered = serving_time(small, c, w, p, l, 400e12);
  CHECK(staggered.slots == fit);
  CHECK(staggered.decode.batch == fit);
  // The engine stays full: λ = slots / (o·step + slots·T); a user's cycle is 100 / λ, of which
  // o·TPOT decoding, the prefill and its queue; the rest is the wait for a slot.
  const double lambda = staggered.requests_per_second;
  CHECK(lambda == Approx(fit / (16384 * staggered.decode.seconds +
                                fit * staggered.prefill.stage_seconds)));
  CHECK(staggered.slot_wait_seconds ==
        Approx(100 / lambda - 16384 * staggered.per_token_seconds - staggered.prefill.seconds -
               staggered.queue.mean_seconds));
  CHECK(staggered.slot_wait_seconds > 0);
  // Lockstep: the opening round admits every user whose prompt's cache is free (blocks
  // allocated as tokens come): 16,384-token prompts, half a whole context, so all 100 prompts
  // (53.7 GB) fit beside the weights at once. Every first token waits for their prefill
  // alone; the engine's rate stays the whole-context rounds' of `fit` users.
  w.closed_loop = ClosedLoop::lockstep;
  const double prompt_bytes = per_sequence / 2;
  REQUIRE(std::floor((80.0 * gib - l.weights_bytes) / prompt_bytes) >= 100);
  const ServingTime lockstep = serving_time(small, c, w, p, l, 400e12);
  CHECK(lockstep.round_prompts == 100);
  CHECK(lockstep.slot_wait_seconds == 0);
  CHECK(lockstep.ttft_mean_seconds == lockstep.round_prefill_seconds);
  CHECK(lockstep.round_prefill_seconds ==
        Approx(prefill_time(small, c, w, p, l.weights_bytes, 400e12, 100).seconds));
  const double round =
      prefill_time(small, c, w, p, l.weights_bytes, 400e12, fit).seconds +
      16384 * lockstep.decode.seconds;
  CHECK(lockstep.tokens_per_second == Approx(fit * 16384 / round));
  // 31,744-token prompts and 1,024 output tokens (the same whole context): a prompt's cache
  // is 31/32 of a sequence's, so the opening round admits floor(free / that) users, more
  // than `fit` and fewer than 100; the rest form ⌈rest / fit⌉ rounds after it. Their first
  // token waits for the opening round, half the later ones before their own, and their
  // round's prefill: the mean over the 100 users, by hand.
  w.input_tokens = 31744;
  w.output_tokens = 1024;
  const double first = std::floor((80.0 * gib - l.weights_bytes) / (per_sequence * 31 / 32));
  REQUIRE(first > fit);
  REQUIRE(first < 100);
  const ServingTime split = serving_time(small, c, w, p, l, 400e12);
  CHECK(split.round_prompts == first);
  const double opening = prefill_time(small, c, w, p, l.weights_bytes, 400e12, first).seconds;
  const double whole = prefill_time(small, c, w, p, l.weights_bytes, 400e12, fit).seconds;
  const double step = split.decode.seconds;
  const double later_rounds = std::ceil((100 - first) / fit);
  const double later_first_token = opening + 1024 * step +
                                   0.5 * (later_rounds - 1) * (whole + 1024 * step) + whole;
  CHECK(split.ttft_mean_seconds ==
        Approx((first * opening + (100 - first) * later_first_token) / 100));
  CHECK(split.ttft_mean_seconds > opening);
  // A batch (not a concurrency) is the user's engine batch: kept whole, and then too big.
  w.concurrency = 0;
  w.batch = 100;
  CHECK_FALSE(serving_ledger(small, c, w, p).fits());
}

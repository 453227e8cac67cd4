// A lockstep closed loop (issue 30, time to first token under load): identical requests from
// users who start together arrive a round at a time; the idle engine starts on the round's
// lead prompt and prefills the others together after it. Figures worked out here by hand.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
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
  // Their GEMMs run over 2,048 rows, at 2048 / 2072.97 of the rate where one prompt's 128 rows
  // run at 128 / 152.97 (gemm_rows.hpp); the logits over 16 rows against 1. Per prompt, tp 8:
  // the layers 2 · 80 · 855,670,784 · 128 / 8 FLOP, the logits 2 · 128,256 · 8192 / 8.
  const double layers = 2.0 * 80 * 855670784.0 * 128 / 8;
  const double logits = 2.0 * 128256 * 8192 / 8;
  CHECK(sixteen.gemm_seconds == Approx(16 * (layers / (2048.0 / 2072.97) +
                                             logits / (16.0 / 40.97)) / 400e12));
  CHECK(one.gemm_seconds == Approx((layers / (128.0 / 152.97) + logits / (1.0 / 25.97)) / 400e12));
  // One weight read (17.6 GB at 3.35 TB/s = 5.254 ms) and 16 prompts' cache writes:
  // KV per token per rank 2 · 80 · 1 head · 128 · 2 B = 40,960 B, 128 tokens each.
  CHECK(sixteen.memory_seconds == Approx(17.6e9 / 3.35e12 + 16 * 40960.0 * 128 / 3.35e12));
  // The layers' fixed costs once: 80 · 65 µs = 5.2 ms, as for one prompt.
  CHECK(sixteen.fixed_seconds == Approx(one.fixed_seconds));
  CHECK(sixteen.fixed_seconds == Approx(80 * 65e-6));
  // Sixteen prompts in one forward beat sixteen forwards of one.
  CHECK(sixteen.seconds < 16 * one.seconds);
}

TEST_CASE("lockstep rounds: the lead prompt alone, the others together after it, no prompt "
          "stalls the decodes",
          "[serving][queueing]") {
  const Model m = serving_test::llama70b();
  const Cluster c = serving_test::h100_node();
  Serving w = round_trip(2048, 256);
  const Plan p = engine(8, 32);
  const MemoryLedger l = serving_ledger(m, c, w, p);
  const ServingTime staggered = serving_time(m, c, w, p, l, 400e12);
  w.closed_loop = ClosedLoop::lockstep;
  // A batch of 32 is a static batch, submitted whole: one forward of the 32 prompts, which
  // yields every first token; 255 steps yield the rest.
  const ServingTime batch = serving_time(m, c, w, p, l, 400e12);
  const double whole = prefill_time(m, c, w, p, l.weights_bytes, 400e12, 32).seconds;
  CHECK(batch.round_lead_seconds == 0);
  CHECK(batch.round_prefill_seconds == Approx(whole));
  CHECK(batch.ttft_seconds == Approx(whole));
  CHECK(batch.ttft_mean_seconds == Approx(whole));
  CHECK(batch.tokens_per_second == Approx(32.0 * 256 / (whole + 255 * batch.decode.seconds)));
  // 32 users (a concurrency) are clients that send the round's requests one after another;
  // the idle engine starts on the first (its lead) at once and prefills the 31 queued
  // meanwhile together after it.
  w.concurrency = 32;
  const ServingTime lockstep = serving_time(m, c, w, p, l, 400e12);
  const double lead = prefill_time(m, c, w, p, l.weights_bytes, 400e12, 1).seconds;
  const double rest = prefill_time(m, c, w, p, l.weights_bytes, 400e12, 31).seconds;
  CHECK(lockstep.round_lead_seconds == Approx(lead));
  CHECK(lockstep.round_prefill_seconds == Approx(rest));
  CHECK(lockstep.first_token_step_seconds == 0);  // the prefill yields the first token
  // The median user (the 16th of 32) is not the lead: it waits for both prefills; the mean
  // counts the lead once and 31 users at lead + rest.
  CHECK(lockstep.ttft_seconds == Approx(lead + rest));
  CHECK(lockstep.ttft_mean_seconds == Approx((lead + 31 * (lead + rest)) / 32));
  // The decodes run uninterrupted: time per output token is the step itself.
  CHECK(lockstep.per_token_seconds == Approx(lockstep.decode.seconds));
  // A round completes 32 requests: the two prefills yield the first tokens, 255 steps the
  // rest: 32 · 256 tokens per engine, one engine.
  const double step = lockstep.decode.seconds;
  CHECK(lockstep.tokens_per_second == Approx(32.0 * 256 / (lead + rest + 255 * step)));
  // Staggered users find a prefill or two ahead of them, not the whole round's.
  CHECK(staggered.ttft_mean_seconds < lockstep.ttft_mean_seconds);
}

TEST_CASE("first token from a decode step: the prefill runs all but the prompt's last token",
          "[serving][queueing]") {
  const Model m = serving_test::llama70b();
  const Cluster c = serving_test::h100_node();
  Serving w = round_trip(2048, 256);
  w.closed_loop = ClosedLoop::lockstep;
  w.first_token = FirstToken::decode_step;
  w.concurrency = 32;
  const Plan p = engine(8, 32);
  const MemoryLedger l = serving_ledger(m, c, w, p);
  const ServingTime t = serving_time(m, c, w, p, l, 400e12);
  // TurboMind v0.1: ContextDecode runs 2,047 of the 2,048 prompt tokens; the last goes
  // through Generate with the batch: the lead's step at batch 1, the others' at batch 32.
  const PrefillTime one = prefill_time(m, c, w, p, l.weights_bytes, 400e12, 1);
  CHECK(one.prompt_tokens == 2047);
  Serving whole = w;
  whole.input_tokens = 2047;
  whole.first_token = FirstToken::prefill;
  CHECK(one.seconds == Approx(prefill_time(m, c, whole, p, l.weights_bytes, 400e12, 1).seconds));
  const double step_1 = decode_step(m, c, w, p, 1, l.weights_bytes, 400e12).seconds;
  const double step_32 = decode_step(m, c, w, p, 32, l.weights_bytes, 400e12).seconds;
  REQUIRE(step_32 == Approx(t.decode.seconds));
  const double lead = one.seconds + step_1;
  const double rest = prefill_time(m, c, w, p, l.weights_bytes, 400e12, 31).seconds + step_32;
  CHECK(t.round_lead_seconds == Approx(lead));
  CHECK(t.round_prefill_seconds == Approx(rest));
  CHECK(t.first_token_step_seconds == Approx(step_32));
  CHECK(t.ttft_mean_seconds == Approx((lead + 31 * (lead + rest)) / 32));
  // The step that yields the first token is the first of the 256: 255 more follow it.
  CHECK(t.tokens_per_second == Approx(32.0 * 256 / (lead + rest + 255 * step_32)));
  // A one-token prompt has nothing to prefill: its first token is one decode step, at
  // batch 1 for the lead, at batch 32 for the others after it.
  w.input_tokens = 1;
  w.context_tokens = 257;
  const ServingTime single = serving_time(m, c, w, p, serving_ledger(m, c, w, p), 400e12);
  CHECK(single.prefill.prompt_tokens == 0);
  CHECK(single.prefill.seconds == 0);
  const double s1 = decode_step(m, c, w, p, 1, l.weights_bytes, 400e12).seconds;
  const double s32 = decode_step(m, c, w, p, 32, l.weights_bytes, 400e12).seconds;
  CHECK(single.ttft_mean_seconds == Approx((s1 + 31 * (s1 + s32)) / 32));
  CHECK(std::isfinite(max_request_rate(m, c, w, p, serving_ledger(m, c, w, p), 400e12)));
  // Staggered users: the prompt but its last token, then the running batch's step (its
  // prefill a forward apart, batching "separate", whose formula this is).
  w.closed_loop = ClosedLoop::staggered;
  w.batching = Batching::separate;
  w.input_tokens = 2048;
  w.context_tokens = 2304;
  const ServingTime staggered = serving_time(m, c, w, p, l, 400e12);
  CHECK(staggered.first_token_step_seconds == Approx(staggered.decode.seconds));
  CHECK(staggered.ttft_mean_seconds ==
        Approx(staggered.prefill.seconds + staggered.queue.mean_seconds +
               staggered.decode.seconds));
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
  const nlohmann::json time = nlohmann::json::parse(r.out).at("plan").at("time");
  const double lockstep_ttft = time.at("ttft_mean").get<double>();
  // The record says TurboMind's first token comes from a decode step: JSON shows that step.
  REQUIRE(s.at("workload").at("first_token") == "decode_step");
  CHECK(time.at("first_token_step").get<double>() > 0);
  CHECK(time.at("round_lead").get<double>() > 0);
  s["workload"]["first_token"] = "prefill";
  r = run(s);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("plan").at("time").at("first_token_step") == 0.0);
  s["workload"]["first_token"] = "decode";
  r = run(s);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/workload/first_token: expected one of \"prefill\", "
                                    "\"decode_step\", got \"decode\""));
  s["workload"]["first_token"] = "decode_step";
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
  w.batching = Batching::separate;  // the stall formula below
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
  const double lead = prefill_time(small, c, w, p, l.weights_bytes, 400e12, 1).seconds;
  const double rest = prefill_time(small, c, w, p, l.weights_bytes, 400e12, 99).seconds;
  CHECK(lockstep.round_prefill_seconds == Approx(rest));
  CHECK(lockstep.ttft_mean_seconds == Approx((lead + 99 * (lead + rest)) / 100));
  // Later rounds are users queued for a slot, all there when it frees: prefilled together,
  // their first tokens from that prefill, 16,383 steps after it.
  const double round =
      prefill_time(small, c, w, p, l.weights_bytes, 400e12, fit).seconds +
      16383 * lockstep.decode.seconds;
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
  const double lead_1 = prefill_time(small, c, w, p, l.weights_bytes, 400e12, 1).seconds;
  const double others =
      prefill_time(small, c, w, p, l.weights_bytes, 400e12, first - 1).seconds;
  const double whole = prefill_time(small, c, w, p, l.weights_bytes, 400e12, fit).seconds;
  const double step = split.decode.seconds;
  const double opening = lead_1 + others + 1023 * step;  // the opening round, to its end
  const double later_rounds = std::ceil((100 - first) / fit);
  const double later_first_token =
      opening + 0.5 * (later_rounds - 1) * (whole + 1023 * step) + whole;
  CHECK(split.ttft_mean_seconds ==
        Approx((lead_1 + (first - 1) * (lead_1 + others) + (100 - first) * later_first_token) /
               100));
  CHECK(split.ttft_mean_seconds > lead_1 + others);
  // A batch (not a concurrency) is the user's engine batch: kept whole, and then too big.
  w.concurrency = 0;
  w.batch = 100;
  CHECK_FALSE(serving_ledger(small, c, w, p).fits());
}

namespace {

// "7.6 ms", "336.4 us", "1.00 s" in seconds.
double seconds_of(const std::string& text) {
  const double value = std::stod(text);
  if (text.find(" us") != std::string::npos) return value * 1e-6;
  if (text.find(" ms") != std::string::npos) return value * 1e-3;
  return value;
}

// The terms of the text's "per token X = A + B + ..." line, up to its "over"/":".
std::vector<double> per_token_terms(const std::string& out, double& total, double& share) {
  const std::size_t at = out.find("- per token ");
  REQUIRE(at != std::string::npos);
  const std::string line = out.substr(at, out.find('\n', at) - at);
  const std::size_t eq = line.find(" = ");
  total = seconds_of(line.substr(12, eq - 12));
  const std::size_t over = line.find(", over 1 - ");
  share = over == std::string::npos ? 0 : std::stod(line.substr(over + 11));
  const std::string sum = line.substr(eq + 3, std::min(over, line.find(": ")) - eq - 3);
  std::vector<double> terms;
  std::size_t from = 0;
  while (from < sum.size()) {
    const std::size_t plus = sum.find(" + ", from);
    const std::string term = sum.substr(from, plus == std::string::npos ? plus : plus - from);
    // "weights 7.6 ms": the number after the last name word.
    const std::size_t digit = term.find_first_of("0123456789");
    terms.push_back(seconds_of(term.substr(digit)));
    from = plus == std::string::npos ? sum.size() : plus + 3;
  }
  return terms;
}

}  // namespace

TEST_CASE("the time per token's sum in the text adds up, interference only where it applies",
          "[serving][report]") {
  // Lockstep: the decodes run uninterrupted, the time per token is the step: the weights,
  // KV cache, the layers' fixed costs and the collectives, nothing divided.
  auto r = cli_harness::run({"plan", "fuzz/seeds/lockstep_decode_step.json"});
  REQUIRE(r.code == 0);
  double total = 0, share = 0;
  std::vector<double> terms = per_token_terms(r.out, total, share);
  CHECK(share == 0);
  CHECK_THAT(r.out, Catch::Contains("layer fixed costs"));
  double sum = 0;
  for (double t : terms) sum += t;
  CHECK(sum == Approx(total).epsilon(0.01));
  // Staggered users: the prefills interrupt the decodes, step / (1 - share).
  r = cli_harness::run({"plan", "scenarios/llama31-70b-serving-h100.json"});
  REQUIRE(r.code == 0);
  terms = per_token_terms(r.out, total, share);
  REQUIRE(share > 0);
  sum = 0;
  for (double t : terms) sum += t;
  CHECK(sum / (1 - share) == Approx(total).epsilon(0.01));
}

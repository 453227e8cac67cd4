// Serving v2 (issue 11): prefill FLOPs, KV bytes, the decode roofline, queueing and the CLI's
// verdicts, each against a figure worked out here by hand.
#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "cli_harness.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/search/disaggregated.hpp"
#include "serving_test_helpers.hpp"

using namespace planner;
using serving_test::h100_node;
using serving_test::engine;
using serving_test::llama31_8b;
using serving_test::llama70b;

namespace {

/// The chat request: 2048 prompt and 256 output tokens, a loose 1 s target. Prefills
/// apart from the decodes (`batching: "separate"`): the stall formulas these tests work by
/// hand (the mixed iteration is test_serving_batching.cpp's).
Serving chat() {
  Serving w;
  w.batching = Batching::separate;
  w.input_tokens = 2048;
  w.output_tokens = 256;
  w.context_tokens = 2304;
  w.slo_per_token_seconds = 1;
  return w;
}

/// The request-rate scenario's request: 1024 prompt and 256 output tokens, 256 slots per
/// engine, a 30 ms target per token.
Serving rate_request() {
  Serving w;
  w.batching = Batching::separate;
  w.batch = 256;
  w.input_tokens = 1024;
  w.output_tokens = 256;
  w.context_tokens = 1280;
  w.slo_per_token_seconds = 30e-3;
  return w;
}

// One layer: Q, O 2·8192² = 134,217,728; K, V 2·8192·1024 = 16,777,216; gated MLP
// 3·8192·28672 = 704,643,072; two norms 4·8192 = 32,768: 855,670,784 parameters.
constexpr double layer = 855670784.0;

}  // namespace

TEST_CASE("prefill FLOPs of a 2048-token prompt by hand", "[serving][prefill]") {
  const Model m = llama70b();
  REQUIRE(layer_params(m) == layer);
  const Plan p = engine(8, 1);
  const PrefillChunkFlops f = prefill_chunk_flops(m, p, 0, 2048, true);
  // GEMMs: 2 · 80 · 855,670,784 · 2048 = 2.8036e14 plus the last token's logits
  // 2 · 128256 · 8192 = 2.1013e9; over tp 8.
  CHECK(f.gemm == Approx((2.0 * 80 * layer * 2048 + 2.0 * 128256 * 8192) / 8));
  CHECK(f.gemm == Approx(3.5046e13).epsilon(1e-4));
  // Causal attention: position i attends to i keys, 4·h FLOPs per pair (QKᵀ and AV):
  // 4 · 8192 · (2048 · 2049 / 2) · 80 layers = 5.5002e12; over tp 8 = 6.8753e11.
  CHECK(f.attention == Approx(4.0 * 8192 * (2048.0 * 2049 / 2) * 80 / 8));
  CHECK(f.attention == Approx(6.8753e11).epsilon(1e-4));
  // Chunks add up to the whole prompt: [0,512) + … + [1536,2048) carry the same attention.
  double chunked = 0;
  for (int begin = 0; begin < 2048; begin += 512) {
    chunked += prefill_chunk_flops(m, p, begin, begin + 512, begin + 512 == 2048).attention;
  }
  CHECK(chunked == Approx(f.attention));
}

TEST_CASE("KV bytes per token by attention type and sharding", "[serving][kv]") {
  const Model m = llama70b();
  // GQA, 8 KV heads of 128: 2 (K, V) · 80 · 8 · 128 · 2 B = 327,680 B per token on one GPU.
  CHECK(kv_bytes_per_token(m, engine(1, 1), KvSharding::replicate) == 327680.0);
  // tp 8 splits the 8 heads: 40,960 B per rank.
  CHECK(kv_bytes_per_token(m, engine(8, 1), KvSharding::replicate) == 40960.0);
  // tp 16 past the 8 heads: vLLM keeps one head per rank (40,960 B); batch sharding halves it.
  Plan wide = engine(8, 1);
  wide.tp = 16;
  CHECK(kv_bytes_per_token(m, wide, KvSharding::replicate) == 40960.0);
  CHECK(kv_bytes_per_token(m, wide, KvSharding::batch) == 20480.0);
  // MQA (1 KV head) on tp 8: replicated 40,960 B per rank, batch-sharded 5,120 B.
  Model mqa = m;
  mqa.kv_heads = 1;
  CHECK(kv_bytes_per_token(mqa, engine(8, 1), KvSharding::replicate) == 40960.0);
  CHECK(kv_bytes_per_token(mqa, engine(8, 1), KvSharding::batch) == 5120.0);
  // FP8 cache: 1 B per element, half of bf16.
  Model fp8 = m;
  fp8.precision.kv_cache = Dtype::fp8;
  CHECK(kv_bytes_per_token(fp8, engine(8, 1), KvSharding::replicate) == 20480.0);
  // Paged blocks of 16: 2,100 tokens reserve 132 blocks = 2,112 tokens.
  Serving w;
  w.context_tokens = 2100;
  w.kv_block_tokens = 16;
  CHECK(reserved_tokens(w) == 2112);
}

TEST_CASE("decode at batch 1 is the memory roofline, at batch 1024 the GEMMs' compute one "
          "with the cache read after it",
          "[serving][decode]") {
  const Model m = llama70b();
  const Cluster c = h100_node();
  Serving w;
  w.context_tokens = 4096;
  w.memory_bandwidth_efficiency = 1.0;
  const double params = 80 * layer + 2.0 * 128256 * 8192;  // untied embeddings
  REQUIRE(total_params(m) == Approx(params + 2 * 8192));
  // Batch 1, tp 8: weights total_params · 2 B / 8 read at 3.35 TB/s, plus one sequence's
  // cache 4096 · 40,960 B; the GEMMs, 2 · (80 · layer + V·h) / 8 FLOP on one row, at
  // 1 / (1 + 24.97) of the rate (gemm_rows.hpp), take far less.
  {
    const Plan p = engine(8, 1);
    const MemoryLedger l = serving_ledger(m, c, w, p);
    const DecodeStep d = decode_step(m, c, w, p, 1, l.weights_bytes, 400e12);
    const double read = (total_params(m) * 2 / 8 + 4096 * 40960.0) / 3.35e12;
    const double compute = 2.0 * (80 * layer + 128256.0 * 8192) / 8 / (400e12 / (1 + 24.97)) +
                           4.0 * 8192 * 4096 * 80 / 8 / 400e12;
    CHECK_FALSE(d.compute_bound);
    CHECK(d.weight_read_seconds + d.kv_read_seconds == Approx(read));
    CHECK(d.compute_seconds == Approx(compute));
    CHECK(d.seconds == Approx(std::max(read, compute) + d.tp_seconds));
    // 70,555,025,408 · 2 / 8 = 17.64 GB + 0.17 GB of cache = 17.81 GB at 3.35 TB/s: 5.32 ms.
    CHECK(read * 1e3 == Approx(5.315).epsilon(0.001));
  }
  // Batch 1024 at 512 tokens of context: the GEMMs take 2 · 69.50e9 · 1024 / 8 = 1.78e13 FLOP
  // per GPU, 44.5 ms at 400 TFLOP/s and 45.6 ms at 1024 rows' share of it, 1024 / 1048.97;
  // attention 4 · 8192 · 512 · 1024 · 80 / 8 = 1.7e11 FLOP, 0.43 ms: 46.0 ms in all. The
  // reads, 17.64 GB + 1024 · 512 · 40,960 B = 39.1 GB, 11.7 ms. The GEMMs are compute-bound
  // (45.6 ms against their 5.3 ms weight read: the bandwidth-only model was 3.8× too fast
  // here); the attention kernels, run after them, read the 21.5 GB cache in 6.4 ms (their
  // 0.43 ms of FLOPs hide under it): 52.0 ms, where one roofline over both kernels said 46.0.
  {
    w.context_tokens = 512;
    const Plan p = engine(8, 1024);
    const MemoryLedger l = serving_ledger(m, c, w, p);
    const DecodeStep d = decode_step(m, c, w, p, 1024, l.weights_bytes, 400e12);
    const double read = (total_params(m) * 2 / 8 + 1024 * 512 * 40960.0) / 3.35e12;
    const double gemms =
        2.0 * (80 * layer + 128256.0 * 8192) * 1024 / 8 / (400e12 * 1024 / (1024 + 24.97));
    const double compute = gemms + 4.0 * 8192 * 512 * 1024 * 80 / 8 / 400e12;
    CHECK(d.compute_bound);
    CHECK(d.compute_seconds == Approx(compute));
    CHECK(compute * 1e3 == Approx(46.0).epsilon(0.002));
    CHECK(read * 1e3 == Approx(11.7).epsilon(0.01));
    const double cache = 1024 * 512 * 40960.0 / 3.35e12;
    CHECK(gemms * 1e3 == Approx(45.6).epsilon(0.002));
    CHECK(cache * 1e3 == Approx(6.41).epsilon(0.002));
    CHECK(d.seconds == Approx(gemms + cache + d.tp_seconds));
  }
}

TEST_CASE("closed loop: each sequence's prefill is spread over its output tokens",
          "[serving][batching]") {
  const Model m = llama70b();
  const Cluster c = h100_node();
  const Serving w = chat();
  const Plan p = engine(8, 64);
  const MemoryLedger l = serving_ledger(m, c, w, p);
  const ServingTime t = serving_time(m, c, w, p, l, 400e12);
  // TPOT = step + b · T_prefill / o (Sarathi-Serve §2.3), tokens/s = b / TPOT.
  CHECK(t.per_token_seconds ==
        Approx(t.decode.seconds + 64 * t.prefill.stage_seconds / 256));
  CHECK(t.tokens_per_second == Approx(64 / t.per_token_seconds));
  // The decode reads the prompt plus half the output on average: 2176 tokens.
  CHECK(t.decode.kv_read_seconds == Approx(64 * 2176 * 40960.0 / 3.35e12));
}

TEST_CASE("M/D/1 prefill queue against a seeded simulation", "[serving][queueing]") {
  // Poisson arrivals at λ, a deterministic service T, FIFO: the Lindley recursion
  // W(n+1) = max(0, W(n) + T − A(n+1)) simulated for 400,000 requests.
  const double service = 0.1;
  for (double rho : {0.5, 0.8}) {
    const double rate = rho / service;
    std::mt19937_64 engine(20261130);
    std::exponential_distribution<double> gap(rate);
    std::vector<double> waits;
    waits.reserve(400000);
    double wait = 0;
    for (int i = 0; i < 400000; ++i) {
      waits.push_back(wait);
      wait = std::max(0.0, wait + service - gap(engine));
    }
    double mean = 0;
    for (double x : waits) mean += x;
    mean /= static_cast<double>(waits.size());
    std::sort(waits.begin(), waits.end());
    const QueueWait q = md1_wait(rate, service, 0.9);
    // Pollaczek–Khinchine: ρT / (2(1 − ρ)): 0.05 s at ρ = 0.5, 0.2 s at ρ = 0.8.
    CHECK(q.mean_seconds == Approx(rho * service / (2 * (1 - rho))));
    CHECK(mean == Approx(q.mean_seconds).epsilon(0.05));
    // The exponential tail is close at p90 (6 % over at ρ = 0.5, 5 % at 0.8) and errs long
    // at p99 (17 %, 9 %): conservative, never optimistic.
    const double p90 = waits[waits.size() * 9 / 10];
    CHECK(q.quantile_seconds == Approx(p90).epsilon(0.08));
    CHECK(q.quantile_seconds >= p90);
    const QueueWait q99 = md1_wait(rate, service, 0.99);
    const double p99 = waits[waits.size() * 99 / 100];
    CHECK(q99.quantile_seconds == Approx(p99).epsilon(0.2));
    CHECK(q99.quantile_seconds >= p99);
  }
  CHECK_FALSE(md1_wait(10, 0.1, 0.9).stable);
}

TEST_CASE("a missed SLO exits 1 and says so in the first lines", "[serving][cli]") {
  int code = -1;
  const std::string out = cli_harness::run_binary(
      "plan scenarios/d.json --no-thresholds --set /workload/slo_per_token=10ms", code);
  CHECK(code == 1);
  // D's best is 18.8 ms per token: 8.8 ms over a 10 ms target.
  const std::string head = out.substr(0, out.find("Recommendation"));
  CHECK(head.find("SLO MISSED by 8.8 ms") != std::string::npos);
  const std::string met = cli_harness::run_binary("plan scenarios/d.json --no-thresholds", code);
  CHECK(code == 0);
  CHECK(met.find("SLO MISSED") == std::string::npos);
}

TEST_CASE("bad serving input exits 2 naming the JSON pointer", "[serving][cli][errors]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--set /workload/kv_sharding=heads", "/workload/kv_sharding"},
      {"--set /workload/concurrency=64", "/workload/concurrency"},
      {"--set /workload/request_rate=5", "/workload/request_rate"},
      {"--set /workload/slo_percentile=1.5", "/workload/slo_percentile"},
      {"--set /workload/input_tokens=9000", "/workload/input_tokens"},
  };
  for (const auto& [set, pointer] : cases) {
    const cli_harness::Run r = cli_harness::run({"plan", "scenarios/d.json", "--set", set.substr(6)});
    INFO(set << " → " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("scenarios/d.json") != std::string::npos);
    CHECK(r.err.find(pointer) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // A 8192-token prompt in chunks of 1 would be timed 8192 times: at most 4096 chunks.
  const cli_harness::Run r = cli_harness::run(
      {"plan", "scenarios/d.json", "--set", "/workload/context_tokens=8192", "--set",
       "/workload/input_tokens=8192", "--set", "/workload/prefill_chunk_tokens=1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("/workload/prefill_chunk_tokens") != std::string::npos);
  CHECK(r.err.find("use at least 2") != std::string::npos);
}

TEST_CASE("open loop: Little's law, the prefill queue and the engine's capacity",
          "[serving][batching]") {
  const Model m = llama31_8b();
  const Cluster c = h100_node();
  Serving w = rate_request();
  w.slo_ttft_seconds = 0.5;
  w.slo_percentile = 0.99;
  w.request_rate_per_second = 100;
  const Plan p = engine(2, 256);  // four engines of tp 2: 25 requests/s each
  const MemoryLedger l = serving_ledger(m, c, w, p);
  const ServingTime t = serving_time(m, c, w, p, l, 400e12);
  REQUIRE_FALSE(t.overloaded);
  CHECK(t.requests_per_second == Approx(25));
  // Little: sequences in decode = arrivals × time in decode = 25 · 256 · TPOT.
  CHECK(t.decode.batch == Approx(25 * 256 * t.per_token_seconds).epsilon(1e-6));
  CHECK(t.prefill_share == Approx(25 * t.prefill.stage_seconds));
  // TTFT: the decode step the prompt lands in (at p99, 0.99 of a step), the prefills ahead
  // (M/D/1 at p99), then its own prefill.
  CHECK(t.iteration_wait_seconds == Approx(0.99 * t.decode.seconds));
  CHECK(t.ttft_seconds == Approx(t.prefill.seconds + 0.99 * t.decode.seconds +
                                 md1_wait(25, t.prefill.stage_seconds, 0.99).quantile_seconds));
  CHECK(t.ttft_mean_seconds == Approx(t.prefill.seconds + 0.5 * t.decode.seconds +
                                      md1_wait(25, t.prefill.stage_seconds, 0.99).mean_seconds));
  CHECK(t.tokens_per_second == Approx(100 * 256));
  // The capacity is the edge of the targets: just below it they hold, just above they do not.
  const double most = max_request_rate(m, c, w, p, l, 400e12);
  Serving below = w, above = w;
  below.request_rate_per_second = 0.999 * most * 4;
  above.request_rate_per_second = 1.001 * most * 4;
  CHECK(serving_time(m, c, below, p, l, 400e12).meets_slo);
  CHECK_FALSE(serving_time(m, c, above, p, l, 400e12).meets_slo);
  // Past prefill's own capacity (ρ ≥ 1) the engine is overloaded: a missed SLO, an unbounded
  // TTFT, and it completes what its full batch completes: b / (o·step(b) + b·T_prefill).
  Serving flood = w;
  flood.request_rate_per_second = 4 * 1.01 / t.prefill.stage_seconds;
  const ServingTime f = serving_time(m, c, flood, p, l, 400e12);
  CHECK(f.overloaded);
  CHECK(f.ttft_unbounded);
  CHECK_FALSE(f.meets_slo);
  CHECK(std::isfinite(f.per_token_seconds));
  const double full_step = decode_step(m, c, w, p, 256, l.weights_bytes, 400e12).seconds;
  CHECK(f.saturation_requests_per_second ==
        Approx(256 / (256 * full_step + 256 * t.prefill.stage_seconds)));
  CHECK(f.tokens_per_second == Approx(4 * 256 * f.saturation_requests_per_second));
}

TEST_CASE("a sweep of request rates never serves more than arrives", "[serving][batching]") {
  const Model m = llama31_8b();
  const Cluster c = h100_node();
  Serving w = rate_request();
  w.slo_percentile = 0.9;
  const Plan p = engine(2, 256);
  const MemoryLedger l = serving_ledger(m, c, w, p);
  double last_ttft = 0;
  bool was_overloaded = false;
  int overloaded = 0;
  for (double rate = 0.5; rate < 4000; rate *= 1.25) {
    w.request_rate_per_second = rate;
    const ServingTime t = serving_time(m, c, w, p, l, 400e12);
    INFO("rate " << rate);
    // Output tokens per second can never exceed the arrivals' (rate × o).
    CHECK(t.tokens_per_second <= rate * 256 * (1 + 1e-9));
    // Overload is exactly a rate above what the four engines complete, and it stays.
    CHECK(t.overloaded == (rate / 4 > t.saturation_requests_per_second));
    CHECK((was_overloaded && !t.overloaded) == false);
    was_overloaded = t.overloaded;
    overloaded += t.overloaded ? 1 : 0;
    CHECK(t.ttft_unbounded == t.overloaded);
    if (!t.overloaded) {
      CHECK(t.ttft_seconds >= last_ttft);  // waits only grow with the rate
      last_ttft = t.ttft_seconds;
      CHECK(t.tokens_per_second == Approx(rate * 256));
    }
  }
  CHECK(overloaded > 0);
}

TEST_CASE("closed loop: a replacement prompt waits for the other users' prefills",
          "[serving][batching]") {
  // Mean-value analysis by hand (Reiser and Lavenberg 1980), service S = 1 s, think Z = 3 s:
  // n = 1: R = 1, X = 1/4, Q = 1/4; n = 2: R = 1.25, wait 0.25 s; n = 3: X(2) = 2/4.25,
  // Q(2) = 2.5/4.25, R(3) = 1 + 2.5/4.25 = 1.5882, wait 0.5882 s.
  CHECK(closed_loop_wait(1, 3, 1, 0.5).mean_seconds == 0);
  CHECK(closed_loop_wait(2, 3, 1, 0.5).mean_seconds == Approx(0.25));
  CHECK(closed_loop_wait(3, 3, 1, 0.5).mean_seconds == Approx(2.5 / 4.25));
  // Saturated (N·S ≫ Z): each user waits for the others, N·S − Z.
  CHECK(closed_loop_wait(100, 3, 1, 0.5).mean_seconds == Approx(100 - 3 - 1).epsilon(1e-3));
  CHECK(closed_loop_wait(10000, 3, 1, 0.5).mean_seconds == Approx(10000 - 3 - 1));
  // One sequence per engine never waits: its TTFT is its prefill (the latency tables).
  const Model m = llama70b();
  const Cluster c = h100_node();
  Serving w = chat();
  w.concurrency = 0;
  w.batch = 1;
  const Plan one = engine(4, 1);
  const MemoryLedger l1 = serving_ledger(m, c, w, one);
  const ServingTime t1 = serving_time(m, c, w, one, l1, 400e12);
  CHECK(t1.ttft_seconds == t1.prefill.seconds);
  // 32 users: each replacement prompt waits; TTFT grows beyond one prefill.
  w.batch = 32;
  const Plan many = engine(4, 32);
  const MemoryLedger l32 = serving_ledger(m, c, w, many);
  const ServingTime t32 = serving_time(m, c, w, many, l32, 400e12);
  CHECK(t32.queue.mean_seconds > 0);
  CHECK(t32.ttft_mean_seconds == Approx(t32.prefill.seconds + t32.queue.mean_seconds));
}

TEST_CASE("an overloaded rate exits 1 and names the overload first", "[serving][cli]") {
  int code = -1;
  const std::string out = cli_harness::run_binary(
      "plan scenarios/llama31-8b-request-rate-h100.json --no-thresholds "
      "--set /workload/request_rate=400",
      code);
  CHECK(code == 1);
  const std::string head = out.substr(0, out.find("Recommendation"));
  CHECK(head.find("SLO MISSED") != std::string::npos);
  // It names what the deployment completes, per engine, and how many engines the rate needs.
  CHECK(head.find("the best deployment completes") != std::string::npos);
  CHECK(head.find("requests/s each at most") != std::string::npos);
  CHECK(head.find("SLO MISSED: 400 requests/s exceed") != std::string::npos);
  CHECK(out.find("capacity: one engine") != std::string::npos);
  // A large rate reads as a number, not in exponent form (fmt's {:.3g} printed "1e+05").
  const std::string big = cli_harness::run_binary(
      "plan scenarios/llama31-8b-request-rate-h100.json --no-thresholds "
      "--set /workload/request_rate=100000",
      code);
  CHECK(code == 1);
  CHECK(big.find("SLO MISSED: 100000 requests/s exceed") != std::string::npos);
  CHECK(big.find("e+0") == std::string::npos);
  CHECK(out.find("unbounded   SLO 500.0 ms (missed: the queue grows without bound)") !=
        std::string::npos);
  // Overloaded everywhere, the recommendation is the deployment that completes the most.
  const std::string js = cli_harness::run_binary(
      "plan scenarios/llama31-8b-request-rate-h100.json --no-thresholds --format json --top 20 "
      "--set /workload/request_rate=400",
      code);
  const nlohmann::json j = nlohmann::json::parse(js);
  const double best = j.at("best").at("time").at("tokens_per_second").get<double>();
  REQUIRE(j.at("ranked").size() > 3);
  for (const auto& p : j.at("ranked")) {
    CHECK(p.at("time").at("overloaded").get<bool>());
    CHECK(p.at("time").at("ttft").is_null());
    CHECK(p.at("time").at("tokens_per_second").get<double>() <= best * (1 + 1e-9));
  }
}

TEST_CASE("disaggregated pools: no prefill stalls, the prompt's cache sent once",
          "[serving][disaggregated]") {
  const Model m = llama70b();
  const Cluster c = h100_node();
  Serving w = chat();
  w.concurrency = 16;
  const Disaggregated d{4, 1, 4, 1};  // prefill 1 × tp 4, decode 1 × tp 4: the whole node
  const DisaggregatedTime t = disaggregated_time(m, c, w, d, 400e12);
  REQUIRE(t.fits);
  // Decode holds all 16 sequences and never prefills: TPOT is the step; requests finish at
  // 16 / (256 · TPOT) per second.
  CHECK(t.per_token_seconds == t.decode.seconds);
  CHECK(t.decode.batch == 16);
  CHECK(t.requests_per_second == Approx(16 / (256 * t.per_token_seconds)));
  // The prompt's cache, 2048 · 327,680 B = 671 MB, over NVLink by 4 rank pairs:
  // 167.8 MB at 450 GB/s + 3 µs = 0.376 ms.
  CHECK(t.kv_transfer_bytes == 2048 * 327680.0);
  CHECK(t.transfer_tier == 0);
  CHECK(t.kv_transfer_seconds == Approx(2048 * 327680.0 / 4 / 450e9 + 3e-6));
  CHECK(t.ttft_seconds == Approx(t.queue.quantile_seconds + t.prefill.seconds +
                                 t.kv_transfer_seconds));
  // 16 users want a prompt every 1 / requests_per_second, faster than one tp-4 engine
  // prefills (ρ > 1): the pool caps the rate at 1 / T_prefill.
  CHECK(t.requests_per_second * t.prefill.stage_seconds > 1);
  CHECK(t.overloaded);
  CHECK_FALSE(t.meets_slo);
  CHECK(t.tokens_per_second_per_gpu == Approx(256 / t.prefill.stage_seconds / 8));
  // 4 users: the prefill pool keeps up, every finished request's tokens count.
  w.concurrency = 4;
  const DisaggregatedTime light = disaggregated_time(m, c, w, d, 400e12);
  CHECK_FALSE(light.overloaded);
  CHECK(light.tokens_per_second_per_gpu == Approx(light.requests_per_second * 256 / 8));
}

TEST_CASE("Pareto front of throughput per GPU against time per output token",
          "[serving][disaggregated]") {
  // (tokens/s/GPU, TPOT): a (100, 10 ms), b (150, 20 ms), c (120, 30 ms: beaten by b),
  // d (150, 25 ms: beaten by b), e (200, 40 ms).
  const std::vector<double> tokens{100, 150, 120, 150, 200};
  const std::vector<double> per_token{0.010, 0.020, 0.030, 0.025, 0.040};
  CHECK(pareto_front(tokens, per_token) == std::vector<std::size_t>{0, 1, 4});
}

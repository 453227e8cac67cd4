// Hostile inputs, second hunt: calibrate's fits held to physics (test_hostile_inputs.cpp has
// the rest). Before each fix a GEMM curve of 1e20 FLOP/s, a framework faster than its own
// GEMMs, a rate above the target GPU's peak and a link of 0.001 B/s were all accepted. The
// inputs are generated here from tests/data/calibrate.
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <sstream>
#include <string>

#include "hostile_test_helpers.hpp"
#include "planner/calibrate/inputs.hpp"

using namespace hostile_test_helpers;
using Catch::Contains;

// ---- 7. GEMM fits checked against physics ------------------------------------------------------

namespace {

/// tests/data/calibrate/gemm-illustrative.csv (R∞ = 500 TFLOP/s) with every time divided by
/// `speedup` (and every TFLOP/s multiplied by it).
std::string gemm_table_sped_up(double speedup) {
  std::istringstream in(cli_harness::read("tests/data/calibrate/gemm-illustrative.csv"));
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      const std::size_t t = line.rfind(','), s = line.rfind(',', t - 1);
      line = fmt::format("{},{:.7g},{:.7g}", line.substr(0, s),
                         std::stod(line.substr(s + 1, t - s - 1)) / speedup,
                         std::stod(line.substr(t + 1)) * speedup);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("calibrate --gemm refuses fits no GPU can reach", "[hostile][calibrate]") {
  const std::string d = "tests/data/calibrate/";
  // R∞ of 1e20 FLOP/s: each row's time is 1 ms plus a sliver, so every row passes the
  // 10 PFLOP/s row bound while the fitted asymptote is 1e8 TFLOP/s.
  std::string flat = "m,n,k,dtype,seconds\n";
  for (int m = 256; m <= 8192; m *= 2) {
    flat += fmt::format("{0},{0},{0},bf16,{1:.12e}\n", m, 1e-3 + 2.0 * m * m * m / 1e20);
  }
  const std::string flat_path = write_file("flat.csv", flat);
  auto r = cli_harness::run({"calibrate", "--gemm", flat_path});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: " + flat_path +
                     ":2: the fitted saturated rate R_inf is 1e+08 TFLOP/s, expected at most "
                     "10000 TFLOP/s, as for each row: the times barely grow with the GEMM size; "
                     "check the seconds/tflops column\n");
  // A runtime factor above 1: the GEMM table three times slower than the logged runs'
  // effective rate (ρ ≈ 2.1), so the framework would beat its own GEMMs.
  const std::string slow = write_file("slow.csv", gemm_table_sped_up(1.0 / 3.0));
  r = cli_harness::run({"calibrate", "--gemm", slow, "--run",
                        d + "small-1node.json=" + d + "small-1node-megatron.log"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("planner: error: " + d + "small-1node-megatron.log: this "
                                      "run implies 2.") &&
                        Contains("expected at most 1.05 (a training step runs its GEMMs and "
                                 "more, so it cannot beat them; 5 % is allowed for noise)"));
  // A fitted rate above the target's catalogued peak: 1500 TFLOP/s on an H100 (989 bf16).
  const std::string fast = write_file("fast.csv", gemm_table_sped_up(3.0));
  r = cli_harness::run(
      {"calibrate", "--gemm", fast, "--target", "scenarios/eight-gpu-restart.json"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("planner: error: " + fast + ": the fitted "
                                      "/cluster/gpu/flops of 1.") &&
                        Contains("for scenarios/eight-gpu-restart.json is above its GPU's "
                                 "catalogued bf16 peak of 9.894e+14 FLOP/s"));
  // The unscaled table (500 TFLOP/s) is below that peak and passes.
  r = cli_harness::run({"calibrate", "--gemm", d + "gemm-illustrative.csv", "--target",
                        "scenarios/eight-gpu-restart.json"});
  CHECK(r.code == 0);
  for (const auto& path : {flat_path, slow, fast}) std::filesystem::remove(path);
}

// ---- 8. Collective fits inside the loader's range -----------------------------------------------

namespace {

/// An 8-GPU all_reduce_perf table whose bus bandwidth is `bytes_per_second` (times = 1.75 ·
/// size / bw, every other one `noise` times longer; algbw printed as 0.00, as nccl-tests
/// prints a rate that small).
std::string slow_all_reduce(double bytes_per_second, double noise = 1.0) {
  std::string out =
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 262144 step: 2(factor) warmup iters: 5 iters: "
      "20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
  for (int r = 0; r < 8; ++r) {
    out += fmt::format("#  Rank  {0} Group  0 Pid 100{0} on host0 device  {0} [0x0{0}] NVIDIA "
                       "H100 80GB HBM3\n",
                       r);
  }
  out += "#       size         count      type   redop    root     time   algbw   busbw #wrong "
         "    time   algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
         "      (us)  (GB/s)  (GB/s)\n";
  for (long size = 8, i = 0; size <= 262144; size *= 2, ++i) {
    const double us = (14.0 + 1.75 * static_cast<double>(size) / bytes_per_second * 1e6) *
                      (i % 2 ? noise : 1.0);
    out += fmt::format("{:>12} {:>13} float sum -1 {:.2f} 0.00 0.00 0 {:.2f} 0.00 0.00 0\n",
                       size, size / 4, us, us);
  }
  return out;
}

}  // namespace

TEST_CASE("A collective fit below 1 B/s is refused at the nccl-tests file", "[hostile][calibrate]") {
  // Before: 0.001 B/s was written to the profile, and with --target the loader's error then
  // blamed the target file.
  const std::string tiny = write_file("tiny_all_reduce_perf.txt", slow_all_reduce(0.001));
  auto r = cli_harness::run({"calibrate", "--nccl", tiny, "--target",
                             "tests/data/calibrate/target-70b-mi300x.json"});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: " + tiny +
                     ":15: the intra_node fit gives 0.001 B/s, below any link (at least 1 B/s), "
                     "expected sizes in bytes and times in microseconds\n");
  // Near 2 B/s with times 3x apart the fit stands, but its band's lower end (at least a
  // tenth of the estimate) is below 1 B/s: it is cut to 1 B/s and said to be unpinned, so the
  // profile loads.
  const std::string slow = write_file("slow_all_reduce_perf.txt", slow_all_reduce(2.0, 3.0));
  r = cli_harness::run({"calibrate", "--nccl", slow, "--format", "json"});
  CHECK(r.code == 0);
  const json doc = json::parse(r.out);
  const json& band = doc["profile"]["fitted"][0];
  CHECK(band["pointer"] == "/cluster/intra_node/bandwidth");
  CHECK(band["low"].get<double>() >= 1.0);
  CHECK_THAT(band["band"].get<std::string>(), Contains("cut to the loader's range"));
  CHECK_THAT(doc["profile"]["not_pinned"].dump(),
             Contains("/cluster/intra_node/bandwidth: the fit's band reaches past the loader's "
                      "range and is cut to it; the data do not pin it"));
  for (const auto& path : {tiny, slow}) std::filesystem::remove(path);
}

TEST_CASE("calibrate --run with --target and no GEMM table fits gpu.flops from the runs", "[hostile][calibrate]") {
  // Before: the target's gpu.flops was described from the GEMM curve, which was not fitted
  // (an empty std::optional read: "from GEMM curve () at the target's layer shapes"), with a
  // band "no step logs" although step logs were given.
  const std::string d = "tests/data/calibrate/";
  const auto r = cli_harness::run({"calibrate", "--run",
                                   d + "small-1node.json=" + d + "small-1node-megatron.log",
                                   "--target", d + "target-70b-mi300x.json", "--format", "json"});
  CHECK(r.code == 0);
  const json flops = json::parse(r.out)["profile"]["fitted"][0];
  CHECK(flops["pointer"] == "/cluster/gpu/flops");
  CHECK(flops["source"] == d + "small-1node-megatron.log");
  CHECK(flops["band"] == "range of the runs' effective rates");
}

TEST_CASE("A measurement file of more than 1,000,000 lines is refused before parsing",
          "[hostile][calibrate]") {
  // Before: an nccl-tests header followed by millions of one-byte lines (inside the 64 MiB
  // cap) kept a record per line: 31 million lines peaked at 3.3 GB and ran past 30 s. The
  // limit counts the lines read, so 1,000,001 short lines (2 MB) are enough to show it.
  const std::string header = cli_harness::read("tests/data/calibrate/mi300x-1node-all_reduce_perf.txt");
  std::string many = header;
  many.reserve(header.size() + 2000004);
  for (int i = 0; i < 1000001; ++i) many += "1\n";
  const std::string path = write_file("many_all_reduce_perf.txt", many);
  try {
    (void)planner::read_measurement_file(path);
    FAIL("read");
  } catch (const planner::InputError& e) {
    CHECK_THAT(e.what(), Contains("lines, more than the 1000000 a measurement file may have"));
  }
  // The example's own files are far inside it.
  CHECK_NOTHROW(planner::read_measurement_file(
      std::string(PLANNER_SOURCE_DIR) + "/tests/data/calibrate/mi300x-1node-all_reduce_perf.txt"));
  std::filesystem::remove(path);
}

TEST_CASE("An nccl-tests header of more GPUs than a host holds, without Rank lines, is refused",
          "[hostile][calibrate]") {
  // Before: "# nThread 4096 nGpus 4096" with no '#  Rank' lines was fitted as 16,777,216
  // ranks on one node, with an intra-node latency of 8e-13 s. One process drives its own
  // host's GPUs only; 64 is above any host's count.
  std::string text = cli_harness::read("tests/data/calibrate/mi300x-1node-all_reduce_perf.txt");
  std::string kept;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#  Rank", 0) == 0) continue;  // no rank lines
    const std::size_t at = line.find("nThread");
    if (at != std::string::npos) line = "# nThread 4096 nGpus 4096 minBytes 8 maxBytes 8589934592";
    kept += line + "\n";
  }
  try {
    (void)planner::calibrate::parse_nccl_tests(kept, "big.txt");
    FAIL("parsed");
  } catch (const planner::InputError& e) {
    CHECK_THAT(e.what(), Contains("nThread 4096 × nGpus 4096 = 16777216 GPUs driven by one "
                                  "process on one host, expected at most 64"));
  }
  // The same file as published (8 ranks, their Rank lines kept) parses.
  CHECK(planner::calibrate::parse_nccl_tests(text, "ok.txt").ranks == 8);
}

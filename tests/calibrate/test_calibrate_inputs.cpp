// planner calibrate, inputs: the public nccl-tests samples, the GEMM CSV and step logs, and
// the bad-input messages (docs/calibrate.md §Inputs, §Errors).
#include <unistd.h>  // getpid: temp files unique per test process (ctest -j)

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "cli_harness.hpp"
#include "planner/calibrate/inputs.hpp"
#include "planner/base/error.hpp"

using namespace planner::calibrate;
using Catch::Matchers::Contains;

namespace {

std::string data(const std::string& name) {
  return cli_harness::read("tests/data/calibrate/" + name);
}

/// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const planner::InputError& e) {
    return e.what();
  }
  return "";
}

const char* header =
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor)\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n";

}  // namespace

TEST_CASE("Public rccl-tests sample, one MI300X node (hisohara/ai-scripts README, AAC8)") {
  const NcclTable t = parse_nccl_tests(data("mi300x-1node-all_reduce_perf.txt"), "one.txt");
  CHECK(t.op == NcclOp::all_reduce);  // from the mpirun line naming all_reduce_perf
  CHECK(t.ranks == 8);
  CHECK(t.nodes == 1);
  CHECK(t.device == "AMD Instinct MI300X");
  REQUIRE(t.rows.size() == 31);  // 8 B .. 8 GiB, doubling
  CHECK(t.rows.front().size_bytes == 8);
  CHECK(t.rows.front().time_seconds == Approx(19.28e-6));
  CHECK(t.rows.back().size_bytes == 8589934592.0);
  CHECK(t.rows.back().time_seconds == Approx(47617e-6));
  CHECK(t.rows.back().bus_bandwidth_bytes_per_second == Approx(315.69e9));
  // The mpirun line, "<snip>" and "rccl-tests: Version …" are counted, not silently dropped.
  CHECK(t.skipped.size() == 3);
}

TEST_CASE("Public rccl-tests sample, two MI300X nodes (hisohara/ai-scripts README, AAC10)") {
  const NcclTable t = parse_nccl_tests(data("mi300x-2node-all_reduce_perf.txt"), "two.txt");
  CHECK(t.ranks == 16);
  CHECK(t.nodes == 2);  // gpu-53 and gpu-56
  CHECK(t.rows.size() == 32);
  CHECK(t.rows.back().size_bytes == 17179869184.0);
}

TEST_CASE("Public nccl-tests sample, two H100 nodes (lessizzmore/create-a3mega-ztan-fork)") {
  // This excerpt does not name the binary; the file name does.
  const NcclTable t =
      parse_nccl_tests(data("h100-2node-all_reduce_perf.txt"), "h100-2node-all_reduce_perf.txt");
  CHECK(t.op == NcclOp::all_reduce);
  CHECK(t.ranks == 16);
  CHECK(t.nodes == 2);
  CHECK(t.device == "NVIDIA H100 80GB HBM3");
  CHECK(t.rows.size() == 31);
  CHECK(t.skipped.empty());
}

TEST_CASE("nccl-tests rows that cannot be used are counted with their line") {
  const std::string text = std::string("all_reduce_perf\n") + header +
      "          64            16     float     sum      -1    10.00    0.01    0.01      0"
      "    10.00    0.01    0.01      0\n"
      "NCCL WARN something between rows\n"
      "         128            32     float     sum      -1     -nan    -nan    -nan      0"
      "     -nan    -nan    -nan      0\n"
      "         256            64     float     sum      -1    11.00    0.02    0.04      3"
      "    11.00    0.02    0.04      0\n"
      "         512           128     float     sum      -1    12.00\n"
      "        1024           256     float     sum      -1    13.00    0.08    0.14      0"
      "    13.00    0.08    0.14      0\n";
  const NcclTable t = parse_nccl_tests(text, "messy.txt");
  CHECK(t.rows.size() == 2);
  REQUIRE(t.skipped.size() == 5);  // line 1 (the binary's name) is not a row either
  CHECK(t.skipped[1].line == 6);
  CHECK_THAT(t.skipped[2].reason, Contains("-nan"));
  CHECK_THAT(t.skipped[3].reason, Contains("#wrong"));
  CHECK_THAT(t.skipped[4].reason, Contains("truncated"));
}

TEST_CASE("Bad nccl-tests input stops with the file, the line and what was expected") {
  const std::string row64 = "          64            16     float     sum      -1    10.00    0.01"
                            "    0.01      0    10.00    0.01    0.01      0\n";
  SECTION("empty table") {
    CHECK_THAT(error_of([&] { (void)parse_nccl_tests(std::string("all_reduce_perf\n") + header, "e.txt"); }),
               Contains("e.txt:3: 0 usable row(s)") && Contains("expected at least 2 sizes"));
  }
  SECTION("one point") {
    CHECK_THAT(error_of([&] { (void)parse_nccl_tests(std::string("all_reduce_perf\n") + header + row64, "one.txt"); }),
               Contains("one.txt:3: 1 usable row(s) with 1 distinct size(s)"));
  }
  SECTION("contradictory sizes: size is not count x element size") {
    const std::string bad = "         100            16     float     sum      -1    10.00    0.01"
                            "    0.01      0    10.00    0.01    0.01      0\n";
    CHECK_THAT(error_of([&] { (void)parse_nccl_tests(std::string("all_reduce_perf\n") + header + bad, "c.txt"); }),
               Contains("c.txt:5: size 100 B contradicts count 16 of type float"));
  }
  SECTION("wrong units in the units line") {
    std::string h = header;
    h.replace(h.find("(us)"), 4, "(ms)");
    CHECK_THAT(error_of([&] { (void)parse_nccl_tests("all_reduce_perf\n" + h + row64, "u.txt"); }),
               Contains("u.txt:4: unit (ms)") && Contains("expected (us)"));
  }
  SECTION("a time column that is not in microseconds: algbw contradicts size/time") {
    const std::string ms = "     1048576        262144     float     sum      -1     0.03   36.94"
                           "   64.64      0     0.03   37.40   65.45      0\n";
    CHECK_THAT(error_of([&] { (void)parse_nccl_tests(std::string("all_reduce_perf\n") + header + ms, "t.txt"); }),
               Contains("t.txt:5: algbw 36.94 GB/s contradicts size/time"));
  }
  SECTION("no collective named") {
    CHECK_THAT(error_of([&] { (void)parse_nccl_tests(header, "x.txt"); }),
               Contains("x.txt:1: cannot tell which collective"));
  }
}

TEST_CASE("GEMM CSV: comments, header in any order, seconds or tflops") {
  const GemmTable t = parse_gemm_csv("# device: NVIDIA H200 (132 SMs)\n"
                                     "dtype,k,n,m,tflops\n"
                                     "bf16,4096,4096,4096,500\n"
                                     "bf16,1024,1024,1024,-nan\n"
                                     "bf16,8192,8192,8192,700\n", "g.csv");
  CHECK(t.sms == 132);
  CHECK(t.device == "NVIDIA H200");
  REQUIRE(t.rows.size() == 2);
  // 2·4096³ FLOP at 500 TFLOP/s = 2.7487790694e-4 s (hand: 1.37438953472e11 / 5e14).
  CHECK(t.rows[0].seconds == Approx(1.37438953472e11 / 5e14));
  CHECK(t.skipped.size() == 1);
  CHECK(t.skipped[0].line == 4);
}

TEST_CASE("Bad GEMM CSV: wrong units, impossible rates, too few rows") {
  CHECK_THAT(error_of([] { (void)parse_gemm_csv("m,n,k,dtype,ms\n1,1,1,bf16,1\n", "g.csv"); }),
             Contains("g.csv:1: column 'ms' has the wrong unit, expected 'seconds'"));
  // 2·8192³ = 1.1e12 FLOP in 1.2e-6 s is 9.2e17 FLOP/s, above any GPU: the unit is off.
  CHECK_THAT(error_of([] { (void)parse_gemm_csv("m,n,k,dtype,seconds\n8192,8192,8192,bf16,1.2e-6\n", "g.csv"); }),
             Contains("g.csv:2:") && Contains("expected at most 10000 TFLOP/s"));
  CHECK_THAT(error_of([] { (void)parse_gemm_csv("m,n,k,dtype,seconds\n64,64,64,bf16,1e-5\n", "g.csv"); }),
             Contains("g.csv:1: 1 usable row(s), expected at least 2"));
}

TEST_CASE("Megatron-LM iteration lines (megatron/training/training.py training_log format)") {
  const StepLog log = parse_step_log(data("small-1node-megatron.log"), "m.log");
  CHECK(log.format == StepLogFormat::megatron);
  REQUIRE(log.rows.size() == 6);
  CHECK(log.rows[0].step == 1);
  CHECK(log.rows[1].seconds == Approx(1.7026));
  CHECK(log.rows[1].tflops_per_gpu == Approx(355.1));
}

TEST_CASE("torchtitan step lines with ANSI colours (torchtitan MetricsProcessor.log format)") {
  const StepLog log = parse_step_log(data("small-2node-torchtitan.log"), "t.log");
  CHECK(log.format == StepLogFormat::torchtitan);
  REQUIRE(log.rows.size() == 6);
  REQUIRE(log.skipped.size() == 1);  // the WARNING line: counted, with its line
  CHECK(log.skipped[0].line == 4);
  CHECK(log.rows[1].step == 2);
  CHECK(log.rows[1].tokens_per_second_per_gpu == 36802);  // "tps: 36,802"
  CHECK(log.rows[1].seconds == 0);                        // only the rate is logged
}

TEST_CASE("Step CSV and its errors") {
  const StepLog log = parse_step_log("step,seconds\n1,2.5\n2,1.25\n3,oops\n", "s.csv");
  CHECK(log.format == StepLogFormat::csv);
  CHECK(log.rows.size() == 2);
  CHECK(log.skipped.size() == 1);
  CHECK_THAT(error_of([] { (void)parse_step_log("step,ms\n1,2500\n", "s.csv"); }),
             Contains("s.csv:1: column 'ms' has no or the wrong unit, expected 'seconds'"));
  CHECK_THAT(error_of([] { (void)parse_step_log("step,seconds\n", "s.csv"); }),
             Contains("s.csv:1: no CSV step with a time"));
}

// Issue 32: numbers past what a run can log are refused line by line; before, "iteration 1e300"
// and "step: 1e300" were cast to int64 (undefined behaviour under UBSan, a wrapped step number
// in Release) and a day-long step was averaged in.
TEST_CASE("Step logs: step numbers past 2^53 and impossible times are skipped, not cast") {
  const std::string good =
      " [t] iteration        2/      20 | elapsed time per iteration (ms): 1702.6 |\n";
  const StepLog m = parse_step_log(
      good + " [t] iteration     1e300/      20 | elapsed time per iteration (ms): 1702.6 |\n" +
          " [t] iteration        3/      20 | elapsed time per iteration (ms): 1e300 |\n",
      "m.log");
  REQUIRE(m.rows.size() == 1);
  CHECK(m.rows[0].step == 2);
  REQUIRE(m.skipped.size() == 2);
  CHECK(m.skipped[0].line == 2);
  CHECK(m.skipped[1].line == 3);
  const StepLog t = parse_step_log(
      "INFO - step:  2  loss: 10.9  tps: 36,802\n"
      "INFO - step:  1e300  loss: 10.9  tps: 36,802\n"
      "INFO - step:  -4  loss: 10.9  tps: 36,802\n"
      "INFO - step:  5  loss: 10.9  tps: 1e300\n",
      "t.log");
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].step == 2);
  CHECK(t.skipped.size() == 3);
  const StepLog c = parse_step_log("step,seconds\n1,2.5\n-1,2.5\n2,1e9\n", "s.csv");
  CHECK(c.rows.size() == 1);
  CHECK(c.skipped.size() == 2);
}

TEST_CASE("nccl-tests: a rank count past 2^24 in the header is an error, not an overflow") {
  // nThread × nGpus was multiplied unchecked: 2^32 × 2^32 overflowed int64 (UBSan).
  const std::string huge = std::string("# nThread 4294967296 nGpus 4294967296 minBytes 8\n") +
                           (header + std::string(header).find('\n') + 1) +
                           "           8             2     float     sum      -1    10.0    "
                           "0.00    0.00      0    10.0    0.00    0.00      0\n";
  CHECK_THAT(error_of([&] { (void)parse_nccl_tests(huge, "all_reduce_perf.txt"); }),
             Contains("all_reduce_perf.txt:1: nThread 4294967296 × nGpus 4294967296 in the header, expected "
                      "a rank count from 2 to 2^24"));
}

TEST_CASE("calibrate reads measurement files within 64 MiB and without NUL bytes") {
  // Issue 32: `--nccl /dev/zero` read until std::bad_alloc (exit 3).
  for (const char* flag : {"--nccl", "--gemm"}) {
    const auto r = cli_harness::run({"calibrate", flag, "/dev/zero"});
    INFO(flag);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("/dev/zero: NUL byte at offset 0; nccl-tests output, a GEMM "
                               "table and a training log are text"));
  }
  const std::string big = "/tmp/planner-big-measurement-" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream out(big);
    const std::string line(1023, 'a');
    for (int i = 0; i < 65 * 1024; ++i) out << line << '\n';  // 65 MiB, no NUL
  }
  const auto r = cli_harness::run({"calibrate", "--nccl", big});
  std::remove(big.c_str());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("input larger than the limit of 67108864 bytes (64 MiB)"));
}

TEST_CASE("A collective fit beyond any link is refused, naming the file") {
  // Issue 32: a table whose sizes and times agree with each other but not with any hardware
  // (1 GiB in 0.01 us: 1e17 B/s) was fitted and written into the profile.
  const std::string rows =
      "  1073741824     268435456     float     sum      -1     0.01  107374182.40  187904819.20"
      "      0     0.01  107374182.40  187904819.20      0\n"
      "  2147483648     536870912     float     sum      -1     0.02  107374182.40  187904819.20"
      "      0     0.02  107374182.40  187904819.20      0\n";
  const std::string file =
      "/tmp/planner-fast-" + std::to_string(::getpid()) + "-all_reduce_perf.txt";
  { std::ofstream(file) << "all_reduce_perf\n" << header << rows; }
  const auto r = cli_harness::run({"calibrate", "--nccl", file});
  std::remove(file.c_str());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("beyond any link (at most 1e14 B/s and 1 s)"));
}

TEST_CASE("Two collectives or two tables in one nccl-tests file are refused (issue 32)") {
  // Fitted as one collective before: an all_gather table's rows joined the all_reduce fit.
  const std::string row64 = "          64            16     float     sum      -1    10.00    0.01"
                            "    0.01      0    10.00    0.01    0.01      0\n";
  const std::string row128 = "         128            32     float     sum      -1    10.00    0.01"
                             "    0.03      0    10.00    0.01    0.03      0\n";
  const std::string two_ops = std::string("# Collective test starting: all_reduce_perf\n") +
                              header + row64 + row128 +
                              "# Collective test starting: all_gather_perf\n" + header +
                              row64 + row128;
  CHECK_THAT(error_of([&] { (void)parse_nccl_tests(two_ops, "two.txt"); }),
             Contains("two.txt:7: a second collective (all_gather_perf after all_reduce_perf) in "
                      "one file"));
  const std::string two_tables = std::string("all_reduce_perf\n") + header + row64 + row128 +
                                 header + row64 + row128;
  CHECK_THAT(error_of([&] { (void)parse_nccl_tests(two_tables, "t.txt"); }),
             Contains("a second table after rows of the first"));
}

TEST_CASE("Bytes that are not UTF-8 in a skipped line reach JSON output as U+FFFD, not a crash",
          "[calibrate][hostile]") {
  // Found by fuzz/fuzz_inputs.cpp: a row whose time field held 0xFF bytes was quoted in the
  // skipped-lines note, and nlohmann's dump threw type_error 316 (exit 3, "internal error").
  std::string text = cli_harness::read("tests/data/calibrate/h100-2node-all_reduce_perf.txt");
  // The table's own 1024-byte row with its out-of-place time replaced by two such bytes.
  text += "        1024           256     float     sum      -1    \xff\xfe    0.01    0.01      0"
          "    123.1    0.01    0.02      0\n";
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
      ("planner_test_utf8_" + std::to_string(getpid()) + "_all_reduce_perf.txt");
  std::ofstream(file, std::ios::binary) << text;
  const auto r = cli_harness::run({"calibrate", "--nccl", file.string(), "--format", "json"});
  std::filesystem::remove(file);
  CHECK(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);  // valid JSON, so valid UTF-8
  CHECK_THAT(doc.dump(), Catch::Contains("\xef\xbf\xbd"));
}

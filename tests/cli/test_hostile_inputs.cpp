// Hostile inputs, second hunt: pipes that blocked every command, JSON that parsed in quadratic
// time, measured values whose ratios overflowed to exit 3, control characters that reached the
// terminal raw (calibrate's fits: test_hostile_fits.cpp). Each test failed before its fix; the
// inputs are written here (small) or generated.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "hostile_test_helpers.hpp"
#include "planner/io/presets.hpp"

using namespace hostile_test_helpers;
using Catch::Contains;

namespace {

/// Runs `script` with /bin/sh in the source directory, `planner` standing for the built binary;
/// returns standard output and sets `code` (for pipes and `timeout`, which shell() cannot
/// put before the binary).
std::string sh(const std::string& script, int& code) {
  std::string command = script;
  for (std::size_t at = 0; (at = command.find("planner ", at)) != std::string::npos;) {
    const std::string binary = std::string("'") + PLANNER_BINARY + "' ";
    command.replace(at, 8, binary);
    at += binary.size();
  }
  command = std::string("cd '") + PLANNER_SOURCE_DIR + "' && " + command;
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  for (std::size_t n = 0; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

/// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// ---- 1. Named pipes --------------------------------------------------------------------------

TEST_CASE("A named pipe with no writer is refused at once by every command that reads a file",
          "[hostile][input]") {
  // Before: fopen(3) of a FIFO waits for a writer, so each of these hung until killed
  // (`timeout` turns that into exit 124 here instead of a hung test run). A pipe that is
  // written (a shell's process substitution) is read, below.
  const std::string fifo = temp_path("fifo");
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string command :
       {"validate", "scaling", "import hf", "plan", "calibrate --nccl"}) {
    INFO(command);
    int code = -1;
    const auto start = std::chrono::steady_clock::now();
    const std::string err =
        sh(fmt::format("timeout 10 planner {} '{}' 2>&1", command, fifo), code);
    CHECK(code == 2);
    CHECK(seconds_since(start) < 8);
    CHECK(one_clean_line(err));
    CHECK_THAT(err, Contains(fifo + ": a named pipe with no writer, so nothing to read; start "
                                    "the command that writes it first, or give a file, or '-' "
                                    "to read standard input"));
  }
  std::filesystem::remove(fifo);
  // Standard input named as a path is still read, pipe or not (the user asked to wait for it).
  int code = -1;
  CHECK(sh("planner memory /dev/stdin < scenarios/a.json 2>&1", code).find("error") ==
        std::string::npos);
  CHECK(code == 0);
  CHECK(sh("cat scenarios/a.json | timeout 10 planner memory /dev/stdin 2>&1", code)
            .find("error") == std::string::npos);
  CHECK(code == 0);
  // A shell's process substitution is a pipe with a writer: read, as users of shell sweeps
  // write it (`planner plan <(jq ... a.json)`).
  CHECK(sh("bash -c \"timeout 10 planner memory <(cat scenarios/a.json)\" 2>&1", code)
            .find("error") == std::string::npos);
  CHECK(code == 0);
}

// ---- 2. JSON size in members, not bytes -----------------------------------------------------

TEST_CASE("JSON with 100,000 members is read in linear time, its errors unchanged", "[hostile][input]") {
  // Before: nlohmann's callback parser, after each object closed, scanned the parent for a
  // discarded element, so {"a0":{},...} with 100,000 keys (1.3 MB) took over 30 s and an
  // array of 200,000 empty objects 11 s. Now each is a few tens of milliseconds; the bound
  // of 5 s is 100 times that, so a loaded machine or a sanitizer build cannot make it flaky,
  // while the quadratic parser cannot meet it.
  std::string object = "{";
  for (int i = 0; i < 100000; ++i) object += fmt::format("{}\"a{}\":{{}}", i ? "," : "", i);
  std::string array = "[";
  for (int i = 0; i < 200000; ++i) array += i ? ",{}" : "{}";
  for (const std::string& text : {object + "}", array + "]"}) {
    const auto start = std::chrono::steady_clock::now();
    const auto parsed = planner::parse_json_text(text, "big.json");
    CHECK(parsed.size() >= 100000);
    CHECK(seconds_since(start) < 5);
  }
  // The guard still sees everything: a key repeated after 100,000 others, and nesting.
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)planner::parse_json_text(object + ",\"a5\":1}", "big.json");
    FAIL("a repeated key was accepted");
  } catch (const planner::InputError& e) {
    CHECK(std::string(e.what()) ==
          "big.json: /a5: duplicate key; each key may appear once in an object");
  }
  CHECK(seconds_since(start) < 5);
  try {
    (void)planner::parse_json_text("[1,{\"x\":[2," + std::string(70, '[') + "]}]", "d.json");
    FAIL("nesting deeper than 64 was accepted");
  } catch (const planner::InputError& e) {
    CHECK_THAT(std::string(e.what()),
               Catch::StartsWith("d.json: /1/x/1/0/0/") &&
                   Contains(": JSON nested deeper than 64 levels"));
  }
  // Through the binary: `import hf` of the 100,000-key file ends (exit 2, not a model).
  const std::string path = write_file("members.json", object + "}");
  int code = -1;
  const auto run_start = std::chrono::steady_clock::now();
  const std::string err = shell(fmt::format("import hf '{}' 2>&1", path), code);
  CHECK(code == 2);
  CHECK(one_clean_line(err));
  CHECK(seconds_since(run_start) < 5);
  std::filesystem::remove(path);
}

// ---- 3. Measured values whose ratios overflow ------------------------------------------------

namespace {

/// A shipped validation record (BLOOM-176B on 384 GPUs) with `measured` replaced.
std::string record_with(const std::string& measured) {
  json doc = json::parse(cli_harness::read("validation/bloom-176b-384gpu.json"));
  doc["measured"] = json::parse(measured);
  return doc.dump();
}

}  // namespace

TEST_CASE("validate refuses measured values too small for the error ratio to be finite", "[hostile][input]") {
  // Before: 5e-324 (a denormal) made predicted / measured infinite: `--format json` exited 3
  // ("internal error: non-finite number at /records/0/throughput_error"), text printed +inf%.
  struct Case {
    std::string measured, pointer, expect;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"tokens_per_second_per_gpu": 5e-324})", "/measured/tokens_per_second_per_gpu",
            "expected a number of tokens per second from 1e-06 to 1e12, such as 3200, got 5e-324"},
           {R"({"step_time": 5e-324})", "/measured/step_time",
            "expected a time from 1 ns to 1e18 s, such as \"14.7 s\", got 5e-324"},
           {R"({"step_time": "2.5 ms", "memory_model_states": 5e-324})",
            "/measured/memory_model_states",
            "expected a size from 1 B to 1e18 B, such as \"20.4 GiB\", got 5e-324"},
           {R"({"step_time": "2.5 ms", "memory_peak": "0.5 B"})", "/measured/memory_peak",
            "expected a size from 1 B to 1e18 B, such as \"61.2 GiB\", got \"0.5 B\""}}) {
    INFO(c.measured);
    const std::string path = write_file("record.json", record_with(c.measured));
    for (const char* format : {"json", "text"}) {
      const auto r = cli_harness::run({"validate", path, "--format", format});
      CHECK(r.code == 2);
      CHECK(r.out.empty());
      CHECK(r.err == "planner: error: " + path + ": " + c.pointer + ": " + c.expect + "\n");
    }
    std::filesystem::remove(path);
  }
  // The smallest accepted values give finite ratios.
  const std::string path = write_file(
      "record.json",
      record_with(R"({"tokens_per_second_per_gpu": 1e-6, "step_time": 1e-9, "memory_peak": 1,
                      "memory_model_states": 1})"));
  const auto r = cli_harness::run({"validate", path, "--format", "json"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  std::filesystem::remove(path);
}

// ---- 4. Step logs with impossible step times -------------------------------------------------

TEST_CASE("A step log's times below 1 us are skipped and never divided by", "[hostile][input]") {
  // Before: `scaling --measured 1=day.csv,2=tiny.csv` with 1e-308 s steps made the efficiency
  // 86400 / 1e-308 = inf: exit 3 in JSON, "inf %" in text. No training step takes less than a
  // microsecond (one kernel launch takes a few), so such a row is skipped like a step over a
  // day, and a log of nothing else is refused.
  const std::string day = write_file("day.csv", "step,seconds\n1,86400\n2,86400\n3,86400\n");
  const std::string tiny = write_file("tiny.csv", "step,seconds\n1,1e-308\n2,5e-324\n3,1e-7\n");
  for (const char* format : {"json", "text"}) {
    const auto r = cli_harness::run({"scaling", "scenarios/eight-gpu-restart.json", "--measured",
                                     "1=" + day + ",2=" + tiny, "--format", format});
    CHECK(r.code == 2);
    CHECK(r.err == "planner: error: " + tiny +
                       ":4: no CSV step with a time, expected at least one (3 line(s) skipped, "
                       "line 2: step number below 0 or a step time below 1 us or above a day)\n");
  }
  // A torchtitan rate below 1e-6 tokens/s per GPU is skipped the same way.
  const std::string titan = write_file(
      "titan.log", "step:  1  loss: 9.1  memory: 30GiB(40%)  tps: 5e-324  tflops: 1\n");
  const auto r = cli_harness::run({"scaling", "scenarios/eight-gpu-restart.json", "--measured",
                                   "1=" + titan, "--format", "json"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("tps below 1e-6 or of 1e9 or more per GPU, not a measurement"));
  for (const auto& path : {day, tiny, titan}) std::filesystem::remove(path);
}

// ---- 5. Control characters from names, in every format ----------------------------------------

namespace {

/// True when `text` holds no control byte but the line ends: no ESC, CR, BEL or NUL that a
/// terminal would act on, and no C1 control character.
bool no_raw_controls(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if ((b < 0x20 && b != '\n') || b == 0x7F) return false;
    if (b == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      return false;
    }
  }
  return true;
}

/// A name with an escape sequence, a carriage return and a line feed.
const std::string hostile_name = "x\x1b[31my\rz\nw";
const std::string hostile_shown = "x\\x1b[31my\\rz\\nw";

}  // namespace

TEST_CASE("validate escapes a record's id and not_modelled in text and CSV", "[hostile][output]") {
  // Before: the text summary's "max ... (<id>)", the --fit table and the CSV row wrote the id
  // and not_modelled raw, so ESC reached the terminal and CR/LF split the CSV row.
  json doc = json::parse(cli_harness::read("validation/bloom-176b-384gpu.json"));
  doc["id"] = hostile_name;
  doc["set"] = "calibration";
  doc["not_modelled"] = {{hostile_name, hostile_name}};
  const std::string path = write_file("ctl_record.json", doc.dump());
  for (const char* format : {"text", "csv"}) {
    INFO(format);
    const auto r = cli_harness::run({"validate", path, "--format", format});
    CHECK(r.code == 0);
    CHECK(no_raw_controls(r.out));
    CHECK_THAT(r.out, Contains(hostile_shown));
  }
  const auto csv = cli_harness::run({"validate", path, "--format", "csv"});
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 2);  // header and one row
  CHECK_THAT(csv.out, Contains("\n" + hostile_shown + ",calibration,"));
  CHECK_THAT(csv.out, Contains("," + hostile_shown + "=" + hostile_shown + ","));
  // RFC 4180 quoting comes after the escapes, so a comma or quote still cannot split a field.
  CHECK(planner::one_line_csv_field("a,\"b\r") == "\"a,\"\"b\\r\"");
  CHECK(planner::one_line_csv_field("plain") == "plain");
  const auto text = cli_harness::run({"validate", path});
  CHECK_THAT(text.out, Contains("(" + hostile_shown + ")\n"));
  const auto fit = cli_harness::run({"validate", path, "--fit"});
  CHECK(no_raw_controls(fit.out));
  CHECK_THAT(fit.out, Contains(hostile_shown));
  std::filesystem::remove(path);
}

TEST_CASE("calibrate and scaling --measured escape file names in text", "[hostile][output]") {
  // Before: "from <file>", the run lines, "Skipped: <file>: ..." and the scaling table's log
  // column printed the names raw.
  const std::string dir = temp_path("ctl_dir");
  std::filesystem::create_directories(dir);
  const std::string nccl = dir + "/" + hostile_name + "_all_reduce_perf.txt";
  std::filesystem::copy_file(
      std::string(PLANNER_SOURCE_DIR) + "/tests/data/calibrate/mi300x-1node-all_reduce_perf.txt",
      nccl, std::filesystem::copy_options::overwrite_existing);
  std::ofstream(nccl, std::ios::app) << "# a trailing line that is skipped\nnot a row\n";
  const auto r = cli_harness::run({"calibrate", "--nccl", nccl});
  CHECK(r.code == 0);
  CHECK(no_raw_controls(r.out));
  CHECK_THAT(r.out, Contains("from " + dir + "/" + hostile_shown));
  CHECK_THAT(r.out, Contains("Skipped: " + dir + "/" + hostile_shown));

  const std::string log = dir + "/" + hostile_name + ".csv";
  std::ofstream(log) << "step,seconds\n1,2\n2,2\n3,2\n";
  const auto s = cli_harness::run(
      {"scaling", "scenarios/eight-gpu-restart.json", "--measured", "1=" + log});
  CHECK(s.err.empty());  // the exit code is the one without --measured
  CHECK(no_raw_controls(s.out));
  CHECK_THAT(s.out, Contains(dir + "/" + hostile_shown + ".csv"));
  std::filesystem::remove_all(dir);
}

// ---- 9. import hf: MoE without experts, values of the wrong type --------------------------------

TEST_CASE("import hf refuses an MoE config without its expert count and mistyped keys", "[hostile][input]") {
  const auto config = [](const std::string& name) {
    return json::parse(cli_harness::read("tests/data/hf/" + name));
  };
  const auto error = [](const json& c) {
    try {
      (void)planner::model_from_hf(c, "c.json");
    } catch (const planner::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // Before: without the count, read_experts saw no MoE key and imported a dense model.
  json mixtral = config("mixtral-8x7b-config.json");
  mixtral.erase("num_local_experts");
  CHECK(error(mixtral) == "c.json: /num_local_experts: missing; a config.json for this "
                          "architecture has num_local_experts");
  json qwen = config("qwen1.5-moe-a2.7b-config.json");
  qwen.erase("num_experts");
  CHECK(error(qwen) ==
        "c.json: /num_experts: missing; a config.json for this architecture has num_experts");
  // Before: a flag given as a string was ignored, and the default taken.
  json llama = config("llama-3.1-8b-config.json");
  llama["tie_word_embeddings"] = "true";
  CHECK(error(llama) == "c.json: /tie_word_embeddings: expected true or false, got \"true\"");
  llama = config("llama-3.1-8b-config.json");
  llama["attention_bias"] = 1;
  CHECK(error(llama) == "c.json: /attention_bias: expected true or false, got 1");
  llama = config("llama-3.1-8b-config.json");
  llama["attention_dropout"] = "0.1";
  CHECK(error(llama) ==
        "c.json: /attention_dropout: expected a probability from 0 to 1, got \"0.1\"");
  llama = config("llama-3.1-8b-config.json");
  llama["sliding_window"] = "4096";
  CHECK(error(llama) == "c.json: /sliding_window: expected a number of tokens or null, got "
                        "\"4096\"");
  // null is transformers' default, as before; the shipped configs import unchanged.
  llama = config("llama-3.1-8b-config.json");
  llama["tie_word_embeddings"] = nullptr;
  CHECK(error(llama) == "(no error)");
  for (const char* name : {"mixtral-8x7b-config.json", "qwen1.5-moe-a2.7b-config.json",
                           "llama-3.1-8b-config.json", "gemma-7b-config.json"}) {
    CHECK(error(config(name)) == "(no error)");
  }
}

// ---- 10. collective --per-node 0 -------------------------------------------------------------

TEST_CASE("collective --per-node 0 or negative is refused, not ignored", "[hostile][input]") {
  // Before: a --per-node that was not positive meant "not given", and the flat ring was
  // priced as if the flag were absent (exit 0).
  for (const std::string v : {"0", "-4"}) {
    const auto r = cli_harness::run({"collective", "--gpus", "64", "--bw", "50", "--latency", "5",
                                     "--bytes", "1e9", "--per-node", v, "--node-bw", "400",
                                     "--node-latency", "2"});
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "planner: error: command line: --per-node must be a divisor of --gpus from 2 "
                   "to 32 (the group's ranks in each node), got " + v + "\n");
  }
}

// ---- Duplicate record ids ---------------------------------------------------------------------

TEST_CASE("validate refuses two records with one id, such as a file and a link to it", "[hostile][input]") {
  // Before: a link beside its target was read as a second record and weighed double in the
  // medians; any two records could share an id.
  const std::string dir = temp_path("records");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string record = dir + "/a.json";
  std::filesystem::copy_file(std::string(PLANNER_SOURCE_DIR) + "/validation/bloom-176b-384gpu.json",
                             record);
  std::filesystem::create_symlink(record, dir + "/b.json");
  auto r = cli_harness::run({"validate", dir});
  CHECK(r.code == 2);
  CHECK(r.err == "planner: error: " + dir + "/b.json: /id: \"bloom-176b-384gpu\" is also the id "
                 "of " + record + "; give each record its own id (is one file a link to or a "
                 "copy of the other?)\n");
  std::filesystem::remove(dir + "/b.json");
  r = cli_harness::run({"validate", dir});
  CHECK(r.err.empty());
  std::filesystem::remove_all(dir);
}

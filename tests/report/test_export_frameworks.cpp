// planner export --to torchtitan|deepspeed: each config parses back to the plan the planner
// recommends under that framework's rules, and uses only the key names the framework reads
// (docs/exports.md).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using nlohmann::json;

namespace {

/// A scenario and the --fix items laid over it ("" for none): the pinned pipelines exercise
/// the micro-batch keys of both formats and DeepSpeed's pipeline section.
struct Case {
  const char* scenario;
  const char* fix;
};

const Case cases[] = {{"scenarios/q1-llama-3.1-8b-one-node.json", ""},
                      {"scenarios/q2-llama-3.1-70b-64-h100.json", ""},
                      {"scenarios/q6-gpt-3-175b-1024-a100.json", ""},
                      {"scenarios/q2-llama-3.1-70b-64-h100.json", "pp=4,recompute=full"},
                      {"scenarios/q2-llama-3.1-70b-64-h100.json", "pp=4,tp=2"},
                      {"scenarios/q4-mixtral-8x7b-training.json", ""}};

std::vector<std::string> with_fix(std::vector<std::string> args, const Case& c) {
  if (*c.fix != '\0') {
    args.emplace_back("--fix");
    args.emplace_back(c.fix);
  }
  return args;
}

/// The subset of TOML the export writes: `[section]` lines, `key = value` lines (integers and
/// double-quoted strings), `#` comment lines. Returns "section.key" → value, quotes removed.
std::map<std::string, std::string> parse_toml(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[') {
      REQUIRE(line.back() == ']');
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const auto eq = line.find(" = ");
    REQUIRE(eq != std::string::npos);
    std::string value = line.substr(eq + 3);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    const std::string key = section + "." + line.substr(0, eq);
    REQUIRE(out.count(key) == 0);  // each key once
    out[key] = value;
  }
  return out;
}

std::int64_t integer(const std::map<std::string, std::string>& t, const std::string& key,
                     std::int64_t absent) {
  return t.count(key) ? std::stoll(t.at(key)) : absent;
}

/// The plan `planner plan --framework F` recommends, as JSON.
json recommended(const Case& c, const std::string& framework) {
  const auto planned = cli_harness::run(with_fix(
      {"plan", c.scenario, "--framework", framework, "--format", "json", "--no-thresholds"}, c));
  REQUIRE(planned.code == 0);
  return json::parse(planned.out).at("best");
}

std::int64_t world(const json& best) {
  return best.at("dp").get<std::int64_t>() * best.at("tp").get<std::int64_t>() *
         best.at("pp").get<std::int64_t>() * best.at("cp").get<std::int64_t>();
}

}  // namespace

// Key names as torchtitan v0.2.2 (commit 73a0e6979dd10b6b1904098eb3c8f62c18ab87ce) spells them
// in torchtitan/config/job_config.py: class Training, class Parallelism, class
// ActivationCheckpoint.
const std::set<std::string> torchtitan_keys{
    "training.local_batch_size", "training.global_batch_size", "training.seq_len",
    "training.mixed_precision_param", "parallelism.data_parallel_replicate_degree",
    "parallelism.data_parallel_shard_degree", "parallelism.tensor_parallel_degree",
    "parallelism.pipeline_parallel_degree", "parallelism.context_parallel_degree",
    "parallelism.pipeline_parallel_schedule", "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers", "activation_checkpoint.mode",
    "activation_checkpoint.selective_ac_option", "compile.enable",
    "parallelism.expert_parallel_degree", "parallelism.expert_tensor_parallel_degree",
    // class Parallelism fsdp_reshard_after_forward ("default", "always", "never"; read in
    // job_config.py at 000204a, 2025).
    "parallelism.fsdp_reshard_after_forward"};

TEST_CASE("torchtitan TOML round-trips to the recommended plan", "[export]") {
  for (const Case& c : cases) {
    INFO(c.scenario << " --fix " << c.fix);
    const auto exported =
        cli_harness::run(with_fix({"export", c.scenario, "--to", "torchtitan"}, c));
    REQUIRE(exported.code == 0);
    const json best = recommended(c, "torchtitan");
    const auto t = parse_toml(exported.out);
    for (const auto& [key, value] : t) {
      INFO(key);
      CHECK(torchtitan_keys.count(key) == 1);
    }
    // torchtitan/train.py: accumulation = global / (local · (replicate · shard)); with stages,
    // pipeline_parallel.py cuts local_batch_size into micro-batches of
    // pipeline_parallel_microbatch_size.
    const std::int64_t replicate = integer(t, "parallelism.data_parallel_replicate_degree", 1);
    const std::int64_t shard = integer(t, "parallelism.data_parallel_shard_degree", -1);
    REQUIRE(shard >= 1);  // -1 ("the rest") is never written: the degrees are explicit
    const std::int64_t dp = replicate * shard;
    const std::int64_t tp = integer(t, "parallelism.tensor_parallel_degree", 1);
    const std::int64_t pp = integer(t, "parallelism.pipeline_parallel_degree", 1);
    const std::int64_t cp = integer(t, "parallelism.context_parallel_degree", 1);
    const std::int64_t local = integer(t, "training.local_batch_size", 8);
    const std::int64_t mb =
        pp > 1 ? integer(t, "parallelism.pipeline_parallel_microbatch_size", 1) : local;
    const std::int64_t global = integer(t, "training.global_batch_size", local * dp);
    CHECK(dp == best.at("dp"));
    CHECK(tp == best.at("tp"));
    CHECK(pp == best.at("pp"));
    CHECK(cp == best.at("cp"));
    CHECK(dp * tp * pp * cp == world(best));
    // An MoE model's experts: ep and etp as the plan has them (torchtitan's default is 1).
    CHECK(t.count("parallelism.expert_parallel_degree") == (best.contains("ep") ? 1u : 0u));
    if (best.contains("ep")) {
      CHECK(integer(t, "parallelism.expert_parallel_degree", 1) == best.at("ep"));
    }
    // Hybrid sharding (HSDP): FSDP2 shards over dp_shard and replicates over dp_replicate.
    if (best.contains("dp_shard")) CHECK(shard == best.at("dp_shard"));
    CHECK(mb == best.at("micro_batch"));
    CHECK(global % (local * dp) == 0);
    CHECK((local / mb) * (global / (local * dp)) == best.at("grad_accum"));
    // FSDP2 over dp_shard × cp is ZeRO-3, and ZeRO-2 under pipelining (its "default"
    // fsdp_reshard_after_forward keeps the stage's parameters gathered); replication alone is
    // ZeRO-0 (DDP).
    const bool fsdp = shard > 1 || cp > 1;
    if (fsdp) CHECK(t.at("parallelism.fsdp_reshard_after_forward") == "default");
    if (dp * cp > 1) CHECK((fsdp ? (pp > 1 ? 2 : 3) : 0) == best.at("zero"));
    // torchtitan's modes (torchtitan config ActivationCheckpoint): its attention is tiled, so
    // the planner's selective recompute (the attention core, which tiled attention recomputes
    // anyway) is "none"; the planner's "op" is torchtitan's "selective" with option "op".
    const auto recompute = best.at("recompute").get<std::string>();
    const std::string mode = recompute == "selective" ? "none"
                             : recompute == "op"      ? "selective"
                                                      : recompute;
    CHECK(t.at("activation_checkpoint.mode") == mode);
    CHECK((t.count("activation_checkpoint.selective_ac_option") == 1) == (recompute == "op"));
    CHECK(integer(t, "training.seq_len", 2048) > 0);
    // The kernels the plan was timed with: fused (torch.compile) unless the workload is eager.
    CHECK(t.at("compile.enable") ==
          (best.value("elementwise_kernels", std::string("fused")) == "eager" ? "false" : "true"));
  }
}

// Key names as DeepSpeed 0.19.6 (commit edaa7221267243c7be7fb49c5d5f5c4fb97b4641) spells them:
// deepspeed/runtime/constants.py (TRAIN_BATCH_SIZE, TRAIN_MICRO_BATCH_SIZE_PER_GPU,
// GRADIENT_ACCUMULATION_STEPS, BFLOAT16 / BFLOAT16_ENABLED), runtime/zero/config.py
// (ZERO_OPTIMIZATION, DeepSpeedZeroConfig.stage), runtime/tensor_parallel/config.py
// (autotp_size), runtime/config.py get_pipeline_config ("stages",
// "activation_checkpoint_interval"), runtime/activation_checkpointing/config.py (ACT_CHKPT_*).
const std::set<std::string> deepspeed_keys{
    "/train_batch_size", "/train_micro_batch_size_per_gpu", "/gradient_accumulation_steps",
    "/bf16/enabled", "/zero_optimization/stage", "/zero_optimization/mics_shard_size",
    "/tensor_parallel/autotp_size",
    "/pipeline/stages", "/pipeline/activation_checkpoint_interval",
    "/activation_checkpointing/partition_activations",
    "/activation_checkpointing/contiguous_memory_optimization",
    "/activation_checkpointing/cpu_checkpointing"};

TEST_CASE("DeepSpeed JSON round-trips to the recommended plan", "[export]") {
  for (const Case& run : cases) {
    INFO(run.scenario << " --fix " << run.fix);
    const auto exported =
        cli_harness::run(with_fix({"export", run.scenario, "--to", "deepspeed"}, run));
    REQUIRE(exported.code == 0);
    const json best = recommended(run, "deepspeed");
    const json c = json::parse(exported.out);  // the whole output is the config file
    const json flat = c.flatten();
    for (const auto& [pointer, value] : flat.items()) {
      INFO(pointer);
      if (pointer.rfind("/planner/", 0) == 0) continue;  // ours; DeepSpeed ignores it
      CHECK(deepspeed_keys.count(pointer) == 1);
    }
    // The file says which plan it encodes, and how to switch on what it cannot.
    CHECK(c.at("planner").at("gpus") == world(best));
    CHECK(c.at("planner").at("plan").get<std::string>().find("micro-batch") != std::string::npos);
    CHECK(c.at("planner").contains("recompute") == (best.at("recompute") == "full"));
    CHECK(c.at("planner").contains("experts") == (best.value("ep", 1) > 1));
    const auto mb = c.at("train_micro_batch_size_per_gpu").get<std::int64_t>();
    const auto ga = c.at("gradient_accumulation_steps").get<std::int64_t>();
    const auto batch = c.at("train_batch_size").get<std::int64_t>();
    // runtime/config.py _batch_assertion: train_batch_size = micro · accumulation · dp.
    REQUIRE(batch % (mb * ga) == 0);
    const std::int64_t dp = batch / (mb * ga);
    const std::int64_t tp =
        c.value(json::json_pointer("/tensor_parallel/autotp_size"), std::int64_t{1});
    const std::int64_t pp = c.value(json::json_pointer("/pipeline/stages"), std::int64_t{1});
    CHECK(dp == best.at("dp"));
    CHECK(tp == best.at("tp"));
    CHECK(pp == best.at("pp"));
    CHECK(dp * tp * pp == world(best));  // no context parallelism in DeepSpeed
    CHECK(mb == best.at("micro_batch"));
    CHECK(ga == best.at("grad_accum"));
    CHECK(c.at("zero_optimization").at("stage") == best.at("zero"));
    // Whole-layer checkpointing for full recompute; "flash + selective" is tiled attention
    // without checkpointing (docs/ranking.md §1), which DeepSpeed runs as "none".
    const std::string recompute = best.at("recompute").get<std::string>();
    CHECK(c.contains("activation_checkpointing") == (recompute == "full"));
    CHECK((recompute == "full" || recompute == "none" ||
           (recompute == "selective" && best.at("flash_attention") == true)));
    CHECK(c.at("bf16").at("enabled") == true);
  }
}

TEST_CASE("Export refuses a pinned plan torchtitan or DeepSpeed cannot launch", "[export]") {
  // ZeRO-1 has no torchtitan form (DDP or FSDP2 only).
  const auto titan = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "torchtitan", "--set",
       "/plan={\"dp\": 32, \"tp\": 2, \"zero\": 1, \"recompute\": \"selective\", "
       "\"flash_attention\": true}"});
  CHECK(titan.code == 2);
  CHECK_THAT(titan.err, Catch::Contains("/plan") && Catch::Contains("FSDP2") &&
                            Catch::Contains("torchtitan can launch"));
  // DeepSpeed's pipeline engine asserts ZeRO stage < 2 (runtime/pipe/engine.py).
  const auto ds = cli_harness::run(
      {"export", "scenarios/b.json", "--to", "deepspeed", "--set",
       "/plan={\"dp\": 16, \"pp\": 4, \"zero\": 2, \"recompute\": \"full\", "
       "\"flash_attention\": true}"});
  CHECK(ds.code == 2);
  CHECK_THAT(ds.err, Catch::Contains("/plan") && Catch::Contains("ZeRO-1 at most"));
  const auto unknown = cli_harness::run({"export", "scenarios/b.json", "--to", "jax"});
  CHECK(unknown.code == 2);
}

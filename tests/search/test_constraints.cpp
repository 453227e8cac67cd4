// Constraints (inputs/constraints.hpp, search/constraints.hpp, io/constraints.hpp): --fix
// bounds and --framework launch rules, applied by every search.

#include <algorithm>
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "planner/base/error.hpp"
#include "planner/io/constraints.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/placement.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

using namespace planner;
using nlohmann::json;

namespace {

/// The axes of `p` with more than one rank, innermost first, as names ("tp", "cp", …).
std::vector<std::string> used_order(const Plan& p) {
  std::vector<std::string> out;
  for (Axis a : p.placement) {
    if (degree(p, a) > 1) out.emplace_back(to_string(a));
  }
  return out;
}

/// True when `order` lists the used axes in the order of `allowed` (written out here from
/// Megatron-LM: "tp-cp-ep-dp-pp", and "tp-cp-ep-pp-dp" with --use-tp-pp-dp-mapping).
bool in_order(const std::vector<std::string>& order, const std::vector<std::string>& allowed) {
  std::size_t j = 0;
  for (const std::string& a : order) {
    while (j < allowed.size() && allowed[j] != a) ++j;
    if (j++ >= allowed.size()) return false;
  }
  return true;
}

bool megatron_launches(const Plan& p) {
  if (p.zero > 1) return false;  // the distributed optimizer is ZeRO-1
  const auto order = used_order(p);
  return in_order(order, {"tp", "cp", "dp", "pp"}) ||
         (p.cp == 1 && in_order(order, {"tp", "pp", "dp"}));
}

}  // namespace

TEST_CASE("Property: the megatron framework never recommends what Megatron cannot launch",
          "[constraints][property]") {
  std::mt19937 rng(20261130);
  const char* bases[] = {"a.json", "b.json", "c.json", "llama3-70b-h100.json"};
  int unconstrained_unlaunchable = 0, checked = 0;
  for (int trial = 0; trial < 24; ++trial) {
    json doc = read_json_file(std::string(PLANNER_SOURCE_DIR) + "/scenarios/" +
                              bases[rng() % 4]);
    doc.erase("plan");
    const int nodes[] = {1, 2, 4, 8, 16};
    const int per_node[] = {4, 8};
    doc["cluster"]["nodes"] = nodes[rng() % 5];
    doc["cluster"]["gpus_per_node"] = per_node[rng() % 2];
    const double bw[] = {5e9, 25e9, 50e9, 200e9};
    doc["cluster"]["inter_node"]["bandwidth"] = bw[rng() % 4];
    Scenario s = load_scenario(doc, "random.json");
    Context ctx = make_context(s);
    ctx.constraints.framework = Framework::unrestricted;
    ctx.constraints.trusted = false;
    SearchOptions options;
    options.keep = 5;
    const SearchResult any = search(ctx, options);
    for (const Evaluation& e : any.ranked) unconstrained_unlaunchable += !megatron_launches(e.plan);
    ctx.constraints.framework = Framework::megatron;
    ctx.constraints.trusted = true;
    const SearchResult r = search(ctx, options);
    for (const Evaluation& e : r.ranked) {
      INFO("trial " << trial << ": zero " << e.plan.zero << ", cp " << e.plan.cp);
      CHECK(megatron_launches(e.plan));
      ++checked;
    }
  }
  CHECK(checked > 50);
  // Not vacuous: with every rank order allowed, the search does recommend such plans.
  CHECK(unconstrained_unlaunchable > 0);
}

TEST_CASE("The default search recommends only plans some framework launches",
          "[constraints]") {
  // docs/constraints.md's table, written out here: tp innermost, then cp (Megatron-LM
  // tp-cp-dp-pp or tp-pp-dp without cp; torchtitan's mesh tp-cp-dp-pp; DeepSpeed model-data-
  // pipe). Llama 3.1 405B on 16,384 H100s (scenarios/q3): with every order allowed the model's
  // best plan put tp 4 across nodes (a plan no framework launches); the default may not.
  const Scenario s = load_scenario(
      read_json_file(std::string(PLANNER_SOURCE_DIR) + "/scenarios/q3-llama-3.1-405b-16k-h100.json"),
      "q3.json");
  Context ctx = make_context(s);
  SearchOptions options;
  options.keep = 10;
  const SearchResult r = search(ctx, options);
  REQUIRE(r.found());
  for (const Evaluation& e : r.ranked) {
    INFO(describe(ctx, e.plan));
    const auto order = used_order(e.plan);
    CHECK((in_order(order, {"tp", "cp", "dp", "pp"}) ||
           (e.plan.cp == 1 && in_order(order, {"tp", "pp", "dp"}))));
    CHECK(inside_node(e.plan, ctx.cluster, Axis::tp));  // tp 8 or less, innermost: one node
  }
  // Not vacuous: with every order allowed and the envelope off (--rank raw keeps tp in a node
  // too), plans with tp across nodes rank among the ten fastest (they were first until the
  // ring's K/V blocks were split by tp, December 2026: context parallelism became cheaper).
  ctx.constraints.framework = Framework::unrestricted;
  ctx.constraints.trusted = false;
  const SearchResult raw = search(ctx, options);
  REQUIRE(raw.found());
  CHECK(std::any_of(raw.ranked.begin(), raw.ranked.end(), [&](const Evaluation& e) {
    return !inside_node(e.plan, ctx.cluster, Axis::tp);
  }));
}

TEST_CASE("No framework launches ZeRO-2 with context parallelism or with tp and SP",
          "[constraints]") {
  // Megatron-LM: ZeRO-1 at most; torchtitan: DDP or FSDP (ZeRO-3); DeepSpeed: no ring-attention
  // cp, AutoTP without sequence parallelism (docs/constraints.md).
  Plan p;
  p.dp = 8;
  p.cp = 2;
  p.zero = 2;
  p.flash_attention = true;
  p.recompute = Recompute::selective;
  CHECK_FALSE(framework_config_violation(Framework::any, p).empty());
  CHECK(framework_config_violation(Framework::unrestricted, p).empty());
  p.cp = 1;
  p.tp = 2;
  p.sequence_parallel = true;
  CHECK_FALSE(framework_config_violation(Framework::any, p).empty());
  p.sequence_parallel = false;  // DeepSpeed AutoTP with ZeRO-2 and flash attention
  CHECK(framework_config_violation(Framework::any, p).empty());
  CHECK(framework_config_violation(Framework::deepspeed, p).empty());
}

TEST_CASE("torchtitan's pipelined FSDP2 is ZeRO-2 with unsharded gradients, never ZeRO-3",
          "[constraints][framework]") {
  // torchtitan's job_config.py fsdp_reshard_after_forward "default" reshards only without
  // pipelining, and PyTorch's pipeline schedules defer the reduce-scatter to the last
  // micro-batch (pipelining/stage.py backward_maybe_with_nosync).
  Plan p;
  p.dp = 8;
  p.tp = 2;
  p.pp = 4;
  p.sequence_parallel = p.flash_attention = true;
  p.recompute = Recompute::selective;
  p.zero = 3;
  CHECK_THAT(std::string(framework_config_violation(Framework::torchtitan, p)),
             Catch::Contains("under pipelining"));
  p.zero = 2;
  CHECK_FALSE(framework_config_violation(Framework::torchtitan, p).empty());
  p.unsharded_gradient_accumulation = true;  // what --framework torchtitan sets
  CHECK(framework_config_violation(Framework::torchtitan, p).empty());
  p.pp = 1;  // without stages FSDP2 reshards after the forward: ZeRO-3
  CHECK_FALSE(framework_config_violation(Framework::torchtitan, p).empty());
  p.zero = 3;
  CHECK(framework_config_violation(Framework::torchtitan, p).empty());
  // The framework's defaults set the workload's switch, so its search times such plans with
  // the whole stage's fp32 gradient held.
  json s = json::parse(cli_harness::read("scenarios/q2-llama-3.1-70b-64-h100.json"));
  s["constraints"] = {{"framework", "torchtitan"}};
  const Context ctx = make_context(load_scenario(s, "q2.json"));
  CHECK(ctx.workload.training.unsharded_gradient_accumulation);
  CHECK(ctx.model.precision.gradients == Dtype::fp32);
}

TEST_CASE("The fix flag pins and bounds axes and switches", "[constraints]") {
  const auto r = cli_harness::run({"plan", "scenarios/b.json", "--format", "json",
                                   "--no-thresholds", "--fix", "tp=8,zero<=1,flash=on",
                                   "--top", "5"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j.contains("ranked"));
  REQUIRE_FALSE(j.at("ranked").empty());
  for (const json& p : j.at("ranked")) {
    CHECK(p.at("tp") == 8);
    CHECK(p.at("zero").get<int>() <= 1);
    CHECK(p.at("flash_attention") == true);
  }
}

TEST_CASE("Constraint errors name the item and the fix", "[constraints]") {
  auto message = [](const char* text) {
    try {
      (void)parse_fix(text, "--fix", "");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(message("tpp=2"), Catch::Contains("did you mean 'tp'"));
  CHECK_THAT(message("zero<=4"), Catch::Contains("0 to 3"));
  CHECK_THAT(message("flash<=1"), Catch::Contains("'=' only"));
  CHECK_THAT(message("tp"), Catch::Contains("NAME=VALUE"));
  const Constraints c = parse_fix("tp>=2, tp<=4 ,zero<=1,recompute=full", "--fix", "");
  CHECK(c.degree(Axis::tp).min == 2);
  CHECK(c.degree(Axis::tp).max == 4);
  CHECK(c.bound(Dim::zero).max == 1);
  CHECK(c.pinned_recompute() == Recompute::full);
  const auto bad = cli_harness::run({"plan", "scenarios/a.json", "--framework", "megatrn"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown framework"));
  // An impossible pinned degree is an input error, not "no configuration fits": tp 16 on one
  // 8-GPU node, tp 64 of GPT-3's 96 heads (q6).
  const auto wide = cli_harness::run({"plan", "scenarios/q1-llama-3.1-8b-one-node.json", "--fix",
                                      "tp=16"});
  CHECK(wide.code == 2);
  CHECK_THAT(wide.err, Catch::Contains("item 'tp=16': tp = 16 must divide the cluster's 8 GPUs"));
  const auto odd = cli_harness::run({"plan", "scenarios/q6-gpt-3-175b-1024-a100.json", "--fix",
                                     "tp=64"});
  CHECK(odd.code == 2);
  CHECK_THAT(odd.err, Catch::Contains("tp = 64 must divide the model's 96 attention heads"));
  const auto rank = cli_harness::run({"plan", "scenarios/a.json", "--rank", "fastest"});
  CHECK(rank.code == 2);
  CHECK_THAT(rank.err, Catch::Contains("unknown ranking 'fastest'"));
  CHECK(parse_fix("recompute=op", "--fix", "").pinned_recompute() == Recompute::op);
  // `!=` rules one mode out (a stack without it): the others stay allowed, the plan's filter
  // reads it, and it contradicts an `=` of the same mode.
  const Constraints era = parse_fix("recompute!=selective,recompute!=op", "--fix", "");
  CHECK(era.allows(Recompute::none));
  CHECK(era.allows(Recompute::full));
  CHECK_FALSE(era.allows(Recompute::selective));
  CHECK_FALSE(era.allows(Recompute::op));
  Plan sel;
  sel.recompute = Recompute::selective;
  CHECK_FALSE(within_settings(era, sel));
  sel.recompute = Recompute::full;
  CHECK(within_settings(era, sel));
  CHECK_FALSE(unconstrained(parse_fix("recompute!=full", "--fix", "")));
  CHECK_THAT(message("recompute=full,recompute!=full"), Catch::Contains("contradicts"));
  CHECK_THAT(message("tp!=2"), Catch::Contains("'=', '<=' or '>=' only"));
  CHECK_THAT(message("recompute!=none,recompute!=selective,recompute!=op,recompute!=full"),
             Catch::Contains("leaves no recompute mode"));
  CHECK_THAT(message("flash!=on"), Catch::Contains("'=' only"));
  // With selective recompute ruled out, the search recommends none: q1's answer (selective
  // recompute with flash) moves to another mode.
  const auto no_sel = cli_harness::run({"plan", "scenarios/q1-llama-3.1-8b-one-node.json",
                                        "--fix", "recompute!=selective", "--format", "json"});
  REQUIRE(no_sel.code == 0);
  CHECK(json::parse(no_sel.out).at("best").at("recompute") != "selective");
  CHECK_THAT(message("recompute=ops"), Catch::Contains("none, selective, op or full"));
  // op-level checkpointing on a mixture-of-experts model: said at once, not "nothing fits".
  const auto moe = cli_harness::run(
      {"plan", "scenarios/q4-mixtral-8x7b-training.json", "--fix", "recompute=op"});
  CHECK(moe.code == 2);
  CHECK(moe.err ==
        "planner: error: --fix: recompute=op (torchtitan's op-level checkpointing) is modelled "
        "for dense layers only; choose none, selective or full for a mixture-of-experts model\n");
}

TEST_CASE("Megatron-LM keeps fp32 main gradients unless the scenario says otherwise",
          "[constraints][framework]") {
  // megatron/training/arguments.py: under --bf16 gradients are accumulated and reduced in
  // fp32 unless --grad-reduce-in-bf16: 4 bytes per parameter where the default ledger keeps
  // 2, the 12 of the optimizer unchanged (2 + 4 + 12 = 18 bytes per parameter).
  const json base = json::parse(cli_harness::read("scenarios/q2-llama-3.1-70b-64-h100.json"));
  Plan p;  // tp 8 x dp 8, ZeRO-1, SP, flash, selective recompute
  p.tp = p.dp = 8;
  p.zero = 1;
  p.sequence_parallel = p.flash_attention = true;
  p.recompute = Recompute::selective;
  auto ledger = [&](const json& doc) {
    const Context ctx = make_context(load_scenario(doc, "q2.json"));
    return training_ledger(ctx.model, ctx.cluster, ctx.workload.training, p);
  };
  json megatron = base;
  megatron["constraints"] = {{"framework", "megatron"}};
  const MemoryLedger plain = ledger(base), mega = ledger(megatron);
  CHECK(mega.gradients_bytes == Approx(2.0 * plain.gradients_bytes));
  CHECK(mega.optimizer_bytes == Approx(plain.optimizer_bytes));
  CHECK(mega.weights_bytes == Approx(plain.weights_bytes));
  // A stated gradient dtype is the user's: nothing changes.
  json stated = megatron;
  stated["model"]["precision"] = {{"gradients", "bf16"}};
  CHECK(ledger(stated).gradients_bytes == Approx(plain.gradients_bytes));
  // torchtitan reduces in fp32 too (job_config.py mixed_precision_reduce "float32"), its
  // bytes per parameter unchanged: FSDP2's sharded fp32 weights, gradients and two moments are
  // 16 bytes, the ledger's 2 + 4 + 10. DeepSpeed keeps the scenario's ledger.
  json titan = base;
  titan["constraints"] = {{"framework", "torchtitan"}};
  const MemoryLedger tt = ledger(titan);
  CHECK(tt.gradients_bytes == Approx(2.0 * plain.gradients_bytes));
  Plan z3 = p;
  z3.zero = 3;
  const Context tctx = make_context(load_scenario(titan, "q2.json"));
  const Context pctx = make_context(load_scenario(base, "q2.json"));
  CHECK(training_ledger(tctx.model, tctx.cluster, tctx.workload.training, z3).state_bytes() ==
        Approx(training_ledger(pctx.model, pctx.cluster, pctx.workload.training, z3)
                   .state_bytes()));
  json deepspeed = base;
  deepspeed["constraints"] = {{"framework", "deepspeed"}};
  CHECK(ledger(deepspeed).gradients_bytes == Approx(plain.gradients_bytes));
  // The export asks Megatron-LM for the gradients the plan was timed with.
  const auto fp32 = cli_harness::run({"export", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                      "--to", "megatron"});
  REQUIRE(fp32.code == 0);
  CHECK(fp32.out.find("--grad-reduce-in-bf16") == std::string::npos);
  const auto bf16 = cli_harness::run({"export", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                      "--to", "megatron", "--set",
                                      "/model/precision={\"gradients\": \"bf16\"}"});
  REQUIRE(bf16.code == 0);
  CHECK(bf16.out.find("--grad-reduce-in-bf16") != std::string::npos);
}

TEST_CASE("Megatron-LM's usual overlaps where the scenario does not state them",
          "[constraints][framework]") {
  // arguments.py: --no-overlap-p2p-communication is store_false (the sends overlap unless
  // switched off); --tp-comm-overlap as NVIDIA's recipes set it. A stated value is the user's.
  const json base = json::parse(cli_harness::read("scenarios/q2-llama-3.1-70b-64-h100.json"));
  auto workload = [](const json& doc) {
    return make_context(load_scenario(doc, "q2.json")).workload.training;
  };
  CHECK_FALSE(workload(base).tp_comm_overlap);
  CHECK_FALSE(workload(base).pp_comm_overlap);
  json megatron = base;
  megatron["constraints"] = {{"framework", "megatron"}};
  CHECK(workload(megatron).tp_comm_overlap);
  CHECK(workload(megatron).pp_comm_overlap);
  json stated = megatron;
  stated["workload"]["tp_comm_overlap"] = false;
  stated["workload"]["pp_comm_overlap"] = false;
  CHECK_FALSE(workload(stated).tp_comm_overlap);
  CHECK_FALSE(workload(stated).pp_comm_overlap);
  // The export launches what was timed: the recommendation with tp and SP overlaps its tp.
  const auto exported = cli_harness::run({"export", "scenarios/q2-llama-3.1-70b-64-h100.json",
                                          "--to", "megatron", "--fix", "tp=4,sp=on"});
  REQUIRE(exported.code == 0);
  CHECK(exported.out.find("--tp-comm-overlap") != std::string::npos);
}

TEST_CASE("The recommendation and its band do not depend on how many plans are kept",
          "[search][pruning]") {
  // The pruned search's bounds must hold for every variant of a candidate: sequence
  // parallelism splits the elementwise kernels over tp, so a bound timed without it is no
  // bound for the plan with it; with keep = 1 that once dropped the fastest plans of q2 under
  // Megatron-LM (the band's plans are all kept whatever `keep` is, docs/ranking.md §2).
  for (const char* name : {"q2-llama-3.1-70b-64-h100.json", "q6-gpt-3-175b-1024-a100.json",
                           "llama3-70b-h100.json", "q1-llama-3.1-8b-one-node.json"}) {
    for (const Framework f : {Framework::any, Framework::megatron}) {
      INFO(name << ", " << to_string(f));
      Scenario s = load_scenario(
          read_json_file(std::string(PLANNER_SOURCE_DIR) + "/scenarios/" + name), name);
      s.constraints.framework = f;
      const Context ctx = make_context(s);
      SearchOptions one;
      one.keep = 1;
      SearchOptions ten;
      ten.keep = 10;
      const SearchResult a = search(ctx, one), b = search(ctx, ten);
      REQUIRE(a.found());
      REQUIRE(b.found());
      CHECK(describe(ctx, a.ranked.front().plan) == describe(ctx, b.ranked.front().plan));
      CHECK(a.tied == b.tied);
    }
  }
}

TEST_CASE("Every kept plan of the default search is launched as a whole by one framework",
          "[constraints]") {
  // Regression: the rank orders of a group were listed once, from its ZeRO-0 configuration,
  // so Megatron-LM's tp-pp-dp order (Megatron-LM has no ZeRO-3) was kept for the group's
  // ZeRO-3 variants, which only torchtitan launches, in its tp-cp-dp-pp order: Llama 3.1 70B
  // in FP8 on 512 H100 recommended tp 2 x pp 2 (in the node) x dp 128, ZeRO-3, an order no
  // framework runs with that stage.
  json doc = read_json_file(std::string(PLANNER_SOURCE_DIR) +
                            "/validation/dgxc-llama3.1-70b-fp8-512gpu.json");
  json scenario;
  for (const char* key : {"name", "model", "cluster", "workload"}) scenario[key] = doc.at(key);
  const Context ctx = make_context(load_scenario(scenario, "70b-fp8"));
  SearchOptions options;
  options.keep = 200;
  const SearchResult r = search(ctx, options);
  REQUIRE(r.found());
  int zero3 = 0;
  for (const Evaluation& e : r.ranked) {
    const Plan& p = e.plan;
    INFO(describe(ctx, p));
    zero3 += p.zero == 3;
    // Written out from each framework's rules (docs/constraints.md): Megatron-LM ZeRO-1 at most
    // in tp-cp-dp-pp or tp-pp-dp; torchtitan (FSDP2, ZeRO-3 or plain DDP) in tp-cp-dp-pp.
    const auto order = used_order(p);
    const bool titan_order = in_order(order, {"tp", "cp", "dp", "pp"});
    CHECK((megatron_launches(p) || (p.zero != 1 && p.zero != 2 && titan_order)));
  }
  CHECK(zero3 > 0);  // the case the defect was in is among the kept plans
}

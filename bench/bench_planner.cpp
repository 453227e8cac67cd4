// The planner's performance targets (docs/performance.md), as Google Benchmark programs:
//   evaluate/*   one configuration's ledger and time         target >= 10 million per second
//   search/*     the full search of scenarios/llama3-405b     target < 1 s on one core
//   plan_b/*     `planner plan scenarios/b.json` with its thresholds, target < 100 ms wall
//   sweep/*      a 1,000-point sweep of scenario A           target < 5 s on two cores
// Run: build-perf/bench/planner_bench --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true
// (docs/performance.md gives the exact commands and the figures).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "planner/io/context.hpp"
#include "planner/cli/cli.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/search/search.hpp"
#include "planner/explain/thresholds.hpp"

extern char** environ;

namespace {

using planner::Context;

std::string scenario_path(const char* name) {
  return std::string(PLANNER_SOURCE_DIR) + "/scenarios/" + name;
}

Context context_of(const char* name) {
  return planner::make_context(planner::load_scenario_file(scenario_path(name)));
}

/// The best `count` configurations of `ctx` (the winner's neighbourhood and beyond), so the
/// evaluation benchmark does not measure one branch-predicted path only.
std::vector<planner::Plan> sample_plans(const Context& ctx, std::size_t count) {
  planner::SearchOptions options;
  options.keep = count;
  options.prune = false;
  const planner::SearchResult r = planner::search(ctx, options);
  std::vector<planner::Plan> plans;
  for (const planner::Evaluation& e : r.ranked) plans.push_back(e.plan);
  return plans;
}

/// What the search does for each configuration it times: the ledger and the step time.
void evaluate_once(const Context& ctx, const planner::Plan& p) {
  const planner::MemoryLedger l = planner::memory_ledger(ctx, p);
  const planner::TrainingTime t =
      planner::training_time(ctx.model, ctx.cluster, p, ctx.flops_per_second);
  benchmark::DoNotOptimize(l);
  benchmark::DoNotOptimize(t);
}

// (1) One evaluation: the ledger and the time of a pinned plan, as the search computes them.
void evaluate_winner(benchmark::State& state) {
  const Context ctx = context_of("llama3-405b.json");
  planner::SearchOptions options;
  options.keep = 1;
  const planner::Plan p = planner::search(ctx, options).ranked.front().plan;
  for (auto _ : state) {
    evaluate_once(ctx, p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(evaluate_winner)->Name("evaluate/405b_winner");

void evaluate_mix(benchmark::State& state) {
  const Context ctx = context_of("llama3-405b.json");
  const std::vector<planner::Plan> plans = sample_plans(ctx, 4096);
  std::size_t i = 0;
  for (auto _ : state) {
    const planner::Plan& p = plans[i];
    i = i + 1 == plans.size() ? 0 : i + 1;
    evaluate_once(ctx, p);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["plans"] = static_cast<double>(plans.size());
}
BENCHMARK(evaluate_mix)->Name("evaluate/405b_mix");

// (2) The full search of the large scenario, top 5 as `planner plan` keeps them: pruned and
// exhaustive side by side, and the winner-only search that thresholds and sweeps run.
void search_405b(benchmark::State& state) {
  const Context ctx = context_of("llama3-405b.json");
  planner::SearchOptions options;
  options.keep = state.range(0) == 2 ? 1 : 5;
  options.prune = state.range(0) != 0;
  options.accounting = state.range(0) != 2;
  planner::SearchResult r;
  for (auto _ : state) {
    r = planner::search(ctx, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["timed"] = static_cast<double>(r.timed);
}
// mode 1: pruned (the default); 0: exhaustive; 2: winner only (keep 1, no accounting).
BENCHMARK(search_405b)->Name("search/405b")->ArgName("mode")->Arg(1)->Arg(0)->Arg(2)
    ->Unit(benchmark::kMillisecond);

/// Runs `binary args...` with standard output to /dev/null and waits for it; false unless it
/// exits with status 0.
bool run_process(const std::string& binary, const std::vector<std::string>& args) {
  std::vector<std::string> all{binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int started = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return false;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// A whole process of `binary` (this build's planner, or a baseline's for comparison).
void process(benchmark::State& state, const std::string& binary,
             const std::vector<std::string>& args) {
  for (auto _ : state) {
    if (!run_process(binary, args)) {
      state.SkipWithError(("failed: " + binary).c_str());
      break;
    }
  }
}

// (3) `planner plan scenarios/b.json` with its thresholds: the whole process (posix_spawn of
// the built binary, output to /dev/null) and run_cli in-process; the thresholds alone on 1
// and on 2 threads.
const std::vector<std::string>& plan_b_args() {
  static const std::vector<std::string> args{"plan", scenario_path("b.json")};
  return args;
}

void plan_b_process(benchmark::State& state) { process(state, PLANNER_BINARY, plan_b_args()); }
BENCHMARK(plan_b_process)->Name("plan_b/process")->Unit(benchmark::kMillisecond)->UseRealTime();

void plan_b_in_process(benchmark::State& state) {
  for (auto _ : state) {
    std::ostringstream out, err;
    if (planner::run_cli(plan_b_args(), out, err) != 0) {
      state.SkipWithError("planner plan scenarios/b.json failed");
      break;
    }
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(plan_b_in_process)->Name("plan_b/run_cli")->Unit(benchmark::kMillisecond)->UseRealTime();

void thresholds_b(benchmark::State& state) {
  const Context ctx = context_of("b.json");
  const planner::Plan best = *planner::recommend(ctx);
  const auto threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(planner::find_thresholds(ctx, best, threads));
  }
}
BENCHMARK(thresholds_b)->Name("plan_b/thresholds")->ArgName("threads")->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// (4) 1,000 points: scenario A over inter-node bandwidth (40 values, 5 to 400 GB/s, log) ×
// sequence length (25 values, 1024 to 16384), in-process on 1 and 2 threads, and as a process.
std::vector<std::string> sweep_args(int threads) {
  return {"sweep",
          scenario_path("a.json"),
          "--vary",
          "/cluster/inter_node/bandwidth=5GB/s..400GB/s:40log",
          "--vary",
          "/model/seq_len=1024..16384:25",
          "--no-progress",
          "--threads",
          std::to_string(threads)};
}

void sweep_a(benchmark::State& state) {
  const std::vector<std::string> args = sweep_args(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::ostringstream out, err;
    if (planner::run_cli(args, out, err) != 0) {
      state.SkipWithError("planner sweep failed");
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["points_per_s"] = benchmark::Counter(
      1000.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(sweep_a)->Name("sweep/a_1000")->ArgName("threads")->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseRealTime();

void sweep_a_process(benchmark::State& state) { process(state, PLANNER_BINARY, sweep_args(2)); }
BENCHMARK(sweep_a_process)->Name("sweep/a_1000_process")->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

// With PLANNER_BASELINE_BINARY=/path/to/an/older/planner, the process benchmarks also run that
// binary in the same run, so before/after ratios are measured side by side.
int main(int argc, char** argv) {
  if (const char* baseline = std::getenv("PLANNER_BASELINE_BINARY"); baseline && *baseline) {
    const std::string binary = baseline;
    benchmark::RegisterBenchmark("plan_b/process_baseline",
                                 [binary](benchmark::State& state) {
                                   process(state, binary, plan_b_args());
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark("sweep/a_1000_process_baseline",
                                 [binary](benchmark::State& state) {
                                   process(state, binary, sweep_args(2));
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(2);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

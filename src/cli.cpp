#include "planner/cli.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <ostream>

#include "planner/error.hpp"
#include "planner/fd_output.hpp"
#include "planner/one_line.hpp"
#include "planner/plausibility.hpp"
#include "planner/quantity.hpp"
#include "planner/report.hpp"
#include "planner/scenario_json.hpp"
#include "planner/sweep.hpp"

namespace planner {

namespace {

using nlohmann::json;

/// Longest argument-parser message printed: CLI11's messages quote the offending argument
/// whole; its own text is under 100 characters.
constexpr std::size_t parse_error_limit = 200;

void warn_implausible(const Scenario& s, std::ostream& err) {
  for (const std::string& w : plausibility_warnings(s)) err << "planner: warning: " << w << "\n";
}

/// Loads a scenario file ("-" = standard input) with the --set overrides applied first.
Scenario load_with_overrides(const std::string& path, const std::vector<std::string>& sets,
                             std::ostream& err) {
  json doc = read_json_file(path);
  for (const std::string& s : sets) apply_override(doc, s);
  Scenario s = load_scenario(doc, file_origin(path));
  warn_implausible(s, err);
  return s;
}

/// The same for the commands that search: a pinned plan that no longer fits is dropped with a
/// warning on standard error.
Scenario load_for_search(const std::string& path, const std::vector<std::string>& sets,
                         std::ostream& err) {
  json doc = read_json_file(path);
  for (const std::string& s : sets) apply_override(doc, s);
  std::string warning;
  Scenario s = load_scenario_for_search(doc, file_origin(path), warning);
  if (!warning.empty()) err << "planner: warning: " << warning << "\n";
  warn_implausible(s, err);
  return s;
}

void add_format(CLI::App* app, std::string& format, std::vector<std::string> allowed) {
  app->add_option("--format", format, "Output format")
      ->check(CLI::IsMember(allowed))
      ->default_val(format);
}

void add_sets(CLI::App* app, std::vector<std::string>& sets) {
  app->add_option("--set", sets,
                  "Override a scenario value: JSON-POINTER=VALUE, e.g. "
                  "/cluster/inter_node/bandwidth=25GB/s (repeatable)");
}

struct PlanArgs {
  std::string file;
  std::string format = "text";
  std::size_t top = 5;
  bool no_thresholds = false;
  std::vector<std::string> sets;
};

int run_plan(const PlanArgs& a, std::ostream& out, std::ostream& err) {
  const Scenario s = load_for_search(a.file, a.sets, err);
  const PlanReport r = make_plan_report(s, a.top, !a.no_thresholds && a.format != "csv");
  if (a.format == "json") {
    out << dump_json(report_json(r));
  } else if (a.format == "csv") {
    out << report_csv(r);
  } else {
    out << report_text(r);
  }
  if (!r.result.found()) return exit_no;
  if (s.workload.kind == WorkloadKind::serving &&
      r.result.ranked.front().serving.slo_margin_seconds < 0) {
    return exit_no;
  }
  return exit_ok;
}

struct MemoryArgs {
  std::string file;
  std::string format = "text";
  std::vector<std::string> sets;
  std::optional<std::int64_t> dp, tp, pp, cp, micro_batch, grad_accum;
  std::optional<int> zero;
  std::optional<std::string> recompute, flash, sp, placement;
};

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::none;
  if (text == "selective") return Recompute::selective;
  return Recompute::full;
}

Placement parse_placement(const std::string& text) {
  Placement p = default_placement;
  std::vector<Axis> axes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    if (name == "tp") axes.push_back(Axis::tp);
    else if (name == "cp") axes.push_back(Axis::cp);
    else if (name == "dp") axes.push_back(Axis::dp);
    else if (name == "pp") axes.push_back(Axis::pp);
    else throw InputError("--placement", "", fmt::format("unknown axis '{}'; expected a "
                                                         "permutation of tp,cp,dp,pp", name));
    start = comma + 1;
  }
  std::vector<Axis> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<Axis>{Axis::tp, Axis::cp, Axis::dp, Axis::pp}) {
    throw InputError("--placement", "", "expected each of tp, cp, dp, pp exactly once, e.g. "
                                        "tp,cp,dp,pp");
  }
  std::copy(axes.begin(), axes.end(), p.begin());
  return p;
}

/// Range check of an integer flag before any arithmetic on it, with the loader's limits for
/// the same plan field (docs/errors.md §Limits), so that no product below can overflow and no
/// division sees a zero.
void check_flag(const std::optional<std::int64_t>& value, const char* field, int limit_log2) {
  if (!value) return;
  const std::int64_t limit = std::int64_t{1} << limit_log2;
  if (*value < 1) {
    throw InputError("command line", fmt::format("/plan/{}", field),
                     fmt::format("expected a positive integer, got {}", *value));
  }
  if (*value > limit) {
    throw InputError("command line", fmt::format("/plan/{}", field),
                     fmt::format("expected a positive integer no greater than {} (2^{}), got {}",
                                 limit, limit_log2, *value));
  }
}

/// The plan `planner memory` evaluates: the pinned plan with the flags applied; degrees not
/// given fill the world (dp = GPUs / (tp·pp·cp)) and the accumulation fills the batch target.
Plan memory_plan(const Scenario& s, const MemoryArgs& a) {
  check_flag(a.dp, "dp", 24);
  check_flag(a.tp, "tp", 24);
  check_flag(a.pp, "pp", 24);
  check_flag(a.cp, "cp", 24);
  check_flag(a.micro_batch, "micro_batch", 16);
  check_flag(a.grad_accum, "grad_accum", 16);
  const bool pinned = s.plan.has_value();
  const bool any_flag = a.dp || a.tp || a.pp || a.cp || a.zero || a.recompute || a.flash ||
                        a.sp || a.micro_batch || a.grad_accum || a.placement;
  if (!pinned && !any_flag) {
    throw InputError(s.origin, "/plan",
                     "no plan to evaluate: pin one under \"plan\" or pass --tp/--pp/--cp/--dp "
                     "(or run 'planner plan' to search)");
  }
  Plan p = pinned ? *s.plan : Plan{};
  if (!pinned) {
    p.micro_batch = s.workload.kind == WorkloadKind::training ? s.workload.training.micro_batch
                                                              : s.workload.serving.batch;
  }
  if (a.tp) p.tp = *a.tp;
  if (a.pp) p.pp = *a.pp;
  if (a.cp) p.cp = *a.cp;
  if (a.dp) {
    p.dp = *a.dp;
  } else if (a.tp || a.pp || a.cp || !pinned) {
    // Each degree is at most 2^24, so tp·pp·cp < 2^72 may overflow: a product past 2^63
    // leaves dp = 1, and validate_plan reports the mismatch with the world size.
    std::int64_t model = 0;
    const bool overflow = __builtin_mul_overflow(p.tp, p.pp, &model) ||
                          __builtin_mul_overflow(model, p.cp, &model);
    p.dp = overflow ? 1 : std::max<std::int64_t>(1, world_size(s.cluster) / model);
  }
  if (a.zero) p.zero = *a.zero;
  if (a.recompute) p.recompute = parse_recompute(*a.recompute);
  if (a.flash) p.flash_attention = *a.flash == "on";
  if (a.sp) p.sequence_parallel = *a.sp == "on";
  if (a.micro_batch) p.micro_batch = *a.micro_batch;
  if (a.placement) p.placement = parse_placement(*a.placement);
  if (a.grad_accum) {
    p.grad_accum = *a.grad_accum;
  } else if (s.workload.kind == WorkloadKind::training && (!pinned || a.dp || a.tp || a.pp ||
                                                           a.cp || a.micro_batch)) {
    const Context ctx = make_context(s);
    const double per_replica = static_cast<double>(sequences_per_replica(ctx, p.dp));
    p.grad_accum = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(per_replica / static_cast<double>(p.micro_batch))));
  }
  if (s.workload.kind == WorkloadKind::serving) p.grad_accum = 1;
  validate_plan(s, p, "command line", "/plan");
  return p;
}

int run_memory(const MemoryArgs& a, std::ostream& out, std::ostream& err) {
  const Scenario s = load_with_overrides(a.file, a.sets, err);
  const Plan p = memory_plan(s, a);
  const Context ctx = make_context(s);
  const Evaluation e = evaluate(ctx, p);
  if (a.format == "json") {
    out << dump_json(evaluation_report_json(s, ctx, e));
  } else if (a.format == "csv") {
    out << evaluation_report_csv(ctx, e);
  } else {
    out << evaluation_report_text(s, ctx, e);
  }
  return e.fits() ? exit_ok : exit_no;
}

struct CollectiveArgs {
  std::int64_t gpus = 0;
  double bandwidth_gb_per_s = 0;
  double latency_us = 0;
  double bytes = 0;
  std::string op = "all-reduce";
  bool across_nodes = false;
  std::string format = "text";
};

Collective parse_collective(const std::string& s) {
  if (s == "all-gather") return Collective::all_gather;
  if (s == "reduce-scatter") return Collective::reduce_scatter;
  if (s == "all-to-all") return Collective::all_to_all;
  if (s == "point-to-point") return Collective::point_to_point;
  return Collective::all_reduce;
}

int run_collective(const CollectiveArgs& a, std::ostream& out) {
  auto positive = [](double v, const char* flag) {
    if (!(v > 0) || !std::isfinite(v) || v > 1e18) {
      throw InputError("command line", "", fmt::format("{} must be a positive number, got {:g}",
                                                       flag, v));
    }
  };
  if (a.gpus < 1 || a.gpus > (std::int64_t{1} << 24)) {
    throw InputError("command line", "", fmt::format("--gpus must be between 1 and 16777216, "
                                                     "got {}", a.gpus));
  }
  positive(a.bandwidth_gb_per_s, "--bw");
  positive(a.bytes, "--bytes");
  // The loader's range for a link, 1 B/s to 1e18 B/s: below it the wire time of a large
  // message overflows to infinity.
  if (a.bandwidth_gb_per_s < 1e-9 || a.bandwidth_gb_per_s > 1e9) {
    throw InputError("command line", "",
                     fmt::format("--bw must be from 1e-09 to 1e+09 GB/s (1 B/s to 1e18 B/s), "
                                 "got {:g}",
                                 a.bandwidth_gb_per_s));
  }
  if (!(a.latency_us >= 0) || !std::isfinite(a.latency_us) || a.latency_us > 1e12) {
    throw InputError("command line", "", fmt::format("--latency must be >= 0 microseconds, got "
                                                     "{:g}", a.latency_us));
  }
  const Tier tier{a.bandwidth_gb_per_s * 1e9, a.latency_us * 1e-6};
  const Collective op = parse_collective(a.op);
  const bool inside = !a.across_nodes;
  const CollectiveCost best = cheapest_collective(op, a.gpus, a.bytes, tier, inside);
  json algorithms = json::array();
  std::string lines;
  for (Algorithm alg : all_algorithms) {
    if (!available(op, alg, inside)) continue;
    const CollectiveCost c = collective_cost(op, alg, a.gpus, a.bytes, tier);
    algorithms.push_back(json{{"algorithm", std::string(to_string(alg))},
                              {"seconds", c.seconds()},
                              {"latency_seconds", c.latency_seconds},
                              {"wire_seconds", c.wire_seconds}});
    // The worked solution's tools/collective_cost.py line, for each algorithm.
    lines += fmt::format("{:<9} single message {:.2f} MiB: {:.3f} ms (latency {:.1f} us + wire "
                         "{:.3f} ms){}\n",
                         to_string(alg), a.bytes / mib, c.seconds() * 1e3, c.latency_seconds * 1e6,
                         c.wire_seconds * 1e3, alg == best.algorithm ? "  <- cheapest" : "");
  }
  if (a.format == "json") {
    out << dump_json(json{{"schema_version", schema_version},
                          {"collective", std::string(to_string(op))},
                          {"gpus", a.gpus},
                          {"bytes", a.bytes},
                          {"bandwidth", tier.bandwidth_bytes_per_second},
                          {"latency", tier.latency_seconds},
                          {"inside_node", inside},
                          {"cheapest", std::string(to_string(best.algorithm))},
                          {"algorithms", algorithms}});
  } else {
    out << fmt::format("{} over {} GPUs at {:g} GB/s, {:g} us per hop{}:\n", to_string(op), a.gpus,
                       a.bandwidth_gb_per_s, a.latency_us,
                       inside ? " (inside a node)" : " (across nodes)");
    out << lines;
  }
  return exit_ok;
}

/// Value at a JSON pointer, or null when the pointer does not resolve.
std::optional<double> number_at(const json& doc, const std::string& pointer) {
  try {
    const json& v = doc.at(json::json_pointer(pointer));
    if (v.is_number()) return v.get<double>();
    if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  } catch (const json::exception&) {
  }
  return std::nullopt;
}

std::vector<std::string> check_expectations(const Scenario& s, const PlanReport& r) {
  std::vector<std::string> drift;
  const Expect& x = s.expect;
  if (!r.result.found()) {
    drift.push_back("no configuration fits");
    return drift;
  }
  const Plan& p = r.result.ranked.front().plan;
  auto field = [&](const char* name, const auto& expected, const auto& got) {
    if (expected && *expected != got) {
      drift.push_back(fmt::format("/best/{}: expected {}, got {}", name, *expected, got));
    }
  };
  field("dp", x.dp, p.dp);
  field("tp", x.tp, p.tp);
  field("pp", x.pp, p.pp);
  field("cp", x.cp, p.cp);
  field("zero", x.zero, p.zero);
  field("micro_batch", x.micro_batch, p.micro_batch);
  field("grad_accum", x.grad_accum, p.grad_accum);
  field("sequences_per_replica", x.sequences_per_replica, p.micro_batch * p.grad_accum);
  if (x.recompute && *x.recompute != p.recompute) {
    drift.push_back(fmt::format("/best/recompute: expected {}, got {}", to_string(*x.recompute),
                                to_string(p.recompute)));
  }
  field("flash_attention", x.flash_attention, p.flash_attention);
  field("sequence_parallel", x.sequence_parallel, p.sequence_parallel);
  if (x.tp_tier) {
    const std::string got = inside_node(p, s.cluster, {Axis::tp}) ? "intra_node" : "inter_node";
    if (*x.tp_tier != got) {
      drift.push_back(fmt::format("/best/placement/tp: expected {}, got {}", *x.tp_tier, got));
    }
  }
  if (!x.figures.empty()) {
    const json doc = report_json(r);
    for (const ExpectedFigure& f : x.figures) {
      const std::optional<double> got = number_at(doc, f.pointer);
      if (!got) {
        drift.push_back(fmt::format("{}: expected {:.6g}, but the output has no number there",
                                    f.pointer, f.value));
      } else if (std::abs(*got - f.value) > f.relative_tolerance * std::abs(f.value)) {
        drift.push_back(fmt::format("{}: expected {:.6g} (within {:g} %), got {:.6g}", f.pointer,
                                    f.value, 100 * f.relative_tolerance, *got));
      }
    }
  }
  return drift;
}

int run_check(const std::vector<std::string>& files, const std::vector<std::string>& sets,
              std::ostream& out, std::ostream& err) {
  int status = exit_ok;
  for (const std::string& file : files) {
    const Scenario s = load_for_search(file, sets, err);
    if (s.expect.empty()) {
      throw InputError(s.origin, "/expect", "nothing to check: add an \"expect\" object");
    }
    bool wants_thresholds = false;
    for (const ExpectedFigure& f : s.expect.figures) {
      wants_thresholds = wants_thresholds || f.pointer.rfind("/thresholds", 0) == 0;
    }
    const PlanReport r = make_plan_report(s, 1, wants_thresholds);
    const std::vector<std::string> drift = check_expectations(s, r);
    if (drift.empty()) {
      out << fmt::format("ok      {}\n", s.origin);
    } else {
      status = exit_no;
      out << fmt::format("drift   {}\n", s.origin);
      for (const std::string& d : drift) out << "        " << d << "\n";
    }
  }
  return status;
}

}  // namespace

namespace {

/// The command itself; run_cli adds the check of the output.
int dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"planner: parallelism planner for large-model training and serving.\n"
               "Exit codes: 0 ok, 1 the answer is no (nothing fits, SLO missed, check drift), "
               "2 bad input or usage, 3 internal error, 4 cannot write output."};
  app.name("planner");
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version");

  PlanArgs plan_args;
  CLI::App* plan = app.add_subcommand("plan", "Search every configuration, rank, explain the best");
  plan->add_option("scenario", plan_args.file, "Scenario JSON file ('-' for standard input)")->required();
  add_format(plan, plan_args.format, {"text", "json", "csv"});
  plan->add_option("--top", plan_args.top, "How many ranked plans to report")->default_val(5)
      ->check(CLI::Range(1, 1000));
  plan->add_flag("--no-thresholds", plan_args.no_thresholds,
                 "Skip the 'what would change the answer' search");
  add_sets(plan, plan_args.sets);

  MemoryArgs mem;
  CLI::App* memory = app.add_subcommand("memory", "Memory ledger and time of one pinned plan");
  memory->add_option("scenario", mem.file, "Scenario JSON file ('-' for standard input)")->required();
  add_format(memory, mem.format, {"text", "json", "csv"});
  add_sets(memory, mem.sets);
  memory->add_option("--dp", mem.dp, "Data-parallel degree (default: fill the GPUs)");
  memory->add_option("--tp", mem.tp, "Tensor-parallel degree");
  memory->add_option("--pp", mem.pp, "Pipeline stages");
  memory->add_option("--cp", mem.cp, "Context-parallel degree");
  memory->add_option("--zero", mem.zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  memory->add_option("--recompute", mem.recompute, "none, selective or full")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  memory->add_option("--flash", mem.flash, "Tiled attention: on or off")->check(CLI::IsMember({"on", "off"}));
  memory->add_option("--sp", mem.sp, "Sequence parallelism: on or off")->check(CLI::IsMember({"on", "off"}));
  memory->add_option("--micro-batch", mem.micro_batch, "Sequences per micro-batch");
  memory->add_option("--grad-accum", mem.grad_accum, "Micro-batches per step (default: fill the batch target)");
  memory->add_option("--placement", mem.placement, "Axis order, innermost first, e.g. tp,cp,dp,pp");

  CollectiveArgs coll;
  CLI::App* collective = app.add_subcommand("collective", "Cost of one collective under each algorithm");
  collective->add_option("--gpus", coll.gpus, "Ranks in the group")->required();
  collective->add_option("--bw", coll.bandwidth_gb_per_s, "Bandwidth per GPU, GB/s")->required();
  collective->add_option("--latency", coll.latency_us, "Latency per hop, microseconds")->required();
  collective->add_option("--bytes", coll.bytes, "Message size in bytes")->required();
  collective->add_option("--op", coll.op, "all-reduce, all-gather, reduce-scatter, all-to-all, point-to-point")
      ->check(CLI::IsMember({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "point-to-point"}))
      ->default_val("all-reduce");
  collective->add_flag("--across-nodes", coll.across_nodes, "The group spans nodes (no one-shot)");
  add_format(collective, coll.format, {"text", "json"});

  std::vector<std::string> check_files, check_sets;
  CLI::App* check = app.add_subcommand("check", "Exit 1 when a scenario's \"expect\" no longer holds");
  check->add_option("scenarios", check_files, "Scenario JSON files")->required();
  add_sets(check, check_sets);

  SweepArgs sweep_args;
  CLI::App* sweep = app.add_subcommand("sweep", "One full plan per point of a grid of inputs");
  sweep->add_option("scenario", sweep_args.file, "Scenario JSON file ('-' for standard input)")->required();
  sweep->add_option("--vary", sweep_args.vary,
                    "POINTER=V1,V2,... or POINTER=START..STOP:STEPS[log] (repeatable)")->required();
  add_format(sweep, sweep_args.format, {"csv", "jsonl"});
  add_sets(sweep, sweep_args.sets);
  sweep->add_option("--threads", sweep_args.threads, "Worker threads (default: all cores)");
  sweep->add_option("--shard", sweep_args.shard, "Run slice K of N of the grid: K/N (1-based)");
  sweep->add_flag("--no-progress", sweep_args.no_progress, "No progress bar on standard error");

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return exit_ok;
  } catch (const CLI::ParseError& e) {
    // The parser echoes arguments as given: escaped and cut like any echoed value.
    err << "planner: error: " << one_line(e.what(), parse_error_limit) << "\n";
    err << "Run 'planner --help' for usage.\n";
    return exit_bad_input;
  }
  try {
    if (version) {
      out << "planner " << PLANNER_VERSION << "\n";
      return exit_ok;
    }
    if (plan->parsed()) return run_plan(plan_args, out, err);
    if (memory->parsed()) return run_memory(mem, out, err);
    if (collective->parsed()) return run_collective(coll, out);
    if (check->parsed()) return run_check(check_files, check_sets, out, err);
    if (sweep->parsed()) return run_sweep(sweep_args, out, err);
    out << app.help();
    return exit_ok;
  } catch (const InputError& e) {
    err << "planner: error: " << e.what() << "\n";
    return exit_bad_input;
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const int code = dispatch(args, out, err);
  // Every command's output is checked once it is complete (sweep also checks as it streams):
  // a failed write or flush is exit 4, never success (docs/output.md §Exit codes).
  if (out.flush()) return code;
  err << "planner: error: cannot write output: " << write_failure(out) << "\n";
  return exit_write_failed;
}

}  // namespace planner

// `planner calibrate`: reads the measurement files, runs the calibration, prints the report
// and writes the profile.
#include "planner/calibrate/command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <ostream>

#include "planner/calibrate/calibrate.hpp"
#include "planner/error.hpp"
#include "planner/scenario_json.hpp"

namespace planner::calibrate {

CLI::App* add_command(CLI::App& app, CommandArgs& a) {
  CLI::App* c = app.add_subcommand(
      "calibrate", "Fit the cluster's constants from nccl-tests, GEMM and step-time measurements");
  c->add_option("--nccl", a.nccl, "nccl-tests output file (repeatable; one node: intra-node "
                                  "tier, several nodes: inter-node tier)");
  c->add_option("--gemm", a.gemm, "GEMM CSV from tools/gemm_bench.py (m,n,k,dtype,seconds)");
  c->add_option("--run", a.runs, "SCENARIO=LOG: a short training run's scenario (with its "
                                 "pinned plan) and its Megatron-LM, torchtitan or CSV step log "
                                 "(repeatable)");
  c->add_option("--target", a.target, "Full-scale scenario to predict with the fitted constants");
  c->add_option("--profile-out", a.profile_out, "Write the calibrated profile (JSON) here");
  c->add_option("--warmup-steps", a.warmup_steps, "Logged steps dropped at the start of each run")
      ->default_val(1)
      ->check(CLI::Range(0, 1000000));
  c->add_option("--format", a.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val(a.format);
  return c;
}

int run_command(const CommandArgs& a, std::ostream& out) {
  if (a.nccl.empty() && a.gemm.empty() && a.runs.empty()) {
    throw InputError("command line", "", "no measurements given, expected at least one of "
                                         "--nccl, --gemm, --run");
  }
  Inputs in;
  in.warmup_steps = a.warmup_steps;
  for (const std::string& f : a.nccl) in.nccl.push_back(parse_nccl_tests(read_text_file(f), f));
  for (const std::string& f : a.gemm) in.gemm.push_back(parse_gemm_csv(read_text_file(f), f));
  for (const std::string& r : a.runs) {
    const std::size_t eq = r.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == r.size()) {
      throw InputError("--run", "", fmt::format("'{}' is not SCENARIO=LOG, expected e.g. "
                                                "--run small.json=train.log", r));
    }
    const std::string scenario = r.substr(0, eq), log = r.substr(eq + 1);
    in.runs.push_back({read_json_file(scenario), file_origin(scenario),
                       parse_step_log(read_text_file(log), log)});
  }
  if (!a.target.empty()) {
    in.target = read_json_file(a.target);
    in.target_origin = file_origin(a.target);
  }
  const Calibration c = calibrate(in);
  if (!a.profile_out.empty()) {
    std::ofstream f(a.profile_out);
    f << profile_json(c).dump(2) << "\n";
    if (!f) {
      throw InputError(a.profile_out, "", "cannot write the profile, expected a writable path");
    }
  }
  if (a.format == "json") {
    out << calibration_json(c).dump(2) << "\n";
  } else {
    out << calibration_text(c);
  }
  return 0;
}

}  // namespace planner::calibrate

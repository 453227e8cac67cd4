// `planner calibrate` (docs/calibrate.md): reads the measurement files, runs the calibration,
// prints the report and writes the profile.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <memory>
#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/calibrate/calibrate.hpp"
#include "planner/cli/cli.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"

namespace planner::cli {

namespace {

struct CalibrateArgs {
  std::vector<std::string> nccl;  ///< nccl-tests output files
  std::vector<std::string> gemm;  ///< GEMM CSV files
  std::vector<std::string> runs;  ///< SCENARIO=LOG pairs
  std::string target;             ///< full-scale scenario ("" for none)
  std::string profile_out;        ///< where to write the profile ("" for nowhere)
  std::string format = "text";
  std::size_t warmup_steps = 1;
};

calibrate::Inputs read_inputs(const CalibrateArgs& a) {
  calibrate::Inputs in;
  in.warmup_steps = a.warmup_steps;
  for (const std::string& f : a.nccl) {
    in.nccl.push_back(calibrate::parse_nccl_tests(calibrate::read_text_file(f), f));
  }
  for (const std::string& f : a.gemm) {
    in.gemm.push_back(calibrate::parse_gemm_csv(calibrate::read_text_file(f), f));
  }
  for (const std::string& r : a.runs) {
    const std::size_t eq = r.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == r.size()) {
      throw InputError("--run", "", fmt::format("'{}' is not SCENARIO=LOG, expected e.g. "
                                                "--run small.json=train.log", r));
    }
    const std::string scenario = r.substr(0, eq), log = r.substr(eq + 1);
    in.runs.push_back({read_json_file(scenario), file_origin(scenario),
                       calibrate::parse_step_log(calibrate::read_text_file(log), log)});
  }
  if (!a.target.empty()) {
    in.target = read_json_file(a.target);
    in.target_origin = file_origin(a.target);
  }
  return in;
}

int run_calibrate(const CalibrateArgs& a, std::ostream& out, std::ostream& err) {
  if (a.nccl.empty() && a.gemm.empty() && a.runs.empty()) {
    throw InputError("command line", "", "no measurements given, expected at least one of "
                                         "--nccl, --gemm, --run");
  }
  const calibrate::Calibration c = calibrate::calibrate(read_inputs(a));
  if (!a.profile_out.empty()) {
    errno = 0;
    std::ofstream f(a.profile_out);
    f << dump_json(calibrate::profile_json(c));
    f.flush();
    // An output that cannot be written is exit 4 like any other (docs/output.md §Exit codes),
    // not bad input: `--profile-out /dev/full` said exit 2 (issue 32).
    if (!f) {
      err << "planner: error: cannot write the profile to " << one_line(a.profile_out, 200)
          << ": " << (errno != 0 ? std::strerror(errno) : "write failed") << "\n";
      return exit_write_failed;
    }
  }
  if (a.format == "json") {
    out << dump_json(calibrate::calibration_json(c));
  } else {
    out << calibrate::calibration_text(c);
  }
  return exit_ok;
}

}  // namespace

Runner add_calibrate(CLI::App& sub) {
  auto a = std::make_shared<CalibrateArgs>();
  sub.add_option("--nccl", a->nccl, "nccl-tests output file (repeatable; one node: intra-node "
                                    "tier, several nodes: inter-node tier)");
  sub.add_option("--gemm", a->gemm, "GEMM CSV from tools/gemm_bench.py (m,n,k,dtype,seconds)");
  sub.add_option("--run", a->runs, "SCENARIO=LOG: a short training run's scenario (with its "
                                   "pinned plan) and its Megatron-LM, torchtitan or CSV step "
                                   "log (repeatable)");
  sub.add_option("--target", a->target, "Full-scale scenario to predict with the fitted constants");
  sub.add_option("--profile-out", a->profile_out, "Write the calibrated profile (JSON) here");
  sub.add_option("--warmup-steps", a->warmup_steps, "Logged steps dropped at the start of each run")
      ->default_val(1)
      ->check(CLI::Range(0, 1000000));
  add_format(sub, a->format, {"text", "json"});
  return [a](std::ostream& out, std::ostream& err) { return run_calibrate(*a, out, err); };
}

}  // namespace planner::cli

#include "planner/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <ostream>

#include "command.hpp"
#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/cli/fd_output.hpp"

namespace planner {

namespace cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"plan", "Search every configuration, rank, explain the best", add_plan},
      {"memory", "Memory ledger and time of one pinned plan", add_memory},
      {"collective", "Cost of one collective under each algorithm", add_collective},
      {"check", "Exit 1 when a scenario's \"expect\" no longer holds", add_check},
      {"sweep", "One full plan per point of a grid of inputs", add_sweep},
      {"scaling", "Speedup as data-parallel replicas are added; restart budget", add_scaling},
      {"validate", "Published runs: predicted against measured, median and max error",
       add_validate},
      {"calibrate", "Fit the cluster's constants from nccl-tests, GEMM and step-time "
                    "measurements; predict a target with a band", add_calibrate},
      {"list", "List the model presets or catalog GPUs a scenario can name", add_list},
      {"import", "A Hugging Face config.json as a scenario's model object", add_import},
      {"export", "The best plan a framework can launch, as its arguments or config", add_export},
  };
  return table;
}

}  // namespace cli

namespace {

/// Longest argument-parser message printed: CLI11's messages quote the offending argument
/// whole; its own text is under 100 characters.
constexpr std::size_t parse_error_limit = 200;

/// An option given with an empty value (`--framework ''`, `--fix ''`) was accepted as if it
/// were absent (issue 32): every option that takes a value needs a non-empty one.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_items_expected_min() == 0) continue;  // absent, or a flag
    for (const std::string& value : opt->results()) {
      if (!value.empty()) continue;
      const std::string name = opt->get_name().empty() ? "argument" : opt->get_name();
      throw InputError(name, "", "empty value; give one, or leave the option out");
    }
  }
}

/// The command itself; run_cli adds the check of the output.
int dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"planner: parallelism planner for large-model training and serving.\n"
               "Exit codes: 0 ok, 1 the answer is no (nothing fits, SLO missed, check drift), "
               "2 bad input or usage, 3 internal error, 4 cannot write output."};
  app.name("planner");
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version");

  struct Registered {
    CLI::App* sub;
    cli::Runner run;
  };
  std::vector<Registered> registered;
  for (const cli::Command& c : cli::commands()) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.summary));
    registered.push_back({sub, c.add(*sub)});
  }

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
    for (const Registered& r : registered) {
      if (!r.sub->parsed()) continue;
      refuse_empty_values(*r.sub);
      return r.run(out, err);
    }
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

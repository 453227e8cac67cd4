#include "planner/report/runbook.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/explain/restart_budget.hpp"
#include "planner/io/context.hpp"
#include "planner/io/text.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/explain_text.hpp"
#include "planner/report/headline.hpp"
#include "planner/report/report.hpp"
#include "planner/report/scaling_report.hpp"
#include "planner/search/search.hpp"

namespace planner {

namespace {

/// Twice the longest wait a healthy collective can see (our rule, docs/resilience.md §8): the
/// margin between a slow rank and a hung one.
constexpr double timeout_margin = 2.0;

std::string row(std::string_view what, double seconds, std::string_view note) {
  return fmt::format("| {} | {} | {} |\n", what, seconds_text(seconds), note);
}

}  // namespace

Fallback node_loss_fallback(const Scenario& s) {
  Fallback f;
  f.nodes = s.cluster.nodes - 1;
  if (f.nodes < 1) return f;
  Scenario smaller = s;
  smaller.cluster.nodes = f.nodes;
  smaller.plan.reset();
  f.context = make_context(smaller);
  SearchOptions options;
  options.keep = 1;
  options.accounting = false;
  const Recommendation rec = trusted_search(f.context, options);
  if (rec.result.found()) f.plan = rec.result.ranked.front();
  return f;
}

std::string runbook_markdown(const Scenario& s, const Context& ctx, const Evaluation& e,
                             const Fallback& fallback) {
  const TrainingTime& t = e.training;
  const Plan& p = e.plan;
  const std::optional<QuotedAccuracy> quoted = plan_accuracy(ctx, p);
  const ModelAccuracy& accuracy =
      quoted ? quoted->row : nearest_accuracy(regime_of(ctx.model, ctx.cluster, p));
  const double band = accuracy.max_abs_error;
  std::string out = fmt::format("# Runbook: {}\n\n", scenario_title(s));
  out += fmt::format("Plan: {} on {} GPUs ({} nodes).\n\nPredicted: {}.\n", describe(ctx, p),
                     world_size(ctx.cluster), ctx.cluster.nodes, headline(ctx, e));
  out += fmt::format(
      "The time model's worst error on published runs of this regime ({}) is {:.1f} %: a "
      "measured step outside {} to {} is more than the model explains.\n",
      regime_text(accuracy.regime), 100.0 * band, seconds_text(t.step_seconds * (1.0 - band)),
      seconds_text(t.step_seconds * (1.0 + band)));

  out += "\n## Per-rank timings to log\n\nEvery rank, every step; the model's figure for the "
         "largest pipeline stage:\n\n| what | predicted | reading it |\n|---|---|---|\n";
  out += "| data loading (next batch ready) | 0 | not modelled: the loader is assumed hidden; a "
         "rank above a few ms is starved |\n";
  out += row("forward, one micro-batch", t.dp.forward_window_seconds,
             "a rank much slower than its peers is a straggler: every collective waits for it");
  out += row("backward, one micro-batch", t.dp.backward_window_seconds, "as for the forward");
  if (t.tp_messages > 0) {
    out += row(fmt::format("tp {} (each of {} per micro-batch)",
                           to_string(Collective::all_reduce), t.tp_messages),
               t.tp_collective.seconds(), "on the critical path of every layer");
  }
  if (p.cp > 1) out += row("cp ring step (K/V block)", t.cp_step.seconds(), "hidden by attention");
  if (p.pp > 1) out += row("pp stage-boundary sends, per micro-batch", t.pp_seconds, "");
  if (t.ep.all_to_alls > 0) {
    out += row(fmt::format("ep all-to-all (each of {:g} per micro-batch)", t.ep.all_to_alls),
               t.ep.all_to_all.seconds(), "skew here is routing imbalance");
  }
  out += row("data-parallel collectives, per step", t.dp.comm_seconds,
             fmt::format("of it exposed: {}; the rest hides behind compute",
                         seconds_text(t.dp.exposed_seconds)));
  out += row("step", t.step_seconds, "compute + exposed communication + bubble");
  out += "\nA rank whose compute is normal but whose collectives wait long is waiting for "
         "another rank: find the one whose compute (or data loading) is slow.\n";

  // The longest wait a healthy collective sees: a peer up to a step behind, the critical path
  // of a checkpoint, and the longest single collective.
  const double longest_collective =
      std::max({t.tp_collective.seconds(), t.cp_step.seconds(), t.pp_seconds,
                t.ep.all_to_all.seconds(), t.dp.buffer.seconds()});
  std::optional<RestartBudget> budget;
  if (s.resilience) budget = restart_budget(ctx, e, *s.resilience);
  const double checkpoint = budget ? budget->checkpoint_seconds : 0.0;
  const double healthy = t.step_seconds + checkpoint + longest_collective;
  const double detect = s.resilience ? s.resilience->restart.detect_seconds : 600.0;
  out += "\n## Collective timeout (watchdog)\n\n";
  out += fmt::format(
      "The longest wait a healthy rank can see in one collective: a peer a step behind ({}), "
      "a checkpoint's critical path ({}) and the longest single collective ({}): {}. Set the "
      "timeout (torch.distributed.init_process_group(timeout=...)) to at least {:g}x that, "
      "{}. The {} timeout {} {} (PyTorch's ProcessGroupNCCL default is 10 min, "
      "pytorch/pytorch#110947). A hang is found only by this timeout: a rank that skips a "
      "batch leaves the others waiting in the next collective until it fires.\n",
      seconds_text(t.step_seconds), seconds_text(checkpoint), seconds_text(longest_collective),
      seconds_text(healthy), timeout_margin, seconds_text(timeout_margin * healthy),
      s.resilience ? "scenario's" : "default", duration_text(detect),
      detect >= timeout_margin * healthy ? "leaves that margin" : "is shorter: raise it");

  out += "\n## Checkpoints and restart\n\n";
  if (budget) {
    out += fmt::format(
        "Checkpoint every {} (goodput {:.2f} %); each costs the critical path {}. A failure "
        "costs the restart {} plus up to {} of lost work; the restart budget is {}.\n",
        duration_text(budget->interval_seconds), 100.0 * budget->goodput,
        seconds_text(budget->checkpoint_seconds), duration_text(budget->restart_seconds),
        duration_text(budget->lost_work_worst_seconds),
        budget->budget_seconds
            ? fmt::format("{} ({})", duration_text(*budget->budget_seconds),
                          budget->met ? "met" : "not met: planner scaling says what would meet it")
            : std::string("not given"));
  } else {
    out += "The scenario has no \"resilience\" object: add one (docs/resilience.md) for the "
           "checkpoint interval and the restart budget.\n";
  }

  out += "\n## If a node is lost\n\n";
  if (fallback.nodes < 1) {
    out += "The job runs on one node: there is no smaller job to fall back to.\n";
  } else if (!fallback.plan) {
    out += fmt::format("No plan fits on {} nodes: keep a spare node, or restart on the full "
                       "count.\n",
                       fallback.nodes);
  } else {
    const Evaluation& f = *fallback.plan;
    out += fmt::format(
        "Fall back to {} on {} nodes: {} ({:.1f} % of the full job's tokens/s).\n",
        describe(fallback.context, f.plan), fallback.nodes, headline(fallback.context, f),
        100.0 * f.training.tokens_per_second / t.tokens_per_second);
  }
  return out;
}

}  // namespace planner

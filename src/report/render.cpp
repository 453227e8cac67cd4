#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <stdexcept>

#include "planner/inputs/space.hpp"
#include "planner/base/one_line.hpp"
#include "planner/io/context.hpp"
#include "planner/model/activations.hpp"
#include "planner/report/accuracy.hpp"
#include "planner/report/serving_accuracy.hpp"
#include "planner/report/scaling_report.hpp"
#include "planner/io/text.hpp"
#include "planner/report/headline.hpp"
#include "planner/report/moe_text.hpp"
#include "planner/report/report.hpp"
#include "planner/search/answer.hpp"
#include "planner/search/rank.hpp"
#include "planner/search/disaggregated.hpp"
#include "render_parts.hpp"
#include "serving_text.hpp"

namespace planner {

std::string scenario_title(const Scenario& s) {
  // File names are cut as error lines cut them; a name is the user's title, kept whole.
  const std::string file = one_line(s.origin, 200);
  return s.name.empty() ? file : file + " - " + one_line(s.name);
}


using nlohmann::json;
using namespace render_detail;

namespace {

json placement_json(const Context& ctx, const Plan& p) {
  json order = json::array();
  for (Axis a : p.placement) order.push_back(std::string(to_string(a)));
  json j{{"order", order}};
  for (const AxisInfo& row : axes) {
    if (row.folded && degree(p, row.axis) == 1) continue;  // unused on dense models
    j[std::string(row.name)] = group_tier_name(ctx, p, row.axis);
  }
  return j;
}

json memory_json(const MemoryLedger& l) {
  json j = json::object();
  for (const LedgerLine& line : ledger_lines) j[std::string(line.name)] = l.*line.bytes;
  j["total"] = l.total_bytes();
  j["capacity"] = l.capacity_bytes;
  j["reserve_default"] = l.reserve_default;
  return j;
}

json time_json(const Context& ctx, const Evaluation& e) {
  if (ctx.workload.kind == WorkloadKind::serving) return serving_time_json(ctx, e.serving);
  const TrainingTime& t = e.training;
  json j{{"dense", t.dense_seconds},
              {"attention", t.attention_seconds},
              {"recompute", t.recompute_seconds},
              {"scores_io", t.scores_io_seconds},
              {"elementwise", t.elementwise_seconds},
              {"tp", t.tp_seconds},
              {"tp_algorithm", std::string(to_string(t.tp_collective.algorithm))},
              {"cp", t.cp_seconds},
              {"cp_exposed", t.cp_exposed_seconds},
              {"pp", t.pp_seconds},
              {"per_micro_batch", t.micro_batch_seconds()},
              {"bubble", t.bubble_seconds},
              {"dp_comm", t.dp.comm_seconds},
              {"dp_exposed", t.dp.exposed_seconds},
              {"dp_algorithm", std::string(to_string(t.dp.buffer.algorithm))},
              {"step", t.step_seconds},
              {"global_sequences", t.global_sequences},
              {"tokens_per_second", t.tokens_per_second},
              {"mfu", t.mfu}};
  // Only with the scenario's "stragglers" (docs/resilience.md §1), so other output is unchanged.
  if (t.straggler_seconds > 0) j["straggler"] = t.straggler_seconds;
  // Only where a tier charges hidden collectives (Tier::processor_usage, a catalog GPU's
  // fabric; docs/output.md), so output for a GPU given by numbers is unchanged.
  if (t.dp.overlap_cost_seconds > 0) j["dp_overlap_cost"] = t.dp.overlap_cost_seconds;
  if (t.dp.replicas > 1) {  // hybrid sharding: the replicas' all-reduce, in dp_comm/dp_exposed
    j["dp_replicas"] = t.dp.replicas;
    j["dp_replica_comm"] = t.dp.replica_seconds;
    j["dp_replica_exposed"] = t.dp.replica_exposed_seconds;
  }
  if (t.cp_overlap_cost_seconds > 0) j["cp_overlap_cost"] = t.cp_overlap_cost_seconds;
  // Only for mixture-of-experts models (docs/moe.md §5), so dense output is unchanged.
  if (t.ep.layers > 0) {
    j["ep_all_to_all"] = t.ep.seconds;
    j["ep_all_to_all_exposed"] = t.ep.exposed_seconds;
    j["expert_dp_exposed"] = t.expert_dp_exposed_seconds();
  }
  if (!bf16_mfu_note(ctx, t.mfu).empty()) {
    j["mfu_bf16_rate"] = t.mfu * ctx.flops_per_second / ctx.cluster.gpu.flops_per_second;
  }
  // Against the datasheet peaks, where the scenario names a catalog GPU (docs/output.md).
  const PeakMfu peak = peak_mfu(ctx, t.model_flops_per_second);
  if (peak.bf16_peak > 0) j["mfu_bf16_peak"] = peak.bf16_peak;
  if (peak.compute_peak > 0) j["mfu_compute_peak"] = peak.compute_peak;
  // HFU, against the same peaks: MFU's model FLOPs plus every recomputation (compute.hpp
  // hardware_flops_per_sequence).
  const PeakMfu hfu = peak_mfu(ctx, hardware_flops_per_second(ctx, e));
  if (hfu.bf16_peak > 0) j["hfu_bf16_peak"] = hfu.bf16_peak;
  if (hfu.compute_peak > 0) j["hfu_compute_peak"] = hfu.compute_peak;
  return j;
}

json plan_fields_json(const Plan& p) {
  // The searched settings, one row each of the search space's table (inputs/space.hpp), under
  // their plan keys; a row with a `shown` rule only where the plan uses it (ep > 1, an etp
  // other than tp, interleaving, hybrid sharding: docs/output.md), so output without them is
  // unchanged.
  json j = json::object();
  for (const SpaceDim& row : dimensions) {
    if (row.plan_key.empty() || (row.shown != nullptr && !row.shown(p))) continue;
    const std::string key(row.plan_key);
    switch (row.kind) {
      case SpaceKind::integer: j[key] = row.value(p); break;
      case SpaceKind::on_off: j[key] = row.value(p) != 0; break;
      case SpaceKind::choice: j[key] = std::string(to_string(p.recompute)); break;
    }
  }
  j["grad_accum"] = p.grad_accum;
  if (p.tp_comm_overlap) j["tp_comm_overlap"] = true;
  if (p.pp_comm_overlap) j["pp_comm_overlap"] = true;
  if (p.tables_in_pipeline_split) j["tables_in_pipeline_split"] = true;
  // Only where a workload sets them (docs/output.md), so other output is unchanged.
  if (p.zero == 3 && p.zero3_collectives_per_layer > 1) {
    j["zero3_collectives_per_layer"] = p.zero3_collectives_per_layer;
  }
  if (p.zero == 3 && p.zero3_blocking_gathers) j["zero3_blocking_gathers"] = true;
  if (p.zero == 2 && p.unsharded_gradient_accumulation) {
    j["unsharded_gradient_accumulation"] = true;
  }
  if (p.eager_elementwise) j["elementwise_kernels"] = "eager";
  if (keeps_gathered_inputs(p)) j["tp_saved_inputs"] = "gathered";
  return j;
}

json traffic_json(const Context& ctx, const Evaluation& e, const std::vector<TrafficNote>& notes) {
  json out = json::array();
  for (const TrafficNote& n : notes) {
    out.push_back(json{{"axis", traffic_axis_name(n.axis)},
                       {"tier", n.tier},
                       {"collective", traffic_collective(n)},
                       {"algorithm", n.algorithm},
                       {"message_bytes", n.message_bytes},
                       {"messages_per_step", n.messages_per_step},
                       {"seconds_per_step", n.seconds_per_step},
                       {"whole_buffer_seconds_per_step", n.whole_buffer_seconds_per_step > 0
                                                             ? n.whole_buffer_seconds_per_step
                                                             : n.seconds_per_step},
                       {"compute_seconds_per_step", n.compute_seconds_per_step},
                       {"exposed_seconds_per_step", n.exposed_seconds_per_step},
                       {"critical_path", n.critical_path},
                       {"hide_bandwidth", n.hide_bandwidth},
                       {"budget_bandwidth", n.budget_bandwidth},
                       {"summary", traffic_summary(ctx, e, n)}});
  }
  return out;
}

/// Fails loudly on a non-finite number: the model must never produce one (issue: no NaN or
/// inf may reach the output), and printing null would hide the bug.
void check_finite(const json& j, const std::string& where) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    throw std::logic_error("non-finite number at " + where);
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_finite(it.value(), where + "/" + it.key());
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_finite(j[i], where + "/" + std::to_string(i));
  }
}

}  // namespace

std::string dump_json(const json& j) {
  check_finite(j, "");
  // Text from a user's file (a record's id, a log line quoted in a reason, a device name) may
  // hold bytes that are not UTF-8: written as U+FFFD rather than failing the whole output.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string headline(const Context& ctx, const Evaluation& e) {
  if (ctx.workload.kind == WorkloadKind::serving) return serving_headline(ctx, e);
  return fmt::format("{:.0f} tokens/s, step {}, {}, {} of {} per GPU",
                     e.training.tokens_per_second, seconds_text(e.training.step_seconds),
                     mfu_text(ctx, e.training.mfu, e.training.model_flops_per_second,
                              hardware_flops_per_second(ctx, e)),
                     gib_text(e.memory.total_bytes()),
                     gib_text(e.memory.capacity_bytes));
}

std::string pinned_verdict(const Context& ctx, const Evaluation& pinned, const Evaluation& best,
                           double band_limit) {
  const double ratio = seconds_per_unit(ctx, pinned) / seconds_per_unit(ctx, best);
  // A plan that does not fit has no speed to compare, and a pinned plan off the searched
  // batch split can be the faster one (both printed "the recommendation is -98.3 % faster").
  if (same_answer(ctx, pinned.plan, best.plan)) return "the same answer";
  if (!pinned.fits()) return "the recommendation fits";
  if (ctx.workload.kind == WorkloadKind::training && ratio * (1 + time_resolution) >= 1 &&
      seconds_per_unit(ctx, pinned) <= band_limit) {
    // Inside the tolerance band (docs/ranking.md §2): one of the plans the model calls equal.
    return fmt::format("tied with the recommendation within {:g} %, the model's resolution "
                       "({:.1f} % {})",
                       100 * time_resolution, 100 * std::abs(ratio - 1),
                       ratio >= 1 ? "slower" : "faster");
  }
  if (ratio < 1) return fmt::format("the recommendation is {:.1f} % slower", 100 * (1 - ratio));
  return fmt::format("the recommendation is {:.1f} % faster", 100 * (ratio - 1));
}

std::string tied_sentence(const SearchResult& r) {
  if (r.tied <= 1) return {};
  return fmt::format("{} plans are within {:g} % of the fastest, the model's resolution; this "
                     "is the simplest of them",
                     r.tied, 100 * time_resolution);
}

OpeningText opening_text(const PlanReport& r) {
  const Context& ctx = r.context;
  const Evaluation& best = r.result.ranked.front();
  OpeningText t;
  if (ctx.workload.kind == WorkloadKind::serving) {
    const std::string missed = slo_missed_line(ctx, best);
    for (std::size_t at = 0, end = 0; at < missed.size(); at = end + 1) {
      end = std::min(missed.find('\n', at), missed.size());
      t.missed.push_back(missed.substr(at, end - at));
    }
  }
  t.plan = describe(ctx, best.plan);
  t.headline = headline(ctx, best);
  t.tied = tied_sentence(r.result);
  if (const std::optional<QuotedAccuracy> a = plan_accuracy(ctx, best.plan)) {
    t.accuracy = accuracy_sentence(*a);
  }
  if (quotes_serving_accuracy(ctx)) t.accuracy = serving_accuracy_sentence();
  if (r.envelope_empty) t.trust = envelope_empty_sentence(ctx, best.plan);
  if (r.unvalidated) t.trust = unvalidated_sentence(ctx, best, *r.unvalidated);
  if (r.pinned) {
    t.pinned_plan = describe(ctx, r.pinned->plan);
    t.pinned_figures = pinned_figures(ctx, *r.pinned);
    t.pinned_verdict = pinned_verdict(ctx, *r.pinned, best, r.result.band_limit);
  }
  return t;
}

std::string pinned_figures(const Context& ctx, const Evaluation& pinned) {
  return pinned.fits() ? headline(ctx, pinned) : "does not fit: " + memory_reason(pinned.memory);
}

namespace {

/// The explanation's parts of the report: axes, traffic, failure mode and alternatives.
void explanation_json(const Context& ctx, const Explanation& x, const Evaluation& best, json& j) {
  json axes = json::array();
  for (const AxisNote& a : x.axes) {
    axes.push_back(json{{"axis", std::string(to_string(a.axis))}, {"degree", a.degree},
                        {"used", a.used}, {"tier", a.tier}, {"why", axis_why(ctx, x, best, a)}});
  }
  j["axes"] = axes;
  j["traffic"] = traffic_json(ctx, best, x.traffic);
  j["failure_mode"] = failure_mode_text(ctx, best, x.failure_modes);
  json alternatives = json::array();
  for (const Alternative& a : x.alternatives) {
    alternatives.push_back(
        json{{"name", alternative_name(ctx, a.kind)},
             {"plan", a.best ? plan_json(ctx, *a.best) : json(nullptr)},
             {"verdict", alternative_verdict(ctx, best, a)},
             {"traffic", a.best ? traffic_json(ctx, *a.best, a.traffic) : json::array()}});
  }
  j["alternatives"] = alternatives;
}

}  // namespace

/// The time model's measured error on plans of `p`'s kind (report/accuracy.hpp), as JSON.
static json accuracy_json(const QuotedAccuracy& q) {
  const ModelAccuracy& a = q.row;
  return json{{"regime", regime_text(q.regime)},
              {"validated_regime", q.exact},
              {"measured_on", regime_text(a.regime)},
              {"records", a.records},
              {"median_abs_error", a.median_abs_error},
              {"max_abs_error", a.max_abs_error},
              {"median_error", a.median_error},
              {"outside_envelope", q.outside.empty() ? json(nullptr) : json(q.outside)}};
}

/// Whether a training ledger keeps the room its validated error asks for, with that error
/// (model/memory_accuracy.hpp; docs/ranking.md §6): `plan`'s trust.memory, `memory`'s
/// memory_headroom.
static json memory_headroom_json(const MemoryLedger& l) {
  return json{{"headroom", has_memory_headroom(l)},
              {"max_excess", memory_accuracy.max_excess},
              {"spare_fraction", spare_fraction(l)}};
}

json plan_json(const Context& ctx, const Evaluation& e) {
  json j = plan_fields_json(e.plan);
  j["placement"] = placement_json(ctx, e.plan);
  j["description"] = describe(ctx, e.plan);
  j["memory"] = memory_json(e.memory);
  j["time"] = time_json(ctx, e);
  return j;
}

json report_json(const PlanReport& r) {
  const Context& ctx = r.context;
  const Explanation& x = r.explanation;
  json j;
  j["schema_version"] = schema_version;
  j["scenario"] = json{{"file", r.scenario->origin}, {"name", r.scenario->name}};
  j["workload"] = ctx.workload.kind == WorkloadKind::training ? "training" : "serving";
  j["effective_flops"] = ctx.flops_per_second;
  j["binding_constraint"] = json{{"kind", std::string(to_string(x.binding.kind))},
                                 {"quadratic_dominates", x.binding.quadratic_dominates},
                                 {"detail", binding_detail(ctx, x.binding)}};
  j["best"] = r.result.found() ? plan_json(ctx, r.result.ranked.front()) : json(nullptr);
  if (r.result.found() && ctx.workload.kind == WorkloadKind::serving &&
      ctx.workload.serving.request_rate_per_second > 0) {
    j["best"]["capacity"] = serving_capacity_json(ctx, r.result.ranked.front());
  }
  if (ctx.workload.kind == WorkloadKind::serving && disaggregation_applies(ctx)) {
    j["deployments"] = disaggregation_json(ctx, r.result.ranked);
  }
  json ranked = json::array();
  for (const Evaluation& e : r.result.ranked) ranked.push_back(plan_json(ctx, e));
  j["ranked"] = ranked;
  // Training: how many plans the model cannot tell apart from the fastest (docs/ranking.md §2).
  if (ctx.workload.kind == WorkloadKind::training && r.result.found()) {
    j["tied"] = json{{"plans", r.result.tied}, {"tolerance", time_resolution}};
  }
  // The recommendation's kind of run and the time model's measured error on it (report/
  // accuracy.hpp), when the rate is the catalog's fitted one.
  if (r.result.found()) {
    if (const std::optional<QuotedAccuracy> a = plan_accuracy(ctx, r.result.ranked.front().plan)) {
      j["accuracy"] = accuracy_json(*a);
    }
    if (quotes_serving_accuracy(ctx)) j["accuracy"] = serving_accuracy_json();
  }
  // Ranked for trust (docs/ranking.md §4): whether the answer lies inside the validated
  // envelope, and the faster plan outside it.
  if (ctx.workload.kind == WorkloadKind::training && r.result.found()) {
    json trust{{"ranking", ctx.constraints.trusted || r.envelope_empty ? "trusted" : "raw"},
               {"envelope_empty", r.envelope_empty}};
    if (r.unvalidated) {
      json u = plan_json(ctx, *r.unvalidated);
      u["speedup"] = r.unvalidated->training.tokens_per_second /
                     r.result.ranked.front().training.tokens_per_second;
      u["outside_envelope"] =
          outside_envelope_reason(validated_envelope, ctx.model, ctx.cluster, r.unvalidated->plan);
      trust["unvalidated_alternative"] = u;
    }
    // The memory ledger's validated error and whether the recommendation leaves room for it,
    // with the fastest plan that does when it does not.
    json memory = memory_headroom_json(r.result.ranked.front().memory);
    memory["records"] = memory_accuracy.records;
    memory["median_abs_error"] = memory_accuracy.median_abs_error;
    memory["max_abs_error"] = memory_accuracy.max_abs_error;
    if (r.memory_roomy) {
      json roomy = plan_json(ctx, *r.memory_roomy);
      roomy["speedup"] = r.memory_roomy->training.tokens_per_second /
                         r.result.ranked.front().training.tokens_per_second;
      memory["roomy_alternative"] = roomy;
    }
    trust["memory"] = memory;
    j["trust"] = trust;
  }
  if (r.pinned) j["pinned"] = plan_json(ctx, *r.pinned);
  if (const std::optional<RestartBudget> b = plan_restart_budget(r)) {
    j["resilience"] = restart_budget_json(*b);
  }
  j["axes"] = json::array();
  j["traffic"] = json::array();
  j["failure_mode"] = "";
  j["alternatives"] = json::array();
  if (r.result.found()) explanation_json(ctx, x, r.result.ranked.front(), j);
  json thresholds = json::array();
  for (const Threshold& t : r.thresholds) {
    thresholds.push_back(json{{"parameter", t.parameter},
                              {"base_value", t.base_value},
                              {"value", t.value},
                              {"direction", std::string(to_string(t.side))},
                              {"plan", plan_fields_json(t.plan.value_or(Plan{}))},
                              {"summary", threshold_summary(ctx, t)}});
  }
  j["thresholds"] = thresholds;
  // Only present when some scan gave up, so that ordinary output is unchanged.
  if (!r.thresholds_not_searched.empty()) j["thresholds_not_searched"] = not_searched_names(r);
  json rejected = json::array();
  for (const Rejection& rej : r.result.rejected) {
    rejected.push_back(json{{"plan", plan_fields_json(rej.plan)}, {"kind", rej.kind},
                            {"reason", rej.reason}});
  }
  j["rejected"] = rejected;
  json by_kind = json::object();
  for (const auto& [kind, count] : r.result.rejected_by_kind) by_kind[kind] = count;
  j["search"] = json{{"evaluated", r.result.evaluated},
                     {"timed", r.result.timed},
                     {"feasible", r.result.feasible},
                     {"rejected_by_kind", by_kind}};
  return j;
}

json evaluation_report_json(const Scenario& s, const Context& ctx, const Evaluation& e) {
  json j;
  j["schema_version"] = schema_version;
  j["scenario"] = json{{"file", s.origin}, {"name", s.name}};
  j["workload"] = ctx.workload.kind == WorkloadKind::training ? "training" : "serving";
  j["effective_flops"] = ctx.flops_per_second;
  j["plan"] = plan_json(ctx, e);
  j["fits"] = e.fits();
  j["traffic"] = traffic_json(ctx, e, traffic_notes(ctx, e));
  if (ctx.workload.kind == WorkloadKind::training) {
    j["memory_headroom"] = memory_headroom_json(e.memory);
  }
  if (const std::optional<QuotedAccuracy> a = plan_accuracy(ctx, e.plan)) {
    j["accuracy"] = accuracy_json(*a);
  }
  if (quotes_serving_accuracy(ctx)) j["accuracy"] = serving_accuracy_json();
  return j;
}

std::string evaluation_report_csv(const Context& ctx, const Evaluation& e) {
  std::string out = "item,value\n";
  for (const LedgerLine& line : ledger_lines) {
    out += fmt::format("memory.{},{:.0f}\n", line.name, e.memory.*line.bytes);
  }
  out += fmt::format("memory.total,{:.0f}\nmemory.capacity,{:.0f}\n", e.memory.total_bytes(),
                     e.memory.capacity_bytes);
  const json t = time_json(ctx, e);
  for (auto it = t.begin(); it != t.end(); ++it) {
    if (it.value().is_number()) out += fmt::format("time.{},{:.9g}\n", it.key(), it.value().get<double>());
  }
  return out;
}

}  // namespace planner

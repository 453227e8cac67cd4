// Published serving measurements against the model (report/validate_serving.hpp).
#include "planner/report/validate_serving.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>

#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/io/context.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"
#include "planner/report/validate.hpp"

namespace planner {

using nlohmann::json;

namespace {

/// The figures a serving record may compare: the JSON pointer into `planner memory --format
/// json`, the metric it reports under, and how people call it.
struct ServingMetric {
  const char* pointer;
  const char* metric;
  const char* label;
};

constexpr std::array serving_metrics{
    ServingMetric{"/plan/time/ttft", "ttft", "time to first token"},
    ServingMetric{"/plan/time/ttft_mean", "ttft", "time to first token"},
    ServingMetric{"/plan/time/per_token", "per_token", "time per output token"},
    ServingMetric{"/plan/time/tokens_per_second", "throughput", "output tokens per second"},
};

constexpr std::array serving_metric_names{"ttft", "per_token", "throughput"};

const ServingMetric* find_metric(const std::string& pointer) {
  for (const ServingMetric& m : serving_metrics) {
    if (pointer == m.pointer) return &m;
  }
  return nullptr;
}

const char* label_of(const std::string& metric) {
  for (const ServingMetric& m : serving_metrics) {
    if (metric == m.metric) return m.label;
  }
  return "all metrics";
}

const json& need(const json& v, const char* key, const std::string& pointer,
                 const std::string& origin, const char* expected) {
  if (!v.is_object() || !v.contains(key)) {
    throw InputError(origin, pointer + "/" + key, fmt::format("missing; expected {}", expected));
  }
  return v.at(key);
}

double positive(const json& v, const char* key, const std::string& pointer,
                const std::string& origin) {
  const json& x = need(v, key, pointer, origin, "a positive number");
  if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>())) {
    throw InputError(origin, pointer + "/" + key,
                     fmt::format("{}: expected a positive number",
                                 one_line(x.dump(), error_line_limit)));
  }
  return x.get<double>();
}

}  // namespace

bool is_serving_record(const json& doc) noexcept {
  if (!doc.is_object()) return false;
  const auto s = doc.find("scenario");
  if (s == doc.end() || !s->is_object()) return false;
  const auto w = s->find("workload");
  if (w == s->end() || !w->is_object()) return false;
  const auto k = w->find("kind");
  return k != w->end() && k->is_string() && k->get<std::string>() == "serving";
}

ServingResult validate_serving_record(const json& doc, const std::string& origin) {
  ServingResult r;
  r.origin = origin;
  const json& name = need(doc, "name", "", origin, "the record's name");
  r.id = name.is_string() ? name.get<std::string>() : origin;
  const json& measured = need(doc, "measured", "", origin, "{\"pointer\", \"value\"}");
  const json& pointer = need(measured, "pointer", "/measured", origin, "a JSON pointer");
  const ServingMetric* metric =
      pointer.is_string() ? find_metric(pointer.get<std::string>()) : nullptr;
  if (metric == nullptr) {
    throw InputError(origin, "/measured/pointer",
                     fmt::format("{}: expected one of /plan/time/ttft, /plan/time/ttft_mean, "
                                 "/plan/time/per_token, /plan/time/tokens_per_second",
                                 one_line(pointer.dump(), error_line_limit)));
  }
  r.metric = metric->metric;
  r.measured = positive(measured, "value", "/measured", origin);
  r.target = positive(doc, "target", "", origin);
  if (const auto set = doc.find("set"); set != doc.end()) {
    if (!set->is_string() ||
        (set->get<std::string>() != "calibration" && set->get<std::string>() != "validation")) {
      throw InputError(origin, "/set",
                       fmt::format("{}: expected \"calibration\" or \"validation\"",
                                   one_line(set->dump(), error_line_limit)));
    }
    r.calibration = set->get<std::string>() == "calibration";
  }
  if (const auto s = doc.find("source"); s != doc.end() && s->is_object()) {
    r.source = fmt::format("{}; {}", s->value("document", std::string()),
                           s->value("row", std::string()));
  }
  const Scenario scenario =
      load_scenario(need(doc, "scenario", "", origin, "a serving scenario"), origin);
  if (!scenario.plan) {
    throw InputError(origin, "/scenario/plan", "missing; expected the published engine's plan");
  }
  const Context ctx = make_context(scenario);
  const Evaluation e = evaluate(ctx, *scenario.plan);
  const json report = evaluation_report_json(scenario, ctx, e);
  const json& predicted = report.at(json::json_pointer(metric->pointer));
  if (predicted.is_number()) r.predicted = predicted.get<double>();
  return r;
}

std::optional<double> fitted_serving_efficiency(const json& doc, const std::string& origin) {
  const ServingResult at_catalog = validate_serving_record(doc, origin);
  const json& measured = doc.at("measured");
  const ServingMetric* metric = find_metric(measured.at("pointer").get<std::string>());
  const Scenario scenario = load_scenario(doc.at("scenario"), origin);
  const double peak = scenario.cluster.gpu.peak_flops_by_dtype[static_cast<std::size_t>(
      Dtype::bf16)];
  if (!(peak > 0) || !scenario.plan) return std::nullopt;
  Context ctx = make_context(scenario);
  const auto error_at = [&](double share) {
    ctx.flops_per_second = peak * share;
    const Evaluation e = evaluate(ctx, *scenario.plan);
    const json report = evaluation_report_json(scenario, ctx, e);
    const json& predicted = report.at(json::json_pointer(metric->pointer));
    // An unbounded figure (the engine overloaded at that rate) is slower than any measured.
    return predicted.is_number() ? predicted.get<double>() / at_catalog.measured - 1.0 : 1e30;
  };
  double lo = 0.05, hi = 1.0;
  const double at_lo = error_at(lo), at_hi = error_at(hi);
  if (!(at_lo * at_hi < 0)) return std::nullopt;  // no share in between reproduces it
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    ((error_at(mid) < 0) == (at_lo < 0) ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::vector<ServingSummary> summarize_serving(const std::vector<ServingResult>& results,
                                              bool calibration) {
  std::vector<ServingSummary> out;
  auto summary = [&](const std::string& metric) {
    ServingSummary s;
    s.metric = metric;
    std::vector<double> errors;
    for (const ServingResult& r : results) {
      if (r.calibration != calibration) continue;
      if (metric != "all" && r.metric != metric) continue;
      ++s.records;
      const auto e = r.error();
      if (!e) {
        ++s.unbounded;
        continue;
      }
      errors.push_back(std::abs(*e));
      if (std::abs(*e) >= s.max_abs_error) {
        s.max_abs_error = std::abs(*e);
        s.worst = r.id;
      }
    }
    s.median_abs_error = median(errors);
    return s;
  };
  for (const char* metric : serving_metric_names) {
    ServingSummary s = summary(metric);
    if (s.records > 0) out.push_back(std::move(s));
  }
  if (std::any_of(results.begin(), results.end(),
                  [&](const ServingResult& r) { return r.calibration == calibration; })) {
    out.push_back(summary("all"));
  }
  return out;
}

void print_serving_text(const std::vector<ServingResult>& results, std::ostream& out) {
  if (results.empty()) return;
  const auto fitted = static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(), [](const ServingResult& r) {
        return r.calibration;
      }));
  out << fmt::format("\n{} serving records, current model, each published engine pinned{}\n\n",
                     results.size(),
                     fitted > 0 ? fmt::format(" ({} calibration, marked *)", fitted) : "");
  out << fmt::format("{:<62} {:<10} {:>11} {:>11} {:>7}\n", "record", "metric", "model",
                     "measured", "error");
  for (const ServingResult& r : results) {
    const auto e = r.error();
    out << fmt::format("{:<62} {:<10} {:>11} {:>11.4g} {:>7}{}\n", one_line(r.id, 200), r.metric,
                       r.predicted ? fmt::format("{:.4g}", *r.predicted) : "unbounded",
                       r.measured, e ? fmt::format("{:+.1f}%", 100 * *e) : "-",
                       r.calibration ? " *" : "");
  }
  const auto print = [&](bool calibration) {
    for (const ServingSummary& s : summarize_serving(results, calibration)) {
      out << fmt::format("  {:<26} {:>3} records  median {:>6.1f}%  max {:>6.1f}% ({}){}\n",
                         label_of(s.metric), s.records, 100 * s.median_abs_error,
                         100 * s.max_abs_error, s.worst,
                         s.unbounded > 0 ? fmt::format("; {} unbounded", s.unbounded)
                                         : std::string());
    }
  };
  out << "\n|error| by metric (seconds for the times, tokens/s for throughput):\n";
  print(false);
  if (fitted > 0) {
    out << "calibration records (* above: data/gpus.json serving_efficiency is fitted to "
           "them):\n";
    print(true);
  }
}

json serving_validation_json(const std::vector<ServingResult>& results) {
  json records = json::array();
  for (const ServingResult& r : results) {
    const auto e = r.error();
    records.push_back(json{{"id", r.id},
                           {"file", r.origin},
                           {"source", r.source},
                           {"metric", r.metric},
                           {"measured", r.measured},
                           {"predicted", r.predicted ? json(*r.predicted) : json(nullptr)},
                           {"error", e ? json(*e) : json(nullptr)},
                           {"target", r.target},
                           {"set", r.calibration ? "calibration" : "validation"}});
  }
  const auto by_metric = [&](bool calibration) {
    json out = json::object();
    for (const ServingSummary& s : summarize_serving(results, calibration)) {
      out[s.metric] = json{{"records", s.records},
                           {"unbounded", s.unbounded},
                           {"median_abs_error", s.median_abs_error},
                           {"max_abs_error", s.max_abs_error},
                           {"worst", s.worst}};
    }
    return out;
  };
  return json{{"records", records},
              {"by_metric", by_metric(false)},
              {"calibration_by_metric", by_metric(true)}};
}

}  // namespace planner

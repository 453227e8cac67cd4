// `planner validate`'s three formats (docs/output.md §validate): one row per record and the
// summaries of each set, as JSON, CSV or text.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

#include "planner/base/one_line.hpp"
#include "planner/base/units.hpp"
#include "planner/report/report.hpp"
#include "planner/report/validate.hpp"

namespace planner {

using nlohmann::json;

namespace {

std::string percent(std::optional<double> error) {
  return error ? fmt::format("{:+.1f}%", 100.0 * *error) : std::string("-");
}

std::string maybe_number(std::optional<double> x, const char* spec) {
  return x ? fmt::format(fmt::runtime(spec), *x) : std::string("-");
}

json comparison_json(const Comparison& c) {
  return json{{"predicted", c.predicted},
              {"measured", c.measured ? json(*c.measured) : json(nullptr)},
              {"error", c.error() ? json(*c.error()) : json(nullptr)}};
}

std::string joined(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace

void print_validation_json(const std::vector<RecordResult>& results, const ValidationReport& report,
                           const ValidateOptions& o, std::ostream& out) {
  const auto& summaries = report.summaries;
  const auto& memory_summaries = report.memory_summaries;
  const bool within = report.within;
  json list = json::array();
  for (const RecordResult& r : results) {
    const ValidationRecord& rec = *r.record;
    const auto e = throughput_error(r);
    list.push_back(json{
        {"id", rec.id},
        {"set", rec.set},
        {"file", rec.origin},
        {"source", json{{"citation", rec.citation}, {"location", rec.location}}},
        {"gpus", world_size(rec.scenario.cluster)},
        {"fits", r.fits},
        {"flops_per_second", r.flops_per_second},
        {"tokens_per_second_per_gpu", comparison_json(r.tokens_per_second_per_gpu)},
        {"step_time", comparison_json(r.step_seconds)},
        {"memory_peak", comparison_json(r.memory_peak_bytes)},
        {"memory_model_states", comparison_json(r.memory_model_states_bytes)},
        {"throughput_error", e ? json(*e) : json(nullptr)},
        {"not_modelled", rec.not_modelled}});
  }
  json sets = json::object();
  for (const auto& [set, s] : summaries) {
    sets[set] = json{{"records", s.records},
                     {"compared", s.compared},
                     {"infeasible", s.infeasible},
                     {"median_abs_error", s.median_abs_error},
                     {"max_abs_error", s.max_abs_error},
                     {"worst", s.worst}};
  }
  json families = json::object();
  for (const auto& [group, s] : report.family_summaries) {
    families[group] = json{{"records", s.records},
                           {"compared", s.compared},
                           {"median_abs_error", s.median_abs_error},
                           {"max_abs_error", s.max_abs_error},
                           {"worst", s.worst}};
  }
  json memory = json::object();
  for (const auto& [set, m] : memory_summaries) {
    memory[set] = json{{"compared", m.compared},
                       {"median_abs_error", m.median_abs_error},
                       {"max_abs_error", m.max_abs_error},
                       {"worst", m.worst}};
  }
  json bounds = json::object();
  bounds["max_median_error"] =
      o.max_median_error_percent ? json(*o.max_median_error_percent / 100.0) : json(nullptr);
  bounds["max_error"] = o.max_error_percent ? json(*o.max_error_percent / 100.0) : json(nullptr);
  out << dump_json(json{{"schema_version", schema_version},
                        {"records", list},
                        {"summary", sets},
                        {"validation_by_family", families},
                        {"memory_peak_summary", memory},
                        {"serving", serving_validation_json(report.serving)},
                        {"bounds", bounds},
                        {"within_bounds", within}});
}

void print_validation_csv(const std::vector<RecordResult>& results, std::ostream& out) {
  out << "id,set,gpus,fits,predicted_tokens_per_second_per_gpu,"
         "measured_tokens_per_second_per_gpu,predicted_step_time_s,measured_step_time_s,"
         "throughput_error,predicted_memory_peak_bytes,measured_memory_peak_bytes,"
         "not_modelled,source\n";
  for (const RecordResult& r : results) {
    const ValidationRecord& rec = *r.record;
    const auto e = throughput_error(r);
    out << fmt::format(
        "{},{},{},{},{:.6g},{},{:.6g},{},{},{:.6g},{},{},{}\n", one_line_csv_field(rec.id), rec.set,
        world_size(rec.scenario.cluster), r.fits ? "true" : "false",
        r.tokens_per_second_per_gpu.predicted,
        maybe_number(r.tokens_per_second_per_gpu.measured, "{:.6g}"), r.step_seconds.predicted,
        maybe_number(r.step_seconds.measured, "{:.6g}"), e ? fmt::format("{:.6g}", *e) : "",
        r.memory_peak_bytes.predicted, maybe_number(r.memory_peak_bytes.measured, "{:.6g}"),
        one_line_csv_field(joined(rec.not_modelled)),
        one_line_csv_field(rec.citation + "; " + rec.location));
  }
}

void print_validation_text(const std::vector<RecordResult>& results, const ValidationReport& report,
                           std::ostream& out) {
  const auto& summaries = report.summaries;
  const auto& memory_summaries = report.memory_summaries;
  const auto& breaches = report.breaches;
  if (results.empty()) {
    print_serving_text(report.serving, out);
    return;
  }
  out << fmt::format("{} records, current model, each published plan pinned\n\n",
                     results.size());
  out << fmt::format(
      "{:<12} {:<36} {:>5} {:>9} {:>9} {:>7} {:>8} {:>8} {:>7} {:>8} {:>5}  {}\n", "set",
      "record", "GPUs", "tok/s/GPU", "measured", "error", "step s", "measured", "mem GiB",
      "measured", "fits", "not modelled");
  for (const RecordResult& r : results) {
    const ValidationRecord& rec = *r.record;
    out << fmt::format(
        "{:<12} {:<36} {:>5} {:>9.0f} {:>9} {:>7} {:>8.2f} {:>8} {:>7.1f} {:>8} {:>5}  {}\n",
        rec.set, one_line(rec.id, 200), world_size(rec.scenario.cluster),
        r.tokens_per_second_per_gpu.predicted,
        maybe_number(r.tokens_per_second_per_gpu.measured, "{:.0f}"),
        percent(throughput_error(r)), r.step_seconds.predicted,
        maybe_number(r.step_seconds.measured, "{:.2f}"), r.memory_peak_bytes.predicted / gib,
        r.memory_peak_bytes.measured ? fmt::format("{:.1f}", *r.memory_peak_bytes.measured / gib)
                                     : std::string("-"),
        r.fits ? "yes" : "NO", rec.not_modelled.empty() ? "-" : one_line(joined(rec.not_modelled)));
  }
  out << "\n|error| of throughput per GPU (tokens/s, or step time where only that is "
         "published):\n";
  for (const auto& [set, s] : summaries) {
    out << fmt::format("  {:<12} {:>3} records  median {:>6.1f}%  max {:>6.1f}% ({}){}\n",
                       set, s.compared, 100.0 * s.median_abs_error, 100.0 * s.max_abs_error,
                       one_line(s.worst, error_line_limit),
                       s.infeasible > 0
                           ? fmt::format("; {} judged not to fit in memory", s.infeasible)
                           : std::string());
  }
  for (const auto& [group, s] : report.family_summaries) {
    const bool sibling = group == "with_calibrated_sibling";
    out << fmt::format("    {:<44} {:>3} records  median {:>6.1f}%  max {:>6.1f}% ({})\n",
                       sibling ? "families with a calibrated single-node run"
                               : "families without one (tests everything)",
                       s.compared, 100.0 * s.median_abs_error, 100.0 * s.max_abs_error,
                       one_line(s.worst, error_line_limit));
  }
  if (!memory_summaries.empty()) out << "|error| of peak memory per GPU, where measured:\n";
  for (const auto& [set, m] : memory_summaries) {
    out << fmt::format("  {:<12} {:>3} records  median {:>6.1f}%  max {:>6.1f}% ({})\n", set,
                       m.compared, 100.0 * m.median_abs_error, 100.0 * m.max_abs_error,
                       one_line(m.worst, error_line_limit));
  }
  print_serving_text(report.serving, out);
  for (const std::string& b : breaches) out << "bound exceeded: " << b << "\n";
}

}  // namespace planner

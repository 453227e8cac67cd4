#include "planner/report/validate.hpp"
#include "planner/report/search_regret.hpp"
#include "validate_fit.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <ostream>
#include <system_error>

#include <fmt/format.h>

#include "planner/base/error.hpp"
#include "planner/base/spelling.hpp"
#include "planner/base/units.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/context.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"

namespace planner {
namespace {

using nlohmann::json;

constexpr std::array scenario_keys{"name",     "description", "model",      "cluster",
                                   "workload", "plan",        "constraints"};
constexpr std::array record_keys{"id",       "set",     "source",  "measured", "not_modelled",
                                 "notes",    "name",    "description", "model", "cluster",
                                 "workload", "plan",    "family",  "bf16_sibling",
                                 "efficiency_excluded", "published_as", "constraints"};
constexpr std::array set_names{"calibration", "validation"};

[[noreturn]] void reject_record(const std::string& origin, const std::string& pointer,
                       const std::string& message) {
  throw InputError(origin, pointer, message);
}

template <typename Range>
std::string joined(const Range& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

template <typename Range>
void check_keys(const json& v, const std::string& pointer, const std::string& origin,
                const Range& allowed) {
  if (!v.is_object()) {
    reject_record(origin, pointer,
         fmt::format("expected an object with keys {}, got {}", joined(allowed),
                     describe_value(v)));
  }
  for (const auto& item : v.items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
    const auto guess = closest(item.key(), allowed);
    reject_record(origin, pointer + "/" + item.key(),
         guess ? fmt::format("unknown key (did you mean '{}'?)", *guess)
               : fmt::format("unknown key; expected one of: {}", joined(allowed)));
  }
}

std::string text_at(const json& v, const std::string& key, const std::string& pointer,
                    const std::string& origin, std::string_view expect) {
  const auto it = v.find(key);
  if (it == v.end()) {
    reject_record(origin, pointer + "/" + key,
                  fmt::format("missing required key (expected {})", expect));
  }
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    reject_record(origin, pointer + "/" + key,
         fmt::format("expected {}, got {}", expect, describe_value(*it)));
  }
  return it->get<std::string>();
}

/// A quantity of dimension `d` (bare numbers in base units) from `floor` to 1e18, so finite
/// and normal by construction. The floor keeps predicted/measured finite: a step time of
/// 5e-324 s (a denormal) made the error ratio infinite and validate exit 3.
std::optional<double> bounded_quantity(const json& v, const std::string& key, Dimension d,
                                       double floor, const std::string& pointer,
                                       const std::string& origin, std::string_view expect) {
  const auto it = v.find(key);
  if (it == v.end()) return std::nullopt;
  const std::string at = pointer + "/" + key;
  const double x = parse_quantity(*it, d, origin, at);
  if (!(x >= floor) || !(x <= 1e18)) {
    reject_record(origin, at, fmt::format("expected {}, got {}", expect, describe_value(*it)));
  }
  return x;
}

Measured read_measured(const json& v, const std::string& origin) {
  const std::string ptr = "/measured";
  constexpr std::array keys{"tokens_per_second_per_gpu", "step_time", "memory_peak",
                            "memory_model_states", "derivation"};
  check_keys(v, ptr, origin, keys);
  Measured m;
  if (const auto it = v.find("tokens_per_second_per_gpu"); it != v.end()) {
    // At least 1e-6 (one token in 11 days): a denormal rate made the ratio to the
    // prediction infinite and validate exit 3.
    if (!it->is_number() || !(it->get<double>() >= 1e-6) || !(it->get<double>() <= 1e12)) {
      reject_record(origin, ptr + "/tokens_per_second_per_gpu",
                    fmt::format("expected a number of tokens per second from 1e-06 to 1e12, "
                                "such as 3200, got {}",
                                describe_value(*it)));
    }
    m.tokens_per_second_per_gpu = it->get<double>();
  }
  m.step_seconds = bounded_quantity(v, "step_time", Dimension::seconds, 1e-9, ptr, origin,
                                    "a time from 1 ns to 1e18 s, such as \"14.7 s\"");
  m.memory_peak_bytes = bounded_quantity(v, "memory_peak", Dimension::bytes, 1, ptr, origin,
                                         "a size from 1 B to 1e18 B, such as \"61.2 GiB\"");
  m.memory_model_states_bytes =
      bounded_quantity(v, "memory_model_states", Dimension::bytes, 1, ptr, origin,
                       "a size from 1 B to 1e18 B, such as \"20.4 GiB\"");
  if (const auto it = v.find("derivation"); it != v.end() && !it->is_string()) {
    reject_record(origin, ptr + "/derivation",
         fmt::format("expected a string, got {}", describe_value(*it)));
  }
  if (!m.tokens_per_second_per_gpu && !m.step_seconds) {
    reject_record(origin, ptr,
         "a record needs tokens_per_second_per_gpu or step_time (what the source measured)");
  }
  return m;
}

/// "vpp": 5 -> "vpp=5"; strings unquoted, booleans as true/false.
std::vector<std::string> read_not_modelled(const json& v, const std::string& origin) {
  if (!v.is_object()) {
    reject_record(origin, "/not_modelled",
         fmt::format("expected an object of published settings the model lacks, such as "
                     "{{\"vpp\": 5}}, got {}",
                     describe_value(v)));
  }
  std::vector<std::string> out;
  for (const auto& item : v.items()) {
    const json& x = item.value();
    if (!(x.is_string() || x.is_number() || x.is_boolean())) {
      reject_record(origin, "/not_modelled/" + item.key(),
           fmt::format("expected a string, number or boolean, got {}", describe_value(x)));
    }
    out.push_back(item.key() + "=" + (x.is_string() ? x.get<std::string>() : x.dump()));
  }
  return out;
}

}  // namespace

ValidationRecord load_validation_record(const json& doc, const std::string& origin) {
  check_keys(doc, "", origin, record_keys);
  ValidationRecord r;
  r.origin = origin;
  r.id = text_at(doc, "id", "", origin, "a record id such as \"sc21-t1-1.7B\"");
  r.set = text_at(doc, "set", "", origin, "\"calibration\" or \"validation\"");
  // One family: the same model and recipe at other scales (docs/validation.md §Families).
  r.family = doc.contains("family")
                 ? text_at(doc, "family", "", origin, "a family name such as \"dgxc-llama3.1-8b\"")
                 : r.id;
  if (doc.contains("efficiency_excluded")) {
    r.efficiency_excluded = text_at(doc, "efficiency_excluded", "", origin,
                                    "why the run does not fit its GPU's bf16 efficiency");
  }
  if (doc.contains("published_as")) {
    const std::string as = text_at(doc, "published_as", "", origin, "\"recipe\" or \"baseline\"");
    if (as != "recipe" && as != "baseline") {
      reject_record(origin, "/published_as",
           fmt::format("expected \"recipe\" or \"baseline\" (a row the source publishes as the "
                       "slower alternative it compares against), got \"{}\"",
                       as));
    }
    r.baseline = as == "baseline";
  }
  r.constrained = doc.contains("constraints");
  if (doc.contains("bf16_sibling")) {
    r.bf16_sibling = text_at(doc, "bf16_sibling", "", origin,
                             "the id of the same run in bf16, such as \"dgxc-llama3.1-8b-bf16-8gpu\"");
  }
  if (std::find(set_names.begin(), set_names.end(), r.set) == set_names.end()) {
    const auto guess = closest(r.set, set_names);
    reject_record(origin, "/set",
         fmt::format("expected \"calibration\" or \"validation\", got {}{}",
                     describe_value(doc.at("set")),
                     guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : ""));
  }
  const auto src = doc.find("source");
  if (src == doc.end()) {
    reject_record(origin, "/source",
         "missing required key (expected an object with citation, url, location)");
  }
  check_keys(*src, "/source", origin,
             std::array{"citation", "url", "location", "secondary"});
  r.citation = text_at(*src, "citation", "/source", origin, "the publication, as text");
  r.location = text_at(*src, "location", "/source", origin,
                       "where in it the figures are, such as \"Table 1\"");
  const auto measured = doc.find("measured");
  if (measured == doc.end()) {
    reject_record(origin, "/measured",
         "missing required key (expected an object with tokens_per_second_per_gpu or "
         "step_time)");
  }
  r.measured = read_measured(*measured, origin);
  if (const auto nm = doc.find("not_modelled"); nm != doc.end()) {
    r.not_modelled = read_not_modelled(*nm, origin);
  }
  if (!doc.contains("plan")) {
    reject_record(origin, "/plan", "missing required key (expected the published plan, pinned)");
  }
  json scenario = json::object();
  for (const char* key : scenario_keys) {
    if (const auto it = doc.find(key); it != doc.end()) scenario[key] = *it;
  }
  // A published "vpp" (Megatron-LM's virtual pipeline size) is the plan's virtual_stages,
  // now modelled (interleaved 1F1B); it is no longer listed as not modelled.
  if (const auto nm = doc.find("not_modelled"); nm != doc.end()) {
    if (const auto vpp = nm->find("vpp"); vpp != nm->end() && vpp->is_number_integer() &&
                                          scenario["plan"].is_object() &&
                                          scenario["plan"].value("pp", 1) > 1 &&
                                          !scenario["plan"].contains("virtual_stages")) {
      scenario["plan"]["virtual_stages"] = *vpp;
      const std::string label = "vpp=" + vpp->dump();
      r.not_modelled.erase(std::remove(r.not_modelled.begin(), r.not_modelled.end(), label),
                           r.not_modelled.end());
    }
  }
  r.scenario = load_scenario(scenario, origin);
  if (r.scenario.workload.kind != WorkloadKind::training) {
    reject_record(origin, "/workload/kind",
                  "validate compares training runs; expected \"training\"");
  }
  return r;
}

std::vector<std::string> validation_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> out;
  // Directory links are not followed, so a link loop cannot recurse forever.
  fs::recursive_directory_iterator it(path, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    // A symbolic-link loop made is_regular_file() throw (exit 3, issue 32): ask with an
    // error code and name the entry.
    std::error_code entry_error;
    const bool regular = it->is_regular_file(entry_error);
    if (entry_error) {
      reject_record(it->path().string(), "", fmt::format("cannot read: {}", entry_error.message()));
    }
    if (regular && it->path().extension() == ".json") out.push_back(it->path().string());
  }
  if (ec) reject_record(path, "", fmt::format("cannot read directory: {}", ec.message()));
  std::sort(out.begin(), out.end());
  if (out.empty()) reject_record(path, "", "no *.json records in this directory");
  return out;
}

RecordResult validate_record(const ValidationRecord& r) {
  RecordResult out;
  out.record = &r;
  const Context ctx = make_context(r.scenario);
  out.flops_per_second = ctx.flops_per_second;
  out.evaluation = evaluate(ctx, *r.scenario.plan);
  out.fits = out.evaluation.fits();
  const double gpus = static_cast<double>(world_size(r.scenario.cluster));
  out.tokens_per_second_per_gpu = {out.evaluation.training.tokens_per_second / gpus,
                                   r.measured.tokens_per_second_per_gpu};
  out.step_seconds = {out.evaluation.training.step_seconds, r.measured.step_seconds};
  // A published peak is what the caching allocator held (torch.cuda.max_memory_reserved, as
  // torchtitan logs it): the ledger less the reserve kept outside the allocator.
  out.memory_peak_bytes = {out.evaluation.memory.allocator_reserved_bytes(),
                           r.measured.memory_peak_bytes};
  out.memory_model_states_bytes = {out.evaluation.memory.state_bytes(),
                                   r.measured.memory_model_states_bytes};
  return out;
}

std::optional<double> throughput_error(const RecordResult& r) noexcept {
  if (const auto e = r.tokens_per_second_per_gpu.error()) return e;
  // Throughput is inversely proportional to step time at a fixed batch:
  // predicted/measured throughput − 1 = measured/predicted step − 1.
  if (r.step_seconds.measured && r.step_seconds.predicted > 0) {
    return *r.step_seconds.measured / r.step_seconds.predicted - 1.0;
  }
  return std::nullopt;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

namespace {

/// The summary of the results `keep` admits.
template <typename Keep>
ErrorSummary summarize_if(const std::vector<RecordResult>& results, Figure figure, Keep keep) {
  ErrorSummary s;
  std::vector<double> errors;
  for (const RecordResult& r : results) {
    if (!keep(*r.record)) continue;
    ++s.records;
    if (!r.fits) ++s.infeasible;
    const auto e =
        figure == Figure::throughput ? throughput_error(r) : r.memory_peak_bytes.error();
    if (!e) continue;
    ++s.compared;
    const double a = std::abs(*e);
    errors.push_back(a);
    if (a > s.max_abs_error || s.worst.empty()) {
      s.max_abs_error = std::max(s.max_abs_error, a);
      s.worst = r.record->id;
    }
  }
  s.median_abs_error = median(errors);
  return s;
}

}  // namespace

ErrorSummary summarize(const std::vector<RecordResult>& results, const std::string& set,
                       Figure figure) {
  return summarize_if(results, figure,
                      [&](const ValidationRecord& r) { return r.set == set; });
}

std::vector<std::pair<std::string, ErrorSummary>> summarize_by_family(
    const std::vector<RecordResult>& results) {
  std::set<std::string> calibrated;
  for (const RecordResult& r : results) {
    if (r.record->set == "calibration") calibrated.insert(r.record->family);
  }
  std::vector<std::pair<std::string, ErrorSummary>> out;
  for (const bool sibling : {true, false}) {
    const ErrorSummary s =
        summarize_if(results, Figure::throughput, [&](const ValidationRecord& r) {
          return r.set == "validation" && calibrated.contains(r.family) == sibling;
        });
    if (s.records > 0) {
      out.emplace_back(sibling ? "with_calibrated_sibling" : "without_calibrated_sibling", s);
    }
  }
  return out;
}

// ---- The command ----------------------------------------------------------------------

namespace {

/// The records of every path, calibration first, then validation; within a set, in file order
/// (sorted names). `gpus` gets each record's catalog GPU, if it names one (for --fit).
std::vector<ValidationRecord> load_records(const std::vector<std::string>& paths,
                                           std::vector<const CatalogGpu*>& gpus,
                                           std::vector<ServingResult>* serving,
                                           std::vector<ServingRecordFile>* serving_fit = nullptr) {
  std::vector<ValidationRecord> records;
  std::vector<const CatalogGpu*> found;
  for (const std::string& path : paths) {
    for (const std::string& file : validation_files(path)) {
      const json doc = read_json_file(file);
      if (is_serving_record(doc)) {
        // Serving records are evaluated for the report; --fit takes the calibration ones.
        if (serving != nullptr) serving->push_back(validate_serving_record(doc, file_origin(file)));
        if (serving_fit != nullptr && doc.value("set", json()) == "calibration") {
          serving_fit->push_back({doc, file_origin(file)});
        }
        continue;
      }
      records.push_back(load_validation_record(doc, file_origin(file)));
      found.push_back(record_gpu(doc));
    }
  }
  // One record counted twice (a symbolic link beside its target, a directory given twice)
  // weighed double in the medians; and ids name records (bf16_sibling, the summaries' worst).
  std::map<std::string, const std::string*> first_origin;
  for (const ValidationRecord& r : records) {
    const auto [it, fresh] = first_origin.emplace(r.id, &r.origin);
    if (!fresh) {
      reject_record(r.origin, "/id",
                    fmt::format("\"{}\" is also the id of {}; give each record its own id (is "
                                "one file a link to or a copy of the other?)",
                                r.id, *it->second));
    }
  }
  std::vector<std::size_t> order(records.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return records[a].set < records[b].set;
  });
  std::vector<ValidationRecord> sorted;
  gpus.clear();
  for (const std::size_t i : order) {
    sorted.push_back(std::move(records[i]));
    gpus.push_back(found[i]);
  }
  return sorted;
}

/// The summaries of each set present and the bounds they exceed.
ValidationReport summarize_all(const std::vector<RecordResult>& results,
                               const ValidateOptions& o) {
  ValidationReport report;
  report.family_summaries = summarize_by_family(results);
  for (const char* set : set_names) {
    const ErrorSummary s = summarize(results, set);
    if (s.records == 0) continue;
    report.summaries.emplace_back(set, s);
    const ErrorSummary m = summarize(results, set, Figure::memory_peak);
    if (m.compared > 0) report.memory_summaries.emplace_back(set, m);
    if (o.max_median_error_percent && 100.0 * s.median_abs_error > *o.max_median_error_percent) {
      report.within = false;
      report.breaches.push_back(fmt::format("{}: median |error| {:.1f}% exceeds {:g}%", set,
                                            100.0 * s.median_abs_error,
                                            *o.max_median_error_percent));
    }
    if (o.max_error_percent && 100.0 * s.max_abs_error > *o.max_error_percent) {
      report.within = false;
      report.breaches.push_back(fmt::format("{}: max |error| {:.1f}% ({}) exceeds {:g}%", set,
                                            100.0 * s.max_abs_error, s.worst,
                                            *o.max_error_percent));
    }
  }
  return report;
}

}  // namespace

bool run_validate(const ValidateOptions& o, std::ostream& out) {
  const auto check_bound = [](const std::optional<double>& b, const char* flag) {
    if (b && (!(*b >= 0) || !(*b <= 1e6))) {
      throw InputError("command line", "",
                       fmt::format("{} must be a percentage from 0 to 1e6, got {:g}", flag, *b));
    }
  };
  check_bound(o.max_median_error_percent, "--max-median-error");
  check_bound(o.max_error_percent, "--max-error");
  std::vector<const CatalogGpu*> gpus;
  std::vector<ServingResult> serving;
  std::vector<ServingRecordFile> serving_fit;
  const std::vector<ValidationRecord> records =
      load_records(o.paths, gpus, o.fit || o.search ? nullptr : &serving,
                   o.fit ? &serving_fit : nullptr);
  if (o.fit) {
    print_fit(records, gpus, out);
    print_serving_fit(serving_fit, out);
    return true;
  }
  if (o.search) {
    print_search_regrets(search_regrets(records), o.format, out);
    return true;
  }
  std::vector<RecordResult> results;
  results.reserve(records.size());
  for (const ValidationRecord& r : records) results.push_back(validate_record(r));
  ValidationReport report = summarize_all(results, o);
  report.serving = std::move(serving);
  if (o.format == "json") {
    print_validation_json(results, report, o, out);
  } else if (o.format == "csv") {
    print_validation_csv(results, out);
  } else {
    print_validation_text(results, report, out);
  }
  return report.within;
}

}  // namespace planner

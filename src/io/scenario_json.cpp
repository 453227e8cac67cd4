#include "planner/io/scenario_json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <numeric>

#include "planner/io/constraints.hpp"
#include "planner/io/presets.hpp"
#include "planner/base/one_line.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/read_input.hpp"
#include "planner/io/resilience_json.hpp"
#include "planner/model/legality.hpp"
#include "scenario_rules.hpp"
#include "scenario_sections.hpp"

namespace planner {
namespace {

using namespace json_input;

// ---- Parsing with the loader's syntax rules ---------------------------------------------

/// A SAX handler that builds the document as json::parse does, rejecting repeated keys
/// (nlohmann keeps the last one silently) and deep nesting, and tracking the JSON pointer of
/// the current position for the message. It wraps nlohmann's own DOM builder rather than
/// using the callback form of json::parse: that parser, after each object closes, scans its
/// parent for a discarded element, so an object of 100,000 members took over 30 s to read.
class SyntaxGuard {
 public:
  using string_t = json::string_t;

  SyntaxGuard(json& result, const std::string& origin, std::string base)
      : dom_(result), origin_(origin), base_(std::move(base)) {}

  bool null() { return value(dom_.null()); }
  bool boolean(bool v) { return value(dom_.boolean(v)); }
  bool number_integer(json::number_integer_t v) { return value(dom_.number_integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(dom_.number_unsigned(v)); }
  bool number_float(json::number_float_t v, const string_t& s) {
    return value(dom_.number_float(v, s));
  }
  bool string(string_t& v) { return value(dom_.string(v)); }
  bool binary(json::binary_t& v) { return value(dom_.binary(v)); }

  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }

  bool key(string_t& k) {
    Frame& frame = stack_.back();
    frame.key = k;
    if (!frame.keys.insert(k).second) {
      fail(origin_, pointer(), "duplicate key; each key may appear once in an object");
    }
    return dom_.key(k);
  }

  template <class Exception>
  bool parse_error(std::size_t at, const std::string& token, const Exception& e) {
    return dom_.parse_error(at, token, e);  // throws e
  }

 private:
  struct Frame {
    bool array;
    std::string key;    ///< current key, in an object
    std::size_t index;  ///< current element, in an array
    std::unordered_set<std::string> keys;
  };

  bool open(bool array) {
    if (stack_.size() >= static_cast<std::size_t>(max_depth)) {
      fail(origin_, pointer(), fmt::format("JSON nested deeper than {} levels", max_depth));
    }
    stack_.push_back(Frame{array, {}, 0, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return value(true);
  }

  /// After a whole value: the next one in an array has the next index.
  bool value(bool ok) {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
    return ok;
  }

  [[nodiscard]] std::string pointer() const {
    std::string out = base_;
    for (const Frame& f : stack_) {
      out += "/" + (f.array ? std::to_string(f.index) : escape_token(f.key));
    }
    return out;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const std::string& origin_;
  std::string base_;
  std::vector<Frame> stack_;
};

/// Parses `text`; returns nullopt with `syntax_error` set on malformed JSON. Repeated keys and
/// deep nesting throw InputError at once: they are errors even where text may fall back to
/// a string (--set).
std::optional<json> try_parse(std::string_view text, const std::string& origin,
                              const std::string& base, std::string& syntax_error) {
  json result;
  SyntaxGuard guard(result, origin, base);
  try {
    json::sax_parse(text.begin(), text.end(), &guard);
    return result;
  } catch (const json::exception& e) {
    // "parse error at line 4, column 3: syntax error ..." -> "malformed JSON at line 4, ..."
    std::string message = library_message(e.what());
    if (message.starts_with("parse error")) message.erase(0, 11);
    if (!message.starts_with(" at")) message.insert(0, ": ");
    syntax_error = "malformed JSON" + message;
    return std::nullopt;
  }
}

// ---- Overrides ----------------------------------------------------------------------------

const std::string set_origin = "--set";

/// The reference tokens of an override's pointer; the root ("") is refused, since replacing
/// the whole scenario is not an override.
std::vector<std::string> override_tokens(const std::string& pointer) {
  if (!pointer.starts_with("/")) {
    fail(set_origin, pointer,
         fmt::format("a JSON pointer starts with '/', such as /cluster/nodes{}",
                     pointer.empty() ? "" : fmt::format(" (did you mean /{}?)", pointer)));
  }
  std::vector<std::string> tokens;
  try {
    for (json::json_pointer p(pointer); !p.empty(); p.pop_back()) {
      tokens.insert(tokens.begin(), p.back());
    }
  } catch (const json::exception& e) {
    fail(set_origin, pointer, "malformed JSON pointer: " + library_reason(e.what()));
  }
  return tokens;
}

/// The object that will hold the last token. Intermediate objects are never created: a
/// misspelt "/cluster/gpux/memory" would otherwise add a key the loader then rejects far
/// from its cause.
json& override_parent(json& doc, const std::vector<std::string>& tokens,
                      const std::string& pointer) {
  json* node = &doc;
  std::string walked;  // the pointer of *node
  for (std::size_t i = 0; i + 1 < tokens.size() && node->is_object(); ++i) {
    const auto it = node->find(tokens[i]);
    if (it == node->end()) {
      std::vector<std::string> keys;
      for (const auto& item : node->items()) keys.push_back(item.key());
      const auto guess = closest(tokens[i], keys);
      // Each token as the error line shows a pointer's: escaped and cut (one_line).
      const std::string missing = one_line(walked, error_line_limit) + "/" +
                                  one_line(escape_token(tokens[i]), echo_limit);
      fail(set_origin, pointer,
           fmt::format("{} does not exist{}; --set adds keys only to existing objects{}", missing,
                       guess ? fmt::format(" (did you mean '{}'?)", *guess) : "",
                       guess ? "" : fmt::format(", so set it whole: {}={{...}}", missing)));
    }
    node = &*it;
    walked += "/" + escape_token(tokens[i]);
  }
  if (!node->is_object()) {
    fail(set_origin, pointer,
         fmt::format("{} is not an object; --set replaces keys of objects only",
                     walked.empty() ? "the document" : one_line(walked, error_line_limit)));
  }
  return *node;
}

/// A catalog GPU serves at the fitted decode reads and per-layer cost (data/gpus.json
/// serving_read) unless the workload types them; a GPU given by numbers keeps the scenario's
/// figures (its whole bandwidth, no fixed cost unless typed), as a typed FLOP rate is taken
/// as the effective one.
void apply_serving_read(Scenario& s, const json& workload) {
  if (s.workload.kind != WorkloadKind::serving) return;
  if (!(s.cluster.gpu.peak_flops_by_dtype[static_cast<std::size_t>(Dtype::bf16)] > 0)) return;
  const ServingRead& read = serving_read();
  Serving& w = s.workload.serving;
  if (!workload.contains("memory_bandwidth_efficiency")) {
    w.memory_bandwidth_efficiency = read.weights_efficiency.value;
    w.kv_bandwidth_efficiency = read.kv_efficiency.value;
  }
  if (!workload.contains("layer_step_time")) w.layer_step_seconds = read.layer_step_seconds.value;
  w.catalog_reads =
      !workload.contains("memory_bandwidth_efficiency") && !workload.contains("layer_step_time");
}

/// The compute dtype needs a rate, and a serving job's weight dtype sets its bytes per
/// parameter unless the workload gives them.
void check_precision(Scenario& s, const std::string& origin, bool given, bool bytes_given) {
  // FP8 GEMMs reach a smaller fraction of their peak than bf16 ones, by recipe; the ratio is
  // fitted to single-node FP8/BF16 run pairs (data/gpus.json fp8_efficiency_ratio). Applied
  // whatever set the compute format (the scenario's precision key, or an expanded model).
  if (s.model.precision.compute == Dtype::fp8 && s.cluster.gpu.fp8_rate_from_efficiency) {
    s.cluster.gpu.flops_by_dtype[static_cast<std::size_t>(Dtype::fp8)] *=
        fp8_efficiency_ratio(s.model.precision.fp8_recipe).value;
  }
  if (!given) return;
  if (s.workload.kind == WorkloadKind::serving && !bytes_given) {
    s.workload.serving.bytes_per_param = bytes_of(s.model.precision.weights);
  }
  const Dtype compute = s.model.precision.compute;
  if (!(flops_for(s.cluster.gpu, compute) > 0)) {
    fail(origin, "/model/precision/compute",
         fmt::format("no FLOP rate for {}: add /cluster/gpu/flops_by_dtype/{}, such as "
                     "\"800 TFLOP/s\"",
                     to_string(compute), to_string(compute)));
  }
}

}  // namespace

// ---- Public API ---------------------------------------------------------------------------

Scenario load_scenario(const json& doc, const std::string& origin) {
  const Object top(doc, "", origin,
                   {"name", "description", "model", "cluster", "workload", "plan", "expect",
                    "stragglers", "resilience", "constraints"});
  Scenario s;
  s.origin = origin;
  s.name = top.maybe_text("name").value_or("");
  (void)top.maybe_text("description");
  // A preset or an HF config.json expands into the plain model object first (io/presets).
  const std::string folder =
      origin == "<stdin>" ? "" : std::filesystem::path(origin).parent_path().string();
  s.model = read_model(
      expand_model(top.need("model", "an object with layers, hidden, heads, vocab and seq_len, "
                                     "or a \"preset\" (planner list models) and seq_len"),
                   origin, folder),
      origin);
  if (const json* c = top.find("constraints")) {
    const Object o(*c, "/constraints", origin, {"fix", "framework", "rank"});
    if (const auto fix = o.maybe_text("fix")) {
      s.constraints = parse_fix(*fix, origin, "/constraints/fix");
    }
    if (const auto f = o.maybe_text("framework")) {
      s.constraints.framework = parse_framework(*f, origin, "/constraints/framework");
    }
    if (const auto r = o.maybe_text("rank")) {
      s.constraints.trusted = parse_rank(*r, origin, "/constraints/rank");
    }
  }
  // The workload's kind, read ahead of it: a serving engine's catalog rate differs.
  const json* workload = top.find("workload");
  const bool serving = workload != nullptr && workload->is_object() &&
                       workload->value("kind", json()) == "serving";
  s.cluster = read_cluster(
      top.need("cluster", "an object with nodes, gpus_per_node, gpu, intra_node and inter_node"),
      origin, serving);
  s.workload = read_workload(
      top.need("workload", "an object with kind \"training\" or \"serving\""), origin);
  check_fix_for_workload(s.constraints, s.workload.kind, origin, "/constraints/fix");
  check_pinned(s, origin, "/constraints/fix");
  check_precision(s, origin, top.find("model")->contains("precision"),
                  top.find("workload")->contains("bytes_per_param"));
  apply_serving_read(s, *top.find("workload"));
  if (s.workload.kind == WorkloadKind::training) {
    // The kernel the workload names picks its measured curve (none off the catalog).
    s.cluster.gpu.attention_rate = s.cluster.gpu.attention_rates[static_cast<std::size_t>(
        s.workload.training.attention_kernel)];
    const double sequences =
        s.workload.training.global_batch_tokens / static_cast<double>(s.model.seq_len);
    if (sequences > max_sequences_per_step) {
      fail(origin, "/workload/global_batch_tokens",
           fmt::format("global_batch_tokens / seq_len = {:.10g} / {} = {:.10g} sequences per step "
                       "exceeds the limit of {}",
                       s.workload.training.global_batch_tokens, s.model.seq_len, sequences,
                       limit_text(static_cast<std::int64_t>(max_sequences_per_step))));
    }
  }
  if (const json* plan = top.find("plan")) {
    s.plan = read_plan(*plan, s.workload, origin);
    validate_plan(s, *s.plan, origin, "/plan");
    check_stated_overlaps(*plan, *s.plan, origin);
  }
  if (const json* expect = top.find("expect")) s.expect = read_expect(*expect, origin);
  if (const json* v = top.find("stragglers")) s.stragglers = read_stragglers(*v, origin);
  if (const json* v = top.find("resilience")) s.resilience = read_resilience(*v, origin);
  check_plausible(s);
  return s;
}

Model load_model(const json& model, const std::string& origin) {
  return read_model(model, origin);
}

json parse_json_text(std::string_view text, const std::string& origin) {
  std::string error;
  auto doc = try_parse(text, origin, "", error);
  if (!doc) fail(origin, "", error);
  return std::move(*doc);
}

Scenario load_scenario_text(std::string_view text, const std::string& origin) {
  return load_scenario(parse_json_text(text, origin), origin);
}

std::string file_origin(const std::string& path) { return path == "-" ? "<stdin>" : path; }

json read_json_file(const std::string& path) {
  return parse_json_text(read_input(path), file_origin(path));
}

Scenario load_scenario_file(const std::string& path) {
  return load_scenario(read_json_file(path), file_origin(path));
}

void apply_override(json& doc, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    fail(set_origin, "",
         fmt::format("expected POINTER=VALUE, such as /cluster/nodes=16, got {}",
                     quote(assignment)));
  }
  const std::string pointer(assignment.substr(0, eq));
  const std::vector<std::string> tokens = override_tokens(pointer);
  json& parent = override_parent(doc, tokens, pointer);
  std::string error;
  const std::string_view value_text = assignment.substr(eq + 1);
  auto value = try_parse(value_text, set_origin, pointer, error);
  // A string must be valid UTF-8, as a JSON file's strings are (the parser checks those): the
  // JSON writer throws on anything else, and a name printed in the output ended in exit 3.
  if (!value && !valid_utf8(value_text)) {
    fail(set_origin, pointer,
         fmt::format("the value \"{}\" is not valid UTF-8 text", one_line(value_text, echo_limit)));
  }
  // Not JSON: the text itself, so that --set /x/bandwidth=25GB/s needs no shell quoting.
  parent[tokens.back()] = value ? std::move(*value) : json(std::string(value_text));
}

Scenario load_scenario_for_search(const nlohmann::json& doc, const std::string& origin,
                                  std::string& warning) {
  warning.clear();
  try {
    return load_scenario(doc, origin);
  } catch (const InputError& e) {
    const bool in_plan = e.pointer() == "/plan" || e.pointer().rfind("/plan/", 0) == 0;
    if (!in_plan || !doc.is_object() || !doc.contains("plan") || !doc.at("plan").is_object()) {
      throw;
    }
    nlohmann::json without = doc;
    without.erase("plan");
    Scenario s = load_scenario(without, origin);
    // An ep or etp the model itself rules out (ep not dividing the experts, ep on a dense
    // model, etp not dividing tp) is a mistake about the model, not a plan a changed cluster
    // broke: an error for every command (issue 10: bad MoE input exits 2).
    if (e.pointer() == "/plan/ep" || e.pointer() == "/plan/etp") {
      const std::optional<Violation> v =
          expert_model_violation(s.model, read_plan(doc.at("plan"), s.workload, origin));
      if (v) throw;
    }
    // Only the world size changed (a sweep over nodes, say): keep the pinned tp, pp, cp,
    // recompute and micro-batch, which a measured step time belongs to, and refill dp.
    if (e.pointer() == "/plan") {
      const nlohmann::json& plan = doc.at("plan");
      auto degree_of = [&](const char* key) -> std::int64_t {
        if (!plan.contains(key)) return 1;
        const nlohmann::json& v = plan.at(key);
        return v.is_number_integer() ? v.get<std::int64_t>() : 0;
      };
      const std::int64_t model = degree_of("tp") * degree_of("pp") * degree_of("cp");
      const std::int64_t world = world_size(s.cluster);
      if (model > 0 && model <= world && world % model == 0) {
        nlohmann::json refilled = doc;
        refilled["plan"]["dp"] = world / model;
        try {
          Scenario r = load_scenario(refilled, origin);
          warning = fmt::format("{}; the pinned plan's dp is refilled to {}", e.what(),
                                world / model);
          return r;
        } catch (const InputError&) {
        }
      }
    }
    warning = std::string(e.what()) + "; the pinned plan is ignored";
    if (s.workload.kind == WorkloadKind::training &&
        s.workload.training.step_time_per_micro_batch_seconds > 0) {
      warning += " (the measured step time now calibrates one GPU holding the whole model)";
    }
    return s;
  }
}

}  // namespace planner

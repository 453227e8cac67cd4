// libFuzzer harness: arbitrary bytes through the scenario loader and, for inputs that load,
// through everything `planner plan` and `planner memory` do with them (docs/testing.md).
//
// InputError is the one expected failure: bad input must be rejected with a message. Any
// other exception (std::logic_error from dump_json's non-finite check, nlohmann's
// type_error, std::bad_alloc, ...) escapes and crashes the fuzzer, as does a sanitizer report,
// a NaN or infinity printed in the text or CSV output, or an input that runs past -timeout
// (the search must stay bounded).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "non_finite_word.hpp"
#include "planner/io/context.hpp"
#include "planner/base/error.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/report/report.hpp"
#include "planner/io/scenario_json.hpp"

namespace {

using test_support::has_non_finite_word;

/// Text output after its first line: the title repeats the scenario's name, which is the
/// fuzzer's to choose.
std::string_view after_title(std::string_view text) {
  const std::size_t newline = text.find('\n');
  return newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
}

void require_finite_text(std::string_view text, const char* what) {
  if (has_non_finite_word(text)) {
    std::fprintf(stderr, "non-finite number in the %s output:\n%.*s\n", what,
                 static_cast<int>(text.size()), text.data());
    std::abort();
  }
}

// ---- Structure-aware mutation -------------------------------------------------------------
// Byte-level mutations of JSON mostly break its syntax, so the loader rejects them and the
// planner is never reached. Half the time, the mutator below parses the input instead and
// changes one value: to a number or quantity at or beyond a limit of docs/errors.md, a scaled
// copy of itself, another JSON type, or it deletes the key. Inputs that do not parse get
// libFuzzer's own byte-level mutation.

using nlohmann::json;

const std::vector<json>& interesting_values() {
  static const std::vector<json> values = [] {
    std::vector<json> v;
    for (const double x : {0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 1e-300, 1e300, 1e15, 1e16, 1e18, 1e21,
                           4.5, 0x1p50, 0x1p60, 0x1p62})
      v.emplace_back(x);
    for (const std::int64_t i :
         {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3},
          std::int64_t{8}, std::int64_t{64}, std::int64_t{65536}, std::int64_t{65537},
          std::int64_t{1} << 20, std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1,
          std::int64_t{1} << 26, std::int64_t{1} << 30, std::int64_t{1} << 32,
          std::int64_t{720720}, std::int64_t{1801800}, std::int64_t{14414400},
          std::int64_t{9223372036854775807}})
      v.emplace_back(i);
    v.emplace_back(std::uint64_t{18446744073709551615u});
    for (const char* q :
         {"1 B/s", "0.125 B/s", "1e18 B/s", "8e-9 Gbps", "1 Gb/s", "0 us", "60 s", "1e-9 ns",
          "1 B", "0 B", "1 PiB", "1152921504606846976 B", "1 FLOP/s", "1e21 FLOP/s",
          "400 TFLOP/s", "192 GiB", "25 ms", "3600 s", "1e6 s", "training", "serving", "none",
          "selective", "full", "intra_node", "inter_node", "tp", "cp", "dp", "pp", ""})
      v.emplace_back(q);
    v.emplace_back(true);
    v.emplace_back(false);
    v.emplace_back(nullptr);
    v.emplace_back(json::array({"tp", "cp", "dp", "pp"}));
    v.emplace_back(json::array({"pp", "dp", "cp", "tp"}));
    v.emplace_back(json::object());
    return v;
  }();
  return values;
}

void collect(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) collect(it.value(), at / it.key(), out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) collect(j[i], at / i, out);
  }
}

/// Changes one value of `doc`; false when there was nothing to change.
bool mutate_json(json& doc, std::mt19937_64& rng) {
  std::vector<json::json_pointer> places;
  collect(doc, json::json_pointer(), places);
  if (places.size() < 2) return false;
  const json::json_pointer at = places[1 + rng() % (places.size() - 1)];  // never the root
  json& v = doc[at];
  switch (rng() % 4) {
    case 0: {  // an interesting value
      const auto& values = interesting_values();
      v = values[rng() % values.size()];
      return true;
    }
    case 1:  // a scaled or shifted number
      if (v.is_number_integer()) {
        // Unsigned arithmetic wraps instead of overflowing; the conversion back is modular.
        const auto u = static_cast<std::uint64_t>(v.get<std::int64_t>());
        const std::uint64_t choices[] = {u + 1, u - 1, u * 2, u / 2, u * 1024};
        v = static_cast<std::int64_t>(choices[rng() % 5]);
        return true;
      }
      if (v.is_number()) {
        v = v.get<double>() * std::ldexp(1.0, static_cast<int>(rng() % 41) - 20);
        return true;
      }
      [[fallthrough]];
    case 2: {  // delete the key (or array element)
      const json::json_pointer parent = at.parent_pointer();
      json& p = doc[parent];
      if (p.is_object()) {
        p.erase(at.back());
        return true;
      }
      if (p.is_array() && !p.empty()) {
        p.erase(p.begin() + static_cast<std::ptrdiff_t>(rng() % p.size()));
        return true;
      }
      return false;
    }
    default: {  // copy another value here (a sibling's number into a quantity, ...)
      v = json(doc[places[rng() % places.size()]]);
      return true;
    }
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  json doc = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !mutate_json(doc, rng)) return LLVMFuzzerMutate(data, size, max_size);
  const std::string text = doc.dump();
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  planner::Scenario s;
  try {
    s = planner::load_scenario_text(text, "fuzz");
    // A measured step time is checked against the model when the planner starts: it too is
    // bad input, reported the same way.
    (void)planner::make_context(s);
  } catch (const planner::InputError&) {
    return 0;  // rejected with a message: the expected outcome for bad input
  }

  // `planner plan`, without thresholds (they re-run the search hundreds of times).
  const planner::PlanReport r = planner::make_plan_report(s, 3, false);
  (void)planner::dump_json(planner::report_json(r));  // throws std::logic_error on NaN/inf
  require_finite_text(after_title(planner::report_text(r)), "plan text");
  require_finite_text(planner::report_csv(r), "plan CSV");

  // `planner memory` on the pinned plan.
  if (s.plan) {
    const planner::Context ctx = planner::make_context(s);
    const planner::Evaluation e = planner::evaluate(ctx, *s.plan);
    (void)planner::dump_json(planner::evaluation_report_json(s, ctx, e));
    require_finite_text(after_title(planner::evaluation_report_text(s, ctx, e)), "memory text");
    require_finite_text(planner::evaluation_report_csv(ctx, e), "memory CSV");
  }
  return 0;
}

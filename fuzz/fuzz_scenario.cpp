// libFuzzer harness: arbitrary bytes through the scenario loader and, for inputs that load,
// through everything `planner plan` and `planner memory` do with them (docs/testing.md).
//
// InputError is the one expected failure: bad input must be rejected with a message. Any
// other exception (std::logic_error from dump_json's non-finite check, nlohmann's
// type_error, std::bad_alloc, ...) escapes and crashes the fuzzer, as does a sanitizer report,
// a NaN or infinity printed in the text or CSV output, or an input that runs past -timeout
// (the search must stay bounded).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "planner/error.hpp"
#include "planner/evaluate.hpp"
#include "planner/report.hpp"
#include "planner/scenario_json.hpp"

namespace {

/// True when `text` holds "nan" or "inf" as a word of its own (fmt prints non-finite doubles
/// so); "inference" or "information" do not count.
bool has_non_finite_word(std::string_view text) {
  const auto is_word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (std::string_view word : {std::string_view("nan"), std::string_view("inf")}) {
    for (std::size_t at = text.find(word); at != std::string_view::npos;
         at = text.find(word, at + 1)) {
      const bool starts = at == 0 || !is_word_char(text[at - 1]);
      const std::size_t end = at + word.size();
      const bool ends = end == text.size() || !is_word_char(text[end]);
      if (starts && ends) return true;
    }
  }
  return false;
}

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  planner::Scenario s;
  try {
    s = planner::load_scenario_text(text, "fuzz");
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

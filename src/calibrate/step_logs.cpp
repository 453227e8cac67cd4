// Training step logs: Megatron-LM iteration lines, torchtitan step lines, or a CSV.
// Formats as the frameworks print them (docs/calibrate.md §Step logs cites the source lines).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "planner/calibrate/inputs.hpp"
#include "planner/calibrate/text_lines.hpp"
#include "planner/base/error.hpp"

namespace planner::calibrate {

namespace {

/// The number right after `key` (spaces skipped), read up to the next space or '|'; commas
/// inside it are thousands separators (torchtitan's "tps: 12,345").
std::optional<double> number_after(std::string_view line, std::string_view key,
                                   std::size_t* where = nullptr) {
  const std::size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < line.size() && line[i] == ' ') ++i;
  std::string digits;
  for (; i < line.size() && line[i] != ' ' && line[i] != '|' && line[i] != '/'; ++i) {
    if (line[i] != ',') digits += line[i];
  }
  if (where) *where = i;
  return parse_number(digits);
}

/// torchtitan colours its fields with ANSI escapes (ESC '[' … 'm'); drop them.
std::string strip_ansi(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

/// A step number as the log prints it, when it is a whole number a run can reach (0 … 2^53,
/// where a double still counts every integer); "iteration 1e300" was cast to int64, undefined
/// behaviour (UBSan), and wrapped in Release (issue 32).
std::optional<std::int64_t> step_number(std::optional<double> v) {
  constexpr double max_step = 9007199254740992.0;  // 2^53
  if (!v || !(*v >= 0 && *v <= max_step) || *v != std::floor(*v)) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

/// A step time a training step can take: from 1 us to a day. A longer "step" is a misread
/// field or a stalled run; no training step is faster than a microsecond (one kernel launch
/// takes a few), and a step of 1e-308 s made the scaling efficiency infinite (exit 3).
bool plausible_step_seconds(double s) { return s >= 1e-6 && s <= 86400.0; }

/// Tokens per second per GPU: from 1e-6 (one token in 11 days) to below 1e9 (an H100 runs
/// ~1e4-1e5 on real models); a denormal rate overflowed the efficiency ratios the same way.
bool plausible_tokens_per_second(double tps) { return tps >= 1e-6 && tps < 1e9; }

void megatron_line(std::string_view l, std::size_t line, StepLog& log) {
  const auto ms = number_after(l, "elapsed time per iteration (ms):");
  if (!ms || *ms <= 0) {
    log.skipped.push_back({line, "iteration line without a positive elapsed time"});
    return;
  }
  const auto iteration = step_number(number_after(l, "iteration"));
  if (l.find("iteration") != l.npos && number_after(l, "iteration") && !iteration) {
    log.skipped.push_back({line, "iteration number not a whole number from 0 to 2^53"});
    return;
  }
  if (!plausible_step_seconds(*ms * 1e-3)) {
    log.skipped.push_back({line, "elapsed time per iteration below 1 us or above a day"});
    return;
  }
  StepRow r;
  r.line = line;
  r.step = iteration.value_or(0);
  r.seconds = *ms * 1e-3;
  r.tflops_per_gpu = number_after(l, "throughput per GPU (TFLOP/s/GPU):").value_or(0);
  log.rows.push_back(r);
}

void torchtitan_line(std::string_view l, std::size_t line, StepLog& log) {
  const auto tps = number_after(l, "tps:");
  const auto step = number_after(l, "step:");
  if (!tps || *tps <= 0 || !step) {
    log.skipped.push_back({line, "step line without a step number and a positive tps"});
    return;
  }
  const auto number = step_number(step);
  if (!number) {
    log.skipped.push_back({line, "step number not a whole number from 0 to 2^53"});
    return;
  }
  if (!plausible_tokens_per_second(*tps)) {
    log.skipped.push_back({line, "tps below 1e-6 or of 1e9 or more per GPU, not a measurement"});
    return;
  }
  StepRow r;
  r.line = line;
  r.step = *number;
  r.tokens_per_second_per_gpu = *tps;
  r.tflops_per_gpu = number_after(l, "tflops:").value_or(0);
  // Some torchtitan versions append "elapsed_time_per_step: 1.234s".
  if (const std::size_t at = l.find("elapsed_time_per_step:"); at != l.npos) {
    std::string v = trim(l.substr(at + 22));
    v = v.substr(0, v.find_first_of(" s"));
    r.seconds = parse_number(v).value_or(0);
    if (!plausible_step_seconds(r.seconds)) r.seconds = 0;  // not read: tps stays the figure
  }
  log.rows.push_back(r);
}

void csv_rows(const std::vector<std::string_view>& lines, StepLog& log) {
  std::optional<std::size_t> step_col, time_col;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string l = trim(lines[i]);
    const std::string where = fmt::format("{}:{}", log.origin, i + 1);
    if (l.empty() || l[0] == '#') continue;
    const std::vector<std::string> f = csv_fields(l);
    if (!time_col) {
      for (std::size_t c = 0; c < f.size(); ++c) {
        if (f[c] == "step") step_col = c;
        if (f[c] == "seconds") time_col = c;
        if (f[c] == "ms" || f[c] == "milliseconds" || f[c] == "time") {
          throw InputError(where, "", fmt::format("column '{}' has no or the wrong unit, "
                                                  "expected 'seconds'", f[c]));
        }
      }
      if (!step_col || !time_col) {
        throw InputError(where, "", "not a Megatron-LM or torchtitan log and not a step CSV, "
                                    "expected 'elapsed time per iteration (ms):' lines, "
                                    "'step: … tps: …' lines, or a header 'step,seconds'");
      }
      continue;
    }
    const auto step = f.size() > *step_col ? parse_int(f[*step_col]) : std::nullopt;
    const auto s = f.size() > *time_col ? parse_number(f[*time_col]) : std::nullopt;
    if (!step || !s || *s <= 0) {
      log.skipped.push_back({i + 1, "row without a step number and a positive time"});
      continue;
    }
    const std::int64_t number = step.value_or(-1);
    const double seconds = s.value_or(0);
    if (number < 0 || !plausible_step_seconds(seconds)) {
      log.skipped.push_back(
          {i + 1, "step number below 0 or a step time below 1 us or above a day"});
      continue;
    }
    log.rows.push_back({i + 1, number, seconds, 0, 0});
  }
}

}  // namespace

std::string_view to_string(StepLogFormat f) noexcept {
  switch (f) {
    case StepLogFormat::megatron: return "Megatron-LM";
    case StepLogFormat::torchtitan: return "torchtitan";
    case StepLogFormat::csv: return "CSV";
  }
  return "CSV";
}

StepLog parse_step_log(std::string_view text, const std::string& origin) {
  StepLog log;
  log.origin = origin;
  const std::vector<std::string_view> lines = split_lines(text);
  bool megatron = false, titan = false;
  for (std::string_view l : lines) {
    megatron = megatron || l.find("elapsed time per iteration (ms):") != l.npos;
    titan = titan || (l.find("step:") != l.npos && l.find("tps:") != l.npos);
  }
  log.format = megatron ? StepLogFormat::megatron
                        : (titan ? StepLogFormat::torchtitan : StepLogFormat::csv);
  if (log.format == StepLogFormat::csv) {
    csv_rows(lines, log);
  } else {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string l = strip_ansi(lines[i]);
      if (megatron && l.find("elapsed time per iteration") != l.npos) {
        megatron_line(l, i + 1, log);
      } else if (titan && l.find("step:") != l.npos && l.find("tps:") != l.npos &&
                 l.find("validate step:") == l.npos) {
        torchtitan_line(l, i + 1, log);
      } else if (!trim(l).empty()) {
        log.skipped.push_back({i + 1, "not a training step line"});
      }
    }
  }
  if (log.rows.empty()) {
    throw InputError(origin + ":" + std::to_string(std::max<std::size_t>(1, lines.size())), "",
                     fmt::format("no {} step with a time, expected at least one{}",
                                 to_string(log.format),
                                 log.skipped.empty()
                                     ? ""
                                     : fmt::format(" ({} line(s) skipped, line {}: {})",
                                                   log.skipped.size(), log.skipped[0].line,
                                                   log.skipped[0].reason)));
  }
  return log;
}

}  // namespace planner::calibrate

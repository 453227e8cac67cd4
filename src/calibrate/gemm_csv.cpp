// The GEMM CSV (docs/calibrate.md §GEMM CSV) and the file reader shared by the parsers.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "planner/calibrate/inputs.hpp"
#include "planner/calibrate/text_lines.hpp"
#include "planner/base/error.hpp"
#include "planner/io/read_input.hpp"

namespace planner::calibrate {

std::string read_text_file(const std::string& path) { return read_measurement_file(path); }

namespace {

/// "# device: NVIDIA H200 (132 SMs)" → name and SM count.
void read_device_comment(std::string_view line, GemmTable& t) {
  const std::string_view key = "# device:";
  if (line.substr(0, key.size()) != key) return;
  std::string rest = trim(line.substr(key.size()));
  const std::size_t open = rest.rfind('(');
  if (open != std::string::npos && rest.find(" SMs)", open) != std::string::npos) {
    t.sms = parse_int(rest.substr(open + 1, rest.find(' ', open) - open - 1)).value_or(0);
    rest = trim(std::string_view(rest).substr(0, open));
  }
  t.device = rest;
}

struct GemmColumns {
  std::size_t m, n, k, dtype, value;
  bool tflops = false;  ///< the value column is TFLOP/s, else seconds
};

GemmColumns gemm_columns(const std::vector<std::string>& names, const std::string& where) {
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < names.size(); ++i) at.emplace(names[i], i);
  for (const char* required : {"m", "n", "k", "dtype"}) {
    if (!at.count(required)) {
      throw InputError(where, "", fmt::format("no column '{}' in the header, expected columns "
                                              "m,n,k,dtype and seconds or tflops", required));
    }
  }
  GemmColumns c{at["m"], at["n"], at["k"], at["dtype"], 0, false};
  if (at.count("seconds")) {
    c.value = at["seconds"];
  } else if (at.count("tflops")) {
    c.value = at["tflops"];
    c.tflops = true;
  } else {
    for (const char* wrong : {"ms", "milliseconds", "us", "time", "gflops", "flops", "tflop/s"}) {
      if (at.count(wrong)) {
        throw InputError(where, "", fmt::format("column '{}' has the wrong unit, expected "
                                                "'seconds' (s) or 'tflops' (TFLOP/s)", wrong));
      }
    }
    throw InputError(where, "", "no timing column, expected 'seconds' or 'tflops'");
  }
  return c;
}

}  // namespace

GemmTable parse_gemm_csv(std::string_view text, const std::string& origin) {
  GemmTable t;
  t.origin = origin;
  std::optional<GemmColumns> cols;
  std::size_t header_line = 0;
  const std::vector<std::string_view> lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t line = i + 1;
    const std::string where = fmt::format("{}:{}", origin, line);
    const std::string l = trim(lines[i]);
    if (l.empty()) continue;
    if (l[0] == '#') {
      read_device_comment(l, t);
      continue;
    }
    std::vector<std::string> f = csv_fields(l);
    if (!cols) {
      for (std::string& name : f) std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      cols = gemm_columns(f, where);
      header_line = line;
      continue;
    }
    const std::size_t need = std::max({cols->m, cols->n, cols->k, cols->dtype, cols->value}) + 1;
    if (f.size() < need) {
      t.skipped.push_back({line, fmt::format("{} fields, expected at least {}", f.size(), need)});
      continue;
    }
    const auto m = parse_number(f[cols->m]), n = parse_number(f[cols->n]);
    const auto k = parse_number(f[cols->k]), v = parse_number(f[cols->value]);
    if (!m || !n || !k || *m < 1 || *n < 1 || *k < 1) {
      throw InputError(where, "", "m, n, k must be positive integers, expected e.g. 4096,4096,4096");
    }
    if (!v || *v <= 0) {
      t.skipped.push_back({line, fmt::format("timing '{}' is not a positive number",
                                             f[cols->value])});
      continue;
    }
    GemmRow r{line, *m, *n, *k, f[cols->dtype], 0};
    r.seconds = cols->tflops ? r.flop() / (*v * 1e12) : *v;
    // 10 PFLOP/s is above any single GPU's dense peak (B200 FP4 dense: 9 PFLOP/s): the
    // column is then in FLOP/s or GFLOP/s, or the seconds are milliseconds.
    const double rate = r.flop() / r.seconds;
    if (rate > max_gemm_flops_per_second) {
      throw InputError(where, "", fmt::format("{:.4g} FLOP in {:.4g} s is {:.4g} TFLOP/s, "
                                              "expected at most 10000 TFLOP/s: check the "
                                              "column's unit", r.flop(), r.seconds, rate / 1e12));
    }
    t.rows.push_back(std::move(r));
  }
  if (!cols) {
    throw InputError(origin + ":1", "", "no header, expected a line 'm,n,k,dtype,seconds'");
  }
  if (t.rows.size() < 2) {
    throw InputError(fmt::format("{}:{}", origin, header_line), "",
                     fmt::format("{} usable row(s), expected at least 2 GEMM sizes to fit the "
                                 "efficiency curve", t.rows.size()));
  }
  return t;
}

}  // namespace planner::calibrate

#include "planner/io/context.hpp"
#include "planner/cli/sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <ostream>
#include <thread>

#include "planner/base/error.hpp"
#include "planner/explain/explain.hpp"
#include "planner/io/quantity.hpp"
#include "planner/report/report.hpp"
#include "planner/io/scenario_json.hpp"

namespace planner {

using nlohmann::json;

namespace {

constexpr std::size_t max_points = 10'000'000;

[[noreturn]] void bad(const std::string& spec, const std::string& message) {
  throw InputError("--vary", "", fmt::format("'{}': {}", spec, message));
}

/// A range end: a plain number, or a number with any known unit, in base units.
double range_end(std::string_view text, const std::string& spec) {
  std::string t(text);
  char* end = nullptr;
  const double plain = std::strtod(t.c_str(), &end);
  if (end != t.c_str() && *end == '\0' && std::isfinite(plain)) return plain;
  return parse_any_quantity_text(t, "--vary", "").value;
  (void)spec;
}

bool integer_at(const json& doc, const std::string& pointer) {
  try {
    return doc.at(json::json_pointer(pointer)).is_number_integer();
  } catch (const json::exception&) {
    return false;
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

json value_of(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return json(text);
  }
}

}  // namespace

SweepAxis parse_vary(const std::string& spec, const json& doc) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || spec[0] != '/') {
    bad(spec, "expected POINTER=V1,V2,... or POINTER=START..STOP:STEPS[log], with POINTER a "
              "JSON pointer such as /cluster/inter_node/bandwidth");
  }
  SweepAxis axis;
  axis.pointer = spec.substr(0, eq);
  const std::string rhs = spec.substr(eq + 1);
  const std::size_t dots = rhs.find("..");
  if (dots == std::string::npos) {
    for (const std::string& item : split(rhs, ',')) {
      if (item.empty()) bad(spec, "empty item in the list");
      axis.values.push_back(value_of(item));
    }
    return axis;
  }
  const std::size_t colon = rhs.rfind(':');
  if (colon == std::string::npos || colon < dots) bad(spec, "a range needs ':STEPS', e.g. 5GB/s..400GB/s:20log");
  std::string steps_text = rhs.substr(colon + 1);
  const bool log = steps_text.size() >= 3 && steps_text.compare(steps_text.size() - 3, 3, "log") == 0;
  if (log) steps_text.resize(steps_text.size() - 3);
  char* end = nullptr;
  const long steps = std::strtol(steps_text.c_str(), &end, 10);
  if (steps_text.empty() || *end != '\0' || steps < 1 || steps > 1'000'000) {
    bad(spec, fmt::format("STEPS must be an integer from 1 to 1000000, got '{}'", steps_text));
  }
  const double start = range_end(rhs.substr(0, dots), spec);
  const double stop = range_end(rhs.substr(dots + 2, colon - dots - 2), spec);
  if (log && (start <= 0 || stop <= 0)) bad(spec, "a log range needs positive ends");
  const bool integer = integer_at(doc, axis.pointer);
  for (long i = 0; i < steps; ++i) {
    const double f = steps == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(steps - 1);
    double v = log ? start * std::pow(stop / start, f) : start + (stop - start) * f;
    if (integer) {
      axis.values.push_back(static_cast<std::int64_t>(std::llround(v)));
    } else {
      axis.values.push_back(v);
    }
  }
  return axis;
}

std::pair<std::size_t, std::size_t> shard_range(const std::string& shard, std::size_t points) {
  if (shard.empty()) return {0, points};
  const std::size_t slash = shard.find('/');
  char* end1 = nullptr;
  char* end2 = nullptr;
  const std::string k_text = shard.substr(0, slash);
  const std::string n_text = slash == std::string::npos ? "" : shard.substr(slash + 1);
  const long k = std::strtol(k_text.c_str(), &end1, 10);
  const long n = std::strtol(n_text.c_str(), &end2, 10);
  if (slash == std::string::npos || k_text.empty() || n_text.empty() || *end1 != '\0' ||
      *end2 != '\0' || n < 1 || k < 1 || k > n) {
    throw InputError("--shard", "", fmt::format("expected K/N with 1 <= K <= N, got '{}'", shard));
  }
  // 128-bit products: K·points can pass 2^64 when N is huge (__extension__: GCC and clang
  // provide the type; ISO C++ does not name it).
  __extension__ using wide = unsigned __int128;
  const auto slice = [&](long j) {
    return static_cast<std::size_t>(static_cast<wide>(j) * points / static_cast<wide>(n));
  };
  const auto lo = slice(k - 1);
  const auto hi = slice(k);
  return {lo, hi};
}

namespace {

struct PointResult {
  std::string csv;
  std::string jsonl;
};

/// RFC 4180: a field with a comma, a double quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_cell(const json& v) {
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{:.6g}", v.get<double>());
  return csv_field(v.dump());
}

PointResult run_point(const json& base, const std::vector<SweepAxis>& axes,
                      const std::vector<std::size_t>& index, const std::string& origin) {
  json doc = base;
  json point = json::object();
  std::string cells;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const json& v = axes[a].values[index[a]];
    doc[json::json_pointer(axes[a].pointer)] = v;
    point[axes[a].pointer] = v;
    cells += csv_cell(v) + ",";
  }
  std::string ignored;  // the pinned plan only matters for comparison; warned once up front
  const Scenario s = load_scenario_for_search(doc, origin, ignored);
  const Context ctx = make_context(s);
  SearchOptions options;
  options.keep = 1;
  options.accounting = false;  // only the winner is printed
  const SearchResult r = search(ctx, options);
  const BindingConstraint binding = binding_constraint(ctx);
  PointResult out;
  const std::string binding_kind(to_string(binding.kind));
  json line = {{"point", point}, {"binding_constraint", binding_kind}};
  if (r.found()) {
    const Evaluation& e = r.ranked.front();
    out.csv = cells + "ok," + plan_csv_row(ctx, e) + "," + binding_kind + "\n";
    line["status"] = "ok";
    line["best"] = plan_json(ctx, e);
  } else {
    const std::string header = plan_csv_header(ctx.workload.kind);
    const auto columns =
        static_cast<std::size_t>(std::count(header.begin(), header.end(), ',') + 1);
    out.csv = cells + "no_fit," + std::string(columns - 1, ',') + "," + binding_kind + "\n";
    line["status"] = "no_fit";
    line["best"] = nullptr;
  }
  out.jsonl = line.dump() + "\n";
  return out;
}

void progress(std::ostream& err, std::size_t done, std::size_t total,
              std::chrono::steady_clock::time_point start) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
  const int width = 30;
  const int filled = total ? static_cast<int>(width * done / total) : width;
  err << fmt::format("\r[{}{}] {}/{} {:.0f} points/s ETA {:.0f} s ", std::string(filled, '#'),
                     std::string(width - filled, '.'), done, total, rate, eta)
      << std::flush;
}

}  // namespace

int run_sweep(const SweepArgs& args, std::ostream& out, std::ostream& err) {
  json base = read_json_file(args.file);
  for (const std::string& s : args.sets) apply_override(base, s);
  const std::string origin = file_origin(args.file);
  // Load once unchanged, so errors in the file itself are reported as such.
  std::string warning;
  const Scenario scenario = load_scenario_for_search(base, origin, warning);
  if (!warning.empty()) err << "planner: warning: " << warning << "\n";
  std::vector<SweepAxis> axes;
  std::size_t points = 1;
  for (const std::string& spec : args.vary) {
    axes.push_back(parse_vary(spec, base));
    for (std::size_t a = 0; a + 1 < axes.size(); ++a) {
      if (axes[a].pointer == axes.back().pointer) {
        bad(spec, fmt::format("{} is already varied by an earlier --vary", axes.back().pointer));
      }
    }
    points *= axes.back().values.size();
    if (points > max_points) {
      throw InputError("--vary", "", fmt::format("the grid has more than {} points", max_points));
    }
  }
  // Not a structured binding: clang 14 cannot capture one in the lambdas below (P1091R3
  // arrived in clang 16).
  const std::pair<std::size_t, std::size_t> range = shard_range(args.shard, points);
  const std::size_t first = range.first;
  const std::size_t last = range.second;
  auto index_of = [&](std::size_t i) {
    std::vector<std::size_t> idx(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {
      idx[a] = i % axes[a].values.size();
      i /= axes[a].values.size();
    }
    return idx;
  };
  std::size_t plan_ignored = 0;
  // Validate every point before any work: a bad value aborts the sweep with exit code 2.
  for (std::size_t i = first; i < last; ++i) {
    json doc = base;
    const std::vector<std::size_t> idx = index_of(i);
    for (std::size_t a = 0; a < axes.size(); ++a) {
      apply_override(doc, axes[a].pointer + "=" + axes[a].values[idx[a]].dump());
    }
    std::string point_warning;
    (void)load_scenario_for_search(doc, fmt::format("{} (sweep point {})", origin, i + 1),
                                   point_warning);
    if (!point_warning.empty()) ++plan_ignored;
  }
  if (plan_ignored > 0 && warning.empty()) {
    err << fmt::format("planner: warning: the pinned plan does not fit {} of the {} points; "
                       "there its dp is refilled, or it is ignored\n",
                       plan_ignored, last - first);
  }
  std::vector<PointResult> results(last - first);
  unsigned threads = args.threads ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, last - first)));
  std::atomic<std::size_t> next{first};
  std::atomic<std::size_t> done{0};
  const bool show = !args.no_progress && isatty(STDERR_FILENO) && &err == &std::cerr;
  const auto start = std::chrono::steady_clock::now();
  // A point that throws (a bug, or memory exhaustion) stops the sweep: its exception is kept
  // and rethrown on this thread after the workers have joined, the first in grid order.
  std::vector<std::exception_ptr> failed(last - first);
  auto worker = [&] {
    for (std::size_t i = next++; i < last; i = next++) {
      try {
        results[i - first] = run_point(base, axes, index_of(i), origin);
      } catch (...) {
        failed[i - first] = std::current_exception();
      }
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (show) {
    std::thread bar([&] {
      while (done < last - first) {
        progress(err, done, last - first, start);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
    worker();
    for (std::thread& t : pool) t.join();
    bar.join();
    progress(err, done, last - first, start);
    err << "\n";
  } else {
    worker();
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  // The header belongs to shard 1 alone, so that shards concatenate to the whole output even
  // when some are empty (more shards than points).
  const bool first_shard =
      args.shard.empty() || std::strtol(args.shard.c_str(), nullptr, 10) == 1;
  if (args.format == "csv" && first_shard) {
    std::string header;
    for (const SweepAxis& a : axes) header += csv_field(a.pointer) + ",";
    out << header << "status," << plan_csv_header(scenario.workload.kind)
        << ",binding_constraint\n";
  }
  for (const PointResult& r : results) out << (args.format == "csv" ? r.csv : r.jsonl);
  return 0;  // points where nothing fits are rows with status no_fit, not a failure
}

}  // namespace planner

#include "planner/cli/sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <ostream>
#include <thread>

#include "planner/base/error.hpp"
#include "planner/base/one_line.hpp"
#include "planner/explain/explain.hpp"
#include "planner/io/context.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"

namespace planner {

using nlohmann::json;

namespace {

constexpr std::size_t max_points = 10'000'000;

/// A --vary is echoed up to this length: long enough for a pointer and a range
/// ("/cluster/inter_node/bandwidth=5GB/s..400GB/s:20log" is 49), cut past it like any echo.
constexpr std::size_t spec_limit = 80;

[[noreturn]] void bad(const std::string& spec, const std::string& message) {
  throw InputError("--vary", "", fmt::format("'{}': {}", one_line(spec, spec_limit), message));
}

/// A range end: a plain number, or a number with any known unit, in base units. An end with
/// a unit is kept in `with_unit`, so that run_sweep can check the unit's dimension against
/// the field's.
double range_end(std::string_view text, std::vector<std::string>& with_unit) {
  std::string t(text);
  char* end = nullptr;
  const double plain = std::strtod(t.c_str(), &end);
  if (end != t.c_str() && *end == '\0' && std::isfinite(plain)) return plain;
  const double value = parse_any_quantity_text(t, "--vary", "").value;
  with_unit.push_back(t);
  return value;
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
      // As for --set: a string must be valid UTF-8 (the JSONL writer throws on anything else).
      if (axis.values.back().is_string() && !valid_utf8(item)) {
        bad(spec, fmt::format("item \"{}\" is not valid UTF-8 text", one_line(item, echo_limit)));
      }
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
  const double start = range_end(rhs.substr(0, dots), axis.ends_with_unit);
  const double stop = range_end(rhs.substr(dots + 2, colon - dots - 2), axis.ends_with_unit);
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
  const std::string shown = one_line(shard, echo_limit);
  // from_chars, not strtol: strtol clamps a huge number to LONG_MAX (and accepts spaces and
  // '+'), so "1/99999999999999999999" ran as "1/9223372036854775807".
  const auto number = [&](std::string_view text, long long& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      throw InputError("--shard", "",
                       fmt::format("K and N must be at most 9223372036854775807 (2^63 - 1), got "
                                   "'{}'",
                                   shown));
    }
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
  };
  long long k = 0;
  long long n = 0;
  const std::string_view view(shard);
  const bool parsed = slash != std::string::npos && number(view.substr(0, slash), k) &&
                      number(view.substr(slash + 1), n);
  if (!parsed || n < 1 || k < 1 || k > n) {
    throw InputError("--shard", "", fmt::format("expected K/N with 1 <= K <= N, got '{}'", shown));
  }
  // 128-bit products: K·points can pass 2^64 when N is huge (__extension__: GCC and clang
  // provide the type; ISO C++ does not name it).
  __extension__ using wide = unsigned __int128;
  const auto slice = [&](long long j) {
    return static_cast<std::size_t>(static_cast<wide>(j) * points / static_cast<wide>(n));
  };
  return {slice(k - 1), slice(k)};
}

namespace {

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

constexpr std::string_view measured_pointer = "/workload/step_time_per_micro_batch";

/// The grid: axes, and the index of each axis's value at a point (the first axis slowest).
struct Grid {
  std::vector<SweepAxis> axes;
  /// The FLOP rate the base scenario's measured step time implies, held at every point, or
  /// none. A measured time calibrates the GPU's rate on the pinned plan (io/context); a sweep
  /// over the model's shape or the cluster keeps that rate, as the thresholds do, instead of
  /// re-deriving one from a time measured for another shape (which made every point's step
  /// take the measured time, and stopped sweeps whose points implied a rate above the peak).
  /// A sweep that varies the measured time itself calibrates at each point.
  std::optional<double> held_rate;
  [[nodiscard]] std::vector<std::size_t> index_of(std::size_t i) const {
    std::vector<std::size_t> idx(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {
      idx[a] = i % axes[a].values.size();
      i /= axes[a].values.size();
    }
    return idx;
  }
  /// The scenario document at point i.
  [[nodiscard]] json document(const json& base, std::size_t i) const {
    json doc = base;
    const std::vector<std::size_t> idx = index_of(i);
    for (std::size_t a = 0; a < axes.size(); ++a) {
      doc[json::json_pointer(axes[a].pointer)] = axes[a].values[idx[a]];
    }
    if (held_rate && doc.contains("workload") && doc["workload"].is_object()) {
      doc["workload"].erase("step_time_per_micro_batch");  // measured_pointer's key
    }
    return doc;
  }
};

std::string point_origin(const std::string& origin, std::size_t i) {
  return fmt::format("{} (sweep point {})", origin, i + 1);
}

/// One point's output line in the requested format; `plan_dropped` is set when the pinned plan
/// does not fit the point. A point the scenario rejects throws its InputError, naming the point.
std::string run_point(const json& base, const Grid& grid, std::size_t i, const std::string& origin,
                      bool csv, bool& plan_dropped) {
  const json doc = grid.document(base, i);
  std::string warning;  // the pinned plan only matters for comparison; counted, warned at the end
  const Scenario s = load_scenario_for_search(doc, point_origin(origin, i), warning);
  plan_dropped = !warning.empty();
  Context ctx = make_context(s);
  if (grid.held_rate) {
    ctx.flops_per_second = *grid.held_rate;
    ctx.calibrated = true;
  }
  SearchOptions options;
  options.keep = 1;
  options.accounting = false;  // only the winner is printed
  const SearchResult r = search(ctx, options);
  const BindingConstraint binding = binding_constraint(ctx);
  const std::string binding_kind(to_string(binding.kind));
  const std::vector<std::size_t> idx = grid.index_of(i);
  if (csv) {
    std::string row;
    for (std::size_t a = 0; a < grid.axes.size(); ++a) {
      row += csv_cell(grid.axes[a].values[idx[a]]) + ",";
    }
    if (r.found()) return row + "ok," + plan_csv_row(ctx, r.ranked.front()) + "," + binding_kind + "\n";
    const std::string header = plan_csv_header(ctx.workload.kind);
    const auto columns =
        static_cast<std::size_t>(std::count(header.begin(), header.end(), ',') + 1);
    return row + "no_fit," + std::string(columns - 1, ',') + "," + binding_kind + "\n";
  }
  json point = json::object();
  for (std::size_t a = 0; a < grid.axes.size(); ++a) {
    point[grid.axes[a].pointer] = grid.axes[a].values[idx[a]];
  }
  json line = {{"point", point}, {"binding_constraint", binding_kind}};
  line["status"] = r.found() ? "ok" : "no_fit";
  line["best"] = r.found() ? plan_json(ctx, r.ranked.front()) : json(nullptr);
  return line.dump() + "\n";
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

/// Checks a --vary against the scenario before any point is planned: its pointer with the
/// rules of --set (reported as the --vary's), and each range end written with a unit in
/// place of the field's value, so that a unit of another dimension (bandwidth=1GiB..50GiB:3)
/// is refused rather than its number taken in the field's base unit.
void check_axis(const json& base, const SweepAxis& axis, const std::string& spec,
                const std::string& origin) {
  try {
    json probe = base;
    apply_override(probe, axis.pointer + "=0");  // the pointer alone: any value will do
  } catch (const InputError& e) {
    // The same rules as --set's, named for the option the user gave.
    std::string message = e.message();
    if (const auto at = message.find("--set adds"); at != std::string::npos) {
      message.replace(at, 5, "--vary");
    }
    throw InputError("--vary", e.pointer(), message);
  }
  for (const std::string& end : axis.ends_with_unit) {
    json probe = base;
    probe[json::json_pointer(axis.pointer)] = end;
    std::string ignored;
    try {
      (void)load_scenario_for_search(probe, origin, ignored);
    } catch (const InputError& e) {
      if (e.pointer() != axis.pointer) continue;  // another rule: the point's check reports it
      bad(spec, fmt::format("range end \"{}\" at {}: {}", one_line(end, echo_limit), axis.pointer,
                            e.message()));
    }
  }
}

/// Reorder window: at most this many points per worker thread are in flight or waiting for
/// their turn to print. A point's line is ~0.3 KB (CSV) to ~2.5 KB (JSONL), so the window
/// holds at most 8·threads·2.5 KB however large the grid; 8 per thread keeps every worker
/// busy while one slow point holds up the printing.
constexpr std::size_t window_per_thread = 8;

}  // namespace

int run_sweep(const SweepArgs& args, std::ostream& out, std::ostream& err) {
  json base = read_json_file(args.file);
  for (const std::string& s : args.sets) apply_override(base, s);
  const std::string origin = file_origin(args.file);
  // Load once unchanged, so errors in the file itself are reported as such.
  std::string warning;
  const Scenario scenario = load_scenario_for_search(base, origin, warning);
  if (!warning.empty()) err << "planner: warning: " << warning << "\n";
  for (const std::string& w : plausibility_warnings(scenario)) {
    err << "planner: warning: " << w << "\n";
  }
  Grid grid;
  std::size_t points = 1;
  for (const std::string& spec : args.vary) {
    grid.axes.push_back(parse_vary(spec, base));
    for (std::size_t a = 0; a + 1 < grid.axes.size(); ++a) {
      if (grid.axes[a].pointer == grid.axes.back().pointer) {
        bad(spec, fmt::format("{} is already varied by an earlier --vary",
                              grid.axes.back().pointer));
      }
    }
    check_axis(base, grid.axes.back(), spec, origin);
    points *= grid.axes.back().values.size();
    if (points > max_points) {
      throw InputError("--vary", "", fmt::format("the grid has more than {} points", max_points));
    }
  }
  const bool varies_measured = std::any_of(grid.axes.begin(), grid.axes.end(), [](const SweepAxis& a) {
    // The measured time's pointer or an object above it (/workload).
    return measured_pointer.starts_with(a.pointer) &&
           (a.pointer.size() == measured_pointer.size() || measured_pointer[a.pointer.size()] == '/');
  });
  if (!varies_measured && scenario.workload.kind == WorkloadKind::training &&
      scenario.workload.training.step_time_per_micro_batch_seconds > 0) {
    grid.held_rate = make_context(scenario).flops_per_second;
  }
  const std::pair<std::size_t, std::size_t> range = shard_range(args.shard, points);
  const std::size_t first = range.first;
  const std::size_t last = range.second;
  // Before any point is planned, every value of every axis is checked at its first grid point
  // (the other axes at their first values): points 1, 2, ... along each axis. Checking all
  // P points first took longer than planning small grids and delayed the first row of a
  // large one; a combination rejected although each of its values passed here stops the
  // sweep when its turn comes (docs/output.md §sweep). Every shard checks the same points.
  {
    std::size_t stride = points;
    for (const SweepAxis& axis : grid.axes) {
      stride /= axis.values.size();
      for (std::size_t v = 0; v < axis.values.size(); ++v) {
        std::string ignored;
        const std::size_t i = v * stride;
        (void)load_scenario_for_search(grid.document(base, i), point_origin(origin, i), ignored);
      }
    }
  }
  const bool csv = args.format == "csv";
  // The header belongs to shard 1 alone, so that shards concatenate to the whole output even
  // when some are empty (more shards than points). The shard text is valid here.
  const bool first_shard =
      args.shard.empty() || std::stoll(args.shard.substr(0, args.shard.find('/'))) == 1;
  if (csv && first_shard) {
    std::string header;
    for (const SweepAxis& a : grid.axes) header += csv_field(a.pointer) + ",";
    out << header << "status," << plan_csv_header(scenario.workload.kind)
        << ",binding_constraint\n";
  }
  const std::size_t total = last - first;
  unsigned threads = args.threads ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, total)));
  const std::size_t window = window_per_thread * threads;

  // Workers take points in grid order, at most `window` ahead of the printer; each result
  // waits in its slot (i mod window) until this thread prints it, in grid order.
  struct Slot {
    bool ready = false;
    std::string text;
    std::exception_ptr error;
  };
  std::vector<Slot> slots(window);
  std::mutex mutex;
  std::condition_variable slot_free;   // workers wait for the window to move
  std::condition_variable slot_ready;  // the printer waits for the next point
  std::size_t next = first;            // next point to take (guarded by mutex)
  std::size_t printed = first;         // next point to print (guarded by mutex)
  bool stop = false;                   // an error or a failed write (guarded by mutex)
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> plan_ignored{0};
  auto worker = [&] {
    while (true) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex);
        slot_free.wait(lock, [&] { return stop || next >= last || next < printed + window; });
        if (stop || next >= last) return;
        i = next++;
      }
      Slot result;
      try {
        bool dropped = false;
        result.text = run_point(base, grid, i, origin, csv, dropped);
        if (dropped) ++plan_ignored;
      } catch (...) {
        // A point that throws (a rejected combination, a bug, memory exhaustion) stops the
        // sweep when its turn to print comes: the rows before it are printed, then its error.
        result.error = std::current_exception();
      }
      ++done;
      {
        std::lock_guard lock(mutex);
        result.ready = true;
        slots[i % window] = std::move(result);
      }
      slot_ready.notify_one();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  const bool show = !args.no_progress && isatty(STDERR_FILENO) && &err == &std::cerr;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> finished{false};
  std::thread bar;
  if (show) {
    bar = std::thread([&] {
      while (!finished) {
        progress(err, done, total, start);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  std::exception_ptr failure;
  for (std::size_t i = first; i < last; ++i) {
    Slot slot;
    {
      std::unique_lock lock(mutex);
      if (!slots[i % window].ready) {
        // Nothing to print until the next point is done: hand what is printed to the reader
        // now (rows come out in batches while points are quick, one by one when they are not).
        lock.unlock();
        out.flush();
        lock.lock();
      }
      slot_ready.wait(lock, [&] { return slots[i % window].ready; });
      slot = std::move(slots[i % window]);
      slots[i % window] = Slot{};
      printed = i + 1;
    }
    slot_free.notify_all();
    if (slot.error) {
      failure = slot.error;
      break;
    }
    out << slot.text;
    // A failed write (a full disk, a closed pipe) ends the sweep at once; run_cli reports it.
    if (!out) break;
  }
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  slot_free.notify_all();
  for (std::thread& t : pool) t.join();
  finished = true;
  if (bar.joinable()) {
    bar.join();
    progress(err, done, total, start);
    err << "\n";
  }
  if (failure) std::rethrow_exception(failure);
  if (plan_ignored > 0 && warning.empty()) {
    err << fmt::format("planner: warning: the pinned plan does not fit {} of the {} points; "
                       "there its dp is refilled, or it is ignored\n",
                       plan_ignored.load(), total);
  }
  return 0;  // points where nothing fits are rows with status no_fit, not a failure
}

}  // namespace planner

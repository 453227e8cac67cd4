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
#include "planner/base/workers.hpp"
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

std::string csv_cell(const json& v) {
  if (v.is_string()) return one_line_csv_field(v.get<std::string>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{:.6g}", v.get<double>());
  return one_line_csv_field(v.dump(-1, ' ', false, json::error_handler_t::replace));
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
      doc["workload"].erase(std::string(measured_pointer.substr(measured_pointer.rfind('/') + 1)));
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
  const SearchResult r = trusted_search(ctx, options).result;
  const BindingConstraint binding = binding_constraint(ctx);
  const std::string binding_kind(to_string(binding.kind));
  const std::vector<std::size_t> idx = grid.index_of(i);
  if (csv) {
    std::string row;
    for (std::size_t a = 0; a < grid.axes.size(); ++a) {
      row += csv_cell(grid.axes[a].values[idx[a]]) + ",";
    }
    if (r.found()) return row + "ok," + plan_csv_row(ctx, r.ranked.front()) + "," + binding_kind + "\n";
    const std::string header = plan_csv_header(
        ctx.workload.kind, is_moe(ctx.model),
        csv_dp_shard_column(ctx.workload.kind, is_moe(ctx.model), ctx.constraints));
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
  return line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
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
      vary_error(spec, fmt::format("range end \"{}\" at {}: {}", one_line(end, echo_limit), axis.pointer,
                            e.message()));
    }
  }
}

/// Reorder window: at most this many points per worker thread are in flight or waiting for
/// their turn to print. A point's line is ~0.3 KB (CSV) to ~2.5 KB (JSONL), so the window
/// holds at most 8·threads·2.5 KB however large the grid; 8 per thread keeps every worker
/// busy while one slow point holds up the printing.
constexpr std::size_t window_per_thread = 8;

/// The grid of the --vary options, each checked against the scenario (its pointer, its range
/// ends' units, no pointer varied twice, at most max_sweep_points points); `points` gets the count.
Grid build_grid(const SweepArgs& args, const json& base, const std::string& origin,
                const Scenario& scenario, std::size_t& points) {
  Grid grid;
  points = 1;
  for (const std::string& spec : args.vary) {
    grid.axes.push_back(parse_vary(spec, base));
    // A pointer varied twice, or one inside another's value (/model and /model/seq_len: the
    // outer value replaces the object the inner one writes into), has no single meaning.
    const auto inside = [](const std::string& outer, const std::string& inner) {
      return inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '/';
    };
    const std::string& added = grid.axes.back().pointer;
    for (std::size_t a = 0; a + 1 < grid.axes.size(); ++a) {
      const std::string& earlier = grid.axes[a].pointer;
      if (earlier == added) {
        vary_error(spec, fmt::format("{} is already varied by an earlier --vary", added));
      }
      if (inside(earlier, added) || inside(added, earlier)) {
        vary_error(spec, fmt::format("{} and {} (an earlier --vary) overlap: one lies inside the "
                                     "other's value; vary one of them",
                                     added, earlier));
      }
    }
    check_axis(base, grid.axes.back(), spec, origin);
    points *= grid.axes.back().values.size();
    if (points > max_sweep_points) {
      throw InputError("--vary", "", fmt::format("the grid has more than {} points", max_sweep_points));
    }
  }
  const bool varies_measured =
      std::any_of(grid.axes.begin(), grid.axes.end(), [](const SweepAxis& a) {
        // The measured time's pointer or an object above it (/workload).
        return measured_pointer.starts_with(a.pointer) &&
               (a.pointer.size() == measured_pointer.size() ||
                measured_pointer[a.pointer.size()] == '/');
      });
  if (!varies_measured && scenario.workload.kind == WorkloadKind::training &&
      scenario.workload.training.step_time_per_micro_batch_seconds > 0) {
    grid.held_rate = make_context(scenario).flops_per_second;
  }
  return grid;
}

/// Axes longer than this are checked up front at their two ends only (sweep_check_all_values).
constexpr std::size_t sweep_check_all_values = 256;

/// Before any point is planned, the values of every axis are checked at their first grid point
/// (the other axes at their first values): points 1, 2, ... along each axis. An axis of at
/// most sweep_check_all_values values is checked whole; a longer one (a range of 10^6 steps)
/// at its first and last values, the ends where a range leaves what the scenario accepts, and
/// its other values when their points run, like a rejected combination: checking 10^6 values
/// first held back the first row for 13 s (issue 32: within a second). Every shard checks the
/// same points (docs/output.md §sweep).
void check_each_value(const json& base, const Grid& grid, std::size_t points,
                      const std::string& origin) {
  std::size_t stride = points;
  for (const SweepAxis& axis : grid.axes) {
    stride /= axis.values.size();
    const std::size_t count = axis.values.size();
    for (std::size_t v = 0; v < count; ++v) {
      if (count > sweep_check_all_values && v != 0 && v + 1 != count) continue;
      std::string ignored;
      const std::size_t i = v * stride;
      (void)load_scenario_for_search(grid.document(base, i), point_origin(origin, i), ignored);
    }
  }
}

/// Points [first, last) on worker threads, printed in grid order. Workers take points in
/// grid order, at most `window` ahead of the printer; each result waits in its slot
/// (i mod window) until the printing thread prints it.
class OrderedRun {
 public:
  OrderedRun(const json& base, const Grid& grid, const std::string& origin, bool csv,
             std::size_t first, std::size_t last, std::size_t window)
      : base_(base), grid_(grid), origin_(origin), csv_(csv), last_(last), window_(window),
        slots_(window), next_(first), printed_(first) {}

  /// One worker: plans points until none is left or the printer stops.
  void work() {
    while (true) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        slot_free_.wait(lock, [&] { return stop_ || next_ >= last_ || next_ < printed_ + window_; });
        if (stop_ || next_ >= last_) return;
        i = next_++;
      }
      Slot result = plan(i);
      {
        std::lock_guard lock(mutex_);
        result.ready = true;
        slots_[i % window_] = std::move(result);
      }
      slot_ready_.notify_one();
    }
  }

  /// One thread: plans point i on the calling thread and prints its row, with no handoff
  /// between threads per point (on a busy machine each handoff can wait for a time slice).
  /// Rows reach the reader as the threaded printer hands them: before each point is planned.
  std::exception_ptr plan_and_print(std::size_t i, std::ostream& out) {
    out.flush();
    Slot slot = plan(i);
    if (!slot.error) out << slot.text;
    return slot.error;
  }

  /// Prints point i's row when it is ready; returns its error, if it failed.
  std::exception_ptr print(std::size_t i, std::ostream& out) {
    Slot slot;
    {
      std::unique_lock lock(mutex_);
      if (!slots_[i % window_].ready) {
        // Nothing to print until the next point is done: hand what is printed to the reader
        // now (rows come out in batches while points are quick, one by one when they are not).
        lock.unlock();
        out.flush();
        lock.lock();
      }
      slot_ready_.wait(lock, [&] { return slots_[i % window_].ready; });
      slot = std::move(slots_[i % window_]);
      slots_[i % window_] = Slot{};
      printed_ = i + 1;
    }
    slot_free_.notify_all();
    if (!slot.error) out << slot.text;
    return slot.error;
  }

  /// Tells the workers to stop taking points (an error or a failed write, or the end).
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    slot_free_.notify_all();
  }

  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> plan_ignored{0};

 private:

  struct Slot {
    bool ready = false;
    std::string text;
    std::exception_ptr error;
  };
  /// Point i's row, or its error.
  Slot plan(std::size_t i) {
    Slot result;
    try {
      bool dropped = false;
      result.text = run_point(base_, grid_, i, origin_, csv_, dropped);
      if (dropped) ++plan_ignored;
    } catch (...) {
      // A point that throws (a rejected combination, a bug, memory exhaustion) stops the
      // sweep when its turn to print comes: the rows before it are printed, then its error.
      result.error = std::current_exception();
    }
    ++done;
    return result;
  }
  const json& base_;
  const Grid& grid_;
  const std::string& origin_;
  bool csv_;
  std::size_t last_;
  std::size_t window_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable slot_free_;   // workers wait for the window to move
  std::condition_variable slot_ready_;  // the printer waits for the next point
  std::size_t next_;                    // next point to take (guarded by mutex_)
  std::size_t printed_;                 // next point to print (guarded by mutex_)
  bool stop_ = false;                   // guarded by mutex_
};

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
  std::size_t points = 0;
  const Grid grid = build_grid(args, base, origin, scenario, points);
  const auto [first, last] = shard_range(args.shard, points);
  check_each_value(base, grid, points, origin);
  const bool csv = args.format == "csv";
  // The header belongs to shard 1 alone, so that shards concatenate to the whole output even
  // when some are empty (more shards than points). The shard text is valid here.
  const bool first_shard =
      args.shard.empty() || std::stoll(args.shard.substr(0, args.shard.find('/'))) == 1;
  if (csv && first_shard) {
    std::string header;
    for (const SweepAxis& a : grid.axes) header += one_line_csv_field(a.pointer) + ",";
    out << header << "status,"
        << plan_csv_header(scenario.workload.kind, is_moe(scenario.model),
                           csv_dp_shard_column(scenario.workload.kind, is_moe(scenario.model),
                                               scenario.constraints))
        << ",binding_constraint\n";
  }
  const std::size_t total = last - first;
  const unsigned threads = worker_count(args.threads, total);
  OrderedRun run(base, grid, origin, csv, first, last, window_per_thread * threads);
  // On more than one thread, every worker plans points and this thread prints them in order.
  Workers pool(threads > 1 ? threads : 0, [&run] { run.work(); });
  const bool show = !args.no_progress && isatty(STDERR_FILENO) && &err == &std::cerr;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> finished{false};
  std::thread bar;
  if (show) {
    bar = std::thread([&] {
      while (!finished) {
        progress(err, run.done, total, start);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  std::exception_ptr failure;
  // A failed write (a full disk, a closed pipe) ends the sweep at once; run_cli reports it.
  for (std::size_t i = first; i < last && !failure && out; ++i) {
    failure = pool.empty() ? run.plan_and_print(i, out) : run.print(i, out);
  }
  run.stop();
  pool.join();
  finished = true;
  if (bar.joinable()) {
    bar.join();
    progress(err, run.done, total, start);
    err << "\n";
  }
  if (failure) std::rethrow_exception(failure);
  if (run.plan_ignored > 0 && warning.empty()) {
    err << fmt::format("planner: warning: the pinned plan does not fit {} of the {} points; "
                       "there its dp is refilled, or it is ignored\n",
                       run.plan_ignored.load(), total);
  }
  return 0;  // points where nothing fits are rows with status no_fit, not a failure
}

}  // namespace planner

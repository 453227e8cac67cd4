#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

/// `planner sweep`: the cartesian product of varied inputs, one full plan per point, in grid
/// order whatever the thread count (docs/output.md §sweep).

namespace planner {

struct SweepArgs {
  std::string file;
  std::vector<std::string> vary;  ///< "POINTER=V1,V2" or "POINTER=START..STOP:STEPS[log]"
  std::string format = "csv";     ///< csv or jsonl
  std::vector<std::string> sets;
  unsigned threads = 0;           ///< 0 = all cores
  std::string shard;              ///< "K/N", 1-based; empty = the whole grid
  bool no_progress = false;
};

/// One varied input: its pointer and the JSON values it takes, in order.
struct SweepAxis {
  std::string pointer;
  std::vector<nlohmann::json> values;
  std::vector<std::string> ends_with_unit;  ///< a range's ends written with a unit ("5GB/s")
};

/// The most points a sweep's grid may have.
inline constexpr std::size_t max_sweep_points = 10'000'000;

/// Throws the InputError of a malformed --vary: "--vary: 'SPEC': message".
[[noreturn]] void vary_error(const std::string& spec, const std::string& message);

/// Parses one --vary. A list takes its items as written (each parsed like a --set value); a
/// range START..STOP:STEPS gives STEPS values from START to STOP inclusive, evenly spaced or,
/// with "log", geometrically; START and STOP may carry a unit ("5GB/s"). Where the scenario
/// holds an integer at the pointer, range values are rounded to integers. Whether a unit suits
/// the field is checked by run_sweep, which loads the scenario with each end in place.
[[nodiscard]] SweepAxis parse_vary(const std::string& spec, const nlohmann::json& doc);

/// The half-open range of point indices that shard "K/N" covers out of `points`.
[[nodiscard]] std::pair<std::size_t, std::size_t> shard_range(const std::string& shard,
                                                              std::size_t points);

int run_sweep(const SweepArgs& args, std::ostream& out, std::ostream& err);

}  // namespace planner

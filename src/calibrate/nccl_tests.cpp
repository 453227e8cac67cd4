// nccl-tests output: header lines, the column header, the units line, then one row per size.
// Column layouts differ between nccl-tests versions (with or without `redop` and `root`,
// `#wrong` or `error`), so rows are read by the positions the column header gives.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "planner/calibrate/inputs.hpp"
#include "planner/calibrate/text_lines.hpp"
#include "planner/base/error.hpp"

namespace planner::calibrate {

namespace {

struct OpName {
  std::string_view binary;  // e.g. all_reduce_perf, without the suffix
  NcclOp op;
};
constexpr OpName op_names[] = {{"all_reduce", NcclOp::all_reduce},
                               {"all_gather", NcclOp::all_gather},
                               {"reduce_scatter", NcclOp::reduce_scatter},
                               {"alltoall", NcclOp::all_to_all},
                               {"sendrecv", NcclOp::send_recv}};

std::optional<NcclOp> find_op(std::string_view text) {
  for (const OpName& o : op_names) {
    if (text.find(o.binary) != std::string_view::npos) return o.op;
  }
  return std::nullopt;
}

/// Element size of an nccl-tests type name; 0 when unknown.
double type_bytes(std::string_view t) {
  static const std::map<std::string_view, double> sizes{
      {"int8", 1},    {"uint8", 1},  {"char", 1},    {"int32", 4},  {"uint32", 4},
      {"int", 4},     {"int64", 8},  {"uint64", 8},  {"half", 2},   {"float16", 2},
      {"float", 4},   {"float32", 4}, {"double", 8}, {"float64", 8}, {"bfloat16", 2},
      {"f8e4m3", 1},  {"f8e5m2", 1}};
  const auto it = sizes.find(t);
  return it == sizes.end() ? 0.0 : it->second;
}

struct Columns {
  std::size_t count = 0;  // tokens per data row
  std::size_t size = 0, elements = 1, type = 2, time = 0, busbw = 0, algbw = 0;
  std::optional<std::size_t> wrong;
  std::size_t line = 0;
};

/// The column header: "#  size  count  type  redop  root  time  algbw  busbw  #wrong  …".
std::optional<Columns> read_columns(const std::vector<std::string>& tokens, std::size_t line) {
  std::vector<std::string> names;
  for (std::string t : tokens) {
    if (t == "#") continue;
    if (!t.empty() && t[0] == '#') t.erase(0, 1);
    names.push_back(t);
  }
  if (names.size() < 6 || names[0] != "size" || names[1] != "count") return std::nullopt;
  Columns c;
  c.count = names.size();
  c.line = line;
  const auto at = [&](std::string_view n) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  c.time = at("time");
  c.algbw = at("algbw");
  c.busbw = at("busbw");
  if (c.time >= names.size() || c.algbw >= names.size() || c.busbw >= names.size()) {
    return std::nullopt;
  }
  const std::size_t w = std::min(at("wrong"), at("error"));
  if (w < names.size()) c.wrong = w;
  return c;
}

/// The units line under the column header must say bytes, microseconds and GB/s.
void check_units(const std::vector<std::string>& tokens, const std::string& where) {
  std::vector<std::string> units;
  for (const std::string& t : tokens) {
    if (t.size() > 2 && t.front() == '(' && t.back() == ')') units.push_back(t);
  }
  if (units.empty()) return;
  if (units[0] != "(B)") {
    throw InputError(where, "", fmt::format("size in {}, expected (B): nccl-tests prints sizes "
                                            "in bytes", units[0]));
  }
  for (std::size_t i = 1; i < units.size(); ++i) {
    const std::string& u = units[i];
    if (u == "(elements)" || u == "(us)" || u == "(GB/s)") continue;
    throw InputError(where, "", fmt::format("unit {} in the units line, expected (us) for time "
                                            "and (GB/s) for algbw and busbw", u));
  }
}

/// Size = count × element size × k, k = 1 or (for the ops whose count is per rank) ranks.
bool size_agrees(double size, double count, double elem, NcclOp op, std::int64_t ranks) {
  if (elem <= 0) return true;
  if (size == count * elem) return true;
  const bool per_rank = op == NcclOp::all_gather || op == NcclOp::reduce_scatter ||
                        op == NcclOp::all_to_all;
  return per_rank && ranks > 0 && size == count * elem * static_cast<double>(ranks);
}

struct Header {
  std::set<std::int64_t> ranks;
  std::set<std::string> hosts;
  std::int64_t threads = 0, gpus = 0;
  std::string device;
};

/// "# nThread 1 nGpus 8 …" and "#  Rank  0 Group  0 Pid 1887 on worker-1 device  0 [0x8d] NAME".
void read_header_line(const std::vector<std::string>& tk, std::string_view line, Header& h) {
  for (std::size_t i = 0; i + 1 < tk.size(); ++i) {
    if (tk[i] == "nThread") h.threads = parse_int(tk[i + 1]).value_or(0);
    if (tk[i] == "nGpus") h.gpus = parse_int(tk[i + 1]).value_or(0);
  }
  if (tk.size() < 4 || tk[0] != "#" || tk[1] != "Rank") return;
  const auto rank = parse_int(tk[2]);
  const auto on = std::find(tk.begin(), tk.end(), "on");
  if (!rank || on == tk.end() || on + 1 == tk.end()) return;
  h.ranks.insert(*rank);
  h.hosts.insert(*(on + 1));
  const std::size_t bracket = line.find(']');
  if (*rank == 0 && bracket != std::string_view::npos) {
    h.device = trim(line.substr(bracket + 1));
  }
}

using RawRows = std::vector<std::pair<std::size_t, std::vector<std::string>>>;

/// The rows that can be fitted; the others are listed in `t.skipped`. A row whose size
/// contradicts its count or whose algbw contradicts size/time stops the run: the units are off.
void read_nccl_rows(const RawRows& data, const Columns& c, NcclTable& t) {
  for (const auto& [line, tk] : data) {
    const std::string where = fmt::format("{}:{}", t.origin, line);
    if (tk.size() < c.count) {
      t.skipped.push_back({line, fmt::format("truncated row: {} fields, expected {}",
                                             tk.size(), c.count)});
      continue;
    }
    const auto size = parse_number(tk[c.size]);
    const auto count = parse_number(tk[c.elements]);
    const auto time_us = parse_number(tk[c.time]);
    const auto algbw = parse_number(tk[c.algbw]);
    const auto busbw = parse_number(tk[c.busbw]);
    if (!size || !count || *size < 0) {
      t.skipped.push_back({line, "size or count is not a number"});
      continue;
    }
    if (!time_us || !algbw || !busbw || *time_us <= 0) {
      t.skipped.push_back({line, fmt::format("time '{}' is not a positive number (a failed "
                                             "run)", tk[c.time])});
      continue;
    }
    if (c.wrong && parse_number(tk[*c.wrong]).value_or(1.0) != 0.0) {
      t.skipped.push_back({line, fmt::format("#wrong is {}: the results were wrong",
                                             tk[*c.wrong])});
      continue;
    }
    if (*size == 0) {
      t.skipped.push_back({line, "size 0: nothing is sent"});
      continue;
    }
    const double elem = type_bytes(tk[c.type]);
    if (!size_agrees(*size, *count, elem, t.op, t.ranks)) {
      throw InputError(where, "", fmt::format("size {} B contradicts count {} of type {} ({} B "
                                              "each), expected size = count x element size",
                                              tk[c.size], tk[c.elements], tk[c.type], elem));
    }
    const double computed = *size / (*time_us * 1e3);  // GB/s from bytes and us
    if (*algbw >= 1.0 && std::abs(*algbw - computed) > 0.02 * computed + 0.01) {
      throw InputError(where, "", fmt::format("algbw {} GB/s contradicts size/time = {:.4g} "
                                              "GB/s, expected size in bytes and time in us",
                                              tk[c.algbw], computed));
    }
    t.rows.push_back({line, *size, *time_us * 1e-6, *busbw * 1e9});
  }
  std::set<double> sizes;
  for (const NcclRow& r : t.rows) sizes.insert(r.size_bytes);
  if (sizes.size() < 2) {
    throw InputError(fmt::format("{}:{}", t.origin, c.line), "",
                     fmt::format("{} usable row(s) with {} distinct size(s) in the table, "
                                 "expected at least 2 sizes to fit latency and bandwidth",
                                 t.rows.size(), sizes.size()));
  }
}

}  // namespace

std::string_view to_string(NcclOp op) noexcept {
  switch (op) {
    case NcclOp::all_reduce: return "all_reduce_perf";
    case NcclOp::all_gather: return "all_gather_perf";
    case NcclOp::reduce_scatter: return "reduce_scatter_perf";
    case NcclOp::all_to_all: return "alltoall_perf";
    case NcclOp::send_recv: return "sendrecv_perf";
  }
  return "all_reduce_perf";
}

NcclTable parse_nccl_tests(std::string_view text, const std::string& origin) {
  NcclTable t;
  t.origin = origin;
  const std::vector<std::string_view> lines = split_lines(text);
  std::optional<NcclOp> op;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (l.find("_perf") == std::string_view::npos && l.find("Collective test") == l.npos) continue;
    const std::optional<NcclOp> named = find_op(l);
    // Two collectives' outputs in one file were fitted as one (issue 32): one run per file.
    if (named && op && *named != *op) {
      throw InputError(fmt::format("{}:{}", origin, i + 1), "",
                       fmt::format("a second collective ({} after {}) in one file, expected "
                                   "one nccl-tests run per file (split it, and pass each with "
                                   "its own --nccl)",
                                   to_string(*named), to_string(*op)));
    }
    if (named) op = named;
  }
  if (!op) op = find_op(origin);
  if (!op) {
    throw InputError(origin + ":1", "", "cannot tell which collective this is, expected the "
                                        "binary's name (all_reduce_perf, all_gather_perf, "
                                        "reduce_scatter_perf, alltoall_perf, sendrecv_perf) "
                                        "in the output or in the file name");
  }
  t.op = *op;
  Header h;
  std::optional<Columns> cols;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> data;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t line = i + 1;
    const std::vector<std::string> tk = tokens_of(lines[i]);
    if (tk.empty()) continue;
    if (tk[0].front() == '#') {
      read_header_line(tk, lines[i], h);
      if (auto c = read_columns(tk, line)) {
        if (cols && !data.empty()) {
          throw InputError(fmt::format("{}:{}", origin, line), "",
                           "a second table after rows of the first, expected one nccl-tests "
                           "run per file (split it, and pass each with its own --nccl)");
        }
        cols = c;
      }
      else if (cols && line == cols->line + 1) check_units(tk, fmt::format("{}:{}", origin, line));
      continue;
    }
    if (!parse_number(tk[0])) {
      t.skipped.push_back({line, "not a table row (a log line between rows)"});
      continue;
    }
    if (!cols) {
      throw InputError(fmt::format("{}:{}", origin, line), "",
                       "a table row before the column header, expected the '#  size  count  "
                       "type …  time  algbw  busbw' line first");
    }
    data.emplace_back(line, tk);
  }
  // nccl-tests' -t (threads) and -g (GPUs per thread) are small counts; their product was
  // taken unchecked, signed overflow (UBSan) on "nThread 4294967296 nGpus 4294967296".
  constexpr std::int64_t max_ranks = std::int64_t{1} << 24;
  if (h.threads < 0 || h.gpus < 0 || h.threads > max_ranks || h.gpus > max_ranks ||
      h.threads * h.gpus > max_ranks) {
    throw InputError(origin + ":1", "",
                     fmt::format("nThread {} × nGpus {} in the header, expected a rank count "
                                 "from 2 to 2^24 (nccl-tests -t and -g)",
                                 h.threads, h.gpus));
  }
  // Without '#  Rank' lines the ranks are one process's threads × GPUs, all on its host; a
  // header of 4,096 × 4,096 was fitted as 16.7 million ranks on one node (a latency of
  // 1e-12 s). 64 is above any host's GPU count (HGX and DGX hold 8, GB200 NVL72 trays 4).
  constexpr std::int64_t max_gpus_one_host = 64;
  if (h.ranks.empty() && h.threads * h.gpus > max_gpus_one_host) {
    throw InputError(origin + ":1", "",
                     fmt::format("nThread {} × nGpus {} = {} GPUs driven by one process on one "
                                 "host, expected at most {}; a run over several hosts prints a "
                                 "'#  Rank  N … on HOST' line per rank (keep them in the file)",
                                 h.threads, h.gpus, h.threads * h.gpus, max_gpus_one_host));
  }
  t.ranks = !h.ranks.empty() ? static_cast<std::int64_t>(h.ranks.size()) : h.threads * h.gpus;
  t.nodes = h.hosts.empty() ? 1 : static_cast<std::int64_t>(h.hosts.size());
  t.device = h.device;
  if (!cols) {
    throw InputError(origin + ":" + std::to_string(lines.size()), "",
                     "no nccl-tests table in the file, expected a '#  size  count  type …  "
                     "time  algbw  busbw' header followed by rows");
  }
  if (t.ranks < 2) {
    throw InputError(origin + ":1", "", fmt::format("{} rank(s) in the header, expected at "
                                                    "least 2 ('# nThread … nGpus …' or "
                                                    "'#  Rank  N … on HOST' lines)", t.ranks));
  }
  read_nccl_rows(data, *cols, t);
  return t;
}

}  // namespace planner::calibrate

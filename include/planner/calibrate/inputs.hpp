#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

/// The measurements `planner calibrate` reads, parsed from text (docs/calibrate.md §Inputs).
/// Parsers take the text and its origin (a file name) so tests never touch the disk. Input
/// that cannot be fitted (no table, one size, a size that contradicts its count, a unit other
/// than the expected one) throws InputError("<file>:<line>", "", "<what>, expected <what>");
/// lines that are merely unusable (a `-nan` row, a truncated row, a warning between rows) are
/// skipped and listed in `skipped`, so the report can count them.

namespace planner::calibrate {

/// A line the parser left out, with the reason.
struct SkippedLine {
  std::size_t line = 0;
  std::string reason;
};

enum class NcclOp { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };

/// Highest GEMM rate a table row or the fitted curve may show: 10 PFLOP/s, above any single
/// GPU's dense peak (B200 FP4 dense: 9 PFLOP/s).
inline constexpr double max_gemm_flops_per_second = 1e16;

/// One row of an nccl-tests table: the out-of-place columns.
struct NcclRow {
  std::size_t line = 0;
  double size_bytes = 0;
  double time_seconds = 0;
  double bus_bandwidth_bytes_per_second = 0;  ///< as printed (busbw), for the cross-check
};

struct NcclTable {
  std::string origin;
  NcclOp op = NcclOp::all_reduce;
  std::int64_t ranks = 0;  ///< "Rank N ... on HOST" lines, else nThread·nGpus
  std::int64_t nodes = 0;  ///< distinct host names (1 when the header names none)
  std::string device;      ///< the device name of rank 0, when printed
  std::vector<NcclRow> rows;
  std::vector<SkippedLine> skipped;
};

/// One GEMM measurement: C[m,n] = A[m,k]·B[k,n] took `seconds`.
struct GemmRow {
  std::size_t line = 0;
  double m = 0, n = 0, k = 0;
  std::string dtype;
  double seconds = 0;
  [[nodiscard]] double flop() const noexcept { return 2.0 * m * n * k; }
};

struct GemmTable {
  std::string origin;
  std::int64_t sms = 0;  ///< from a "# device: NAME (N SMs)" comment, 0 when absent
  std::string device;
  std::vector<GemmRow> rows;
  std::vector<SkippedLine> skipped;
};

enum class StepLogFormat { megatron, torchtitan, csv };

/// One logged training step. torchtitan logs tokens/s per GPU; the step time then needs the
/// run's scenario (global batch, world size), so it is filled in later.
struct StepRow {
  std::size_t line = 0;
  std::int64_t step = 0;
  double seconds = 0;                 ///< 0 when only the rate was logged
  double tokens_per_second_per_gpu = 0;
  double tflops_per_gpu = 0;          ///< as the framework logged it (cross-check only)
};

struct StepLog {
  std::string origin;
  StepLogFormat format = StepLogFormat::csv;
  std::vector<StepRow> rows;
  std::vector<SkippedLine> skipped;
};

[[nodiscard]] std::string_view to_string(NcclOp op) noexcept;
[[nodiscard]] std::string_view to_string(StepLogFormat f) noexcept;

/// nccl-tests text output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
/// alltoall_perf, sendrecv_perf). The collective is read from the output (the binary's name,
/// or "Collective test starting: …"), else from the origin's file name.
[[nodiscard]] NcclTable parse_nccl_tests(std::string_view text, const std::string& origin);

/// The GEMM CSV of tools/gemm_bench.py: '#' comments, then a header naming m, n, k, dtype
/// and one of seconds or tflops (any order, other columns ignored), then rows.
[[nodiscard]] GemmTable parse_gemm_csv(std::string_view text, const std::string& origin);

/// A Megatron-LM log, a torchtitan log or a CSV with columns step and seconds.
[[nodiscard]] StepLog parse_step_log(std::string_view text, const std::string& origin);

/// Reads a whole file; InputError("<path>", "", "cannot read …") when it cannot.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace planner::calibrate

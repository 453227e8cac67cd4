#pragma once
#include <array>
#include <cstddef>
#include <ostream>
#include <streambuf>
#include <string>

/// Standard output for the planner binary: a buffered stream over a file descriptor that
/// remembers why a write failed, so that output to /dev/full or a closed standard output is
/// reported ("cannot write output: No space left on device", docs/output.md §Exit codes)
/// instead of ending in exit 0 (issue 14).

namespace planner {

class FdOutput : public std::streambuf {
 public:
  explicit FdOutput(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  FdOutput(const FdOutput&) = delete;
  FdOutput& operator=(const FdOutput&) = delete;
  ~FdOutput() override { (void)drain(); }

  /// The errno of the first failed write, or 0.
  [[nodiscard]] int error() const noexcept { return error_; }

  /// Makes every write fail with EBADF: for a descriptor that was closed when the program
  /// started (its number may since have been reused for something else).
  void mark_closed() noexcept;

 protected:
  int_type overflow(int_type ch) override;
  int sync() override { return drain() ? 0 : -1; }
  std::streamsize xsputn(const char* data, std::streamsize n) override;

 private:
  bool drain();
  bool write_all(const char* data, std::size_t n);

  int fd_;
  int error_ = 0;
  std::array<char, std::size_t{1} << 16> buffer_{};
};

/// Why writes to `out` failed: the system's reason when it writes through an FdOutput,
/// else a generic phrase (a string stream in tests).
[[nodiscard]] std::string write_failure(const std::ostream& out);

}  // namespace planner

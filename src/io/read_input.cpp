#include "planner/io/read_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <system_error>

#include "planner/base/error.hpp"
#include "planner/io/scenario_json.hpp"

namespace planner {
namespace {

constexpr std::size_t chunk_bytes = std::size_t{1} << 16;

/// What a reader accepts: its size limit and the words its messages use for the file.
struct Limit {
  std::size_t max_bytes;
  const char* limit_text;  ///< "16 MiB"
  const char* kind;        ///< "a scenario is JSON text"
  const char* typical;     ///< "a scenario is a few KB of JSON"
};

constexpr Limit scenario_limit{max_input_bytes, "16 MiB", "a scenario is JSON text",
                               "a scenario is a few KB of JSON"};
constexpr Limit measurement_limit{max_measurement_bytes, "64 MiB",
                                  "nccl-tests output, a GEMM table and a training log are text",
                                  "measurement files are kilobytes to a few MB"};

/// Appends one chunk, refusing a NUL byte or growth past the limit.
void append_checked(std::string& text, const char* data, std::size_t n,
                    const std::string& origin, const Limit& limit) {
  if (const void* nul = std::memchr(data, '\0', n)) {
    const std::size_t at = text.size() + static_cast<std::size_t>(
                                             static_cast<const char*>(nul) - data);
    throw InputError(origin, "",
                     fmt::format("NUL byte at offset {}; {}, which has none "
                                 "(is this a binary file?)",
                                 at, limit.kind));
  }
  if (n > limit.max_bytes - text.size()) {
    throw InputError(origin, "",
                     fmt::format("input larger than the limit of {} bytes ({}); {} (is this "
                                 "the right file?)",
                                 limit.max_bytes, limit.limit_text, limit.typical));
  }
  text.append(data, n);
}

std::string read_limited(const std::string& path, const Limit& limit) {
  const std::string origin = file_origin(path);
  std::string text;
  std::array<char, chunk_bytes> buffer;
  if (path == "-") {
    while (std::cin) {
      std::cin.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      append_checked(text, buffer.data(), static_cast<std::size_t>(std::cin.gcount()), origin,
                     limit);
    }
    if (std::cin.bad()) throw InputError(origin, "", "cannot read standard input");
    return text;
  }
  const auto error_text = [] { return std::generic_category().message(errno); };
  // Opened without waiting: open(2) of a FIFO blocks until a writer appears, so `mkfifo f;
  // planner validate f` hung every command. With O_NONBLOCK it returns at once, and the type
  // is read from the descriptor itself (no window between a stat and the open).
  errno = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(origin, "", fmt::format("cannot open file: {}", error_text()));
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } const closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    throw InputError(origin, "", fmt::format("cannot read file: {}", error_text()));
  }
  if (S_ISSOCK(info.st_mode)) {
    throw InputError(origin, "",
                     "not a regular file but a socket; give a file, or '-' to read standard "
                     "input");
  }
  const bool pipe = S_ISFIFO(info.st_mode);
  if (pipe) {
    // A pipe is read as it is written: a shell's process substitution (`planner plan <(jq ...
    // a.json)`, /dev/fd/63) or standard input named as a path. Opened without waiting, a named
    // pipe that nobody writes reads as end of file at once (POSIX read(2): "If no process has
    // the pipe open for writing, read() shall return 0"), refused below, instead of the open
    // waiting forever for a writer.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  // A device stays non-blocking: /dev/zero and /dev/urandom read at once (and are refused for
  // their NUL bytes); one with nothing ready (a terminal) fails with EAGAIN below.
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      append_checked(text, buffer.data(), static_cast<std::size_t>(n), origin, limit);
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN) {
      throw InputError(origin, "",
                       "cannot read file: a device with no data ready (a terminal?); give a "
                       "file, or '-' to read standard input");
    } else if (errno != EINTR) {
      throw InputError(origin, "", fmt::format("cannot read file: {}", error_text()));
    }
  }
  if (pipe && text.empty()) {
    throw InputError(origin, "",
                     "a named pipe with no writer, so nothing to read; start the command that "
                     "writes it first, or give a file, or '-' to read standard input");
  }
  return text;
}

}  // namespace

std::string read_input(const std::string& path) { return read_limited(path, scenario_limit); }

std::string read_measurement_file(const std::string& path) {
  std::string text = read_limited(path, measurement_limit);
  // The parsers keep a record per line (a row, or a skipped line with its reason), so the
  // lines, not only the bytes, bound their memory: 31 million one-byte lines in 62 MB took
  // 3.3 GB before this check. nccl-tests prints hundreds of lines, a step log one or a few
  // per step.
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  if (lines > max_measurement_lines) {
    throw InputError(file_origin(path), "",
                     fmt::format("{} lines, more than the {} a measurement file may have "
                                 "(nccl-tests prints hundreds, a training log one or a few a "
                                 "step); give the table, or the log's lines of the steps to fit",
                                 lines, max_measurement_lines));
  }
  return text;
}

}  // namespace planner

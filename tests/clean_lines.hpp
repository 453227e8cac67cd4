#pragma once
// Shared by the fuzz harnesses: whether a command's standard error is clean lines, as
// docs/errors.md promises (one line per error, no raw control characters).
#include <string>
#include <string_view>

namespace test_support {

/// Every line starts "planner: " (an error or a warning) or is the parser's usage hint (or the
/// progress bar's "\r[", never on in-process runs), each ends with a newline, and no control
/// character other than the newlines appears.
inline bool clean_lines(const std::string& err) {
  for (const char c : err) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\n') || b == 0x7F) return false;
  }
  std::size_t start = 0;
  while (start < err.size()) {
    const std::size_t end = err.find('\n', start);
    if (end == std::string::npos) return false;  // unterminated line
    const std::string_view line(err.data() + start, end - start);
    if (!line.starts_with("planner: ") && line != "Run 'planner --help' for usage." &&
        !line.starts_with("\r[")) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace test_support

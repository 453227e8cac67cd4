#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>

#include "planner/base/one_line.hpp"

/// The one error type for bad input. The library throws it; only the CLI prints it
/// (`planner: error: <what()>`) and exits with code 2. what() is always one clean line: the
/// origin, each token of the pointer and the message are passed through one_line, the pointer's
/// tokens (keys from the input) cut to echo_limit, a file name to file_name_limit.

namespace planner {

class InputError : public std::runtime_error {
 public:
  /// `origin`: file name (or "<stdin>", "--set"); `pointer`: JSON pointer ("" for the root).
  InputError(std::string origin, std::string pointer, const std::string& message)
      : std::runtime_error(format(origin, pointer, message)),
        origin_(std::move(origin)),
        pointer_(std::move(pointer)),
        message_(message) {}

  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }
  [[nodiscard]] const std::string& pointer() const noexcept { return pointer_; }
  /// The message alone, as given (unescaped): for rethrowing under another origin.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  /// A file name is shown whole up to this length (a deep path is still readable); longer
  /// ones are cut: the name is the user's own, but a generated one may be any length.
  static constexpr std::size_t file_name_limit = 200;
  /// The whole message is never longer than this: every value and key inside it is already
  /// cut, so only a bug could reach it; it keeps the line a line.
  static constexpr std::size_t message_limit = 2000;

  static std::string format(const std::string& origin, const std::string& pointer,
                            const std::string& message) {
    std::string out = one_line(origin, file_name_limit);
    if (!pointer.empty()) {
      out += ": ";
      std::size_t start = 0;
      while (start <= pointer.size()) {
        const std::size_t slash = std::min(pointer.find('/', start + 1), pointer.size());
        out += one_line(pointer.substr(start, slash - start), echo_limit + 1);
        start = slash == pointer.size() ? slash + 1 : slash;
      }
    }
    out += ": " + one_line(message, message_limit);
    return out;
  }
  std::string origin_;
  std::string pointer_;
  std::string message_;
};

}  // namespace planner

#pragma once
#include <stdexcept>
#include <string>

/// The one error type for bad input. The library throws it; only the CLI prints it
/// (`planner: error: <what()>`) and exits with code 2.

namespace planner {

class InputError : public std::runtime_error {
 public:
  /// `origin`: file name (or "<stdin>", "--set"); `pointer`: JSON pointer ("" for the root).
  InputError(std::string origin, std::string pointer, const std::string& message)
      : std::runtime_error(format(origin, pointer, message)),
        origin_(std::move(origin)),
        pointer_(std::move(pointer)) {}

  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }
  [[nodiscard]] const std::string& pointer() const noexcept { return pointer_; }

 private:
  static std::string format(const std::string& origin, const std::string& pointer,
                            const std::string& message) {
    std::string out = origin;
    if (!pointer.empty()) out += ": " + pointer;
    out += ": " + message;
    return out;
  }
  std::string origin_;
  std::string pointer_;
};

}  // namespace planner

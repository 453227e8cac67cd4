#include "planner/io/read_input.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <system_error>

#include "planner/base/error.hpp"
#include "planner/io/scenario_json.hpp"

namespace planner {
namespace {

constexpr std::size_t chunk_bytes = std::size_t{1} << 16;

/// Appends one chunk, refusing a NUL byte or growth past the limit.
void append_checked(std::string& text, const char* data, std::size_t n,
                    const std::string& origin) {
  if (const void* nul = std::memchr(data, '\0', n)) {
    const std::size_t at = text.size() + static_cast<std::size_t>(
                                             static_cast<const char*>(nul) - data);
    throw InputError(origin, "",
                     fmt::format("NUL byte at offset {}; a scenario is JSON text, which has none "
                                 "(is this a binary file?)",
                                 at));
  }
  if (n > max_input_bytes - text.size()) {
    throw InputError(origin, "",
                     fmt::format("input larger than the limit of {} bytes (16 MiB); a scenario "
                                 "is a few KB of JSON (is this the right file?)",
                                 max_input_bytes));
  }
  text.append(data, n);
}

}  // namespace

std::string read_input(const std::string& path) {
  const std::string origin = file_origin(path);
  std::string text;
  std::array<char, chunk_bytes> buffer;
  if (path == "-") {
    while (std::cin) {
      std::cin.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      append_checked(text, buffer.data(), static_cast<std::size_t>(std::cin.gcount()), origin);
    }
    if (std::cin.bad()) throw InputError(origin, "", "cannot read standard input");
    return text;
  }
  const auto error_text = [] { return std::generic_category().message(errno); };
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  errno = 0;
  const std::unique_ptr<std::FILE, Close> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw InputError(origin, "", fmt::format("cannot open file: {}", error_text()));
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
    append_checked(text, buffer.data(), n, origin);
  }
  if (std::ferror(file.get())) {
    throw InputError(origin, "", fmt::format("cannot read file: {}", error_text()));
  }
  return text;
}

}  // namespace planner

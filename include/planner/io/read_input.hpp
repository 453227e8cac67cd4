#pragma once
#include <cstddef>
#include <string>

/// Reading a scenario: files and standard input alike, in bounded chunks, refused past a size
/// limit and on a NUL byte (docs/errors.md §Syntax and files).

namespace planner {

/// Largest input accepted: 16 MiB. Real scenarios are 1–3 KB (the largest in scenarios/ is
/// under 2 KB) and every field has a bounded value, so 16 MiB is thousands of times any real
/// input; without a limit `planner plan /dev/zero` grew by ~200 MB/s until the out-of-memory
/// killer (issue 14). The limit is checked while reading, so at most this much is ever held.
inline constexpr std::size_t max_input_bytes = std::size_t{16} << 20;

/// The whole text of `path` ("-" = standard input). Throws InputError(file_origin(path), "",
/// ...) when the input cannot be opened or read, holds more than max_input_bytes, or holds a
/// NUL byte (JSON text has none; a parser reading C strings would silently drop what follows).
[[nodiscard]] std::string read_input(const std::string& path);

}  // namespace planner

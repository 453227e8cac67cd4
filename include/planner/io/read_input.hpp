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

/// Largest measurement file `calibrate` reads (nccl-tests output, a GEMM table, a training
/// log): 64 MiB. The real ones are kilobytes to a few MB (a Megatron-LM log of 100,000
/// iterations at ~300 bytes a line is 30 MB); `--nccl /dev/zero` read until std::bad_alloc and
/// a 166 MB table peaked at 1.2 GiB before the limit (issue 32).
inline constexpr std::size_t max_measurement_bytes = std::size_t{64} << 20;

/// Most lines a measurement file may have: 1,000,000. The parsers keep a record per line, so
/// 64 MiB of one-byte lines peaked at 3.3 GB; a Megatron-LM log of 100,000 iterations has a
/// few hundred thousand lines.
inline constexpr std::size_t max_measurement_lines = 1000000;

/// As read_input, for a measurement file: at most max_measurement_bytes and
/// max_measurement_lines, no NUL byte; the
/// messages say what kind of file was expected.
[[nodiscard]] std::string read_measurement_file(const std::string& path);

}  // namespace planner

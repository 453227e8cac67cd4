// The thin CLI: everything is in the library (src/cli.cpp), so tests run it in-process.
#include <fcntl.h>
#include <unistd.h>
#if PLANNER_HEAP_TUNING && defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "planner/cli/cli.hpp"
#include "planner/cli/fd_output.hpp"

namespace {

/// The search's working memory (a few megabytes of vectors, grown while the first search
/// runs) is touched page by page, and on a paravirtualised machine each first touch is a
/// page fault of several microseconds: `plan` on the Mixtral training scenario took 974 of
/// them and 31 ms without thresholds, 300-500 and 24.5 ms with this (docs/performance.md).
/// glibc: the heap grows by large steps and is never handed back, and its first 64 MiB are
/// advised for transparent huge pages (one fault per 2 MiB where the kernel grants them, its
/// "madvise" mode included). Off under the sanitizers (CMakeLists.txt), which own the heap;
/// elsewhere nothing is done.
void prepare_heap() {
#if PLANNER_HEAP_TUNING && defined(__linux__) && defined(__GLIBC__)
  constexpr std::size_t reserve_bytes = std::size_t{64} << 20;
  (void)mallopt(M_MMAP_THRESHOLD, 256 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 512 << 20);
  (void)mallopt(M_TOP_PAD, 32 << 20);
  void* block = malloc(reserve_bytes);
  if (block != nullptr) {
    const auto page = static_cast<std::uintptr_t>(2) << 20;
    const auto start = (reinterpret_cast<std::uintptr_t>(block) + page - 1) & ~(page - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(block) + reserve_bytes) & ~(page - 1);
    if (end > start) {
      (void)madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
    }
    free(block);
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  prepare_heap();
  std::vector<std::string> args(argv + 1, argv + argc);
  // Standard output through a stream that reports failed writes (docs/output.md §Exit codes).
  // When it was closed at start (>&-), every write fails, and descriptor 1 is taken by
  // /dev/null so that no file the planner opens later can get its number.
  planner::FdOutput stdout_buffer(STDOUT_FILENO);
  if (fcntl(STDOUT_FILENO, F_GETFD) == -1) {
    stdout_buffer.mark_closed();
    const int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0 && fd != STDOUT_FILENO) {
      (void)dup2(fd, STDOUT_FILENO);
      (void)close(fd);
    }
  }
  std::ostream out(&stdout_buffer);
  try {
    return planner::run_cli(args, out, std::cerr);
  } catch (const std::exception& e) {
    // Any other exception is a bug in the planner, never a user's fault.
    out.flush();
    std::cerr << "planner: internal error: " << e.what() << "\n";
    return 3;
  }
}

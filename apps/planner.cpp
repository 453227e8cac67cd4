// The thin CLI: everything is in the library (src/cli.cpp), so tests run it in-process.
#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "planner/cli/cli.hpp"
#include "planner/cli/fd_output.hpp"

int main(int argc, char** argv) {
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

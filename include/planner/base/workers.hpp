#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

/// The project's one worker pool (issue 33): helper threads running one body, joined when the
/// pool goes out of scope, and the indexed-task loop the threshold scans use on it. The sweep
/// runs its ordered producer (cli/sweep.cpp OrderedRun::work) on the same pool.

namespace planner {

/// The cores this process may run on: on Linux its CPU affinity mask (`taskset`, a container's
/// cpuset), which std::thread::hardware_concurrency ignores (it counts the machine's); a
/// second thread on one allowed core only adds a context switch and a second thread's
/// scratch memory to fault in (docs/performance.md). Elsewhere the machine's count.
[[nodiscard]] inline unsigned usable_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int allowed = CPU_COUNT(&set);
    if (allowed > 0) return static_cast<unsigned>(allowed);
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

/// The thread count a command uses: the one asked for, else the cores the process may use,
/// at least 1 and at most `tasks` (no idle threads for a short list).
[[nodiscard]] inline unsigned worker_count(unsigned asked, std::size_t tasks) {
  unsigned n = asked ? asked : usable_cores();
  return static_cast<unsigned>(std::min<std::size_t>(n, std::max<std::size_t>(1, tasks)));
}

/// `helpers` threads each running `body` from construction; the destructor joins them (the
/// caller makes `body` return, e.g. by a stop flag, before the pool is destroyed).
class Workers {
 public:
  Workers(unsigned helpers, const std::function<void()>& body) {
    threads_.reserve(helpers);
    for (unsigned t = 0; t < helpers; ++t) threads_.emplace_back(body);
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() { join(); }
  void join() {
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  [[nodiscard]] bool empty() const noexcept { return threads_.empty(); }

 private:
  std::vector<std::thread> threads_;
};

/// Runs task(i) for i in [0, count) on `threads` threads (the caller's among them); each
/// task writes only its own result slot, so the outcome is the serial one whatever the
/// timing. The first exception of the lowest-numbered task that threw is rethrown after all
/// tasks ran.
inline void for_each_task(std::size_t count, unsigned threads,
                          const std::function<void(std::size_t)>& task) {
  std::vector<std::exception_ptr> failed(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  {
    Workers pool(worker_count(threads, count) - 1, worker);
    worker();
  }
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace planner

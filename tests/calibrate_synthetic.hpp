#pragma once
// Synthetic measurement files for the calibrate tests, generated from known parameters with
// deterministic noise, so the tests can assert that the fits recover those parameters.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace calibrate_synthetic {

/// Deterministic noise in [−amplitude, +amplitude]: a fixed LCG (Numerical Recipes' constants,
/// 1664525 and 1013904223) mapped to the interval, the same on every platform.
class Noise {
 public:
  explicit Noise(double amplitude) : amplitude_(amplitude) {}
  double next() {
    state_ = state_ * 1664525u + 1013904223u;
    return amplitude_ * (2.0 * static_cast<double>(state_) / 4294967296.0 - 1.0);
  }

 private:
  double amplitude_;
  std::uint32_t state_ = 12345u;
};

/// An nccl-tests table of `binary` over `ranks` ranks on `nodes` nodes whose out-of-place time
/// is hops·α + factor·size/B, times (1 + noise). algbw and busbw are printed as nccl-tests
/// computes them (size/time; ×factor), so the parser's cross-checks see consistent rows.
inline std::string nccl_table(const std::string& binary, int ranks, int nodes, double alpha_s,
                              double bus_bw_bytes_per_s, double hops, double factor,
                              Noise& noise) {
  std::string t = fmt::format("# Collective test starting: {}\n", binary);
  t += fmt::format("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor)\n#\n"
                   "# Using devices\n");
  for (int r = 0; r < ranks; ++r) {
    t += fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on node-{} device {:2d} [0x1b] SYNTH GPU\n",
                     r, 1000 + r, r / (ranks / nodes), r % (ranks / nodes));
  }
  t += "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong"
       "     time   algbw   busbw #wrong\n"
       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
       "     (us)  (GB/s)  (GB/s)\n";
  const bool per_rank = binary != "all_reduce_perf" && binary != "sendrecv_perf";
  for (double size = per_rank ? 4096 : 8; size <= 8589934592.0; size *= 2) {
    const double seconds = (hops * alpha_s + factor * size / bus_bw_bytes_per_s) *
                           (1.0 + noise.next());
    const double us = seconds * 1e6;
    const double algbw = size / seconds / 1e9;
    const double count = size / 4.0 / (per_rank ? ranks : 1);
    t += fmt::format("{:12.0f}  {:12.0f}     float     sum      -1  {:8.2f}  {:6.2f}  {:6.2f}"
                     "      0  {:8.2f}  {:6.2f}  {:6.2f}      0\n",
                     size, count, us, algbw, algbw * factor, us, algbw, algbw * factor);
  }
  return t;
}

}  // namespace calibrate_synthetic

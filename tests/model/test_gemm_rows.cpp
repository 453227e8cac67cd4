// The GEMMs' row share (include/planner/model/gemm_rows.hpp) refitted from the H200 GEMM
// tables it cites, and its values by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "planner/model/gemm_rows.hpp"

using namespace planner;

namespace {

struct GemmCall {
  double m = 0, n = 0, k = 0, seconds = 0, tflops = 0;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  return cells;
}

/// The bf16 rows of one of validation/microbench/h200's tables; `first` is the column of m
/// (gemm.csv: m,n,k,variant,seconds,tflops; small_m.csv: gemm,m,n,k,variant,seconds,tflops).
std::vector<GemmCall> bf16_calls(const std::string& file, std::size_t first) {
  std::ifstream in(std::filesystem::path(PLANNER_SOURCE_DIR) / "validation/microbench/h200" /
                   file);
  std::vector<GemmCall> calls;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> c = split_csv(line);
    if (c.size() < first + 6 || c[first + 3] != "bf16") continue;  // the header too
    calls.push_back({std::stod(c[first]), std::stod(c[first + 1]), std::stod(c[first + 2]),
                     std::stod(c[first + 4]), std::stod(c[first + 5])});
  }
  return calls;
}

/// Least squares y ≈ a·x0 + b·x1 + c·x2 by the normal equations, solved by Cramer's rule.
std::array<double, 3> fit3(const std::vector<std::array<double, 3>>& x,
                           const std::vector<double>& y) {
  double m[3][3] = {}, v[3] = {};
  for (std::size_t r = 0; r < x.size(); ++r) {
    for (int i = 0; i < 3; ++i) {
      v[i] += x[r][i] * y[r];
      for (int j = 0; j < 3; ++j) m[i][j] += x[r][i] * x[r][j];
    }
  }
  const auto det = [](const double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
           a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  };
  const double d = det(m);
  std::array<double, 3> out{};
  for (int col = 0; col < 3; ++col) {
    double t[3][3];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) t[i][j] = j == col ? v[i] : m[i][j];
    }
    out[static_cast<std::size_t>(col)] = det(t) / d;
  }
  return out;
}

}  // namespace

TEST_CASE("the GEMM row share refitted from the H200 GEMM tables", "[model][gemm]") {
  const std::vector<GemmCall> wide = bf16_calls("gemm.csv", 0);
  const std::vector<GemmCall> narrow = bf16_calls("small_m.csv", 1);
  REQUIRE(wide.size() == 133);
  REQUIRE(narrow.size() == 40);
  // The large-GEMM rate: the median of the calls of at least 10^11 FLOP.
  std::vector<double> large;
  for (const GemmCall& g : wide) {
    if (2 * g.m * g.n * g.k >= 1e11) large.push_back(g.tflops);
  }
  std::sort(large.begin(), large.end());
  REQUIRE(large.size() == 100);
  const double rate = 0.5 * (large[49] + large[50]);
  CHECK(rate == Approx(681.5).epsilon(1e-4));
  // The fit: 1/share − 1 = a/K + b/N + c/M over the calls of at least 30 µs (below that the
  // eager timing loop's host issue bounds them) and the CUDA-graph calls of at least 256 rows
  // (below that the weight read does).
  std::vector<std::array<double, 3>> x;
  std::vector<double> y;
  for (const GemmCall& g : wide) {
    if (g.seconds < 30e-6) continue;
    x.push_back({1 / g.k, 1 / g.n, 1 / g.m});
    y.push_back(rate / g.tflops - 1);
  }
  for (const GemmCall& g : narrow) {
    if (g.m < 256) continue;
    x.push_back({1 / g.k, 1 / g.n, 1 / g.m});
    y.push_back(rate / g.tflops - 1);
  }
  CHECK(x.size() == 145);
  const std::array<double, 3> fit = fit3(x, y);
  CHECK(fit[0] == Approx(160.9).epsilon(1e-3));  // K
  CHECK(fit[1] == Approx(11.26).epsilon(1e-3));  // N
  CHECK(fit[2] == Approx(gemm_half_rate_rows).epsilon(1e-3));  // M: the constant applied
}

TEST_CASE("the GEMM row share by hand", "[model][gemm]") {
  // rows / (rows + 24.97): 128 / 152.97, 256 / 280.97, 2048 / 2072.97.
  CHECK(gemm_row_share(128) == Approx(0.83676).epsilon(1e-4));
  CHECK(gemm_row_share(256) == Approx(0.91113).epsilon(1e-4));
  CHECK(gemm_row_share(2048) == Approx(0.98795).epsilon(1e-4));
  CHECK(gemm_row_share(24.97) == Approx(0.5));
  CHECK(gemm_row_share(0) == 1.0);  // no rows: nothing to slow
}

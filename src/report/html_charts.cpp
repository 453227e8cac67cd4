#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "html_parts.hpp"
#include "planner/io/text.hpp"
#include "svg.hpp"
#include "time_parts.hpp"

namespace planner::html {

namespace {

/// Labels at least this far apart vertically, in pixels (one line of 12 px text).
constexpr double label_gap = 14;

/// Label heights for segments centred at `centres` (bottom first, decreasing y), pushed
/// apart to label_gap without leaving [top, bottom].
std::vector<double> spread_labels(std::vector<double> centres, double top) {
  for (std::size_t i = 1; i < centres.size(); ++i) {
    centres[i] = std::min(centres[i], centres[i - 1] - label_gap);
  }
  // Too many to fit below `top`: shift the whole column down from the top.
  for (std::size_t i = centres.size(); i-- > 0;) {
    const double floor = i + 1 < centres.size() ? centres[i + 1] + label_gap : top;
    centres[i] = std::max(centres[i], floor);
  }
  return centres;
}

}  // namespace

std::string memory_stack_svg(const MemoryLedger& l) {
  const double width = 640, height = 440, top = 30, bottom = 410, bar_x = 170, bar_w = 150;
  const double scale_bytes = std::max(l.total_bytes(), l.capacity_bytes);
  const double px_per_byte = scale_bytes > 0 ? (bottom - top) / scale_bytes : 0;
  std::string body;
  std::vector<double> centres;
  std::vector<std::string> labels;
  double y = bottom;
  std::size_t index = 0;
  for (const LedgerLine& line : ledger_lines) {
    const double bytes = l.*line.bytes;
    const std::size_t colour = index++;
    if (bytes == 0) continue;
    const double h = bytes * px_per_byte;
    y -= h;
    const std::string label = fmt::format("{} {}", line.name, gib_text(bytes));
    body += svg::rect(bar_x, y, bar_w, h, svg::colour(colour),
                      {{"class", "ledger"}, {"data-line", std::string(line.name)},
                       {"data-bytes", svg::bytes_attr(bytes)}},
                      label);
    centres.push_back(y + h / 2);
    labels.push_back(label);
  }
  const std::vector<double> at = spread_labels(centres, top + 6);
  for (std::size_t i = 0; i < at.size(); ++i) {
    body += svg::line(bar_x + bar_w, centres[i], bar_x + bar_w + 30, at[i], "leader");
    body += svg::text(bar_x + bar_w + 34, at[i] + 4, labels[i]);
  }
  const double cap_h = l.capacity_bytes * px_per_byte;
  body += svg::rect(bar_x - 6, bottom - cap_h, bar_w + 12, cap_h, "none",
                    {{"class", "capacity"}, {"data-bytes", svg::bytes_attr(l.capacity_bytes)}},
                    "capacity " + gib_text(l.capacity_bytes));
  body += svg::text(bar_x - 10, bottom - cap_h + 4, "capacity " + gib_text(l.capacity_bytes), "end");
  const double total_y = bottom - l.total_bytes() * px_per_byte;
  body += fmt::format("<g class=\"total\" data-bytes=\"{}\">", svg::bytes_attr(l.total_bytes()));
  body += svg::text(bar_x - 10, total_y + 16, "total " + gib_text(l.total_bytes()), "end");
  body += "</g>\n";
  body += svg::text(bar_x + bar_w / 2, bottom + 20, l.fits() ? "fits" : "does not fit", "middle");
  return svg::frame(width, height, "memory per GPU by ledger line", "memory-stack", body);
}

std::string time_bar_svg(const Context& ctx, const Evaluation& e) {
  const std::vector<TimePart> parts = time_parts(ctx, e);
  const double total = headline_seconds(ctx, e);
  const double width = 1000, left = 10, bar_w = 980, bar_y = 10, bar_h = 36;
  const double rows = static_cast<double>((parts.size() + 2) / 3);
  std::string body;
  double x = left;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const TimePart& p = parts[i];
    const double w = total > 0 ? bar_w * p.seconds / total : 0;
    const std::string label = fmt::format("{} {} ({:.1f} %)", p.name, seconds_text(p.seconds),
                                          total > 0 ? 100 * p.seconds / total : 0.0);
    body += svg::rect(x, bar_y, w, bar_h, svg::colour(i),
                      {{"class", "time-part"}, {"data-part", p.name},
                       {"data-seconds", svg::number_attr(p.seconds)}},
                      label);
    x += w;
    // The legend: three entries per row under the bar.
    const double lx = left + static_cast<double>(i % 3) * 330;
    const double ly = bar_y + bar_h + 22 + static_cast<double>(i / 3) * 18;
    body += svg::rect(lx, ly - 10, 12, 12, svg::colour(i), {}, p.name);
    body += svg::text(lx + 16, ly, label);
  }
  const double height = bar_y + bar_h + 30 + rows * 18;
  body += fmt::format("<g class=\"time-total\" data-seconds=\"{}\"></g>\n", svg::number_attr(total));
  return svg::frame(width, height, fmt::format("{} time by part", headline_time_name(ctx)),
                    "time-bar", body);
}

std::string thresholds_svg(const std::vector<Threshold>& thresholds) {
  const double width = 1000, left = 300, mid = 620, half = 270, row_h = 22, top = 24;
  // The scale: the largest change, in decades, any threshold needs (at least a tenth).
  double decades = 0.1;
  for (const Threshold& t : thresholds) {
    if (t.value > 0 && t.base_value > 0) {
      decades = std::max(decades, std::abs(std::log10(t.value / t.base_value)));
    }
  }
  std::string body = svg::line(mid, top - 14, mid, top + row_h * static_cast<double>(thresholds.size()), "axis");
  body += svg::text(mid, top - 16, "now", "middle", "small");
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    const Threshold& t = thresholds[i];
    const double y = top + row_h * static_cast<double>(i);
    const bool drawable = t.value > 0 && t.base_value > 0;
    const double change = drawable ? std::log10(t.value / t.base_value) / decades : 0;
    const double x0 = std::min(mid, mid + change * half);
    const double ratio = drawable ? t.value / t.base_value : 1;
    const std::string shown = fmt::format("{:+.1f} %", 100 * (ratio - 1));
    body += svg::text(left - 8, y + 14, t.parameter, "end");
    body += svg::rect(x0, y + 3, std::abs(change) * half, row_h - 6,
                      t.side == ThresholdSide::below ? svg::colour(0) : svg::colour(1),
                      {{"class", "threshold"}, {"data-parameter", t.parameter},
                       {"data-direction", std::string(to_string(t.side))},
                       {"data-value", svg::number_attr(t.value)},
                       {"data-base-value", svg::number_attr(t.base_value)}},
                      shown);
    const double tx = change < 0 ? x0 - 4 : x0 + std::abs(change) * half + 4;
    body += svg::text(tx, y + 14, shown, change < 0 ? "end" : "start", "small");
  }
  const double height = top + row_h * static_cast<double>(thresholds.size()) + 10;
  return svg::frame(width, height, "thresholds: change of each input that changes the answer",
                    "thresholds", body);
}

}  // namespace planner::html

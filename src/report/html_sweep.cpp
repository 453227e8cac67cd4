#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "html_parts.hpp"
#include "planner/base/one_line.hpp"
#include "planner/io/text.hpp"
#include "planner/report/html_report.hpp"
#include "svg.hpp"

namespace planner {

using nlohmann::json;

namespace {

/// Curves beyond this many are listed in the table but not drawn (ten colours).
constexpr std::size_t max_curves = 10;

struct Point {
  double x = 0;
  std::string x_text;
  std::optional<double> tokens_per_second;  ///< none where nothing fits
  std::string plan;
  std::size_t curve = 0;
};

/// A point's value for people: four significant digits and an SI prefix ("13.98 G" for
/// 13.98 GB/s: the JSONL holds base units, bytes per second).
std::string number_text(double v) {
  const auto [scale, prefix] = count_prefix(std::abs(v));
  return significant_text(v / scale, 4) + prefix;
}

/// A string value is the user's text (a --vary value of the name): its control characters are
/// escaped (one_line) before it reaches a <title> or a cell, where a raw ESC or newline landed.
std::string value_text(const json& v) {
  if (v.is_number()) return number_text(v.get<double>());
  if (v.is_string()) return one_line(v.get<std::string>());
  return one_line(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

/// The points, each on the curve of its values of the inputs after the first.
std::vector<Point> read_points(const std::vector<std::string>& pointers,
                               const std::vector<json>& lines, std::vector<std::string>& curves) {
  std::map<std::string, std::size_t> curve_of;
  std::vector<Point> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& line = lines[i];
    const json& at = line.at("point");
    Point p;
    const json& x = at.at(pointers.front());
    p.x = x.is_number() ? x.get<double>() : static_cast<double>(i);
    p.x_text = value_text(x);
    std::string key;
    for (std::size_t a = 1; a < pointers.size(); ++a) {
      key += (a > 1 ? ", " : "") + pointers[a] + " = " + value_text(at.at(pointers[a]));
    }
    const auto [it, added] = curve_of.emplace(key, curve_of.size());
    if (added) curves.push_back(key);
    p.curve = it->second;
    if (line.at("status") == "ok") {
      const json& best = line.at("best");
      p.tokens_per_second = best.at("time").at("tokens_per_second").get<double>();
      p.plan = best.at("description").get<std::string>();
    }
    out.push_back(p);
  }
  return out;
}

struct Scale {
  double lo = 0, hi = 1, left = 0, right = 1;
  bool log = false;
  [[nodiscard]] double operator()(double v) const {
    const double f = log ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
    return left + (hi > lo ? f : 0.5) * (right - left);
  }
};

std::string curves_svg(const std::string& x_name, const std::vector<Point>& points,
                       const std::vector<std::string>& curves) {
  const double width = 1000, height = 460, left = 80, right = 960, top = 20, bottom = 400;
  Scale sx{points.front().x, points.front().x, left, right};
  double y_max = 0;
  for (const Point& p : points) {
    sx.lo = std::min(sx.lo, p.x);
    sx.hi = std::max(sx.hi, p.x);
    if (p.tokens_per_second) y_max = std::max(y_max, *p.tokens_per_second);
  }
  // A geometric grid (a "log" range) reads best on a log axis: positive and a decade or more.
  sx.log = sx.lo > 0 && sx.hi >= 10 * sx.lo;
  const Scale sy{0, y_max > 0 ? 1.1 * y_max : 1, bottom, top};
  std::string body = svg::line(left, bottom, right, bottom, "axis") + svg::line(left, top, left, bottom, "axis");
  for (int i = 0; i <= 4; ++i) {
    const double v = sy.hi * i / 4;
    body += svg::line(left, sy(v), right, sy(v), "grid");
    body += svg::text(left - 6, sy(v) + 4, count_text(v), "end", "small");
  }
  body += svg::text((left + right) / 2, height - 22, x_name + (sx.log ? " (log scale)" : ""), "middle");
  body += svg::text(14, top - 6, "tokens/s of the best plan", "start", "small");
  for (std::size_t c = 0; c < std::min(curves.size(), max_curves); ++c) {
    std::string poly;
    std::string previous_plan;
    for (const Point& p : points) {
      if (p.curve != c || !p.tokens_per_second) continue;
      const double x = sx(p.x), y = sy(*p.tokens_per_second);
      poly += fmt::format("{:.1f},{:.1f} ", x, y);
      const bool change = !previous_plan.empty() && p.plan != previous_plan;
      previous_plan = p.plan;
      body += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" stroke=\"#222\" "
          "stroke-width=\"{}\" class=\"point\" data-x=\"{}\" data-tokens-per-second=\"{}\" "
          "data-plan=\"{}\" data-plan-change=\"{}\"><title>{} = {}: {} tokens/s, {}</title></circle>\n",
          x, y, change ? 5 : 3.5, svg::colour(c), change ? 1.5 : 0, svg::number_attr(p.x),
          svg::number_attr(*p.tokens_per_second), svg::escape(p.plan), change ? "true" : "false",
          svg::escape(x_name), svg::escape(p.x_text), count_text(*p.tokens_per_second),
          svg::escape(p.plan));
    }
    body = fmt::format("<polyline points=\"{}\" stroke=\"{}\"/>\n", poly, svg::colour(c)) + body;
    if (!curves[c].empty()) {
      body += svg::rect(left + 10, top + 8 + 16 * static_cast<double>(c), 10, 10, svg::colour(c), {}, curves[c]);
      body += svg::text(left + 24, top + 17 + 16 * static_cast<double>(c), curves[c], "start", "small");
    }
  }
  // Five ticks, evenly spaced on the axis (geometrically on a log axis).
  for (int i = 0; i <= 4; ++i) {
    const double f = i / 4.0;
    const double v = sx.log ? sx.lo * std::pow(sx.hi / sx.lo, f) : sx.lo + (sx.hi - sx.lo) * f;
    body += svg::line(sx(v), bottom, sx(v), bottom + 4, "axis");
    body += svg::text(sx(v), bottom + 16, number_text(v), "middle", "small");
  }
  return svg::frame(width, height, "sweep: tokens per second of the best plan", "sweep-curves", body);
}

}  // namespace

std::string sweep_html(const std::string& origin, const std::vector<std::string>& pointers,
                       const std::vector<json>& lines) {
  std::string out = html::page_start(fmt::format("planner {}: sweep of {}", PLANNER_VERSION, one_line(origin, 200)));
  if (lines.empty() || pointers.empty()) return out + "<p>No points.</p>\n" + html::page_end();
  std::vector<std::string> curves;
  const std::vector<Point> points = read_points(pointers, lines, curves);
  out += curves_svg(pointers.front(), points, curves);
  out += "<p class=\"note\">A ringed point: the recommended plan changes there.</p>\n";
  out += "<table id=\"points\">\n<tr>";
  for (const std::string& p : pointers) out += "<th>" + svg::escape(p) + "</th>";
  out += "<th class=\"num\">tokens/s</th><th>best plan</th></tr>\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    out += "<tr>";
    for (const std::string& p : pointers) {
      out += "<td class=\"num\">" + svg::escape(value_text(lines[i].at("point").at(p))) + "</td>";
    }
    const Point& pt = points[i];
    out += pt.tokens_per_second
               ? fmt::format("<td class=\"num\">{:.0f}</td><td>{}</td>", *pt.tokens_per_second,
                             svg::escape(pt.plan))
               : std::string("<td></td><td>nothing fits</td>");
    out += "</tr>\n";
  }
  return out + "</table>\n" + html::page_end();
}

}  // namespace planner

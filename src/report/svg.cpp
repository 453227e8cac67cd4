#include "svg.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace planner::svg {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string bytes_attr(double bytes) { return fmt::format("{:.0f}", bytes); }

std::string number_attr(double value) { return fmt::format("{:.9g}", value); }

namespace {

std::string attributes(const Attrs& attrs) {
  std::string out;
  for (const auto& [name, value] : attrs) out += fmt::format(" {}=\"{}\"", name, escape(value));
  return out;
}

/// Coordinates to a tenth of a pixel: enough for the eye, short in the file.
std::string px(double v) { return fmt::format("{:.1f}", v); }

}  // namespace

std::string rect(double x, double y, double width, double height, std::string_view fill,
                 const Attrs& attrs, std::string_view tip) {
  const std::string title = tip.empty() ? "" : fmt::format("<title>{}</title>", escape(tip));
  return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>{}</rect>\n",
                     px(x), px(y), px(width), px(height), fill, attributes(attrs), title);
}

std::string text(double x, double y, std::string_view content, std::string_view anchor,
                 std::string_view css_class) {
  const std::string cls = css_class.empty() ? "" : fmt::format(" class=\"{}\"", css_class);
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", px(x), px(y),
                     anchor, cls, escape(content));
}

std::string line(double x1, double y1, double x2, double y2, std::string_view css_class) {
  return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"{}\"/>\n", px(x1),
                     px(y1), px(x2), px(y2), css_class);
}

std::string frame(double width, double height, std::string_view label, std::string_view id,
                  const std::string& body) {
  return fmt::format("<svg id=\"{}\" width=\"{}\" "
                     "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n{}"
                     "</svg>\n",
                     id, px(width), px(height), px(width), px(height), escape(label), body);
}

std::string_view colour(std::size_t i) {
  static constexpr std::array<std::string_view, 10> tab10{
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return tab10[i % tab10.size()];
}

}  // namespace planner::svg

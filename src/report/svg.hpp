#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// Small writers for the self-contained HTML page (html_report.cpp): escaped text, SVG
/// elements with their numbers in data attributes, a fixed colour palette. No scripts, no
/// external resources (docs/output.md §html).

namespace planner::svg {

/// Text for HTML content or a double-quoted attribute: & < > " ' escaped.
[[nodiscard]] std::string escape(std::string_view text);

/// A number for a data attribute, in base units: bytes as a whole number, other figures with
/// nine significant digits (JSON's precision is the same to a few parts per billion).
[[nodiscard]] std::string bytes_attr(double bytes);
[[nodiscard]] std::string number_attr(double value);

/// name="value" pairs, written in order; values are escaped.
using Attrs = std::vector<std::pair<std::string, std::string>>;

/// <rect x y width height fill ...attrs><title>tip</title></rect> (no title when tip is empty)
[[nodiscard]] std::string rect(double x, double y, double width, double height,
                               std::string_view fill, const Attrs& attrs,
                               std::string_view tip);

/// <text x y ...attrs>content</text>, with an optional anchor (start, middle, end).
[[nodiscard]] std::string text(double x, double y, std::string_view content,
                               std::string_view anchor = "start", std::string_view css_class = "");

/// <line ...> from (x1, y1) to (x2, y2).
[[nodiscard]] std::string line(double x1, double y1, double x2, double y2, std::string_view css_class);

/// An <svg> element of the given size around `body`, with an accessible label.
[[nodiscard]] std::string frame(double width, double height, std::string_view label,
                                std::string_view id, const std::string& body);

/// The i-th colour of a palette that tells ten series apart (Tableau 10, the default of
/// matplotlib's "tab10" colour cycle), cycling after ten.
[[nodiscard]] std::string_view colour(std::size_t i);

}  // namespace planner::svg

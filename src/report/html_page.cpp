#include <fmt/format.h>

#include "html_parts.hpp"
#include "svg.hpp"

namespace planner::html {

namespace {

/// The page's only style sheet: system fonts, no external resources.
constexpr std::string_view style = R"(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; }
p.headline { font-size: 1.1em; } .plan { font-weight: 600; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
svg text { font-family: system-ui, sans-serif; font-size: 12px; fill: #222; }
svg text.small { font-size: 10px; } svg text.inside { fill: #fff; font-size: 10px; }
svg line.axis { stroke: #444; stroke-width: 1; } svg line.grid { stroke: #ddd; stroke-width: 1; }
svg line.leader { stroke: #999; stroke-width: 0.5; }
svg rect.capacity { fill: none; stroke: #222; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg polyline { fill: none; stroke-width: 1.5; }
div.scroll { overflow-x: auto; } li { margin: 0.3em 0; } .note { color: #555; font-size: 0.92em; }
)";

}  // namespace

std::string page_start(std::string_view title) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
                     svg::escape(title), style, svg::escape(title));
}

std::string page_end() { return "</body>\n</html>\n"; }

}  // namespace planner::html

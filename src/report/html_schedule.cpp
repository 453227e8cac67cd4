#include <fmt/format.h>

#include <algorithm>

#include "html_parts.hpp"
#include "planner/io/text.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/schedule.hpp"
#include "svg.hpp"

namespace planner::html {

namespace {

/// More passes than this are drawn with fewer micro-batches (each is a <rect> of ~230 bytes
/// and its ~70-byte hover title: 10,000 keep a schedule near 3 MB). A pipeline so deep that
/// its p micro-batches alone pass it (2·p²·v, e.g. p 32 at v 5) is still drawn with p, up to
/// min_schedule_passes; past that, with p micro-batches on its first and last stages only.
constexpr std::size_t max_passes = 10000;
constexpr std::size_t min_schedule_passes = 2 * max_passes;
/// The schedule is timed whole before its stages are picked: past this many passes (2·p·v·m at
/// m = p: p 700 at v 2) it is not drawn at all, so the page stays bounded in time and memory.
constexpr std::int64_t max_timed_passes = 2000000;
/// A micro-batch slot is drawn at least this wide per model chunk, so a forward box (a third
/// of a chunk's share) stays visible at any interleaving depth; a longer schedule scrolls
/// sideways.
constexpr double min_chunk_slot_px = 12;

/// The micro-batches drawn: all of them, or, when that is more than max_passes passes
/// (2·p·v each), the most that fit, a multiple of p (Megatron-LM's interleaved schedule needs
/// one, and with at least p the warm-up, steady phase and cool-down all show); p when even
/// those pass max_passes (past min_schedule_passes they are drawn on the end stages alone,
/// stages_at_each_end).
std::int64_t drawn_micro_batches(const Plan& p) {
  const std::int64_t stages = std::max<std::int64_t>(p.pp, 1);
  const std::int64_t per_micro_batch = 2 * stages * std::max<std::int64_t>(p.virtual_stages, 1);
  const auto cap = static_cast<std::int64_t>(max_passes) / per_micro_batch;
  if (p.grad_accum <= cap) return p.grad_accum;
  const std::int64_t m = cap - cap % stages;
  return m >= stages ? m : std::min(p.grad_accum, stages);
}

/// The stages drawn at each end of a pipeline whose p micro-batches pass min_schedule_passes:
/// the most k whose passes on 2k stages (2·2k·v·m) fit in max_passes, at least 1; 0 when
/// every stage is drawn.
std::int64_t stages_at_each_end(const Plan& p) {
  const std::int64_t stages = std::max<std::int64_t>(p.pp, 1);
  const std::int64_t v = std::max<std::int64_t>(p.virtual_stages, 1);
  if (2 * stages * v * p.grad_accum <= static_cast<std::int64_t>(min_schedule_passes)) return 0;
  const std::int64_t k = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(max_passes) /
             (4 * v * std::max<std::int64_t>(p.grad_accum, 1)));
  return 2 * k >= stages ? 0 : k;
}

/// The forward pass's share of a micro-batch slot: its FLOPs over all the slot's FLOPs
/// (model/compute.hpp: forward 2PD plus a third of attention; backward twice that plus the
/// recompute), so a backward box is about twice as wide as a forward one.
double forward_share(const Context& ctx, const Plan& p) {
  const MicroBatchFlops f = micro_batch_flops(ctx.model, p);
  return f.total() > 0 ? f.forward() / f.total() : 1.0 / 3.0;
}

}  // namespace

std::string schedule_svg(const Context& ctx, const Evaluation& e, std::string_view id) {
  // A schedule of more passes than max_passes is drawn with fewer micro-batches: the same
  // warm-up and cool-down, a shorter steady phase, said above the picture.
  // Deeper still (p micro-batches past min_schedule_passes), p micro-batches on the first and
  // last stages only: the warm-up, the steady phase and the cool-down as the ends see them.
  Plan p = e.plan;
  p.grad_accum = drawn_micro_batches(e.plan);
  const std::int64_t v_chunks = std::max<std::int64_t>(p.virtual_stages, 1);
  if (2 * std::max<std::int64_t>(p.pp, 1) * v_chunks * p.grad_accum > max_timed_passes) return "";
  const std::int64_t ends = stages_at_each_end(p);
  const std::vector<TimedPass> passes = timed_schedule(p, forward_share(ctx, p));
  if (passes.empty()) return "";
  std::string shortened =
      p.grad_accum < e.plan.grad_accum
          ? fmt::format("<p class=\"note\">Drawn with {} of its {} micro-batches: the warm-up "
                        "and cool-down as planned, the steady phase shortened.</p>\n",
                        p.grad_accum, e.plan.grad_accum)
          : std::string();
  if (ends > 0) {
    shortened += fmt::format("<p class=\"note\">Drawn on stages 1-{} and {}-{} of its {}: "
                             "the stages between run the same passes, each a little later than "
                             "the one before.</p>\n",
                             ends, p.pp - ends + 1, p.pp, p.pp);
  }
  // The row a stage is drawn on: every stage, or the first `ends`, a gap row, the last `ends`.
  const auto drawn = [&](std::int64_t stage) {
    return ends == 0 || stage < ends || stage >= p.pp - ends;
  };
  const auto row_of = [&](std::int64_t stage) {
    return ends == 0 || stage < ends ? stage : stage - (p.pp - ends) + ends + 1;
  };
  const std::int64_t rows = ends == 0 ? std::max<std::int64_t>(p.pp, 1) : 2 * ends + 1;
  const double slot = e.training.micro_batch_seconds();
  double slots = 0;
  for (const TimedPass& t : passes) slots = std::max(slots, t.end);
  // The page's width, or wider (scrolled sideways) so that a slot keeps min_slot_px.
  const double left = 70, row_h = 24, top = 10;
  const double plot_w = std::max(
      920.0, min_chunk_slot_px * static_cast<double>(std::max<std::int64_t>(p.virtual_stages, 1)) *
                 slots);
  const double width = left + plot_w + 10;
  const double stages = static_cast<double>(rows);
  const double px_per_slot = slots > 0 ? plot_w / slots : 0;
  std::string body;
  for (std::int64_t s = 0; s < p.pp; ++s) {
    if (!drawn(s)) continue;
    body += svg::text(left - 6, top + row_h * static_cast<double>(row_of(s)) + 16,
                      fmt::format("stage {}", s + 1), "end");
  }
  if (ends > 0) {
    body += svg::text(left - 6, top + row_h * static_cast<double>(ends) + 16,
                      fmt::format("{}-{}", ends + 1, p.pp - ends), "end", "small");
  }
  for (const TimedPass& t : passes) {
    if (!drawn(t.stage)) continue;
    const double x = left + t.start * px_per_slot;
    const double w = (t.end - t.start) * px_per_slot;
    const double y = top + row_h * static_cast<double>(row_of(t.stage)) + 2;
    const auto mb = static_cast<std::size_t>(t.op.micro_batch);
    const std::string tip =
        fmt::format("stage {}{}, {} of micro-batch {}: {} to {}", t.stage + 1,
                    p.virtual_stages > 1 ? fmt::format(" chunk {}", t.op.chunk + 1) : std::string(),
                    t.op.forward ? "forward" : "backward", mb + 1,
                    seconds_text(t.start * slot), seconds_text(t.end * slot));
    body += svg::rect(x, y, w, row_h - 4, svg::colour(mb),
                      {{"class", t.op.forward ? "pass forward" : "pass backward"},
                       {"fill-opacity", t.op.forward ? "0.55" : "1"},
                       {"data-stage", std::to_string(t.stage)},
                       {"data-micro-batch", std::to_string(mb)},
                       {"data-chunk", std::to_string(t.op.chunk)},
                       {"data-start-seconds", svg::number_attr(t.start * slot)},
                       {"data-end-seconds", svg::number_attr(t.end * slot)}},
                      tip);
    if (w >= 16) body += svg::text(x + w / 2, y + 14, std::to_string(mb + 1), "middle", "inside");
  }
  const double axis_y = top + row_h * stages + 4;
  body += svg::line(left, axis_y, left + plot_w, axis_y, "axis");
  body += svg::text(left, axis_y + 16, "0", "start", "small");
  body += fmt::format("<g class=\"schedule-end\" data-seconds=\"{}\" data-slots=\"{}\">",
                      svg::number_attr(slots * slot), svg::number_attr(slots));
  body += svg::text(left + plot_w, axis_y + 16,
                    fmt::format("{} ({} micro-batch slots of {})", seconds_text(slots * slot),
                                significant_text(slots, 4), seconds_text(slot)),
                    "end", "small");
  body += "</g>\n";
  return shortened + "<div class=\"scroll\">\n" +
         svg::frame(width, axis_y + 24, "pipeline schedule: passes per stage over one step", id, body) +
         "</div>\n";
}

}  // namespace planner::html

#pragma once
// The winner search's per-sequence compute terms (bounds.hpp compute_terms_per_sequence),
// kept between searches on one thread. The threshold scans rerun the search at probes that
// move a bandwidth, the memory, the global batch or the node size: none of them changes a
// configuration's compute, and recomputing it was an eighth of the Mixtral training
// scenario's instructions (docs/performance.md). Internal to src/search.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "bounds.hpp"

namespace planner::search_detail {

/// The plan fields that tell a search's rows apart, hashed; equality compares the whole plan.
struct PlanHash {
  std::size_t operator()(const Plan& p) const noexcept {
    std::size_t h = 0;
    for (const std::int64_t v : {p.tp, p.cp, p.pp, p.dp, p.ep, p.etp, p.virtual_stages,
                                 p.dp_shard, p.grad_accum,
                                 static_cast<std::int64_t>(p.recompute),
                                 static_cast<std::int64_t>(p.flash_attention)}) {
      h = h * 1'000'003u ^ std::hash<std::int64_t>{}(v);
    }
    return h;
  }
};

/// compute_terms_per_sequence for each SP setting, by plan, for one (model, GPU compute,
/// rate): add_compute_terms reads only the model, the GPU's compute figures (its memory size
/// and reserve excepted, which no compute term reads) and the plan, so the same plan under
/// an equal model and GPU has the same terms, bit for bit.
class TermsCache {
 public:
  /// The cache for `ctx`: emptied when its model, GPU or rate differs from the last search's.
  void bind(const Context& ctx) {
    Gpu gpu = ctx.cluster.gpu;
    gpu.memory_bytes = 0;
    gpu.reserve_bytes = 0;
    if (bound_ && flops_ == ctx.flops_per_second && gpu_ == gpu && model_ == ctx.model) return;
    terms_.clear();
    model_ = ctx.model;
    gpu_ = gpu;
    flops_ = ctx.flops_per_second;
    bound_ = true;
  }

  /// `p`'s terms (ZeRO 0) without and with SP (tp > 1), per sequence. They are computed and
  /// kept for one micro-batch of one sequence per step: per sequence the terms do not depend
  /// on the micro-batch count (stage_shape's `accum` enters the traffic terms alone), so a
  /// global-batch probe, which changes only that count, finds them.
  const std::array<ComputeTerms, 2>& terms(const Context& ctx, Plan p) {
    p.micro_batch = 1;
    p.grad_accum = 1;
    p.sequence_parallel = false;
    // Bounded memory on any input: a space of more rows than this starts over.
    if (terms_.size() >= max_entries) terms_.clear();
    auto [it, added] = terms_.try_emplace(p);
    if (added) {
      Plan q = p;
      for (int sp = 0; sp <= (q.tp > 1 ? 1 : 0); ++sp) {
        q.sequence_parallel = sp == 1;
        it->second[static_cast<std::size_t>(sp)] = compute_terms_per_sequence(ctx, q);
      }
    }
    return it->second;
  }

 private:
  static constexpr std::size_t max_entries = 1 << 18;  // ~60 MiB at most
  std::unordered_map<Plan, std::array<ComputeTerms, 2>, PlanHash> terms_;
  Model model_;
  Gpu gpu_;
  double flops_ = 0;
  bool bound_ = false;
};

}  // namespace planner::search_detail

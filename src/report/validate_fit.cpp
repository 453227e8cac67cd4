// planner validate --fit: the constants data/gpus.json takes from the calibration records
// (docs/validation.md §Fitting): each catalog GPU's bf16 efficiency and each FP8 recipe's ratio.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

#include "planner/base/one_line.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/context.hpp"
#include "planner/report/validate.hpp"
#include "planner/report/validate_serving.hpp"
#include "validate_fit.hpp"

namespace planner {

using nlohmann::json;

/// The catalog GPU a record names, if any (for --fit).
const CatalogGpu* record_gpu(const json& doc) {
  const json* cluster = doc.contains("cluster") ? &doc.at("cluster") : nullptr;
  if (cluster == nullptr || !cluster->is_object() || !cluster->contains("gpu")) return nullptr;
  const json& gpu = cluster->at("gpu");
  if (!gpu.is_object() || !gpu.contains("catalog") || !gpu.at("catalog").is_string()) {
    return nullptr;
  }
  return find_catalog_gpu(gpu.at("catalog").get<std::string>());
}

namespace {

/// The fraction of the bf16 peak at which the model's predicted throughput equals the
/// measured one (bisection: throughput rises with the rate), or nullopt when no fraction in
/// (0, 1] reaches it (the time outside compute alone exceeds the measurement).
std::optional<double> fitted_efficiency(const ValidationRecord& r, double peak) {
  Context ctx = make_context(r.scenario);
  const auto error_at = [&](double share) {
    ctx.flops_per_second = peak * share;
    RecordResult x;
    x.record = &r;
    x.evaluation = evaluate(ctx, *r.scenario.plan);
    const double gpus = static_cast<double>(world_size(r.scenario.cluster));
    x.tokens_per_second_per_gpu = {x.evaluation.training.tokens_per_second / gpus,
                                   r.measured.tokens_per_second_per_gpu};
    x.step_seconds = {x.evaluation.training.step_seconds, r.measured.step_seconds};
    return throughput_error(x).value_or(0);
  };
  double lo = 1e-3, hi = 1.0;
  if (error_at(hi) < 0 || error_at(lo) > 0) return std::nullopt;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (error_at(mid) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// The FP8 recipe's ratio (of the bf16 efficiency, applied to the FP8 peak) at which an FP8
/// run's predicted throughput over its bf16 sibling's equals the measured one: the bf16
/// sibling's own error is divided out, so the ratio isolates what FP8 changes (the GEMM rate
/// and the casts the model times apart). Bisection on (0.05, 1.5]: throughput rises with it.
std::optional<double> fitted_fp8_ratio(const ValidationRecord& fp8, const ValidationRecord& bf16) {
  Context ctx = make_context(fp8.scenario);
  if (!fp8.scenario.cluster.gpu.fp8_rate_from_efficiency) return std::nullopt;
  const double base =
      ctx.flops_per_second / fp8_efficiency_ratio(fp8.scenario.model.precision.fp8_recipe).value;
  const RecordResult sibling = validate_record(bf16);
  const auto sibling_error = throughput_error(sibling);
  const auto measured = fp8.measured.tokens_per_second_per_gpu;
  if (!sibling_error || !measured) return std::nullopt;
  const double target = *measured * (1.0 + *sibling_error);
  const double gpus = static_cast<double>(world_size(fp8.scenario.cluster));
  const auto predicted_at = [&](double ratio) {
    ctx.flops_per_second = base * ratio;
    return evaluate(ctx, *fp8.scenario.plan).training.tokens_per_second / gpus;
  };
  double lo = 0.05, hi = 1.5;
  if (predicted_at(hi) < target || predicted_at(lo) > target) return std::nullopt;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (predicted_at(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// Per FP8 calibration record with a bf16 sibling, its fitted ratio; the median per recipe
/// (data/gpus.json fp8_efficiency_ratio).
void print_fp8_fit(const std::vector<ValidationRecord>& records, std::ostream& out) {
  std::map<std::string, std::vector<double>> per_recipe;
  out << "\nFP8 GEMM efficiency ratio, from calibration pairs (FP8 run, same run in bf16):\n";
  for (const ValidationRecord& r : records) {
    if (r.set != "calibration" || r.bf16_sibling.empty()) continue;
    const auto sibling = std::find_if(records.begin(), records.end(), [&](const auto& x) {
      return x.id == r.bf16_sibling;
    });
    const std::string recipe(
        fp8_recipe_names[static_cast<std::size_t>(r.scenario.model.precision.fp8_recipe)]);
    std::optional<double> ratio;
    if (sibling != records.end()) ratio = fitted_fp8_ratio(r, *sibling);
    out << fmt::format("  {:<44} {:<10} {:>8}\n", one_line(r.id, error_line_limit), recipe,
                       ratio ? fmt::format("{:.4f}", *ratio) : std::string("-"));
    if (ratio) per_recipe[recipe].push_back(*ratio);
  }
  out << "median per recipe:\n";
  for (const std::string_view name : fp8_recipe_names) {
    const auto it = per_recipe.find(std::string(name));
    if (it == per_recipe.end()) {
      out << fmt::format("  {:<16} -  (no calibration pair)\n", name);
    } else {
      out << fmt::format("  {:<16} {:.4f}  ({} pairs)\n", name, median(it->second),
                         it->second.size());
    }
  }
}

/// The two runtime-memory constants of data/gpus.json runtime_memory (docs/validation.md
/// §Memory), from the calibration records that publish a peak: the caching allocator's share,
/// the median of measured / allocated − 1 over the runs with fused elementwise kernels; then
/// eager PyTorch's temporaries, over the eager runs, the median of (measured / (1 + that share)
/// − the other tensors) / (activations + recompute working set).
void print_allocator_fit(const std::vector<ValidationRecord>& records, std::ostream& out) {
  struct Peak {
    const ValidationRecord* record;
    MemoryLedger ledger;
    bool eager;
  };
  std::vector<Peak> peaks;
  for (const ValidationRecord& r : records) {
    if (r.set != "calibration" || !r.measured.memory_peak_bytes) continue;
    const Evaluation e = validate_record(r).evaluation;
    if (!(e.memory.allocated_bytes() > 0)) continue;
    peaks.push_back({&r, e.memory, e.plan.eager_elementwise});
  }
  std::vector<double> shares;
  out << "\ncaching allocator's reserve over the allocated tensors, from calibration peaks "
         "(fused kernels):\n";
  for (const Peak& p : peaks) {
    if (p.eager) continue;
    const double share = *p.record->measured.memory_peak_bytes / p.ledger.allocated_bytes() - 1.0;
    out << fmt::format("  {:<60} {:>8.4f}\n", p.record->id, share);
    shares.push_back(share);
  }
  if (shares.empty()) {
    out << fmt::format("  {:<16} -  (no calibration record publishes a peak)\n", "median");
    return;
  }
  const double allocator = median(shares);
  out << fmt::format("  {:<16} {:.4f}  ({} records)\n", "median", allocator, shares.size());
  std::vector<double> eager;
  out << "\neager PyTorch's temporaries over the activations, from calibration peaks (eager "
         "kernels):\n";
  for (const Peak& p : peaks) {
    if (!p.eager) continue;
    const double others = p.ledger.allocated_bytes() - p.ledger.eager_temporaries_bytes;
    const double activations = p.ledger.activations_bytes + p.ledger.recompute_working_bytes;
    const double share =
        (*p.record->measured.memory_peak_bytes / (1.0 + allocator) - others) / activations;
    out << fmt::format("  {:<60} {:>8.4f}\n", p.record->id, share);
    eager.push_back(share);
  }
  if (eager.empty()) {
    out << fmt::format("  {:<16} -  (no eager calibration record publishes a peak)\n", "median");
  } else {
    out << fmt::format("  {:<16} {:.4f}  ({} records)\n", "median", median(eager), eager.size());
  }
}

}  // namespace

void print_fit(const std::vector<ValidationRecord>& records,
               const std::vector<const CatalogGpu*>& gpus, std::ostream& out) {
  std::map<std::string, std::vector<double>> per_gpu;
  std::vector<double> pooled;
  out << fmt::format("{:<12} {:<34} {:<16} {:>10}\n", "set", "record", "gpu",
                     "efficiency");
  for (std::size_t i = 0; i < records.size(); ++i) {
    const ValidationRecord& r = records[i];
    const CatalogGpu* g = gpus[i];
    std::optional<double> share;
    // The bf16 efficiency is fitted to runs whose GEMMs are 16-bit; an FP8 run's rate is the
    // bf16 one times its recipe's ratio, fitted below from its pair.
    if (g != nullptr && r.scenario.model.precision.compute != Dtype::fp8) {
      share = fitted_efficiency(r, g->peak("bf16").value_or(0));
    }
    // A run on another variant of the chip (memory, power limit) or an unstated one reports
    // its share but does not fit the catalog entry's efficiency.
    const bool counts = r.efficiency_excluded.empty();
    out << fmt::format("{:<12} {:<34} {:<16} {:>10}\n", r.set, one_line(r.id, error_line_limit),
                       g ? g->name : "-",
                       share ? fmt::format("{:.4f}", *share) : std::string("-"));
    if (!counts && share) out << fmt::format("{:<12} {:<34} not fitted: {}\n", "", "",
                                             one_line(r.efficiency_excluded));
    if (share && counts && r.set == "calibration") {
      per_gpu[g->name].push_back(*share);
      if (g->variant_of.empty()) pooled.push_back(*share);
    }
  }
  out << "\nmedian over calibration records (the only runs constants may be fitted to):\n";
  for (const auto& [name, shares] : per_gpu) {
    out << fmt::format("  {:<16} {:.4f}  ({} records)\n", name, median(shares), shares.size());
  }
  out << fmt::format("  {:<16} {:.4f}  ({} records)\n", "all", median(pooled), pooled.size());
  print_fp8_fit(records, out);
  print_allocator_fit(records, out);
}

void print_serving_fit(const std::vector<ServingRecordFile>& records, std::ostream& out) {
  std::map<std::string, std::vector<double>> per_gpu;
  out << "\nserving forward-pass efficiency, from calibration serving records (one node):\n";
  for (const ServingRecordFile& r : records) {
    const CatalogGpu* g = record_gpu(r.doc.at("scenario"));
    const std::optional<double> share = fitted_serving_efficiency(r.doc, r.origin);
    out << fmt::format("  {:<60} {:<16} {:>8}\n",
                       one_line(r.doc.value("name", r.origin), error_line_limit),
                       g ? g->name : "-",
                       share ? fmt::format("{:.4f}", *share) : std::string("-"));
    if (g != nullptr && share) per_gpu[g->name].push_back(*share);
  }
  out << "median per GPU:\n";
  if (per_gpu.empty()) out << fmt::format("  {:<16} -  (no calibration serving record)\n", "-");
  for (const auto& [name, shares] : per_gpu) {
    out << fmt::format("  {:<16} {:.4f}  ({} records)\n", name, median(shares), shares.size());
  }
}

}  // namespace planner

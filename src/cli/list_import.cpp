#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "command.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/presets.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/report/report.hpp"

/// `planner list models` and `planner import hf config.json`: what a scenario's "model" can
/// name instead of spelling out the widths (io/presets.hpp).

namespace planner::cli {

using nlohmann::json;

Runner add_list(CLI::App& sub) {
  auto what = std::make_shared<std::string>();
  sub.add_option("what", *what, "What to list")
      ->required()
      ->check(CLI::IsMember({"models", "gpus"}));
  return [what](std::ostream& out, std::ostream&) {
    if (*what == "gpus") {
      std::size_t name_width = 0;  // the longest name sets the column
      for (const CatalogGpu& g : gpu_catalog()) name_width = std::max(name_width, g.name.size());
      for (const CatalogGpu& g : gpu_catalog()) {
        // The GEMM rate a scenario naming the GPU gets without a typed rate: the peak times
        // the efficiency fitted to its calibration runs, or the pooled one (docs/validation.md).
        // A serving workload's forward passes take the serving fit where there is one.
        const double peak = g.peak("bf16").value_or(0);
        const std::string serving =
            g.serving_efficiency > 0
                ? fmt::format("; serving at {:.1f} %, {:.0f} TFLOP/s (fitted to single-node "
                              "serving runs)",
                              100 * g.serving_efficiency, peak * g.serving_efficiency / 1e12)
                : std::string();
        out << fmt::format("{:<{}} {:>6.1f} GiB, {:>5.2f} TB/s, bf16 {:>6.0f} TFLOP/s dense; "
                           "GEMMs at {:.1f} % of it, {:.0f} TFLOP/s ({}){}\n",
                           g.name, name_width, g.memory_bytes / (1024.0 * 1024 * 1024),
                           g.memory_bandwidth_bytes_per_second / 1e12, peak / 1e12,
                           100 * g.default_efficiency, peak * g.default_efficiency / 1e12,
                           g.efficiency_own ? "its own calibration fit"
                                            : "the pooled default: no calibration run of its own",
                           serving);
      }
      return 0;
    }
    for (const std::string& name : model_preset_names()) {
      const json p = model_preset(name);
      const json& m = p.at("model");
      out << fmt::format("{:<16} {:>4} layers, hidden {:>5}, {:>3} heads ({} KV), context {:>6}: "
                         "{}\n",
                         name, m.at("layers").get<int>(), m.at("hidden").get<int>(),
                         m.at("heads").get<int>(), m.at("kv_heads").get<int>(),
                         p.at("context_window").get<int>(),
                         p.at("description").get<std::string>());
    }
    return 0;
  };
}

Runner add_import(CLI::App& sub) {
  struct Args {
    std::string kind, file;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("kind", a->kind, "What the file is")->required()->check(CLI::IsMember({"hf"}));
  sub.add_option("file", a->file, "A Hugging Face config.json ('-' for standard input)")
      ->required();
  return [a](std::ostream& out, std::ostream& err) {
    const std::string origin = file_origin(a->file);
    const json config = read_json_file(a->file);
    const json model = model_from_hf(config, origin);
    // What import writes must load: the loader's checks (heads divisible by kv_heads, top-k
    // within the experts, the limits) run here too, so import exits 2 where plan would
    // (issue 32), pointing at the config.json key the value came from.
    try {
      (void)load_model(model, origin);
    } catch (const InputError& e) {
      const std::string key = e.pointer().rfind("/model/", 0) == 0 ? e.pointer().substr(7) : "";
      const std::string_view hf = hf_key_for_planner(key, config);
      throw InputError(origin, hf.empty() ? "" : "/" + std::string(hf),
                       "the model this config describes cannot be planned: " + e.message());
    }
    out << dump_json(json{{"model", model}});
    err << fmt::format("planner: note: seq_len is the context window ({}); set the sequence "
                       "length you train or serve with\n",
                       model.at("seq_len").get<std::int64_t>());
    for (const std::string& note : hf_import_notes(config)) err << "planner: note: " << note << "\n";
    return 0;
  };
}

}  // namespace planner::cli

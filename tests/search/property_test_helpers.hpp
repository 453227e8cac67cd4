#pragma once
// Helpers shared by test_properties.cpp and test_properties_more.cpp (split to stay under 500 lines).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>
#include "answer_key_inputs.hpp"
#include "cli_harness.hpp"
#include "planner/io/context.hpp"
#include "planner/model/collectives.hpp"
#include "planner/base/error.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/memory.hpp"
#include "planner/search/rank.hpp"
#include "planner/report/report.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/placement.hpp"
#include "planner/model/regime.hpp"
#include "planner/search/constraints.hpp"
#include "planner/search/search.hpp"

namespace property_test_helpers {

using namespace planner;
using nlohmann::json;


inline std::uint64_t property_seed() {
  if (const char* text = std::getenv("PLANNER_PROPERTY_SEED")) return std::strtoull(text, nullptr, 0);
  return 20240605;
}

class Random {
 public:
  explicit Random(std::uint64_t seed) : g_(seed) {}
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(g_);
  }
  double log_uniform(double lo, double hi) {
    return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(g_));
  }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g_); }
  bool coin(double p = 0.5) { return uniform(0, 1) < p; }
  template <typename T>
  T pick(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(integer(0, static_cast<std::int64_t>(items.size()) - 1))];
  }

 private:
  std::mt19937_64 g_;
};

inline std::vector<std::int64_t> divisors_of(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

/// A small random scenario (≤ 16 GPUs, ≤ 8 layers, ≤ 12 heads) as the JSON a user would write,
/// with memory between a fraction and a multiple of one replica's state, so that some plans fit
/// and some do not, and both tiers' figures drawn independently.
inline json random_scenario(Random& r, bool serving) {
  json doc;
  const std::int64_t gpus_per_node = r.pick<std::int64_t>({1, 2, 3, 4, 8});
  const std::int64_t nodes = r.integer(1, std::max<std::int64_t>(1, 16 / gpus_per_node));
  const std::int64_t heads = r.pick<std::int64_t>({1, 2, 4, 6, 8, 12});
  const std::int64_t hidden = heads * r.pick<std::int64_t>({16, 32, 64});
  const std::int64_t layers = r.integer(1, 8);
  const std::int64_t seq_len = r.pick<std::int64_t>({64, 128, 192, 256, 512, 1024});
  json model{{"layers", layers},
             {"hidden", hidden},
             {"heads", heads},
             {"kv_heads", r.pick(divisors_of(heads))},
             {"ffn_hidden", hidden * r.integer(1, 4)},
             {"gated_mlp", r.coin()},
             {"vocab", r.integer(64, 4096)},
             {"tied_embeddings", r.coin()},
             {"seq_len", seq_len}};
  // What one GPU would hold for the whole model, roughly: training, 16 B per parameter
  // (≈ 12·h² per layer plus the embeddings); serving, bf16 weights and the KV cache of the
  // batch (2·L·h_kv·2 bytes per token). Memory is drawn around it.
  const double params = static_cast<double>(layers) * 12.0 * static_cast<double>(hidden * hidden) +
                        2.0 * 4096.0 * static_cast<double>(hidden);
  const std::int64_t batch = r.integer(1, 16);
  const std::int64_t context = r.integer(16, 4096);
  const double kv_cache = 4.0 * static_cast<double>(layers * hidden * batch * context);
  const double whole = serving ? 2.0 * params + kv_cache : 16.0 * params;
  const double memory = std::floor(whole * r.log_uniform(0.05, 4.0));
  json cluster{
      {"nodes", nodes},
      {"gpus_per_node", gpus_per_node},
      {"gpu",
       {{"memory", memory},
        {"memory_bandwidth", r.log_uniform(1e11, 5e12)},
        {"flops", r.log_uniform(1e12, 1e15)},
        {"reserve", r.coin() ? 0.0 : std::floor(memory * r.uniform(0, 0.1))}}},
      {"intra_node", {{"bandwidth", r.log_uniform(1e9, 1e12)}, {"latency", r.uniform(0, 2e-5)}}},
      {"inter_node", {{"bandwidth", r.log_uniform(1e8, 1e11)}, {"latency", r.uniform(0, 5e-5)}}}};
  json workload;
  if (serving) {
    workload = {{"kind", "serving"},
                {"batch", batch},
                {"context_tokens", context},
                {"slo_per_token", r.log_uniform(1e-5, 1e-1)},
                {"memory_bandwidth_efficiency", r.uniform(0.3, 1.0)},
                {"bytes_per_param", r.pick<double>({1, 2, 4})}};
  } else {
    // Between 1 and 48 sequences per step, sometimes not a whole number of sequences (never
    // below one: the loader refuses that since issue 14).
    const double sequences = std::max(
        1.0, static_cast<double>(r.integer(1, 48)) * (r.coin(0.8) ? 1.0 : 0.75));
    workload = {{"kind", "training"},
                {"global_batch_tokens", sequences * static_cast<double>(seq_len)},
                {"bytes_per_param", r.pick<double>({16, 12, 18})},
                {"tables_in_pipeline_split", r.coin()}};
  }
  return {{"name", "random"}, {"model", model}, {"cluster", cluster}, {"workload", workload}};
}

/// Loads a random scenario; the generator only writes values inside the loader's ranges.
inline Scenario load(const json& doc) { return load_scenario(doc, "random.json"); }

inline double ledger_sum(const MemoryLedger& l) {
  double sum = 0;
  for (const LedgerLine& line : ledger_lines) sum += l.*line.bytes;
  return sum;
}

inline bool same_key(const RankKey& a, const RankKey& b) { return !(a < b) && !(b < a); }

// ---- An independent brute-force enumeration of the space of docs/ranking.md §1 ----------

/// The hybrid-sharding shard groups of docs/ranking.md §1 for a training plan's degrees: 0
/// (the whole dp·cp group), and for each tier inside the network the dp_shard for which
/// tp·cp·dp_shard is the tier's domain, when it divides dp, leaves more than one replica and
/// shards over more than one rank (dense models; the loader refuses the rest).
inline std::vector<std::int64_t> shard_choices(const Scenario& s, std::int64_t dp, std::int64_t tp,
                                        std::int64_t cp) {
  std::vector<std::int64_t> out{0};
  if (s.workload.kind != WorkloadKind::training || s.model.moe.experts > 0) return out;
  for (std::size_t k = 0; k + 1 < s.cluster.tiers.size(); ++k) {
    const std::int64_t domain = domain_gpus(s.cluster, k);
    if (domain % (tp * cp) != 0) continue;
    const std::int64_t shard = domain / (tp * cp);
    if (shard < dp && dp % shard == 0 && shard * cp > 1 &&
        std::find(out.begin(), out.end(), shard) == out.end()) {
      out.push_back(shard);
    }
  }
  return out;
}

/// Every legal configuration of the scenario, judged legal by the loader's plan checks
/// (validate_plan, the rules a pinned plan must follow) plus the batch rules of the search
/// space: dp at most the target sequences rounded up, micro_batch × grad_accum = the replica's
/// ⌈target / dp⌉ over all its divisors (training); the serving batch decoded at once (serving).
/// All 24 placements, all four ZeRO stages, all six recompute × tiled-attention combinations,
/// sequence parallelism on and off, every hybrid-sharding choice. Calls `visit(plan)` for each.
template <typename Visit>
inline void brute_force(const Scenario& s, Visit visit) {
  const Context ctx = make_context(s);
  const std::int64_t world = world_size(s.cluster);
  const bool training = s.workload.kind == WorkloadKind::training;
  const double target = training ? target_sequences(ctx) : 0;
  Placement placement = default_placement;
  std::sort(placement.begin(), placement.end());
  std::vector<Placement> placements;
  do {
    placements.push_back(placement);
  } while (std::next_permutation(placement.begin(), placement.end()));
  REQUIRE(placements.size() == 24);
  for (std::int64_t dp = 1; dp <= world; ++dp) {
    for (std::int64_t tp = 1; dp * tp <= world; ++tp) {
      for (std::int64_t pp = 1; dp * tp * pp <= world; ++pp) {
        if (world % (dp * tp * pp) != 0) continue;
        const std::int64_t cp = world / (dp * tp * pp);
        if (training && static_cast<double>(dp) > std::ceil(target)) continue;
        const std::int64_t per_replica = training ? sequences_per_replica(ctx, dp) : 0;
        const std::vector<std::int64_t> micro_batches =
            training ? divisors_of(per_replica)
                     : std::vector<std::int64_t>{s.workload.serving.batch};
        for (int zero = 0; zero <= (training ? 3 : 0); ++zero) {
          for (int recompute = 0; recompute <= (training ? 3 : 0); ++recompute) {
            for (int flash = 0; flash <= (training ? 1 : 0); ++flash) {
              for (int sp = 0; sp <= (training ? 1 : 0); ++sp) {
                for (const std::int64_t mb : micro_batches) {
                  // Pipelines: every number of virtual stages, the embedding and loss counted
                  // in the split when the workload says so (as the search does); the
                  // loader's rules say which are legal.
                  const bool piped = training && pp > 1;
                  const bool tables = piped && s.workload.training.tables_in_pipeline_split;
                  for (int split = tables ? 1 : 0; split <= (tables ? 1 : 0); ++split) {
                    for (std::int64_t v = 1; v <= (piped ? s.model.layers + 2 : 1); ++v) {
                      for (const std::int64_t shard : shard_choices(s, dp, tp, cp)) {
                        Plan p = answer_key::plan(dp, tp, pp, cp, zero,
                                                  static_cast<Recompute>(recompute), flash == 1,
                                                  sp == 1, mb, training ? per_replica / mb : 1);
                        p.virtual_stages = v;
                        p.tables_in_pipeline_split = split == 1;
                        p.dp_shard = shard;
                        try {
                          validate_plan(s, p, "brute force", "/plan");
                        } catch (const InputError&) {
                          continue;
                        }
                        for (const Placement& order : placements) {
                          p.placement = order;
                          visit(p);
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

constexpr int property_scenarios = 30;
constexpr int serving_scenarios = 30;

/// The random scenarios of this run, training then serving, the same on every call.
inline std::vector<json> scenarios() {
  Random r(property_seed());
  std::vector<json> out;
  for (int i = 0; i < property_scenarios + serving_scenarios; ++i) {
    out.push_back(random_scenario(r, i >= property_scenarios));
  }
  return out;
}

}  // namespace property_test_helpers

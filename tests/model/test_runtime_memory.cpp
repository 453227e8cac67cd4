// The runtime memory a catalog GPU keeps back when a scenario states no reserve
// (data/gpus.json runtime_memory; docs/model.md §3): the caching allocator's share over the
// allocated tensors, and the CUDA context, NCCL buffers and cuBLAS workspaces outside it.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "planner/io/catalog.hpp"
#include "planner/inputs/workload_settings.hpp"
#include "planner/io/scenario_json.hpp"
#include "planner/model/memory.hpp"

namespace {

constexpr std::string_view scenario_without_reserve = R"({
  "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
            "gated_mlp": true, "vocab": 128256, "seq_len": 8192},
  "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": {"catalog": "H100-SXM"},
              "intra_node": {"bandwidth": "450 GB/s", "latency": "5 us"},
              "inter_node": {"bandwidth": "50 GB/s", "latency": "10 us"}},
  "workload": {"kind": "training", "global_batch_tokens": 131072}
})";

planner::MemoryLedger ledger_of(std::string_view text) {
  const auto s = planner::load_scenario_text(text, "runtime.json");
  planner::Plan p;
  p.dp = 8;
  p.zero = 3;
  p.micro_batch = 1;
  planner::apply_workload_settings(s.workload.training, p);  // elementwise_kernels, as the search
  return planner::training_ledger(s.model, s.cluster, s.workload.training, p);
}

}  // namespace

TEST_CASE("a catalog GPU without a stated reserve keeps the runtime default and the "
          "allocator's share", "[memory]") {
  const planner::MemoryLedger l = ledger_of(scenario_without_reserve);
  // docs/model.md §3: CUDA context 320 MiB + NCCL 4 communicators x 16 channels x
  // (4 MiB Simple + 4.6875 MiB LL128 + 0.5 MiB LL) + cuBLAS 2 x 32 MiB = 972 MiB.
  const double mib = 1024.0 * 1024.0;
  CHECK(l.reserve_bytes == Approx((320.0 + 4 * 16 * (4.0 + 4.6875 + 0.5) + 2 * 32.0) * mib));
  CHECK(l.reserve_default);
  // The allocator line is the fitted share of every allocated line, no more.
  const double allocated = l.weights_bytes + l.gradients_bytes + l.optimizer_bytes +
                           l.activations_bytes + l.logits_bytes + l.recompute_working_bytes +
                           l.zero3_gather_bytes + l.fp8_weights_bytes + l.kv_cache_bytes;
  CHECK(l.eager_temporaries_bytes == 0);  // fused kernels, the default
  CHECK(l.allocator_bytes ==
        Approx(planner::runtime_memory().allocator_fraction.value * allocated));
  CHECK(l.allocator_bytes > 0);
  CHECK(l.total_bytes() == Approx(allocated + l.allocator_bytes + l.reserve_bytes));
}

TEST_CASE("a stated reserve replaces the runtime default and the allocator's share",
          "[memory]") {
  std::string text(scenario_without_reserve);
  const std::string from = R"("catalog": "H100-SXM")";
  text.replace(text.find(from), from.size(), R"("catalog": "H100-SXM", "reserve": "6 GiB")");
  const planner::MemoryLedger l = ledger_of(text);
  CHECK(l.reserve_bytes == Approx(6.0 * 1024 * 1024 * 1024));
  CHECK_FALSE(l.reserve_default);
  CHECK(l.allocator_bytes == 0);
}

TEST_CASE("eager kernels keep their temporaries: a share of the activations and working set",
          "[memory]") {
  std::string text(scenario_without_reserve);
  const std::string from = R"("kind": "training",)";
  text.replace(text.find(from), from.size(),
               R"("kind": "training", "elementwise_kernels": "eager",)");
  const planner::MemoryLedger l = ledger_of(text);
  const double share = planner::runtime_memory().eager_activation_fraction.value;
  CHECK(l.eager_temporaries_bytes ==
        Approx(share * (l.activations_bytes + l.recompute_working_bytes)));
  CHECK(l.eager_temporaries_bytes > 0);
  // They are allocated tensors: the allocator's share applies over them too.
  CHECK(l.allocator_bytes ==
        Approx(planner::runtime_memory().allocator_fraction.value * l.allocated_bytes()));
}

// The GPU catalog (data/gpus.json, embedded at build time) and the loader's catalog GPUs.
// Expected figures are the vendors' datasheet numbers written out here, not read back from
// the catalog: a typo in data/gpus.json fails these tests.

#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/base/error.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/scenario_json.hpp"

namespace {

constexpr double MiB = 1024.0 * 1024.0;
constexpr double GiB = 1024.0 * MiB;

const planner::CatalogGpu& gpu(const std::string& name) {
  const planner::CatalogGpu* g = planner::find_catalog_gpu(name);
  REQUIRE(g != nullptr);
  return *g;
}

nlohmann::json scenario_with_gpu(const nlohmann::json& gpu_object) {
  return nlohmann::json{
      {"model", {{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"vocab", 128256},
                 {"seq_len", 4096}}},
      {"cluster", {{"nodes", 2}, {"gpus_per_node", 8}, {"gpu", gpu_object},
                   {"intra_node", {{"latency", "5 us"}}},
                   {"inter_node", {{"latency", "10 us"}}}}},
      {"workload", {{"kind", "training"}, {"global_batch_tokens", 4194304}}}};
}

std::string load_error(const nlohmann::json& doc) {
  try {
    (void)planner::load_scenario(doc, "a.json");
  } catch (const planner::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("catalog: H100 SXM matches its datasheet", "[catalog]") {
  const auto& h = gpu("H100-SXM");
  // H100 datasheet, SXM column: 1,979 TFLOPS BF16 and 3,958 FP8 with 2:4 sparsity, half dense.
  CHECK(*h.peak("bf16") == Approx(1978.9e12 / 2).epsilon(1e-3));  // datasheet rounding
  CHECK(*h.peak("fp16") == Approx(989.4e12));
  CHECK(*h.peak("fp8") == Approx(3957.8e12 / 2));
  CHECK(*h.peak("tf32") == Approx(494.7e12));
  CHECK(h.memory_bytes == 81559 * MiB);  // nvidia-smi: 81559MiB
  CHECK(h.memory_bandwidth_bytes_per_second == Approx(3.35e12));
  CHECK(h.scale_up_bandwidth_bytes_per_second == Approx(900e9 / 2));  // NVLink 900 GB/s total
  CHECK(h.scale_up_domain_gpus == 8);
  // DGX H100: 8 ConnectX-7 at 400 Gb/s for 8 GPUs = 50 GB/s per GPU.
  CHECK(h.scale_out_bandwidth_bytes_per_second() == Approx(8 * 400e9 / 8 / 8));
}

TEST_CASE("catalog: A100, H200, B200, GB200 and the AMD parts", "[catalog]") {
  const auto& a = gpu("A100-SXM4-80GB");
  CHECK(*a.peak("bf16") == Approx(312e12));
  CHECK(!a.peak("fp8"));  // Ampere has no FP8 unit
  CHECK(a.memory_bytes == 81920 * MiB);
  CHECK(a.memory_bandwidth_bytes_per_second == Approx(2039e9));
  CHECK(a.scale_out_bandwidth_bytes_per_second() == Approx(200e9 / 8));  // one HDR HCA per GPU
  CHECK(gpu("A100-SXM4-40GB").memory_bandwidth_bytes_per_second == Approx(1555e9));
  CHECK(gpu("A100-SXM4-40GB").memory_bytes == 40960 * MiB);
  CHECK(gpu("H200").memory_bytes == 143771 * MiB);
  CHECK(gpu("H200").memory_bandwidth_bytes_per_second == Approx(4.8e12));
  CHECK(*gpu("H100-PCIe").peak("bf16") == Approx(1513e12 / 2).epsilon(1e-3));
  CHECK(gpu("H800").scale_up_bandwidth_bytes_per_second == Approx(400e9 / 2));
  CHECK(*gpu("B200").peak("bf16") == Approx(2.25e15));
  CHECK(gpu("B200").memory_bandwidth_bytes_per_second == Approx(8e12));
  CHECK(gpu("GB200").scale_up_domain_gpus == 72);
  CHECK(gpu("GB200").scale_up_bandwidth_bytes_per_second == Approx(1.8e12 / 2));
  CHECK(*gpu("MI300X").peak("bf16") == Approx(1307.4e12));
  CHECK(gpu("MI300X").memory_bytes == 192 * GiB);
  CHECK(gpu("MI300X").memory_bandwidth_bytes_per_second == Approx(5.3e12));
  CHECK(gpu("MI325X").memory_bandwidth_bytes_per_second == Approx(6e12));
  CHECK(*gpu("MI250X").peak("bf16") == Approx(383e12 / 2));  // one GCD of the module
  CHECK(gpu("MI250X").memory_bytes == 65520 * MiB);  // HIP: 68702699520 B, 16 MiB under 64 GiB
  // L40S datasheet: BF16 362.05 and FP8 733 TFLOPS dense (733 and 1,466 with sparsity),
  // 864 GB/s; nvidia-smi reports 46068 MiB of its 48 GB.
  CHECK(*gpu("L40S").peak("bf16") == Approx(362.05e12));
  CHECK(*gpu("L40S").peak("fp8") == Approx(733e12));
  CHECK(gpu("L40S").memory_bandwidth_bytes_per_second == Approx(864e9));
  CHECK(gpu("L40S").memory_bytes == 46068 * MiB);
  // Serving GPUs (issue 31). L4 datasheet: BF16 242 and FP8 485 TFLOPS with sparsity, 300 GB/s,
  // 24 GB of which nvidia-smi reports 23034 MiB. A10 datasheet: BF16 250 with sparsity, no FP8
  // (Ampere), 600 GB/s. H100 NVL datasheet: BF16 1,671 and FP8 3,341 with sparsity, 3.9 TB/s
  // (3,938 GB/s in the product brief), 94 GB reported as 95,830 MiB; each dense rate is half.
  CHECK(*gpu("L4").peak("bf16") == Approx(242e12 / 2));
  CHECK(*gpu("L4").peak("fp8") == Approx(485e12 / 2));
  CHECK(gpu("L4").memory_bandwidth_bytes_per_second == Approx(300e9));
  CHECK(gpu("L4").memory_bytes == 23034 * MiB);
  CHECK(*gpu("A10").peak("bf16") == Approx(250e12 / 2));
  CHECK_FALSE(gpu("A10").peak("fp8").has_value());
  CHECK(gpu("A10").memory_bandwidth_bytes_per_second == Approx(600e9));
  CHECK(*gpu("H100-NVL").peak("bf16") == Approx(1671e12 / 2));
  CHECK(*gpu("H100-NVL").peak("fp8") == Approx(3341e12 / 2));
  CHECK(gpu("H100-NVL").memory_bandwidth_bytes_per_second == Approx(3.9e12).epsilon(0.01));
  CHECK(gpu("H100-NVL").memory_bytes == 95830 * MiB);
}

TEST_CASE("catalog: names, aliases and suggestions", "[catalog]") {
  CHECK(planner::gpu_catalog().size() == 16);
  CHECK(planner::find_catalog_gpu("h100-sxm5-80gb") == &gpu("H100-SXM"));
  CHECK(planner::find_catalog_gpu("A100") == &gpu("A100-SXM4-80GB"));
  CHECK(planner::find_catalog_gpu("V100") == nullptr);
  CHECK(planner::closest_catalog_gpu("H100-SMX") == std::optional<std::string>("H100-SXM"));
  CHECK(planner::closest_catalog_gpu("mi300") == std::optional<std::string>("MI300X"));
  CHECK(!planner::closest_catalog_gpu("TPU-v5p"));
}

TEST_CASE("catalog: every number has a source and every efficiency is a fraction", "[catalog]") {
  const auto doc = nlohmann::json::parse(planner::gpu_catalog_text());
  std::size_t numbers = 0;
  std::function<void(const nlohmann::json&, const std::string&)> walk =
      [&](const nlohmann::json& v, const std::string& at) {
        if (v.is_object() && v.contains("value")) {
          ++numbers;
          INFO(at);
          CHECK(v.contains("source"));
          CHECK(v.at("source").is_string());
          CHECK(v.at("source").get<std::string>().size() > 10);
        }
        if (v.is_object()) {
          for (const auto& item : v.items()) walk(item.value(), at + "/" + item.key());
        } else if (v.is_array()) {
          for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], at + "/" + std::to_string(i));
        }
      };
  walk(doc, "");
  CHECK(numbers > 100);
  for (const auto& g : planner::gpu_catalog()) {
    INFO(g.name);
    CHECK(g.default_efficiency > 0.1);
    CHECK(g.default_efficiency < 1.0);
    CHECK(!g.efficiency_basis.empty());
  }
}

TEST_CASE("loader: a catalog GPU fills memory, bandwidths and the effective rate", "[catalog][loader]") {
  const auto s = planner::load_scenario(scenario_with_gpu({{"catalog", "H100-SXM"}}), "a.json");
  CHECK(s.cluster.gpu.memory_bytes == 81559 * MiB);
  CHECK(s.cluster.gpu.memory_bandwidth_bytes_per_second == Approx(3.35e12));
  CHECK(s.cluster.gpu.flops_per_second == Approx(989.4e12 * gpu("H100-SXM").default_efficiency));
  CHECK(s.cluster.node_tier().bandwidth_bytes_per_second == Approx(450e9));
  CHECK(s.cluster.network_tier().bandwidth_bytes_per_second == Approx(50e9));
  CHECK(s.cluster.node_tier().latency_seconds == Approx(5e-6));

  // Every field may be overridden; efficiency scales the bf16 peak.
  const auto o = planner::load_scenario(
      scenario_with_gpu({{"catalog", "H100-SXM"}, {"memory", "80 GiB"}, {"efficiency", 0.4}}),
      "a.json");
  CHECK(o.cluster.gpu.memory_bytes == 80 * GiB);
  CHECK(o.cluster.gpu.flops_per_second == Approx(0.4 * 989.4e12));
  // Other formats run at the same fraction of their own peak: H100 SXM fp8 1978.9 dense.
  CHECK(o.cluster.gpu.flops_by_dtype[static_cast<std::size_t>(planner::Dtype::fp8)] ==
        Approx(0.4 * 1978.9e12));
  auto doc = scenario_with_gpu({{"catalog", "MI300X"}, {"flops", "400 TFLOP/s"}});
  doc["cluster"]["intra_node"]["bandwidth"] = "300 GB/s";
  const auto f = planner::load_scenario(doc, "a.json");
  CHECK(f.cluster.gpu.flops_per_second == Approx(400e12));
  CHECK(f.cluster.node_tier().bandwidth_bytes_per_second == Approx(300e9));
}

TEST_CASE("loader: bad catalog names and conflicting fields", "[catalog][loader][errors]") {
  CHECK(load_error(scenario_with_gpu({{"catalog", "H100-SMX"}})) ==
        "a.json: /cluster/gpu/catalog: unknown GPU \"H100-SMX\" (did you mean \"H100-SXM\"?); "
        "expected one of: A10, A100-SXM4-40GB, A100-SXM4-80GB, H100-SXM, H100-SXM-96GB-500W, "
        "H100-PCIe, H100-NVL, "
        "H200, H800, L40S, L4, B200, GB200, MI250X, MI300X, MI325X (data/gpus.json)");
  CHECK(load_error(scenario_with_gpu({{"catalog", "TPU-v5p"}})) ==
        "a.json: /cluster/gpu/catalog: unknown GPU \"TPU-v5p\"; expected one of: A10, "
        "A100-SXM4-40GB, A100-SXM4-80GB, H100-SXM, H100-SXM-96GB-500W, H100-PCIe, H100-NVL, H200, "
        "H800, L40S, L4, "
        "B200, GB200, MI250X, MI300X, MI325X (data/gpus.json)");
  CHECK(load_error(scenario_with_gpu({{"catalog", 100}})) ==
        "a.json: /cluster/gpu/catalog: expected a string, got 100");
  CHECK(load_error(scenario_with_gpu(
            {{"catalog", "H100-SXM"}, {"flops", "400 TFLOP/s"}, {"efficiency", 0.4}})) ==
        "a.json: /cluster/gpu/efficiency: give flops (an effective rate) or efficiency (a "
        "fraction of the bf16 peak), not both");
  CHECK(load_error(scenario_with_gpu({{"catalog", "H100-SXM"}, {"efficiency", 1.5}})) ==
        "a.json: /cluster/gpu/efficiency: expected a fraction from 0.001 to 1, such as 0.7, got "
        "1.5");
  CHECK(load_error(scenario_with_gpu({{"catalog", "H100-SXM"}, {"colour", 1}})) ==
        "a.json: /cluster/gpu/colour: unknown key; expected one of: catalog, memory, "
        "memory_bandwidth, flops, flops_by_dtype, efficiency, reserve");
  CHECK(load_error(scenario_with_gpu({{"memory", "80 GiB"}, {"efficiency", 0.4}})) ==
        "a.json: /cluster/gpu/efficiency: efficiency scales a catalog GPU's bf16 peak; name one "
        "with \"catalog\" (such as \"H100-SXM\") or give flops");
  CHECK(load_error(scenario_with_gpu({{"catalog", "H100-PCIe"}})) ==
        "a.json: /cluster/inter_node/bandwidth: missing required key (expected a bandwidth such "
        "as \"50 GB/s\" (1 B/s to 1e18 B/s); the catalog has no reference network for H100-PCIe)");
  auto wide = scenario_with_gpu({{"catalog", "H100-SXM"}});
  wide["cluster"]["gpus_per_node"] = 16;
  CHECK(load_error(wide) ==
        "a.json: /cluster/intra_node/bandwidth: missing required key (expected a bandwidth such "
        "as \"50 GB/s\" (1 B/s to 1e18 B/s); the catalog's H100-SXM joins 8 GPUs (NVLink 4 + "
        "NVSwitch (DGX/HGX H100)) but gpus_per_node is 16)");
}

TEST_CASE("loader: a catalog fabric's processor usage, overridable per tier", "[catalog][loader]") {
  // Calculon's systems/h100_80g_nvl8.json: NVLink processor_usage 0.15, InfiniBand 0.02.
  const auto s = planner::load_scenario(scenario_with_gpu({{"catalog", "H100-SXM"}}), "a.json");
  CHECK(s.cluster.node_tier().processor_usage == Approx(0.15));
  CHECK(s.cluster.network_tier().processor_usage == Approx(0.02));
  auto doc = scenario_with_gpu({{"catalog", "H100-SXM"}});
  doc["cluster"]["inter_node"]["processor_usage"] = 0.1;
  CHECK(planner::load_scenario(doc, "a.json").cluster.network_tier().processor_usage ==
        Approx(0.1));
  // A GPU given by numbers overlaps for free unless the scenario says otherwise.
  auto by_numbers = scenario_with_gpu(
      {{"memory", "80 GiB"}, {"memory_bandwidth", "3.35 TB/s"}, {"flops", "400 TFLOP/s"}});
  by_numbers["cluster"]["intra_node"]["bandwidth"] = "450 GB/s";
  by_numbers["cluster"]["inter_node"]["bandwidth"] = "50 GB/s";
  const auto numbers = planner::load_scenario(by_numbers, "a.json");
  CHECK(numbers.cluster.node_tier().processor_usage == 0.0);
  CHECK(numbers.cluster.network_tier().processor_usage == 0.0);
  doc["cluster"]["inter_node"]["processor_usage"] = 1.5;
  CHECK(load_error(doc) ==
        "a.json: /cluster/inter_node/processor_usage: expected a fraction of the GPU's compute "
        "from 0 to 0.9, such as 0.15, got 1.5");
}

TEST_CASE("loader: a network tier runs multi-rail collectives unless told not to",
          "[catalog][loader][hierarchical]") {
  auto doc = scenario_with_gpu({{"catalog", "H100-SXM"}});
  CHECK(planner::load_scenario(doc, "a.json").cluster.network_tier().hierarchical);
  doc["cluster"]["inter_node"]["hierarchical"] = false;
  CHECK_FALSE(planner::load_scenario(doc, "a.json").cluster.network_tier().hierarchical);
  doc["cluster"]["inter_node"]["hierarchical"] = "no";
  CHECK(load_error(doc) ==
        "a.json: /cluster/inter_node/hierarchical: expected true or false, got \"no\"");
  // Inside the node there is no level below to split into.
  auto inner = scenario_with_gpu({{"catalog", "H100-SXM"}});
  inner["cluster"]["intra_node"]["hierarchical"] = true;
  CHECK(load_error(inner).find("/cluster/intra_node/hierarchical") != std::string::npos);
}

#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/base/dtype.hpp"
#include "planner/inputs/attention_kernel.hpp"

/// The GPU and fabric catalog: data/gpus.json, embedded in the binary at build time
/// (cmake/embed_text.cmake). Every number in the file carries its source; this header only
/// exposes the values. Units are base units: FLOP/s, bytes, bytes/s per GPU and direction.

namespace planner {

/// Dense peak rate of one number format; 0 when the device has no such unit (A100 fp8).
struct PeakRate {
  std::string dtype;  ///< "fp32", "tf32", "bf16", "fp16", "fp8", "int8"
  double flops_per_second = 0;
};

struct CatalogGpu {
  std::string name;                  ///< canonical spelling, e.g. "H100-SXM"
  std::vector<std::string> aliases;  ///< other accepted spellings, e.g. "H100-SXM5-80GB"
  std::string vendor;
  std::vector<PeakRate> peaks;       ///< dense peaks per dtype, in the file's order
  double memory_bytes = 0;           ///< as the device reports it (nvidia-smi / rocm-smi)
  double memory_bandwidth_bytes_per_second = 0;
  double compute_units = 0;          ///< SMs (AMD: compute units); 0 = not catalogued
  std::string scale_up_fabric;
  double scale_up_bandwidth_bytes_per_second = 0;  ///< per GPU, one direction
  std::int64_t scale_up_domain_gpus = 0;           ///< GPUs sharing that fabric
  /// Share of the GPU's compute a collective on the fabric takes while it overlaps the
  /// GEMMs (Calculon's processor_usage; cluster.hpp Tier::processor_usage); 0 = none given.
  double scale_up_processor_usage = 0;
  double scale_out_processor_usage = 0;
  std::int64_t node_gpus = 0;           ///< reference system's GPUs per node; 0 = none given
  std::int64_t nics_per_node = 0;       ///< 0 = not catalogued
  double nic_bits_per_second = 0;       ///< 0 = not catalogued
  double default_efficiency = 0;        ///< fraction of the bf16 peak used as gpu.flops
  std::string efficiency_basis;         ///< how default_efficiency was obtained
  /// default_efficiency is the entry's own (fitted on calibration runs of this GPU, or of the
  /// same chip with other memory); false: the pooled value of all calibration runs.
  bool efficiency_own = false;
  /// The fraction of the bf16 peak at which a serving engine's forward passes run their GEMMs
  /// (prefill, decode), where single-node serving runs that isolate it fit one (data/gpus.json
  /// serving_efficiency; docs/model.md §8); 0: default_efficiency, the training fit.
  double serving_efficiency = 0;
  /// The datasheet part this entry is a variant of (other memory, a power limit), empty for a
  /// datasheet part. A variant's calibration runs fit its own efficiency but not the pooled
  /// default of uncatalogued GPUs, which stand for parts at their rated power.
  std::string variant_of;

  /// The dense peak of `dtype`, or nullopt when the device has no such rate.
  [[nodiscard]] std::optional<double> peak(std::string_view dtype) const noexcept;
  /// Scale-out bandwidth per GPU in bytes/s (NICs × rate / 8 / GPUs per node), 0 when the
  /// catalog has no reference system for this GPU.
  [[nodiscard]] double scale_out_bandwidth_bytes_per_second() const noexcept;
};

/// A fitted catalog constant and how it was obtained.
struct SourcedValue {
  double value = 0;
  std::string source;
};

/// The FP8 GEMM rate of a scaling recipe as a fraction of the bf16 efficiency times the FP8
/// peak (data/gpus.json fp8_efficiency_ratio; docs/validation.md §FP8): one value for every
/// GPU, fitted to single-node FP8/BF16 run pairs with `planner validate --fit`.
[[nodiscard]] const SourcedValue& fp8_efficiency_ratio(Fp8Recipe recipe);

/// What a decode step's reads achieve, one set for every GPU (data/gpus.json serving_read,
/// fitted to the microbenchmarks of data/microbenchmarks/hbm_and_step_overheads.json;
/// docs/model.md §8.2): the fraction of the datasheet HBM bandwidth at which GEMVs stream
/// the weights, the fraction at which decode attention streams the KV cache, and the fixed
/// cost of one layer in one forward step (its kernels' floors and launch gaps).
struct ServingRead {
  SourcedValue weights_efficiency;
  SourcedValue kv_efficiency;
  SourcedValue layer_step_seconds;
};
[[nodiscard]] const ServingRead& serving_read();

/// Training memory outside the ledger's tensors, for a catalog GPU whose scenario gives no
/// `reserve` (data/gpus.json runtime_memory; docs/model.md §3): the share PyTorch's caching
/// allocator reserves over what it has allocated at the peak (fitted to single-node peak-memory
/// runs with `planner validate --fit`), and what the process holds outside the allocator (CUDA
/// context, NCCL's buffers, cuBLAS workspaces).
struct RuntimeMemory {
  SourcedValue allocator_fraction;
  SourcedValue eager_activation_fraction;
  SourcedValue context_bytes;
};
[[nodiscard]] const RuntimeMemory& runtime_memory();

/// Tiled attention's rate against the GEMMs (data/gpus.json attention_rate; docs/model.md §6b):
/// per kernel the curve's limit and half-rate tokens (inputs/attention_kernel.hpp), fitted to
/// our H200 SDPA microbenchmarks (validation/microbench/h200), and the catalog GPUs they apply
/// to (the Hopper SM they were measured on).
struct AttentionRateTable {
  std::vector<std::string> gpus;
  std::string gpus_source;
  std::array<SourcedValue, attention_kernel_count> limit;
  std::array<SourcedValue, attention_kernel_count> half_tokens;
};
[[nodiscard]] const AttentionRateTable& attention_rate_table();

/// The curves for `gpu`, each kernel's: none (limit 0) unless the table lists the GPU.
[[nodiscard]] std::array<AttentionRate, attention_kernel_count> attention_rates_of(
    const CatalogGpu& gpu);

/// Every catalogued GPU, parsed once from the embedded JSON. Throws std::runtime_error if
/// the embedded file is malformed (a build defect, never a user's input).
[[nodiscard]] const std::vector<CatalogGpu>& gpu_catalog();

/// The entry named `name` (canonical or alias; letters compared without case), or nullptr.
[[nodiscard]] const CatalogGpu* find_catalog_gpu(std::string_view name);

/// The canonical name nearest to an unknown `name`, for "did you mean".
[[nodiscard]] std::optional<std::string> closest_catalog_gpu(std::string_view name);

/// Every canonical name, comma-separated, for messages.
[[nodiscard]] std::string catalog_gpu_names();

/// The embedded catalog text itself (data/gpus.json as built).
[[nodiscard]] std::string_view gpu_catalog_text();

}  // namespace planner

#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

/// Number formats: what one element of weights, gradients, activations or the KV cache takes
/// in memory and on the wire, and which tensor-core rate a GEMM runs at.

namespace planner {

enum class Dtype { fp32, bf16, fp16, fp8, int8, int4 };
inline constexpr std::size_t dtype_count = 6;

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  double bytes;  ///< per element (int4: two per byte)
};

/// IEEE 754 binary32 and binary16; bfloat16 (Kalamkar et al. 2019); FP8 E4M3/E5M2
/// (Micikevicius et al. 2022, arXiv 2209.05433); int8 and packed int4 weights (Dettmers et
/// al. 2022; Frantar et al. 2023, GPTQ).
inline constexpr std::array<DtypeInfo, dtype_count> dtypes{{
    {Dtype::fp32, "fp32", 4.0},
    {Dtype::bf16, "bf16", 2.0},
    {Dtype::fp16, "fp16", 2.0},
    {Dtype::fp8, "fp8", 1.0},
    {Dtype::int8, "int8", 1.0},
    {Dtype::int4, "int4", 0.5},
}};

/// A rate (or any figure) per dtype, indexed by `Dtype`.
using DtypeRates = std::array<double, dtype_count>;

[[nodiscard]] constexpr const DtypeInfo& info(Dtype d) noexcept {
  return dtypes[static_cast<std::size_t>(d)];
}
[[nodiscard]] constexpr double bytes_of(Dtype d) noexcept { return info(d).bytes; }
[[nodiscard]] constexpr std::string_view to_string(Dtype d) noexcept { return info(d).name; }

[[nodiscard]] constexpr std::optional<Dtype> dtype_named(std::string_view name) noexcept {
  for (const DtypeInfo& row : dtypes) {
    if (row.name == name) return row.dtype;
  }
  return std::nullopt;
}

/// How FP8 GEMMs are scaled (Micikevicius et al. 2022 §3; docs/model.md §6b): one scale per
/// tensor (Transformer Engine's delayed scaling, torchao's dynamic tensorwise), one per row of
/// each operand (FBGEMM f8f8bf16_rowwise, torchao rowwise), or one per 1×128 / 128×128 block
/// (DeepSeek-V3 §3.3, DeepGEMM). Each runs its GEMMs at its own fraction of the bf16 GEMM
/// efficiency (data/gpus.json fp8_efficiency_ratio).
enum class Fp8Recipe { tensorwise, rowwise, blockwise };
inline constexpr std::size_t fp8_recipe_count = 3;
inline constexpr std::array<std::string_view, fp8_recipe_count> fp8_recipe_names{
    "tensorwise", "rowwise", "blockwise"};

/// The dtype of each kind of tensor in a job. The defaults are mixed-precision bf16 training
/// (Micikevicius et al. 2018; Megatron-LM --bf16): bf16 weights, gradients, activations and
/// GEMMs, with fp32 master weights and Adam moments counted in the optimizer state.
struct Precision {
  Dtype weights = Dtype::bf16;
  Dtype gradients = Dtype::bf16;
  Dtype activations = Dtype::bf16;  ///< stored activations and the messages between ranks
  Dtype kv_cache = Dtype::bf16;
  Dtype compute = Dtype::bf16;      ///< the GEMMs' input format: which rate they run at
  Fp8Recipe fp8_recipe = Fp8Recipe::tensorwise;  ///< with compute fp8: how the GEMMs scale
  /// The scenario states `gradients`; when it does not, a framework may choose them
  /// (inputs/framework_defaults.hpp: Megatron-LM's fp32 main gradients).
  bool gradients_stated = false;
};

}  // namespace planner

#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

/// Which tiled attention kernel a training job runs, and how fast such a kernel goes against
/// the GPU's GEMMs (docs/model.md §6b).

namespace planner {

/// cudnn: cuDNN's fused attention, what Transformer Engine picks on Hopper (it disables
/// FlashAttention "to give FusedAttention preference on Hopper+", TE dot_product_attention
/// utils.py) and PyTorch SDPA's default there once its bundled cuDNN is newer than 9.15
/// (pytorch/pytorch#162073; 2.11 on our H200). flash2: the FlashAttention-2 kernels, PyTorch
/// SDPA's FLASH backend, its Hopper default from 2.5.1 (cuDNN opt-in, pytorch/pytorch#138522)
/// until then, and the flash-attn 2 package.
enum class AttentionKernel { cudnn, flash2 };
inline constexpr std::size_t attention_kernel_count = 2;
inline constexpr std::array<std::string_view, attention_kernel_count> attention_kernel_names{
    "cudnn", "flash2"};

/// A tiled attention kernel's rate as a share of the GPU's GEMM rate, by the tokens each call
/// attends over (s): limit · s / (s + half_tokens), a saturation in the work per head (short
/// sequences leave the kernel's prologue, epilogue and partial tiles uncovered). Fitted to
/// causal SDPA forward+backward against the bf16 GEMMs of the same session
/// (validation/microbench/h200; data/gpus.json attention_rate). limit 0: no curve for this
/// GPU, attention runs at the GEMM rate.
struct AttentionRate {
  double limit = 0;
  double half_tokens = 0;
};

[[nodiscard]] inline double attention_rate_share(const AttentionRate& r, double tokens) noexcept {
  if (!(r.limit > 0) || !(tokens > 0)) return 1.0;
  return std::min(1.0, r.limit * tokens / (tokens + r.half_tokens));
}

}  // namespace planner

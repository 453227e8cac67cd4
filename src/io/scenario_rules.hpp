#pragma once
// The scenario loader's ranges and enumerations, shared by scenario_json.cpp and
// scenario_sections.cpp. Every bound is listed in docs/errors.md §Limits.
#include <array>
#include <cstdint>
#include <string_view>

#include "json_object.hpp"
#include "planner/base/dtype.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/scenario.hpp"

namespace planner::json_input {

// ---- Limits ----------------------------------------------------------------------------
// Counts are bounded so that the int64 products the planner forms (world size, dp·tp·pp·cp,
// dp·micro_batch·grad_accum, batch·context_tokens, seq_len², vocab·hidden, hidden·ffn_hidden)
// stay below 2^63. Products of more factors (layers·hidden·ffn_hidden, seq_len²·heads) are
// computed in double downstream. The table is in docs/errors.md §Limits.

inline constexpr IntRule gpu_count{1, pow2(24)};  // nodes, gpus_per_node, plan degrees
inline constexpr IntRule layer_count{1, pow2(20)};
inline constexpr IntRule mtp_count{0, 64};  // multi-token-prediction modules (DeepSeek-V3: 1)
inline constexpr IntRule width{1, pow2(24)};      // hidden, heads, kv_heads
inline constexpr IntRule ffn_width{1, pow2(26)};  // 4·hidden fits
inline constexpr IntRule vocab_size{1, pow2(30)};
inline constexpr IntRule token_count{1, pow2(30)};     // seq_len, context_tokens
inline constexpr IntRule batch_count{1, pow2(16)};     // micro_batch, grad_accum, serving batch
inline constexpr IntRule sequence_count{1, pow2(32)};  // micro_batch · grad_accum
inline constexpr IntRule zero_stage{0, 3};
inline constexpr IntRule collectives_per_layer{1, 1024};  // ZeRO-3 collectives per layer
inline constexpr std::int64_t max_world = pow2(24);
// Sequences per optimizer step, global_batch_tokens / seq_len: at most micro_batch ·
// grad_accum = 2^16 · 2^16 on one replica. The search enumerates the divisors of each
// replica's share (O(sqrt(n)) each); 2^50 sequences made one search take seconds and a
// plan with thresholds minutes (docs/testing.md §Findings).
inline constexpr double max_sequences_per_step = 0x1p32;

inline constexpr NumberRule gpu_memory{1, false, 0x1p60,
                                "a GPU memory size such as \"192 GiB\" (1 B to 2^60 B)"};
inline constexpr NumberRule reserve_size{0, false, 0x1p60, "a size such as \"10 GiB\" (0 to 2^60 B)"};
inline constexpr NumberRule hbm_bandwidth{1, false, 1e18,
                                   "a bandwidth such as \"4.8 TB/s\" (1 B/s to 1e18 B/s)"};
inline constexpr NumberRule link_bandwidth{1, false, 1e18,
                                    "a bandwidth such as \"50 GB/s\" (1 B/s to 1e18 B/s)"};
inline constexpr NumberRule compute_rate{
    1, false, 1e21, "a compute rate such as \"400 TFLOP/s\" (1 FLOP/s to 1e21 FLOP/s)"};
inline constexpr NumberRule processor_share{
    0, false, 0.9, "a fraction of the GPU's compute from 0 to 0.9, such as 0.15"};
inline constexpr NumberRule link_latency{0, false, 60, "a latency such as \"5 us\" (0 to 60 s)"};
inline constexpr NumberRule step_time{0, true, 1e6, "a positive time such as \"700 ms\" (at most 1e6 s)"};
// A layer's fixed cost per forward step (kernel floors and launch gaps): tens of microseconds.
inline constexpr NumberRule layer_step_time{0, false, 0.1,
                                            "a time such as \"65 us\" (0 to 100 ms)"};
inline constexpr NumberRule slo_time{0, true, 3600, "a positive time such as \"25 ms\" (at most 3600 s)"};
inline constexpr NumberRule batch_tokens{0, true, 0x1p50,
                                  "a positive number of tokens such as 4194304 (at most 2^50)"};
inline constexpr NumberRule training_bytes{
    4, false, 64, "a number of bytes per parameter from 4 to 64 (16 for mixed-precision Adam)"};
inline constexpr NumberRule live_parameters{
    0, true, 1e16, "a positive parameter count such as 1e9 (DeepSpeed's default; at most 1e16)"};
inline constexpr NumberRule serving_bytes{
    0, true, 64, "a positive number of bytes per weight, at most 64 (2 for bf16)"};
// Bounded below: at 1e-300 of 1 B/s a decode step took infinitely long (docs/testing.md).
inline constexpr NumberRule efficiency{0.001, false, 1, "a fraction from 0.001 to 1, such as 0.7"};
inline constexpr NumberRule param_count{0, true, 1e16,
                                 "a positive parameter count such as 8e9 (at most 1e16)"};
inline constexpr NumberRule tolerance{0, false, 1, "a relative tolerance from 0 to 1, such as 0.01"};
inline constexpr IntRule concurrency_count{1, pow2(24)};  // serving concurrency over all replicas
inline constexpr IntRule block_tokens{1, pow2(16)};       // paged KV-cache block
inline constexpr NumberRule percentile{0, true, 0.9999, "a quantile such as 0.99 (above 0, at most 0.9999)"};
inline constexpr NumberRule arrival_rate{0, true, 1e9, "a positive rate in requests per second such as 12.5 (at most 1e9)"};
// A prompt's prefill is timed chunk by chunk; more chunks than this is a chunk size typed in
// the wrong unit (engines use 256 to 16384 tokens).
inline constexpr std::int64_t max_prefill_chunks = 4096;

inline constexpr auto recompute_choices = [] {
  std::array<Choice<Recompute>, recompute_names.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = {recompute_names[i].name, recompute_names[i].value};
  }
  return out;
}();
inline constexpr std::array kv_sharding_choices{Choice<KvSharding>{"replicate", KvSharding::replicate},
                                         Choice<KvSharding>{"batch", KvSharding::batch}};
inline constexpr std::array decode_attention_choices{
    Choice<DecodeAttention>{"grouped", DecodeAttention::grouped},
    Choice<DecodeAttention>{"per_query_head", DecodeAttention::per_query_head}};
inline constexpr std::array closed_loop_choices{
    Choice<ClosedLoop>{"staggered", ClosedLoop::staggered},
    Choice<ClosedLoop>{"lockstep", ClosedLoop::lockstep}};
inline constexpr std::array batching_choices{
    Choice<Batching>{"separate", Batching::separate},
    Choice<Batching>{"mixed", Batching::mixed}};
inline constexpr std::array first_token_choices{
    Choice<FirstToken>{"prefill", FirstToken::prefill},
    Choice<FirstToken>{"decode_step", FirstToken::decode_step}};
/// workload.elementwise_kernels: fused (Megatron-LM, Transformer Engine) or eager (one PyTorch
/// kernel per operation); the value is Plan::eager_elementwise.
inline constexpr std::array elementwise_kernel_choices{Choice<bool>{"fused", false},
                                                       Choice<bool>{"eager", true}};
/// workload.tp_saved_inputs: what a column-parallel GEMM under sequence parallelism keeps,
/// its shard (Megatron-LM) or the gathered input (PyTorch DTensor); Plan::tp_saves_gathered_inputs.
inline constexpr std::array tp_saved_input_choices{Choice<bool>{"shard", false},
                                                   Choice<bool>{"gathered", true}};
inline constexpr std::array kind_choices{Choice<WorkloadKind>{"training", WorkloadKind::training},
                                  Choice<WorkloadKind>{"serving", WorkloadKind::serving}};
/// The placed axes of the axis table (inputs/plan.hpp) as choices; they come first.
inline constexpr std::array<Choice<Axis>, placed_axis_count> axis_choices = [] {
  std::array<Choice<Axis>, placed_axis_count> out{};
  for (std::size_t i = 0; i < placed_axis_count; ++i) out[i] = {axes[i].name, axes[i].axis};
  return out;
}();
/// The dtype table (base/dtype.hpp) as choices.
inline constexpr std::array<Choice<Dtype>, dtype_count> dtype_choices = [] {
  std::array<Choice<Dtype>, dtype_count> out{};
  for (std::size_t i = 0; i < dtype_count; ++i) out[i] = {dtypes[i].name, dtypes[i].dtype};
  return out;
}();
/// The FP8 scaling recipes (base/dtype.hpp) as choices.
inline constexpr std::array<Choice<Fp8Recipe>, fp8_recipe_count> fp8_recipe_choices = [] {
  std::array<Choice<Fp8Recipe>, fp8_recipe_count> out{};
  for (std::size_t i = 0; i < fp8_recipe_count; ++i) {
    out[i] = {fp8_recipe_names[i], static_cast<Fp8Recipe>(i)};
  }
  return out;
}();
inline constexpr std::array norm_choices{Choice<Norm>{"rmsnorm", Norm::rms},
                                         Choice<Norm>{"layernorm", Norm::layer}};
inline constexpr std::array position_choices{
    Choice<Position>{"rotary", Position::rotary}, Choice<Position>{"learned", Position::learned},
    Choice<Position>{"alibi", Position::alibi}, Choice<Position>{"none", Position::none}};
inline constexpr std::array linear_bias_choices{Choice<LinearBias>{"none", LinearBias::none},
                                                Choice<LinearBias>{"qkv", LinearBias::qkv},
                                                Choice<LinearBias>{"all", LinearBias::all}};
/// The attention kernels (inputs/attention_kernel.hpp) as choices.
inline constexpr std::array<Choice<AttentionKernel>, attention_kernel_count>
    attention_kernel_choices = [] {
      std::array<Choice<AttentionKernel>, attention_kernel_count> out{};
      for (std::size_t i = 0; i < attention_kernel_count; ++i) {
        out[i] = {attention_kernel_names[i], static_cast<AttentionKernel>(i)};
      }
      return out;
    }();
inline constexpr std::array tier_choices{Choice<std::string_view>{"intra_node", "intra_node"},
                                  Choice<std::string_view>{"inter_node", "inter_node"}};

/// JSON nesting allowed in any input. Scenarios need four levels; the bound keeps the
/// recursive printing of values (dump) far from the stack limit on hostile input.
inline constexpr int max_depth = 64;

}  // namespace planner::json_input

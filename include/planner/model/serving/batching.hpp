#pragma once
#include <algorithm>

#include "planner/inputs/cluster.hpp"
#include "planner/inputs/model.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/workload.hpp"
#include "planner/model/serving/decode.hpp"
#include "planner/model/serving/prefill.hpp"

/// What a request's prompt costs an engine that is decoding a batch (docs/model.md §8.4):
/// the prompts that arrive together are prefilled in one forward, which either stalls the
/// decodes (Batching::separate) or runs inside their iteration (Batching::mixed).

namespace planner {

struct PromptForward {
  double prompts = 1;               ///< prompts prefilled in one forward (k, a mean)
  double engine_seconds = 0;        ///< the engine's busy time per prompt, what the decodes wait
  double first_token_seconds = 0;   ///< from the forward's start to the prompts' first tokens
  double decoding_alongside = 0;    ///< mixed: the sequences decoding in the same iterations
};

/// Prompts prefilled together in one forward, in the steady state: every sequence of the
/// batch emits one token per decode step and ends after `output_tokens`, so batch/output
/// sequences end per step and as many prompts arrive (their users' next requests in a closed
/// loop; the arrivals during a step under a request rate, by Little's law, Little 1961: batch
/// = arrival rate × output × TPOT). An engine takes every waiting prompt into its next
/// forward (vLLM's scheduler admits waiting requests up to max_num_batched_tokens, TensorRT-
/// LLM's up to max_num_tokens), so they share its weight read and fixed costs. At least one.
[[nodiscard]] inline double prompts_per_forward(double batch, double output_tokens) noexcept {
  if (!(output_tokens > 0)) return 1.0;
  return std::max(1.0, batch / output_tokens);
}

/// The prompts' forward and its cost to the engine with `batch` sequences decoding.
/// - separate: k prompts run one prefill forward of their own (prefill_time with k prompts:
///   one weight read and one set of layer floors per chunk for all k); the decodes wait for
///   it, so each prompt costs the engine that forward's busy time over k.
/// - mixed: the k prompts' tokens join the iteration of the batch − k sequences decoding
///   (TensorRT-LLM's in-flight batching; vLLM V1; Sarathi-Serve, Agrawal et al. 2024, §4.2):
///   one forward reads the weights and pays each layer's floors once, and its GEMMs run over
///   the decode and prompt tokens together (max(weight read, both FLOPs)); the decodes' and
///   the prompts' attention are kernels of their own (TensorRT-LLM's generation and context
///   attention), each at its roofline (decode.hpp). What each prompt costs the engine is
///   that iteration's excess over the decode step alone, over k (under pp, one stage's
///   excess: the other stages work meanwhile, as a prefill's stages do); the prompts' first
///   tokens come when their last chunk's iteration ends, each iteration carrying the excess
///   on every stage in turn. With nothing decoding alongside (one user) the forward is the
///   prefill alone.
[[nodiscard]] inline PromptForward prompt_forward(const Model& m, const Cluster& c,
                                                  const Serving& w, const Plan& p, double batch,
                                                  double weights_bytes,
                                                  double flops_per_second) noexcept {
  PromptForward f;
  f.prompts = prompts_per_forward(batch, static_cast<double>(w.output_tokens));
  const PrefillTime alone = prefill_time(m, c, w, p, weights_bytes, flops_per_second, f.prompts);
  const double others = batch - f.prompts;
  if (w.batching == Batching::separate || !(others > 0) || alone.prompt_tokens <= 0) {
    f.engine_seconds = alone.stage_seconds / f.prompts;
    f.first_token_seconds = alone.seconds;
    return f;
  }
  f.decoding_alongside = others;
  const DecodeStep d = decode_step(m, c, w, p, others, weights_bytes, flops_per_second);
  // Per stage and per chunk (each chunk rides one iteration; the prompts' terms spread evenly
  // over their chunks): the GEMM streams the weights once for the decode and prompt tokens,
  // all of them, since the prompts' tokens touch every expert of an MoE layer; the prompts'
  // attention, all-reduces and all-to-alls add.
  const double stages = static_cast<double>(p.pp);
  const double chunks = static_cast<double>(alone.chunks);
  const double decode_weights = d.weight_read_seconds / stages;
  const double all_weights = (alone.memory_seconds - alone.kv_seconds) / chunks;
  const double decode_gemm = d.gemm_seconds / stages;
  const double gemm_excess =
      std::max(std::max(decode_weights, all_weights), decode_gemm + alone.gemm_seconds / chunks) -
      std::max(decode_weights, decode_gemm);
  const double prompt_attention =
      std::max(alone.kv_seconds, alone.compute_seconds - alone.gemm_seconds);
  // One stage's added busy time for the k prompts: what the engine, its stages pipelined
  // like a prefill's (prefill_time stage_seconds), spends on them.
  const double excess =
      chunks * gemm_excess + prompt_attention + alone.tp_seconds + alone.ep_seconds;
  f.engine_seconds = excess / f.prompts;
  // Their first tokens: each chunk's iteration, every stage carrying its share in turn.
  f.first_token_seconds = chunks * d.seconds + stages * excess;
  return f;
}

}  // namespace planner

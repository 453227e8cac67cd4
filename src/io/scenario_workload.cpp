// The scenario's "workload", "plan" and "expect" sections (docs/scenario-format.md); the model
// and cluster sections are in scenario_sections.cpp.
#include "scenario_sections.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <vector>
#include <string_view>
#include <fmt/format.h>
#include "planner/inputs/space.hpp"
#include "planner/io/constraints.hpp"
#include "planner/io/presets.hpp"
#include "planner/base/one_line.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/read_input.hpp"
#include "planner/io/resilience_json.hpp"
#include "planner/model/legality.hpp"
#include "model_experts.hpp"
#include "scenario_rules.hpp"

namespace planner::json_input {
/// The serving workload's keys (docs/scenario-format.md §Serving).
const std::initializer_list<std::string_view> serving_keys{
    "kind", "batch", "concurrency", "context_tokens", "input_tokens", "output_tokens",
    "prefill_chunk_tokens", "slo_per_token", "slo_ttft", "slo_percentile", "request_rate",
    "memory_bandwidth_efficiency", "layer_step_time", "bytes_per_param", "kv_sharding",
    "decode_attention", "closed_loop", "first_token", "kv_block_tokens", "batching", "max_batch"};

/// A serving workload: `batch` (per engine) or `concurrency` (over all replicas), the
/// context (or input and output lengths), the targets and the optional request rate.
static void read_serving(const Object& o, Serving& s) {
  const std::optional<std::int64_t> batch = o.maybe_int("batch", batch_count);
  const std::optional<std::int64_t> concurrency = o.maybe_int("concurrency", concurrency_count);
  if (batch && concurrency) {
    o.fail_at("concurrency", "both \"batch\" (per engine) and \"concurrency\" (over all "
                             "replicas) are given; keep one");
  }
  if (!batch && !concurrency) {
    (void)o.need("batch", "an integer number of sequences per engine, or \"concurrency\"");
  }
  s.batch = batch.value_or(1);
  s.concurrency = concurrency.value_or(0);
  s.input_tokens = o.maybe_int("input_tokens", token_count).value_or(0);
  s.output_tokens = o.maybe_int("output_tokens", token_count).value_or(0);
  const std::optional<std::int64_t> context = o.maybe_int("context_tokens", token_count);
  if (!context && (s.input_tokens == 0 || s.output_tokens == 0)) {
    (void)o.need("context_tokens",
                 "an integer number of tokens, or both \"input_tokens\" and \"output_tokens\"");
  }
  s.context_tokens = context.value_or(s.input_tokens + s.output_tokens);
  if (s.input_tokens > s.context_tokens) {
    o.fail_at("input_tokens", fmt::format("{} prompt tokens do not fit the {} context tokens; "
                                          "raise context_tokens",
                                          s.input_tokens, s.context_tokens));
  }
  s.prefill_chunk_tokens = o.maybe_int("prefill_chunk_tokens", token_count).value_or(0);
  if (s.prefill_chunk_tokens > 0 &&
      (prompt_tokens(s) + s.prefill_chunk_tokens - 1) / s.prefill_chunk_tokens > max_prefill_chunks) {
    o.fail_at("prefill_chunk_tokens",
              fmt::format("{} tokens per chunk split the {}-token prompt into more than {} "
                          "chunks; use at least {}",
                          s.prefill_chunk_tokens, prompt_tokens(s), max_prefill_chunks,
                          (prompt_tokens(s) + max_prefill_chunks - 1) / max_prefill_chunks));
  }
  s.slo_per_token_seconds = o.quantity("slo_per_token", Dimension::seconds, slo_time);
  s.slo_ttft_seconds = o.maybe_quantity("slo_ttft", Dimension::seconds, slo_time).value_or(0);
  s.slo_percentile = o.maybe_number("slo_percentile", percentile).value_or(0.5);
  s.request_rate_per_second = o.maybe_number("request_rate", arrival_rate).value_or(0);
  if (s.request_rate_per_second > 0 && s.output_tokens == 0) {
    o.fail_at("request_rate", "a request rate needs \"output_tokens\" (how long each "
                              "request decodes); add it");
  }
  // A catalog GPU's defaults are the fitted ones (scenario_json.cpp apply_serving_read).
  s.memory_bandwidth_efficiency =
      o.maybe_number("memory_bandwidth_efficiency", efficiency).value_or(1.0);
  s.layer_step_seconds =
      o.maybe_quantity("layer_step_time", Dimension::seconds, layer_step_time).value_or(0);
  s.bytes_per_param = o.maybe_number("bytes_per_param", serving_bytes).value_or(2);
  s.kv_sharding = o.maybe_choice("kv_sharding", kv_sharding_choices).value_or(KvSharding::replicate);
  s.decode_attention = o.maybe_choice("decode_attention", decode_attention_choices)
                           .value_or(DecodeAttention::grouped);
  s.closed_loop = o.maybe_choice("closed_loop", closed_loop_choices).value_or(ClosedLoop::staggered);
  if (s.closed_loop == ClosedLoop::lockstep &&
      (s.request_rate_per_second > 0 || s.output_tokens == 0)) {
    o.fail_at("closed_loop", s.request_rate_per_second > 0
                                 ? "\"lockstep\" describes a fixed concurrency; remove "
                                   "\"request_rate\" or \"closed_loop\""
                                 : "\"lockstep\" needs \"output_tokens\" (how long each round "
                                   "decodes); add it");
  }
  s.first_token = o.maybe_choice("first_token", first_token_choices).value_or(FirstToken::prefill);
  s.kv_block_tokens = o.maybe_int("kv_block_tokens", block_tokens).value_or(1);
  s.batching = o.maybe_choice("batching", batching_choices).value_or(Batching::mixed);
  s.max_batch = o.maybe_int("max_batch", batch_count).value_or(0);
  if (s.max_batch > 0 && s.concurrency == 0) {
    o.fail_at("max_batch", "\"max_batch\" caps a \"concurrency\"'s sequences per engine; with "
                           "\"batch\" the engine's batch is given: remove one");
  }
}

Workload read_workload(const json& v, const std::string& origin) {
  const Object o(
      v, "/workload", origin,
      {"kind", "global_batch_tokens", "micro_batch", "step_time_per_micro_batch", "batch",
       "tp_comm_overlap", "pp_comm_overlap", "tables_in_pipeline_split",
       "fused_cross_entropy", "zero3_live_parameters", "zero3_collectives_per_layer",
       "zero3_blocking_gathers", "fsdp_root_unit", "unsharded_gradient_accumulation",
       "elementwise_kernels", "tp_saved_inputs", "attention_kernel", "concurrency",
       "context_tokens", "input_tokens", "output_tokens", "prefill_chunk_tokens",
       "slo_per_token", "slo_ttft", "slo_percentile", "request_rate",
       "memory_bandwidth_efficiency", "layer_step_time", "bytes_per_param", "kv_sharding",
       "decode_attention", "closed_loop", "first_token", "kv_block_tokens", "batching",
       "max_batch"});
  Workload w;
  (void)o.need("kind", "\"training\" or \"serving\"");
  w.kind = *o.maybe_choice("kind", kind_choices);
  if (w.kind == WorkloadKind::training) {
    o.restrict_to({"kind", "global_batch_tokens", "micro_batch", "step_time_per_micro_batch",
                   "bytes_per_param", "tp_comm_overlap", "pp_comm_overlap",
                   "tables_in_pipeline_split", "fused_cross_entropy", "zero3_live_parameters",
                   "zero3_collectives_per_layer", "zero3_blocking_gathers", "fsdp_root_unit",
                   "unsharded_gradient_accumulation", "elementwise_kernels",
                   "tp_saved_inputs", "attention_kernel"},
                  "a training workload");
    Training& t = w.training;
    t.global_batch_tokens = o.number("global_batch_tokens", batch_tokens);
    t.micro_batch = o.integer("micro_batch", batch_count, 1);
    t.step_time_per_micro_batch_seconds =
        o.maybe_quantity("step_time_per_micro_batch", Dimension::seconds, step_time).value_or(0);
    t.bytes_per_param = o.maybe_number("bytes_per_param", training_bytes).value_or(16);
    t.tp_comm_overlap = o.flag("tp_comm_overlap", false);
    t.pp_comm_overlap = o.flag("pp_comm_overlap", false);
    t.tp_comm_overlap_stated = o.find("tp_comm_overlap") != nullptr;
    t.pp_comm_overlap_stated = o.find("pp_comm_overlap") != nullptr;
    t.tables_in_pipeline_split = o.flag("tables_in_pipeline_split", false);
    t.fused_cross_entropy = o.flag("fused_cross_entropy", true);
    t.zero3_live_parameters =
        o.maybe_number("zero3_live_parameters", live_parameters).value_or(0);
    t.zero3_collectives_per_layer = o.integer("zero3_collectives_per_layer", collectives_per_layer, 1);
    t.zero3_blocking_gathers = o.flag("zero3_blocking_gathers", false);
    t.fsdp_root_unit = o.flag("fsdp_root_unit", false);
    t.unsharded_gradient_accumulation = o.flag("unsharded_gradient_accumulation", false);
    t.eager_elementwise = o.maybe_choice("elementwise_kernels", elementwise_kernel_choices)
                              .value_or(false);
    t.tp_saves_gathered_inputs =
        o.maybe_choice("tp_saved_inputs", tp_saved_input_choices).value_or(false);
    t.attention_kernel = o.maybe_choice("attention_kernel", attention_kernel_choices)
                             .value_or(AttentionKernel::cudnn);
    return w;
  }
  o.restrict_to(serving_keys, "a serving workload");
  read_serving(o, w.serving);
  return w;
}

static Placement read_placement(const json& v, const std::string& origin, const std::string& ptr) {
  constexpr std::string_view expect =
      "a permutation of [\"tp\", \"cp\", \"dp\", \"pp\"], innermost axis first";
  if (!v.is_array() || v.size() != 4) {
    fail(origin, ptr, fmt::format("expected {}, got {}", expect, describe_value(v)));
  }
  Placement out{};
  std::array<bool, 4> seen{};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string at = ptr + "/" + std::to_string(i);
    const Axis a = read_choice(v[i], axis_choices, origin, at);
    if (seen[static_cast<std::size_t>(a)]) {
      fail(origin, at, fmt::format("\"{}\" appears twice; expected {}", to_string(a), expect));
    }
    seen[static_cast<std::size_t>(a)] = true;
    out[i] = a;
  }
  return out;
}

Plan read_plan(const json& v, const Workload& w, const std::string& origin) {
  // The keys: the searched settings' (inputs/space.hpp), then the plan's other fields.
  std::vector<std::string_view> keys;
  for (const SpaceDim& row : dimensions) {
    if (row.set != nullptr && !row.plan_key.empty()) keys.push_back(row.plan_key);
  }
  for (const std::string_view key : {"grad_accum", "tp_comm_overlap", "pp_comm_overlap",
                                     "tables_in_pipeline_split", "placement"}) {
    keys.push_back(key);
  }
  const Object o(v, "/plan", origin, std::move(keys));
  // The searched settings, one row each of the search space's table (inputs/space.hpp), with
  // the loader's range for the row's flag limit (2^24 for a degree, 2^16 for a batch count:
  // gpu_count and batch_count above); a key left out keeps the field's default (plan.hpp).
  Plan p;
  for (const SpaceDim& row : dimensions) {
    if (row.set == nullptr || row.plan_key.empty() || o.find(row.plan_key) == nullptr) continue;
    switch (row.kind) {
      case SpaceKind::integer: {
        const IntRule rule = row.limit_log2 > 0 ? IntRule{1, pow2(row.limit_log2)}
                                                : IntRule{row.min, row.max};
        row.set(p, o.integer(row.plan_key, rule));
        break;
      }
      case SpaceKind::on_off:
        row.set(p, o.flag(row.plan_key, false) ? 1 : 0);
        break;
      case SpaceKind::choice:
        row.set(p, static_cast<std::int64_t>(*o.maybe_choice(row.plan_key, recompute_choices)));
        break;
    }
  }
  // A serving plan's micro-batch is the engine's batch: the sequences decoded together.
  if (o.find("micro_batch") == nullptr) {
    p.micro_batch =
        w.kind == WorkloadKind::training ? w.training.micro_batch : engine_batch(w.serving, p.dp);
  }
  p.grad_accum = o.integer("grad_accum", batch_count, 1);
  p.tp_comm_overlap = o.flag("tp_comm_overlap", w.kind == WorkloadKind::training &&
                                                    w.training.tp_comm_overlap);
  p.pp_comm_overlap = o.flag("pp_comm_overlap", w.kind == WorkloadKind::training &&
                                                    w.training.pp_comm_overlap);
  // The workload's setting holds for a pinned pipeline unless the plan says otherwise.
  p.tables_in_pipeline_split =
      o.flag("tables_in_pipeline_split", w.kind == WorkloadKind::training && p.pp > 1 &&
                                             w.training.tables_in_pipeline_split);
  if (const json* placement = o.find("placement")) {
    p.placement = read_placement(*placement, origin, o.path("placement"));
  }
  if (w.kind == WorkloadKind::training) {
    p.zero3_collectives_per_layer = w.training.zero3_collectives_per_layer;
    p.zero3_blocking_gathers = w.training.zero3_blocking_gathers;
    p.unsharded_gradient_accumulation = w.training.unsharded_gradient_accumulation;
    p.eager_elementwise = w.training.eager_elementwise;
    p.tp_saves_gathered_inputs = w.training.tp_saves_gathered_inputs;
  }
  return p;
}

void check_stated_overlaps(const json& v, const Plan& p, const std::string& origin) {
  // Stated in the plan, not the workload's default for every candidate (which acts only where
  // sequence parallelism is on): a pin that says it overlaps, and then would be timed,
  // exported and reported without the overlap (export dropped --tp-comm-overlap silently).
  if (v.contains("tp_comm_overlap") && p.tp_comm_overlap && !p.sequence_parallel) {
    fail(origin, "/plan/tp_comm_overlap",
         "tp_comm_overlap needs sequence_parallel: true (the collectives it runs inside the "
         "GEMMs are sequence parallelism's reduce-scatters and all-gathers); set "
         "sequence_parallel to true or remove tp_comm_overlap");
  }
  // pp_comm_overlap without virtual stages is not refused: it is Megatron-LM's default
  // (--overlap-p2p-communication is on unless switched off, and acts only when interleaved),
  // and NVIDIA's recipes, this project's validation records among them, state it so.
}

/// The dimension of the report figure `pointer` names, where its keys say it (the JSON report
/// is in base units, docs/output.md): a line of a memory ledger (/best/memory/weights), a
/// component of a time (/best/time/step), a key naming seconds, a bandwidth or bytes. None
/// where the key does not say (counts, fractions, rates of tokens): those are not checked.
static std::optional<Dimension> figure_dimension(std::string_view pointer) {
  const std::size_t slash = pointer.rfind('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view key = pointer.substr(slash + 1);
  const std::string_view head = pointer.substr(0, slash);
  const std::string_view parent = head.substr(std::min(head.size(), head.rfind('/') + 1));
  const auto one_of = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), key) != names.end();
  };
  if (parent == "memory" &&
      one_of({"weights", "gradients", "optimizer", "activations", "logits", "reserve", "allocator",
              "capacity", "total", "kv_cache", "fp8_weights", "zero3_gather", "recompute_working",
              "eager_temporaries"})) {
    return Dimension::bytes;
  }
  if (parent == "time" &&
      one_of({"step", "per_micro_batch", "attention", "bubble", "cp", "cp_exposed", "dense",
              "dp_comm", "dp_exposed", "elementwise", "pp", "recompute", "scores_io", "tp"})) {
    return Dimension::seconds;
  }
  if (key.find("seconds") != std::string_view::npos) return Dimension::seconds;
  if (key.ends_with("bandwidth")) return Dimension::bytes_per_second;
  if (key.ends_with("_bytes")) return Dimension::bytes;
  return std::nullopt;
}

static ExpectedFigure read_figure(const json& v, const std::string& ptr, const std::string& origin) {
  const Object o(v, ptr, origin, {"pointer", "value", "tolerance"});
  ExpectedFigure f;
  f.pointer = read_string(o.need("pointer", "a JSON pointer such as \"/best/time/per_token\""),
                          origin, o.path("pointer"));
  try {
    (void)json::json_pointer(f.pointer);
  } catch (const json::exception& e) {
    fail(origin, o.path("pointer"),
         fmt::format("expected a JSON pointer such as \"/best/time/per_token\", got {} ({})",
                     quote(f.pointer), library_reason(e.what())));
  }
  const json& value = o.need("value", "a number or a quantity such as \"25 ms\"");
  if (value.is_string()) {
    const AnyQuantity q =
        parse_any_quantity_text(value.get_ref<const std::string&>(), origin, o.path("value"));
    // A unit of another dimension than the figure's ("16 GB/s" against a byte count) was
    // compared by its number alone, and passed.
    const std::optional<Dimension> want = figure_dimension(f.pointer);
    if (want && *want != q.dimension) {
      fail(origin, o.path("value"),
           fmt::format("{} is in {}, but the figure at {} is in {}; write the value in a unit "
                       "of {}, or as a bare number in {}",
                       describe_value(value), base_unit(q.dimension), f.pointer,
                       base_unit(*want), base_unit(*want), base_unit(*want)));
    }
    f.value = q.value;
  } else if (value.is_number() && std::isfinite(value.get<double>())) {
    f.value = value.get<double>();
  } else {
    fail(origin, o.path("value"),
         fmt::format("expected a number or a quantity such as \"25 ms\", got {}",
                     describe_value(value)));
  }
  f.relative_tolerance = o.maybe_number("tolerance", tolerance).value_or(0.01);
  return f;
}

Expect read_expect(const json& v, const std::string& origin) {
  const Object o(
      v, "/expect", origin,
      {"dp", "tp", "pp", "cp", "micro_batch", "grad_accum", "sequences_per_replica", "zero",
       "recompute", "flash_attention", "sequence_parallel", "tp_tier", "figures"});
  Expect e;
  e.dp = o.maybe_int("dp", gpu_count);
  e.tp = o.maybe_int("tp", gpu_count);
  e.pp = o.maybe_int("pp", gpu_count);
  e.cp = o.maybe_int("cp", gpu_count);
  e.micro_batch = o.maybe_int("micro_batch", batch_count);
  e.grad_accum = o.maybe_int("grad_accum", batch_count);
  e.sequences_per_replica = o.maybe_int("sequences_per_replica", sequence_count);
  if (const auto zero = o.maybe_int("zero", zero_stage)) e.zero = static_cast<int>(*zero);
  e.recompute = o.maybe_choice("recompute", recompute_choices);
  e.flash_attention = o.maybe_flag("flash_attention");
  e.sequence_parallel = o.maybe_flag("sequence_parallel");
  if (const auto tier = o.maybe_choice("tp_tier", tier_choices)) e.tp_tier = std::string(*tier);
  if (const json* figures = o.find("figures")) {
    if (!figures->is_array()) {
      fail(origin, o.path("figures"),
           fmt::format(
               "expected an array of {{\"pointer\", \"value\", \"tolerance\"}} objects, got {}",
               describe_value(*figures)));
    }
    for (std::size_t i = 0; i < figures->size(); ++i) {
      e.figures.push_back(
          read_figure((*figures)[i], o.path("figures") + "/" + std::to_string(i), origin));
    }
  }
  return e;
}

}  // namespace planner::json_input

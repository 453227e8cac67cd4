// Every figure of shared/ANSWER-KEY.md for scenarios A–D, from the general model. Each
// expected value is the key's, printed as the key prints it; comments give the arithmetic.
#include <catch2/catch.hpp>

#include "answer_key_inputs.hpp"
#include "planner/io/context.hpp"
#include "planner/model/activations.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/step_time.hpp"

using namespace planner;
using answer_key::printed_as;

#include "model_test_helpers.hpp"

using namespace model_test_helpers;

TEST_CASE("Korthikanti's 34 + 5as/h is the general formula at the GPT shape", "[activations]") {
  // Korthikanti et al. 2022 Eq. (1): s·b·h·(34 + 5·a·s/h) bytes per layer.
  const Model m = answer_key::gpt(24, 2048, 16, 2048, 0);
  const Plan p = answer_key::plan(1, 1, 1, 1, 0, Recompute::none, false, false, 3);
  const double s = 2048, b = 3, h = 2048, a = 16;
  CHECK(layer_activation_bytes(m, p, Recompute::none) == Approx(s * b * h * (34 + 5 * a * s / h)));
  // Table 2: TP without SP: sbh(10 + 24/t + 5as/(ht)); TP+SP: sbh(34 + 5as/h)/t;
  // TP + selective: sbh(10 + 24/t); TP + SP + selective: 34sbh/t; full: 2sbh.
  Plan tp = p;
  tp.tp = 4;
  CHECK(layer_activation_bytes(m, tp, Recompute::none) ==
        Approx(s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4))));
  CHECK(layer_activation_bytes(m, tp, Recompute::selective) == Approx(s * b * h * (10 + 24.0 / 4)));
  tp.sequence_parallel = true;
  CHECK(layer_activation_bytes(m, tp, Recompute::none) ==
        Approx(s * b * h * (34 + 5 * a * s / h) / 4));
  CHECK(layer_activation_bytes(m, tp, Recompute::selective) == Approx(34 * s * b * h / 4));
  CHECK(layer_activation_bytes(m, p, Recompute::full) == Approx(2 * s * b * h));
}

TEST_CASE("GQA and a gated MLP change the itemised terms", "[activations]") {
  // Llama-like layer: h = 4096, a = 32, kv = 8 (h_kv = 1024), f = 14336 gated, s = 4096, b = 1.
  // Replicated 10sbh; split: Q 2sbh + K,V 2·2·sb·h_kv + proj-in 2sbh + 6·sbf (gate, up, product).
  Model m = answer_key::gpt(32, 4096, 32, 4096, 0);
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.gated_mlp = true;
  const Plan p = answer_key::plan(1, 1, 1, 1, 0, Recompute::none, true, false);
  const double sb = 4096, h = 4096;
  CHECK(layer_activation_bytes(m, p, Recompute::selective) ==
        Approx(sb * (10 * h + 4 * h + 4 * 1024 + 6 * 14336.0)));
}

TEST_CASE("Scenario A ledger", "[answer-key][A]") {
  const Model m = answer_key::model_a();
  const Cluster c = key_cluster();
  const Training w = answer_key::training_2m();
  // DDP, selective: state 8e9 × 16 = 128e9 B = 119.2 GiB; activations 34·s·b·h·L = 18.25e9 B.
  const Plan ddp = answer_key::plan(64, 1, 1, 1, 0, Recompute::selective, false, false);
  const MemoryLedger l = training_ledger(m, c, w, ddp);
  CHECK(l.state_bytes() == Approx(128e9));
  CHECK(printed_as(in_gib(l.state_bytes()), 119.2, 0.1));
  CHECK(l.activations_bytes == Approx(18.25e9).epsilon(0.001));
  CHECK(printed_as(in_gib(l.activations_bytes), 17.0, 0.1));
  // The key's total is state + activations + reserve = 146.2 GiB ≤ 192: fits. Our ledger also
  // lists the output layer (4sbh(1 + V/h) + sbh, Korthikanti §4.3), which the seed leaves out.
  CHECK(printed_as(in_gib(l.state_bytes() + l.activations_bytes + l.reserve_bytes), 146.2, 0.1));
  CHECK(l.fits());
  // Without recompute: 4096·4096·(34 + 160) = 3.25e9 B = 3.03 GiB per layer, 97 GiB for 32,
  // 226 GiB in total: does not fit.
  const double per_layer = layer_activation_bytes(m, ddp, Recompute::none);
  CHECK(per_layer == Approx(3.25e9).epsilon(0.002));
  CHECK(printed_as(in_gib(per_layer), 3.03, 0.01));
  Plan none = ddp;
  none.recompute = Recompute::none;
  const MemoryLedger ln = training_ledger(m, c, w, none);
  CHECK(printed_as(in_gib(ln.activations_bytes), 97, 1));
  CHECK(printed_as(in_gib(ln.state_bytes() + ln.activations_bytes + ln.reserve_bytes), 226, 1));
  CHECK_FALSE(ln.fits());
  // ZeRO-2 over 64 ranks: 2Ψ + 14Ψ/64 = 14.9 + 1.6 = 16.5 GiB.
  Plan z2 = ddp;
  z2.zero = 2;
  const MemoryLedger l2 = training_ledger(m, c, w, z2);
  CHECK(printed_as(in_gib(l2.weights_bytes), 14.9, 0.1));
  CHECK(printed_as(in_gib(l2.gradients_bytes + l2.optimizer_bytes), 1.6, 0.1));
  CHECK(printed_as(in_gib(l2.state_bytes()), 16.5, 0.1));
}

TEST_CASE("Scenario A gradient traffic and batch", "[answer-key][A]") {
  // 2·(63/64)·16e9 / 50e9 + 2·63·15e-6 = 630 ms + 1.9 ms = 632 ms.
  const CollectiveCost ar =
      collective_cost(Collective::all_reduce, Algorithm::ring, 64, 16e9, key_cluster().network_tier());
  CHECK(printed_as(ar.wire_seconds * 1e3, 630, 1));
  CHECK(printed_as(ar.latency_seconds * 1e3, 1.9, 0.1));
  CHECK(printed_as(ar.seconds() * 1e3, 632, 1));
  // The model's own DP traffic for dp = 64 ZeRO-0 uses the same message: 2 B × 8e9 params.
  const Model m = answer_key::model_a();
  const Plan ddp = answer_key::plan(64, 1, 1, 1, 0, Recompute::selective, false, false, 1, 8);
  const DataParallelTraffic t = data_parallel_traffic(m, key_cluster(), ddp, 0.233, 0.467);
  CHECK(t.gradient_bytes == Approx(16e9));
  CHECK_FALSE(t.inside_node);
  CHECK(t.buffer.algorithm == Algorithm::ring);
  CHECK(printed_as(t.buffer.seconds() * 1e3, 632, 1));
  // 2e6 tokens / 4096 = 488.3 sequences → 8 per rank over 64 ranks → 512 sequences.
  Scenario s;
  s.model = m;
  s.cluster = key_cluster();
  s.workload.training = answer_key::training_2m();
  s.workload.training.step_time_per_micro_batch_seconds = 0.7;
  s.plan = ddp;
  const Context ctx = make_context(s);
  CHECK(target_sequences(ctx) == Approx(488.28125));
  CHECK(sequences_per_replica(ctx, 64) == 8);
  // The measured 700 ms belongs to the pinned plan; comm / compute = 632 / (8 × 700) = 11.3 %.
  const TrainingTime tt = training_time(m, s.cluster, ddp, ctx.flops_per_second);
  CHECK(tt.compute_seconds() == Approx(0.7));
  CHECK(printed_as(100 * tt.dp.buffer.seconds() / (8 * tt.compute_seconds()), 11.3, 0.1));
}

TEST_CASE("Scenario B ledger", "[answer-key][B]") {
  const Model m = answer_key::model_b();
  const Cluster c = key_cluster();
  const Training w = answer_key::training_2m();
  // 65e9 × 16 = 1.04e12 B = 968.6 GiB (the seed's 968.9 is a slip), 5.04 GPUs of 192 GiB
  // (the seed's 5.05 follows from its slip: 968.9 / 192).
  const Plan one = answer_key::plan(1, 1, 1, 1, 0, Recompute::none, false, false);
  const MemoryLedger full = training_ledger(m, c, w, one);
  CHECK(full.state_bytes() == Approx(1.04e12));
  CHECK(printed_as(in_gib(full.state_bytes()), 968.6, 0.1));
  CHECK(full.state_bytes() / c.gpu.memory_bytes == Approx(5.045).margin(0.006));
  // No recompute: 4096·8192·(34 + 5·64·4096/8192) = 6.51e9 B = 6.06 GiB per layer, 485 GiB.
  CHECK(layer_activation_bytes(m, one, Recompute::none) == Approx(6.51e9).epsilon(0.001));
  CHECK(printed_as(in_gib(layer_activation_bytes(m, one, Recompute::none)), 6.06, 0.01));
  CHECK(printed_as(in_gib(full.activations_bytes), 485, 1));
  // tp = 8, ZeRO-1 over dp = 8: params 2Ψ/8 = 15.1, grads 15.1, optimizer 12Ψ/64 = 11.4,
  // state 41.6 GiB; selective + SP activations 85 / 8 = 10.6 GiB; with reserve 62.2 GiB.
  const Plan b = answer_key::plan(8, 8, 1, 1, 1, Recompute::selective, false, true, 1, 62);
  const MemoryLedger l = training_ledger(m, c, w, b);
  CHECK(printed_as(in_gib(l.weights_bytes), 15.1, 0.1));
  CHECK(printed_as(in_gib(l.gradients_bytes), 15.1, 0.1));
  CHECK(printed_as(in_gib(l.optimizer_bytes), 11.4, 0.1));
  CHECK(printed_as(in_gib(l.state_bytes()), 41.6, 0.1));
  CHECK(printed_as(in_gib(l.activations_bytes), 10.6, 0.1));
  CHECK(printed_as(in_gib(l.state_bytes() + l.activations_bytes + l.reserve_bytes), 62.2, 0.1));
  // FSDP (ZeRO-3) over 64: 968.6/64 = 15.1 state + two gathered layers (2 × 2 B × 65e9/80
  // = 3.0 GiB) + 85 GiB selective activations: 103 GiB, inside the key's 103–106 range.
  const Plan fsdp = answer_key::plan(64, 1, 1, 1, 3, Recompute::selective, false, false);
  const MemoryLedger lf = training_ledger(m, c, w, fsdp);
  CHECK(printed_as(in_gib(lf.state_bytes()), 15.1, 0.1));
  CHECK(printed_as(in_gib(lf.zero3_gather_bytes), 3.0, 0.1));
  CHECK(printed_as(in_gib(lf.activations_bytes), 85, 1));
  const double fsdp_gib = in_gib(lf.state_bytes() + lf.zero3_gather_bytes + lf.activations_bytes);
  CHECK(fsdp_gib >= 103.0);
  CHECK(fsdp_gib <= 106.0);
  CHECK(lf.fits());
}

TEST_CASE("Scenario B traffic", "[answer-key][B]") {
  const Model m = answer_key::model_b();
  const Cluster c = key_cluster();
  // FSDP over 64: 3 × Ψ_bytes = 3 × 65e9 × 2 = 390e9 B per rank per micro-batch; at 50 GB/s
  // 7.8 s against 6·65e9·4096/400e12 = 4.0 s of dense compute: 1.95×.
  const Plan fsdp = answer_key::plan(64, 1, 1, 1, 3, Recompute::selective, false, false);
  const TrainingTime tf = training_time(m, c, fsdp, 400e12);
  CHECK(tf.dp.bytes_per_step == Approx(390e9));
  CHECK(printed_as(tf.dp.bytes_per_step / 50e9, 7.8, 0.1));
  CHECK(printed_as(tf.dense_seconds, 4.0, 0.1));
  CHECK(printed_as(tf.dp.bytes_per_step / 50e9 / tf.dense_seconds, 1.95, 0.01));
  // TP = 8 in a node: 4 all-reduces × 80 layers of s·b·h·2 = 64 MiB, 0.461 ms each at 300 GB/s,
  // 148 ms against 6·65e9·4096/(8·400e12) = 499 ms: 30 %.
  const Plan b = answer_key::plan(8, 8, 1, 1, 1, Recompute::selective, false, true);
  const TrainingTime tb = training_time(m, c, b, 400e12);
  CHECK(tb.tp_messages == 320);
  CHECK(tb.tp_message_bytes == 64 * mib);
  CHECK(tb.tp_collective.algorithm == Algorithm::ring);
  CHECK(printed_as(tb.tp_collective.seconds() * 1e3, 0.461, 0.001));
  CHECK(printed_as(tb.tp_seconds * 1e3, 148, 1));
  CHECK(printed_as(tb.dense_seconds * 1e3, 499, 1));
  CHECK(printed_as(100 * tb.tp_seconds / tb.dense_seconds, 30, 1));
  // TP across nodes (50 GB/s): 2.559 ms each, 819 ms, 164 % of compute.
  Plan across = b;
  across.placement = {Axis::dp, Axis::tp, Axis::cp, Axis::pp};
  const TrainingTime ta = training_time(m, c, across, 400e12);
  CHECK(printed_as(ta.tp_collective.seconds() * 1e3, 2.559, 0.001));
  CHECK(printed_as(ta.tp_seconds * 1e3, 819, 1));
  CHECK(printed_as(100 * ta.tp_seconds / ta.dense_seconds, 164, 1));
  // DP all-reduce of the tp-sharded gradient, 65e9/8 × 2 = 16.25e9 B over dp = 8 (ZeRO-0's
  // all-reduce; ZeRO-1 moves the same bytes as reduce-scatter + all-gather): 569 ms.
  Plan b0 = b;
  b0.zero = 0;
  const TrainingTime t0 = training_time(m, c, b0, 400e12);
  CHECK(t0.dp.gradient_bytes == Approx(16.25e9));
  CHECK_FALSE(t0.dp.inside_node);
  CHECK(printed_as(t0.dp.buffer.seconds() * 1e3, 569, 1));
}

TEST_CASE("Scenario C ledger and ring", "[answer-key][C]") {
  const Model m = answer_key::model_c();
  const Cluster c = key_cluster();
  const Training w = answer_key::training_2m();
  // 5·a·s/h = 5·32·131072/4096 = 5120.
  CHECK(5.0 * 32 * 131072 / 4096 == 5120);
  // No recompute: 131072·4096·(34 + 5120) = 2.767e12 B = 2577 GiB per layer; 82,464 GiB for 32;
  // 10,308 GiB with tp = 8 (and SP).
  const Plan one = answer_key::plan(1, 1, 1, 1, 0, Recompute::none, false, false);
  CHECK(layer_activation_bytes(m, one, Recompute::none) == Approx(2.767e12).epsilon(0.001));
  CHECK(printed_as(in_gib(layer_activation_bytes(m, one, Recompute::none)), 2577, 1));
  CHECK(printed_as(in_gib(training_ledger(m, c, w, one).activations_bytes), 82464, 1));
  const Plan tp8 = answer_key::plan(8, 8, 1, 1, 0, Recompute::none, false, true);
  CHECK(printed_as(in_gib(training_ledger(m, c, w, tp8).activations_bytes), 10308, 1));
  // The naive score matrix of one head: s² × 2 B = 34.4 GB.
  CHECK(printed_as(131072.0 * 131072.0 * 2 / 1e9, 34.4, 0.1));
  // Flash + selective: 34·s·b·h = 17.0 GiB per layer, 544 GiB for 32, 68 GiB with cp = 8;
  // ZeRO-2 over dp × cp = 64: 16.5 GiB; with reserve 94.5 GiB.
  const Plan cp8 = answer_key::plan(8, 1, 1, 8, 2, Recompute::selective, true, false, 1, 2);
  const Plan flash1 = answer_key::plan(64, 1, 1, 1, 2, Recompute::selective, true, false);
  CHECK(printed_as(in_gib(layer_activation_bytes(m, flash1, Recompute::selective)), 17.0, 0.1));
  CHECK(printed_as(in_gib(training_ledger(m, c, w, flash1).activations_bytes), 544, 1));
  const MemoryLedger l = training_ledger(m, c, w, cp8);
  CHECK(printed_as(in_gib(l.activations_bytes), 68, 1));
  CHECK(printed_as(in_gib(l.state_bytes()), 16.5, 0.1));
  CHECK(printed_as(in_gib(l.state_bytes() + l.activations_bytes + l.reserve_bytes), 94.5, 0.1));
  CHECK(l.fits());
  // Full recompute: 2·s·b·h·L = 32 GiB.
  CHECK(printed_as(in_gib(training_ledger(m, c, w, answer_key::plan(64, 1, 1, 1, 2,
                                              Recompute::full, true, false)).activations_bytes),
                   32, 1));
  // Ring K/V per step: 2·(s/cp)·h·2 = 268 MB; 0.9 ms at 300 GB/s. A ring of 8 ranks needs 7
  // steps: 6.3 ms (the key's "≈ 7 ms"); at 50 GB/s 7 × 5.38 = 37.7 ms, where the seed's
  // "≈ 43 ms" counts 8 transfers.
  const TrainingTime t = training_time(m, c, cp8, 400e12);
  CHECK(printed_as(t.cp_block_bytes / 1e6, 268, 1));
  CHECK(printed_as(t.cp_step.seconds() * 1e3, 0.9, 0.1));
  CHECK(7 * t.cp_step.seconds() * 1e3 == Approx(7).margin(1.0));
  CHECK(t.cp_exposed_seconds == 0);  // hidden behind attention at 128K
  // Across nodes at 50 GB/s: 268e6 / 50e9 + 15 µs = 5.38 ms per block; the seed's ≈ 43 ms is
  // 8 of them, a ring of 8 needs 7 (37.7 ms).
  const CollectiveCost across = collective_cost(Collective::point_to_point, Algorithm::direct, 2,
                                                t.cp_block_bytes, c.network_tier());
  CHECK(printed_as(8 * across.seconds() * 1e3, 43, 1));
  CHECK(printed_as(7 * across.seconds() * 1e3, 37.7, 0.1));
  // Threshold: at s = 8192, selective 34·s·b·h·L = 34 GiB, full 2·s·b·h·L = 2 GiB.
  Model m8 = m;
  m8.seq_len = 8192;
  CHECK(printed_as(in_gib(training_ledger(m8, c, w, flash1).activations_bytes), 34, 1));
  CHECK(printed_as(in_gib(training_ledger(m8, c, w, answer_key::plan(64, 1, 1, 1, 2,
                                               Recompute::full, true, false)).activations_bytes),
                   2, 1));
}

TEST_CASE("Scenario D serving", "[answer-key][D]") {
  const Model m = answer_key::model_d();
  const Cluster c = key_cluster();
  const Serving w = answer_key::serving_d();
  // Weights 175e9 × 2 = 350e9 B = 326.0 GiB > 192: one GPU cannot hold them.
  const Plan one = answer_key::plan(64, 1, 1, 1, 0, Recompute::none, false, false);
  const MemoryLedger l1 = serving_ledger(m, c, w, one);
  CHECK(l1.weights_bytes == Approx(350e9));
  CHECK(printed_as(in_gib(l1.weights_bytes), 326.0, 0.1));
  CHECK_FALSE(l1.fits());
  // One GPU's read at 5.3 TB/s: 350e9 / 5.3e12 = 66 ms per token, 2.6× the 25 ms SLO.
  CHECK(printed_as(l1.weights_bytes / 5.3e12 * 1e3, 66, 1));
  CHECK(printed_as(l1.weights_bytes / 5.3e12 / 25e-3, 2.6, 0.1));
  // tp = 8: 43.75e9 B per GPU, read in 8.3 ms at peak and 11.8 ms at 70 %. The key prints
  // 40.8 GiB from its rounded 326.0 / 8 = 40.75; unrounded it is 40.75 − 0.005 = 40.745.
  // A serving plan's micro-batch is the engine's batch (the loader and the search set it).
  const Plan d = answer_key::plan(8, 8, 1, 1, 0, Recompute::none, false, false, w.batch);
  const MemoryLedger l = serving_ledger(m, c, w, d);
  CHECK(l.weights_bytes == Approx(43.75e9));
  CHECK(in_gib(l.weights_bytes) == Approx(40.8).margin(0.06));
  CHECK(printed_as(l.weights_bytes / 5.3e12 * 1e3, 8.3, 0.1));
  const ServingTime served = serving_time(m, c, w, d, l, 400e12);
  const DecodeStep& t = served.decode;
  CHECK(printed_as(t.weight_read_seconds * 1e3, 11.8, 0.1));
  // Decode all-reduce b·h·2 = 8·12288·2 = 196,608 B on an 8-GPU ring at 300 GB/s, 5 µs:
  // 70.0 µs latency + 0.001 ms wire = 0.071 ms; 2 × 96 of them: 13.6 ms.
  CHECK(t.tp_message_bytes == 196608);
  CHECK(printed_as(t.tp_ring.latency_seconds * 1e6, 70.0, 0.1));
  CHECK(printed_as(t.tp_ring.wire_seconds * 1e3, 0.001, 0.001));
  CHECK(printed_as(t.tp_ring.seconds() * 1e3, 0.071, 0.001));
  CHECK(t.tp_messages == 192);
  // 192 × 0.071 ms = 13.6 ms as the seed multiplies the rounded figure; unrounded,
  // 192 × 71.15 µs = 13.66 ms.
  CHECK(printed_as(192 * 0.071, 13.6, 0.1));
  CHECK(192 * t.tp_ring.seconds() * 1e3 == Approx(13.66).margin(0.005));
  // The one-shot algorithm the planner picks: 5 µs + 7·196608/300e9 = 9.6 µs, 1.8 ms per
  // token — the key's "one-shot/tree ~2–4 ms" order of magnitude.
  CHECK(t.tp_collective.algorithm == Algorithm::one_shot);
  CHECK(t.tp_seconds * 1e3 == Approx(1.84).margin(0.01));
  // KV cache: 2·L·h·2 = 4.72 MB per token; 32,768 tokens → 154.6 GB; per rank 19.3 GB = 18.0 GiB.
  CHECK(printed_as(kv_cache_bytes_per_token(m, answer_key::plan(1, 1, 1, 1, 0, Recompute::none,
                                                                false, false)) / 1e6,
                   4.72, 0.01));
  CHECK(printed_as(l.kv_cache_bytes * 8 / 1e9, 154.6, 0.1));
  CHECK(printed_as(l.kv_cache_bytes / 1e9, 19.3, 0.1));
  CHECK(printed_as(in_gib(l.kv_cache_bytes), 18.0, 0.1));
  // Per GPU ≈ 59–60 GiB of 192: weights + KV cache = 58.7 GiB (without the 10 GiB reserve).
  const double used = in_gib(l.weights_bytes + l.kv_cache_bytes);
  CHECK(used == Approx(59.5).margin(1.0));
  // With the KV read (18.0 GiB at 70 %: 5.2 ms) the token takes 11.8 + 5.2 + 1.8 = 18.8 ms:
  // inside the 25 ms SLO by about 6 ms.
  CHECK(served.per_token_seconds * 1e3 == Approx(11.79 + 5.21 + 1.84).margin(0.05));
  CHECK(served.slo_margin_seconds > 0);
}

#include "planner/model/triage.hpp"

TEST_CASE("Seed 004 memory-ledger example", "[answer-key][004]") {
  // An 80 GB device; parameters 28, gradients 28, optimizer 56, activations 18 GB; largest
  // layer 6 GB: the replica is 130 GB, so DDP does not fit, model state must be sharded, no
  // tensor split is needed (6 < 80) and it is not a pipeline candidate (18 < 28).
  const Triage t = triage(28e9, 28e9, 56e9, 18e9, 6e9, 80e9);
  CHECK(t.replica_bytes == Approx(130e9));
  CHECK_FALSE(t.replica_fits);
  CHECK(t.shard_state);
  CHECK_FALSE(t.split_tensor);
  CHECK_FALSE(t.pipeline_candidate);
}

#include "planner/base/error.hpp"

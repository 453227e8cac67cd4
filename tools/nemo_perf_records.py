#!/usr/bin/env python3
"""Writes validation/ records for NVIDIA NeMo's published H100 FP8 pre-training tables:

- docs/source/performance/performance_summary.md, its last version (commit 8e3d65dc, "24.07 perf
  numbers", NeMo 24.07 container, DGX-H100): every pre-training row;
- docs/source/performance/performance_long_sequence.md (commit 19fadb67), table "LLAMA2-7B (FP8)
  - H100" (NeMo 24.03.01 container, DGX-H100): every row's run with context parallelism.

- Megatron-Bridge docs/performance-summary.md (NeMo 25.11, commit 5776a6d9) and
  docs/performance-summary-archive.md (NeMo 26.02, as first published at c0b9a000): the DGX-H100
  rows of the dense models (Llama 3 70B on 64, Llama 3.1 405B on 1,024; FP8 current scaling),
  with the recipe of scripts/performance and src/megatron/bridge/recipes at the same commit.
- the same summary's DGX-B200 multi-node dense rows (eight B200 per node): Llama 3.1 405B on 128
  in NeMo 25.11 (FP8 current scaling) and in NeMo 25.09 (as first published on the r0.1.0 branch,
  commit 68c25f59; the table prints no precision column). No revision of the summary has a
  DGX-H200 table, and the 26.02 DGX-B200 table has mixture-of-experts rows only.

Each row is typed below as the table prints it. The tables publish the parallel configuration
(TP, PP, CP, VP, micro and global batch) but not the rest of the recipe; what a record assumes
comes from NeMo-Framework-Launcher's training configuration of the same model at commit fee1762f
(2024-08-02, the configurations of the 24.07 release), cited per record. The long-sequence table
publishes model TFLOP/s per GPU only; tokens/s per GPU is that figure over NeMo's FLOPs per token
(nemo/utils/flops_formulas.py `llama2`, the full attention square: 12 s/h), the formula that
reproduces the summary table's own pairs of tokens/s and TFLOP/s to 0.1 % (checked below).
Usage: tools/nemo_perf_records.py [--dry-run]"""
import json, os, sys

NEMO = "https://github.com/NVIDIA/NeMo/blob"
SUMMARY_COMMIT = "8e3d65dcfe3504689bfc5b6e67d502780aacad41"
LONGSEQ_COMMIT = "19fadb67b09ba94c55094d34df119d6f9c565068"
LAUNCHER_COMMIT = "fee1762f"
LAUNCHER = ("NVIDIA/NeMo-Framework-Launcher @ fee1762f (2024-08-02), "
            "launcher_scripts/conf/training/{}.yaml")

MODELS = os.path.join(os.path.dirname(__file__), "..", "data", "models")


def preset(name, seq_len):
    """A shape from the planner's own model catalog (data/models/NAME.json, each citing its
    config.json), the sequence appended and the expert block last, as the records spell it."""
    with open(os.path.join(MODELS, name + ".json")) as f:
        model = dict(json.load(f)["model"])
    moe = model.pop("moe", None)
    model["seq_len"] = seq_len
    if moe:
        model["moe"] = moe
    return model


# name: (scenario model fields, launcher config, where the shape comes from, FLOPs family)
SHAPES = {
    "gpt3-5b": (dict(layers=24, hidden=4096, heads=32, ffn_hidden=16384, gated_mlp=False,
                     vocab=51200, tied_embeddings=True, seq_len=2048),
                "gpt3/5b", "GPT-3 5B shape of NeMo's config (24 layers, 4096, 32 heads, FFN 4 x "
                "hidden, hidden and attention dropout 0.1); vocabulary 51200 and tied embeddings "
                "as NeMo's FLOPs formula and Megatron's GPT counts them", "gpt3"),
    "gpt3-20b": (dict(layers=44, hidden=6144, heads=48, ffn_hidden=24576, gated_mlp=False,
                      vocab=51200, tied_embeddings=True, seq_len=2048),
                 "gpt3/20b", "GPT-3 20B shape of NeMo's config (44 layers, 6144, 48 heads, FFN "
                 "4 x hidden, dropout 0.1)", "gpt3"),
    "gpt3-175b": (dict(layers=96, hidden=12288, heads=96, ffn_hidden=49152, gated_mlp=False,
                       vocab=51200, tied_embeddings=True, seq_len=2048),
                  "gpt3/175b", "GPT-3 175B shape (Brown et al. 2020, Table 2.1; NeMo's config: "
                  "96 layers, 12288, 96 heads, dropout 0.1)", "gpt3"),
    "llama2-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008,
                       gated_mlp=True, vocab=32000, tied_embeddings=False, dropout=False,
                       seq_len=4096),
                  "llama/llama2_7b", "Llama-2-7B shape (Touvron et al. 2023, arXiv 2307.09288, "
                  "and NeMo's config: 32 layers, 4096, FFN 11008, 32 heads, vocabulary 32000, "
                  "dropout 0)", "llama2"),
    "llama2-13b": (dict(layers=40, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824,
                        gated_mlp=True, vocab=32000, tied_embeddings=False, dropout=False,
                        seq_len=4096),
                   "llama/llama2_13b", "Llama-2-13B shape (arXiv 2307.09288 and NeMo's config: 40 "
                   "layers, 5120, FFN 13824, 40 heads, vocabulary 32000, dropout 0)", "llama2"),
    "llama2-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        gated_mlp=True, vocab=32000, tied_embeddings=False, dropout=False,
                        seq_len=4096),
                   "llama/llama2_70b", "Llama-2-70B shape (arXiv 2307.09288 and NeMo's config: "
                   "80 layers, 8192, FFN 28672, 64 heads, 8 query groups, vocabulary 32000, "
                   "dropout 0)", "llama2"),
    "llama3-8b": (preset("llama-3.1-8b", 8192),
                  "llama/llama3_8b", "Llama-3-8B shape, the same as Llama 3.1 8B's (the planner's preset "
                  "data/models/llama-3.1-8b.json; Meta's config.json and NeMo's config: 32 "
                  "layers, 4096, FFN 14336, 32 heads, 8 query groups, vocabulary 128256, dropout "
                  "0)", "llama3"),
    "llama3-70b": (preset("llama-3.1-70b", 8192),
                   "llama/llama3_70b", "Llama-3-70B shape, the same as Llama 3.1 70B's (the planner's "
                   "preset data/models/llama-3.1-70b.json; Meta's config.json and NeMo's config: "
                   "80 layers, 8192, FFN 28672, 64 heads, 8 query groups, vocabulary 128256, "
                   "dropout 0)", "llama3"),
    "llama3.1-405b": (preset("llama-3.1-405b", 8192),
                      "llama/llama31_405b", "Llama 3.1 405B shape (arXiv 2407.21783 Table 3: 126 "
                      "layers, 16384, FFN 53248, 128 heads, 8 KV heads, vocabulary 128256, "
                      "dropout 0)", "llama3"),
    "qwen3-235b-a22b": (preset("qwen3-235b-a22b", 4096),
                        "qwen/qwen3_moe", "Qwen3-235B-A22B shape (the planner's preset, data/"
                        "models/qwen3-235b-a22b.json, from its config.json: 94 layers, 4096, 64 "
                        "heads, 4 KV heads of 128, 128 experts of 1536, top-8, every layer, "
                        "vocabulary 151936, dropout 0)", "qwen3"),
    "nemotron-8b": (dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=16384,
                         gated_mlp=False, vocab=256000, tied_embeddings=False, dropout=False,
                         seq_len=4096),
                    "nemotron/nemotron_8b", "Nemotron-8B shape of NeMo's config (32 layers, "
                    "4096, FFN 16384 with squared ReLU, ungated, 32 heads, no bias, dropout 0); "
                    "vocabulary 256000 (Nemotron-4's tokenizer, arXiv 2402.16819 §2)",
                    "nemotron"),
    "nemotron-22b": (dict(layers=40, hidden=6144, heads=48, kv_heads=48, ffn_hidden=24576,
                          gated_mlp=False, vocab=256000, tied_embeddings=False, dropout=False,
                          seq_len=4096),
                     "nemotron/nemotron_22b", "Nemotron-22B shape of NeMo's config (40 layers, "
                     "6144, FFN 24576 with squared ReLU, 48 heads, dropout 0); vocabulary 256000",
                     "nemotron"),
    "nemotron-340b": (dict(layers=96, hidden=18432, heads=96, kv_heads=8, ffn_hidden=73728,
                           gated_mlp=False, vocab=256000, tied_embeddings=False, dropout=False,
                           seq_len=4096),
                      "nemotron/nemotron_340b", "Nemotron-4 340B shape (arXiv 2406.11704 Table 1 "
                      "and NeMo's config: 96 layers, 18432, FFN 73728 with squared ReLU, 96 "
                      "heads, 8 query groups, vocabulary 256000, dropout 0)", "nemotron"),
}
LABEL = {"gpt3-5b": "GPT3-5B", "gpt3-20b": "GPT3-20B", "gpt3-175b": "GPT3-175B",
         "llama2-7b": "LLAMA2-7B", "llama2-13b": "LLAMA2-13B", "llama2-70b": "LLAMA2-70B",
         "llama3-8b": "LLAMA3-8B", "llama3-70b": "LLAMA3-70B", "nemotron-8b": "Nemotron-8B",
         "nemotron-22b": "Nemotron-22B", "nemotron-340b": "Nemotron-340B",
         "llama3.1-405b": "LLAMA3.1_405B", "qwen3-235b-a22b": "Qwen3_235B_a22B"}
NAME = {"gpt3-5b": "GPT-3 5B", "gpt3-20b": "GPT-3 20B", "gpt3-175b": "GPT-3 175B",
        "llama2-7b": "Llama 2 7B", "llama2-13b": "Llama 2 13B", "llama2-70b": "Llama 2 70B",
        "llama3-8b": "Llama 3 8B", "llama3-70b": "Llama 3 70B", "nemotron-8b": "Nemotron 8B",
        "nemotron-22b": "Nemotron 22B", "nemotron-340b": "Nemotron-4 340B",
        "llama3.1-405b": "Llama 3.1 405B", "qwen3-235b-a22b": "Qwen3-235B-A22B"}

# What each launcher configuration sets that the tables do not print (read at fee1762f):
# selective recompute for Nemotron-340B only; every other config activations_checkpoint_
# granularity null; sequence parallelism and ub_tp_comm_overlap with tp > 1 except GPT-3 175B
# (ub_tp_comm_overlap False in its bf16 config); overlap_p2p_comm with interleaving.
RECOMPUTE = {"nemotron-340b": "selective"}
NO_TP_OVERLAP = {"gpt3-175b", "nemotron-340b"}

# Summary table rows: (model, GPUs, GBS, MBS, seq, TP, PP, CP, VP, tokens/s/GPU, TFLOP/s/GPU)
SUMMARY = [
    ("gpt3-5b", 64, 2048, 4, 2048, 1, 1, 1, 1, 23406, 765),
    ("gpt3-20b", 64, 256, 2, 2048, 2, 1, 1, 1, 5851, 750),
    ("gpt3-175b", 128, 256, 1, 2048, 4, 8, 1, 6, 716, 771),
    ("gpt3-175b", 512, 2048, 2, 2048, 4, 8, 1, 6, 825, 888),
    ("llama2-7b", 8, 128, 1, 4096, 1, 1, 1, 1, 16934, 780),
    ("llama2-13b", 16, 128, 1, 4096, 1, 4, 1, 10, 8715, 760),
    ("llama2-70b", 64, 128, 1, 4096, 4, 4, 1, 20, 1728, 768),
    ("nemotron-8b", 64, 256, 4, 4096, 2, 1, 1, 1, 12507, 643),
    ("nemotron-22b", 64, 256, 2, 4096, 2, 4, 1, 10, 4312, 562),
    ("nemotron-340b", 128, 32, 1, 4096, 8, 8, 1, 12, 326, 686),
    ("llama3-8b", 8, 128, 1, 8192, 1, 1, 2, 1, 12273, 711),
    ("llama3-70b", 64, 128, 1, 8192, 4, 4, 2, 5, 1524, 734),
]

# Long-sequence table, LLAMA2-7B (FP8) - H100, the "With CP" columns:
# (sequence in K tokens, GPUs, batch, TP, PP, DP, CP, TFLOP/s per GPU)
LONGSEQ = [
    (4, 4, 1024, 1, 1, 4, 1, 768),
    (8, 8, 512, 1, 2, 4, 1, 730),
    (16, 16, 256, 2, 1, 8, 1, 660),
    (32, 32, 128, 2, 1, 8, 2, 610),
    (64, 64, 64, 4, 1, 8, 2, 574),
    (128, 128, 32, 4, 1, 8, 4, 555),
    (256, 256, 16, 4, 1, 8, 8, 549),
    (512, 512, 8, 8, 1, 4, 16, 549),
    (1024, 1024, 4, 8, 1, 4, 32, 536),
]


MBRIDGE = "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob"
# Megatron-Bridge DGX-H100 dense rows: (container, commit, file, model, GPUs, GBS, MBS, seq, TP,
# PP, CP, VP, tokens/s/GPU, TFLOP/s/GPU). The 26.02 table calls the precision "FP8"; its recipe
# (LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V2, LLAMA31_405B_..._H100_FP8_CS_V2) is current scaling.
MBRIDGE_ROWS = [
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "docs/performance-summary.md", "llama3-70b", 64, 128, 1, 8192, 4, 8,
     1, 5, 1602, 719),
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "docs/performance-summary.md", "llama3.1-405b", 1024, 512, 1, 8192,
     8, 8, 2, 8, 292, 737),
    ("26.02", "c0b9a00031b79b731ccefb56d0aba9629b4dd01b", "docs/performance-summary.md", "llama3-70b", 64, 256, 1, 8192, 4, 8,
     1, 5, 1621, 728),
    ("26.02", "c0b9a00031b79b731ccefb56d0aba9629b4dd01b", "docs/performance-summary.md", "llama3.1-405b", 1024, 1536, 1, 8192,
     8, 8, 2, 8, 311, 784),
]
# Megatron-Bridge DGX-H100 mixture-of-experts rows: as above plus EP and the token dispatcher of
# the recipe at that commit (QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS: ETP 1,
# moe_a2a_overlap true; 26.02's base config adds moe_flex_dispatcher_backend "deepep").
# Qwen3-30B-A3B's rows are left out: the 25.11 table prints VP 24 and MBS 2 where the recipe at
# that commit sets VP 12 and MBS 1, and 26.02's prints PP 2, EP 8 where the recipe sets no
# pipeline and EP 16; which ran is not known.
MBRIDGE_MOE_ROWS = [
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "qwen3-235b-a22b", 256, 2048, 1, 4096,
     2, 8, 1, 4, 32, 1575, 233, "alltoall"),
    ("26.02", "c0b9a00031b79b731ccefb56d0aba9629b4dd01b", "qwen3-235b-a22b", 256, 8192, 1, 4096,
     2, 8, 1, 4, 32, 1633, 242, "deepep"),
]


def flops_per_token(model, family):
    """NeMo's model FLOPs per token (nemo/utils/flops_formulas.py, first version a3098713b /
    f0bf77bc, January 2025): forward and backward of every GEMM, the full s x s attention square
    (12 s/h, no causal halving), the output layer."""
    L, h, s, V = model["layers"], model["hidden"], model["seq_len"], model["vocab"]
    f, heads = model["ffn_hidden"], model["heads"]
    groups = model.get("kv_heads", heads)
    if family == "gpt3":  # 72 L h^2 (1 + s/6h + V/12hL) per token (Megatron's GPT formula)
        return 72 * L * h * h * (1 + s / (6 * h) + V / (12 * h * L))
    mlp = 18 if model["gated_mlp"] else 12
    return L * h * h * (12 + 12 * groups / heads + mlp * f / h + 12 * s / h + 6 * V / (L * h))


def check_convention():
    """The summary table prints both tokens/s and TFLOP/s: the formula must join them."""
    for (m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, tflops) in SUMMARY:
        model = dict(SHAPES[m][0], seq_len=seq)
        ratio = tflops * 1e12 / (tps * flops_per_token(model, SHAPES[m][3]))
        if abs(ratio - 1) > 0.01:
            sys.exit(f"{m} on {gpus}: NeMo's FLOPs formula joins the row's figures only to "
                     f"{ratio:.4f}; the convention assumed for the long-sequence table fails")


def cluster(gpus, gpu="H100-SXM"):
    per_node = min(gpus, 8)
    return {"nodes": gpus // per_node, "gpus_per_node": per_node,
            "gpu": {"catalog": gpu},
            "intra_node": {"latency": "5 us"}, "inter_node": {"latency": "10 us"}}


def plan(m, gpus, gbs, mbs, tp, pp, cp, vp):
    dp = gpus // (tp * pp * cp)
    out = {"dp": dp, "tp": tp, "pp": pp, "cp": cp, "zero": 1,
           "recompute": RECOMPUTE.get(m, "none"), "flash_attention": True,
           "sequence_parallel": tp > 1, "micro_batch": mbs, "grad_accum": gbs // (dp * mbs)}
    if tp > 1 and m not in NO_TP_OVERLAP:
        out["tp_comm_overlap"] = True
    if pp > 1 and vp > 1:
        out["pp_comm_overlap"] = True
    return out


PRECISION = ("fp8 (NeMo {}, Transformer Engine; modelled as model.precision.compute fp8: the "
             "catalog's FP8 peak at the bf16 efficiency times the fitted tensorwise FP8 ratio, "
             "data/gpus.json fp8_efficiency_ratio): the table's heading 'pre-training "
             "performance ... at FP8 precision'; delayed scaling as NeMo's configs set it "
             "(fp8_hybrid, amax history and margin)")

COMMON_NOTES = [
    "tier latencies 5 us (scale-up) and 10 us (scale-out) are not published; assumed, as in "
    "scenarios/*.json",
    "assumed (not in the table; NeMo's defaults and the launcher configuration named in "
    "source.secondary): distributed optimizer (zero 1, distributed_fused_adam), flash "
    "attention (use_flash_attention true), sequence parallelism when tp > 1",
]


def record(rid, name, family, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, source, version,
           notes, gpu="H100-SXM"):
    model = dict(SHAPES[m][0], seq_len=seq, precision={"compute": "fp8"})
    p = plan(m, gpus, gbs, mbs, tp, pp, cp, vp)
    step = gbs * seq / (tps * gpus)
    extra = list(notes)
    extra.append(SHAPES[m][2])
    if p["recompute"] != "none":
        extra.append(f"activation recompute {p['recompute']} (activations_checkpoint_"
                     f"granularity in the launcher configuration); the others set none")
    if p.get("tp_comm_overlap"):
        extra.append("tensor-parallel communication overlap (ub_tp_comm_overlap true in the "
                     "launcher configuration); modelled as plan.tp_comm_overlap")
    elif tp > 1:
        extra.append("no tensor-parallel communication overlap (ub_tp_comm_overlap false in "
                     "the launcher configuration)")
    if p.get("pp_comm_overlap"):
        extra.append("stage-boundary sends overlapped with compute (overlap_p2p_comm with "
                     "interleaving); modelled as plan.pp_comm_overlap")
    not_modelled = {"precision": PRECISION.format(version),
                    "vboost": "the summary's last revision ('24.07 perf numbers', after '24.07 "
                              "vboost numbers') may run with nvidia-smi's vboost power shift "
                              "to the SMs; the catalog's clocks are the datasheet's"}
    if vp > 1:
        not_modelled["vpp"] = vp
    not_modelled["attention_kernel"] = (
        f"cuDNN fused attention of the NeMo {version} container (Transformer Engine v1.4 on: "
        "'Select FusedAttention on sm90 ... for performance', transformer_engine/pytorch/"
        "attention.py); the planner's cudnn curve (data/gpus.json attention_rate) is measured "
        "with cuDNN 9.19 of 2026, an older kernel's rate is not known")
    return {
        "id": rid, "set": "validation", "family": family,
        "source": source,
        "name": name,
        "model": model, "cluster": cluster(gpus, gpu),
        "workload": {"kind": "training", "global_batch_tokens": gbs * seq,
                     "micro_batch": mbs, "bytes_per_param": 16},
        "plan": p,
        "measured": {"step_time": f"{step:.4g} s", "tokens_per_second_per_gpu": tps,
                     "derivation": source.pop("derivation")},
        "not_modelled": not_modelled,
        "notes": COMMON_NOTES + extra,
    }


def summary_records():
    url = f"{NEMO}/{SUMMARY_COMMIT}/docs/source/performance/performance_summary.md"
    for (m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, tflops) in SUMMARY:
        rid = f"nemo2407-{m}-fp8-{gpus}gpu"
        source = {
            "citation": "NVIDIA NeMo, docs/source/performance/performance_summary.md (NeMo "
                        "24.07 container, DGX-H100, pre-training at FP8)",
            "url": url,
            "location": f"table 'Pretraining', row {LABEL[m]} on {gpus} GPUs: GBS {gbs}, MBS "
                        f"{mbs}, sequence {seq}, TP {tp}, PP {pp}, CP {cp}, VP {vp}: {tps} "
                        f"tokens/s/GPU ({tflops} model TFLOP/s/GPU)",
            "secondary": [LAUNCHER.format(SHAPES[m][1]) + ": the recipe settings the table "
                          "does not print"],
            "derivation": "the table's tokens / sec / GPU; step time = GBS x sequence / "
                          "(tokens/s/GPU x GPUs)",
        }
        yield record(rid, f"{NAME[m]} pre-training on {gpus} H100 (NeMo 24.07, FP8)",
                     f"nemo2407-{m}-fp8", m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, source,
                     "24.07", [])


def longseq_records():
    url = f"{NEMO}/{LONGSEQ_COMMIT}/docs/source/performance/performance_long_sequence.md"
    for (k, gpus, gbs, tp, pp, dp, cp, tflops) in LONGSEQ:
        seq = 1024 * k
        model = dict(SHAPES["llama2-7b"][0], seq_len=seq)
        tps = round(tflops * 1e12 / flops_per_token(model, "llama2"), 2)
        rid = f"nemo2403-llama2-7b-fp8-seq{k}k-cp{cp}-{gpus}gpu"
        source = {
            "citation": "NVIDIA NeMo, docs/source/performance/performance_long_sequence.md "
                        "(NeMo 24.03.01 container, DGX-H100)",
            "url": url,
            "location": f"table 'LLAMA2-7B (FP8) - H100', row SeqLen {k}K, {gpus} GPUs, batch "
                        f"size {gbs}, with CP: TP {tp}, PP {pp}, DP {dp}, CP {cp}, {tflops:,} "
                        f"TFLOPS / GPU",
            "secondary": [LAUNCHER.format("gpt3/40b_64k") + " (NeMo's long-context "
                          "configuration: micro-batch 1, no activation recompute, sequence "
                          "parallelism and ub_tp_comm_overlap with tp, overlap_p2p_comm) and "
                          + LAUNCHER.format("llama/llama2_7b")],
            "derivation": f"{tflops} TFLOP/s per GPU / NeMo's {flops_per_token(model, 'llama2'):.4g} "
                          f"model FLOPs per token at sequence {seq} (nemo/utils/flops_formulas.py "
                          "llama2: 12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h), times L h^2; the "
                          "full attention square); the same formula joins the summary table's "
                          "tokens/s and TFLOP/s columns to 0.1 %",
        }
        yield record(rid, f"Llama 2 7B pre-training at a {k}K-token sequence on {gpus} H100 "
                          f"(NeMo 24.03, FP8, context parallel {cp})",
                     "nemo2403-llama2-7b-fp8-longseq", "llama2-7b", gpus, gbs, 1, seq, tp, pp,
                     cp, 1, tps, source, "24.03.01",
                     ["micro-batch 1 (the table's batch size is the global batch in sequences; "
                      "one sequence per micro-batch at these lengths)",
                      "the table's 'Without CP' column is a different, unpublished "
                      "configuration: not recorded"])


def mbridge_record(ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, location,
                   secondary, recipe_note, precision_note, attention_note, system="DGX-H100",
                   gpu="H100-SXM", tag="fp8cs", flavour="FP8 current scaling"):
    """One Megatron-Bridge row (DGX-H100 unless system says otherwise): the source, the record,
    the notes every kind shares."""
    path = "docs/performance-summary.md"
    short = system.replace("DGX-", "")
    source = {
        "citation": f"NVIDIA NeMo Megatron-Bridge, {path} ({ver} NeMo container, {system})",
        "url": f"{MBRIDGE}/{commit}/{path}",
        "location": location,
        "secondary": [f"NVIDIA-NeMo/Megatron-Bridge @ {commit[:9]}, {secondary}"],
        "derivation": "the table's tokens / sec / GPU; step time = GBS x sequence / "
                      "(tokens/s/GPU x GPUs)",
    }
    where = "" if system == "DGX-H100" else f"-{short.lower()}"
    rec = record(f"mbridge{ver.replace('.', '')}-{m}-{tag}{where}-{gpus}gpu",
                 f"{NAME[m]} pre-training on {gpus} {short} (Megatron-Bridge, NeMo {ver}, "
                 f"{flavour})",
                 f"mbridge-{m}-{tag}{where}", m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, source,
                 ver, [], gpu)
    rec["plan"]["pp_comm_overlap"] = True
    rec["not_modelled"]["precision"] = precision_note
    rec["not_modelled"].pop("vboost", None)
    rec["not_modelled"]["attention_kernel"] = attention_note
    rec["notes"] = [n for n in rec["notes"] if "launcher configuration" not in n
                    and "source.secondary" not in n]
    rec["notes"].insert(1, "recipe settings from the Megatron-Bridge commit in "
                           "source.secondary; " + recipe_note)
    return rec


def mbridge_records():
    for (ver, commit, path, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, tflops) in MBRIDGE_ROWS:
        recipe = ("scripts/performance/configs/llama/llama3_llm_pretrain.py "
                  "llama3_70b_pretrain_config_h100 and src/megatron/bridge/recipes/llama/llama3.py "
                  "llama3_70b_pretrain_config" if m == "llama3-70b" else
                  "scripts/performance/configs/llama/llama31_llm_pretrain.py "
                  "llama31_405b_pretrain_config_h100 and src/megatron/bridge/recipes/llama/"
                  "llama3.py llama31_405b_pretrain_config (account_for_embedding_in_pipeline_split "
                  "and account_for_loss_in_pipeline_split true)")
        rec = mbridge_record(
            ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps,
            f"{ver} NeMo Container, Pre-Training Performance, System: DGX-H100, row {LABEL[m]}: "
            f"{gpus} GPUs, FP8(-CS), GBS {gbs}, MBS {mbs}, sequence {seq}, FSDP 0, TP {tp}, PP "
            f"{pp}, CP {cp}, VP {vp}: {tps} tokens/s/GPU ({tflops} model TFLOP/s/GPU)",
            f"{recipe}: tp_comm_overlap with the H100 userbuffers configuration, distributed "
            "optimizer with overlapped gradient reduce and parameter gather, grad_reduce_in_fp32 "
            "false (set_llama3_common_configs), no recompute, sequence parallel with tp, TE "
            "cross-entropy fusion",
            "tp overlap and overlapped interleaved sends as Megatron-LM's defaults under that "
            "recipe",
            f"fp8 current scaling (Megatron-Bridge {ver}, Transformer Engine Float8CurrentScaling: "
            "one scale per tensor, computed from the tensor being cast; modelled as "
            "model.precision.compute fp8 with the tensor-wise recipe, data/gpus.json "
            "fp8_efficiency_ratio, fitted to delayed-scaling pairs)",
            "cuDNN fused attention of the container (Transformer Engine on Hopper); the planner's "
            "cudnn curve is cuDNN 9.19's")
        rec["plan"]["tp_comm_overlap"] = True
        if m == "llama3.1-405b":
            rec["plan"]["tables_in_pipeline_split"] = True
        yield rec


def mbridge_moe_records():
    for (ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, ep, tps, tflops,
         dispatcher) in MBRIDGE_MOE_ROWS:
        rec = mbridge_record(
            ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps,
            f"{ver} NeMo Container, Pre-Training Performance, DGX-H100, row {LABEL[m]}: {gpus} "
            f"GPUs, FP8(-CS), GBS {gbs}, MBS {mbs}, sequence {seq}, FSDP 0, TP {tp}, PP {pp}, CP "
            f"{cp}, VP {vp}, EP {ep}: {tps} tokens/s/GPU ({tflops} model TFLOP/s/GPU); 'we "
            "force-balance the token distribution among experts and all benchmarks are "
            "token-dropless'",
            "scripts/performance/configs/qwen/qwen3_llm_pretrain.py "
            "qwen3_235b_a22b_pretrain_config_h100 (CommOverlapConfig(tp_comm_overlap=False); "
            "set_qwen3_common_configs: no recompute, moe_router_force_load_balancing, "
            "grad_reduce_in_fp32 false), qwen3_workload_base_configs.py (ETP 1, moe_a2a_overlap "
            "true: overlap_moe_expert_parallel_comm and delay_wgrad_compute, utils/overrides.py) "
            "and src/megatron/bridge/recipes/qwen/qwen3_moe.py (account_for_embedding_in_"
            "pipeline_split and account_for_loss_in_pipeline_split true)",
            "no tp overlap (the recipe turns it off); the expert all-to-alls overlapped with "
            "another micro-batch's compute (moe_a2a_overlap), modelled as "
            "model.moe.overlap_all_to_all; balanced routing as forced (model.moe.imbalance 1)",
            f"fp8 current scaling (Megatron-Bridge {ver}, Transformer Engine Float8CurrentScaling; "
            "modelled as model.precision.compute fp8 with the tensor-wise recipe)",
            "cuDNN fused attention of the container; the planner's cudnn curve is cuDNN 9.19's")
        rec["plan"]["ep"] = ep
        rec["plan"]["etp"] = 1
        rec["plan"]["tables_in_pipeline_split"] = True
        rec["plan"].pop("tp_comm_overlap", None)
        rec["model"]["moe"] = dict(rec["model"]["moe"], overlap_all_to_all=True)
        rec["not_modelled"]["moe_dispatcher"] = (
            f"{dispatcher} token dispatcher"
            + (" (DeepEP's kernels, moe_flex_dispatcher_backend)" if dispatcher == "deepep" else
               " (Megatron-LM's default)") + "; the planner times the dispatch and combine as "
            "all-to-alls at the tier's bandwidth")
        yield rec


# Megatron-Bridge DGX-B200 multi-node dense rows (8 B200 per node): (container, commit of the
# table and of the recipe, precision tag, model, GPUs, GBS, MBS, seq, TP, PP, CP, VP, tokens/s/GPU,
# TFLOP/s/GPU). The tables' parenthesised MXFP8 figures (25.11: 624; 25.09: 622) are left out:
# the planner has no MX (32-element block, E8M0 scale) recipe, and the same plan at
# compute fp8 would predict the same step as the per-tensor row beside it.
R0_1_0 = "68c25f591e1323d4dd6da869b0d5308bad99e337"
MBRIDGE_B200_ROWS = [
    ("25.09", R0_1_0, "fp8", "llama3.1-405b", 128, 64, 1, 8192, 4, 8, 2, 8, 664, 1676),
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "fp8cs", "llama3.1-405b", 128, 64, 1,
     8192, 4, 8, 2, 8, 661, 1667),
]


def mbridge_b200_records():
    for (ver, commit, tag, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps,
         tflops) in MBRIDGE_B200_ROWS:
        if ver == "25.09":
            location = (
                f"25.09 NeMo Container, Pre-Training Performance, System: DGX-B200, row "
                f"{LABEL[m]}: {gpus} GPUs, GBS {gbs}, MBS {mbs}, sequence {seq}, FSDP 0, TP {tp}, "
                f"PP {pp}, CP {cp}, VP {vp}, EP 1, GA 32: {tps} (622) tokens/s/GPU ({tflops} "
                "(1569) model TFLOP/s/GPU); 'The numbers in parentheses indicate the use of "
                "different quantization granularities: In case of Gb200 and B200 systems, 32x32 "
                "for both weights and activations'")
            secondary = (
                "scripts/performance/configs/llama31/llama31_405b_llm_pretrain.yaml (perf_matrix "
                "b200 num_gpus_128: 8 GPUs per node, TP 4, PP 8, CP 2, VP 8, MBS 1, GBS 64, no "
                "CUDA graphs, no FSDP; recipes bf16, fp8_ds, fp8_cs, fp8_mx; grad_reduce_in_fp32 "
                "false, TE cross-entropy fusion), scripts/performance/utils/helpers.py "
                "(userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192) and src/megatron/bridge/"
                "recipes/llama/llama31_405b.py (tp_comm_overlap, distributed optimizer with "
                "overlapped gradient reduce and parameter gather, sequence parallel, "
                "account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split "
                "true, no recompute)")
            precision = (
                "fp8, per-tensor scaling (Megatron-Bridge 25.09): the table prints no precision; "
                "its footnote names the parenthesised figures as the 32x32 block-scaled ones, so "
                "the plain figure is assumed a per-tensor recipe, delayed (the scripts' default "
                "fp8_recipe ds) or current scaling (the 25.11 table labels the same plan FP8-CS), "
                "both modelled as model.precision.compute fp8 with the tensor-wise recipe, "
                "data/gpus.json fp8_efficiency_ratio, fitted on Hopper")
            extra = ["assumed: the unparenthesised figure is per-tensor FP8 (delayed or current "
                     "scaling); the 25.09 table states no precision"]
            flavour = "FP8"
        else:
            location = (
                f"{ver} NeMo Container, Pre-Training Performance, System: DGX-B200, row "
                f"{LABEL[m]}: {gpus} GPUs, FP8-CS (FP8-MX), GBS {gbs}, MBS {mbs}, sequence {seq}, "
                f"FSDP 0, TP {tp}, PP {pp}, CP {cp}, VP {vp}, EP 1, GA 32: {tps} (624) "
                f"tokens/s/GPU ({tflops} (1576) model TFLOP/s/GPU); the FP8-CS figure")
            secondary = (
                "scripts/performance/configs/llama/llama31_llm_pretrain.py "
                "llama31_405b_pretrain_config_b200 (LLAMA31_405B_PRETRAIN_CONFIG_B200_FP8_CS_BASE_"
                "CONFIG in llama31_workload_base_configs.py: TP 4, PP 8, CP 2, VP 8, GBS 64; "
                "tp_comm_overlap with userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192; "
                "grad_reduce_in_fp32 false, set_llama31_common_configs) and src/megatron/bridge/"
                "recipes/llama/llama3.py llama31_405b_pretrain_config (distributed optimizer with "
                "overlapped gradient reduce and parameter gather, sequence parallel, no "
                "recompute, account_for_embedding_in_pipeline_split and "
                "account_for_loss_in_pipeline_split true)")
            precision = (
                f"fp8 current scaling (Megatron-Bridge {ver}, Transformer Engine "
                "Float8CurrentScaling: one scale per tensor, computed from the tensor being "
                "cast; modelled as model.precision.compute fp8 with the tensor-wise recipe, "
                "data/gpus.json fp8_efficiency_ratio, fitted to delayed-scaling pairs on Hopper)")
            extra = []
            flavour = "FP8 current scaling"
        rec = mbridge_record(
            ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, location, secondary,
            "tp overlap and overlapped interleaved sends as Megatron-LM's defaults under that "
            "recipe",
            precision,
            "cuDNN fused attention of the container (Transformer Engine on Blackwell); the "
            "planner's cudnn curve is cuDNN 9.19's",
            system="DGX-B200", gpu="B200", tag=tag, flavour=flavour)
        rec["plan"]["tp_comm_overlap"] = True
        rec["plan"]["tables_in_pipeline_split"] = True
        rec["notes"].insert(2, "DGX B200: eight B200 per node on NVLink 5 / NVSwitch, nodes "
                               "joined by eight 400 Gb/s ConnectX-7 each; the bandwidths are the "
                               "catalog's (data/gpus.json B200 scale_up and scale_out, reference "
                               "system DGX B200), the fabric of NVIDIA's benchmark cluster is not "
                               "published")
        rec["notes"][2:2] = extra
        yield rec


def main():
    check_convention()
    dry = "--dry-run" in sys.argv
    root = os.path.join(os.path.dirname(__file__), "..", "validation")
    for rec in list(summary_records()) + list(longseq_records()) + list(mbridge_records()) + \
            list(mbridge_moe_records()) + list(mbridge_b200_records()):
        path = os.path.join(root, rec["id"] + ".json")
        if dry:
            print(path, rec["measured"]["tokens_per_second_per_gpu"], rec["plan"])
            continue
        with open(path, "w") as f:
            json.dump(rec, f, indent=1)
            f.write("\n")
        print("wrote", path)


if __name__ == "__main__":
    main()

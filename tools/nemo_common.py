"""What tools/nemo_perf_records.py's tables share: the models' shapes and names, the launcher
configuration's settings the tables do not print, and one record's scenario, assumptions and
notes from a table row (its sources are in that file's docstring)."""
import json, os

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

#!/usr/bin/env python3
"""Writes validation/ records for MosaicML llm-foundry's multi-node FSDP runs on H100 80GB and
A100 80GB (scripts/train/benchmarking/README.md), from the rows typed below as published.

    python3 tools/llm_foundry_records.py            # writes validation/llm-foundry-*.json
    python3 tools/llm_foundry_records.py --check    # exits 1 if a written record differs

Every row of the README's 'H100 80GB BF16 (Large Scale, >= 128 GPUs)' table, the rows of its
'H100 80GB BF16' table on more than one node, and the multi-node rows of 'A100 80GB with 1600
Gbps node-node interconnect (RoCE)'. Single-node rows are left out: under calibration rule v2
they would be calibration and refit the GPUs' rates. The shapes are the MPT yamls of the same
commit (scripts/train/yamls/pretrain/mpt-*.yaml); the table's NumParams column is checked
against them before anything is written (L(12h^2 + 13h) + V·h + seq·h + 2h: biases on, learned
positions, tied embeddings).
"""
import argparse
import sys

from record_files import write_or_check

COMMIT = "5e85bd62d4ec9e13353ca95877477602ab538e5b"
README = (f"https://github.com/mosaicml/llm-foundry/blob/{COMMIT}/"
          "scripts/train/benchmarking/README.md")
A100_COMMIT = "300cc5c58"  # the A100 80GB rows are unchanged since the repository's first commits

# MPT yamls at COMMIT: d_model, n_heads, n_layers (expansion_ratio 4, vocab 50368).
SHAPES = {
    "760m": (1536, 12, 24),
    "1b": (2048, 16, 24),
    "3b": (2560, 20, 32),
    "7b": (4096, 32, 32),
    "13b": (5120, 40, 40),
    "30b": (7168, 56, 48),
    "70b": (8192, 64, 80),
}
VOCAB = 50368

H100_LARGE = "H100 80GB BF16 (Large Scale, >= 128 GPUs)"
H100 = "H100 80GB BF16"
A100 = "A100 80GB with 1600 Gbps node-node interconnect (RoCE)"

# (table, model, seq, gpus, micro_batch, grad_accum, global_batch_seqs, tokens/s/GPU,
#  global_batch_tokens, MP mode, sharding, activation checkpointing, NumParams), as printed.
ROWS = [
    (H100_LARGE, "70b", 2048, 512, 8, 1, 4096, 1007, 8388608, "DEFAULT", "FULL_SHARD", True, 64862437376),
    (H100_LARGE, "70b", 2048, 256, 8, 1, 2048, 1035, 4194304, "DEFAULT", "FULL_SHARD", True, 64862437376),
    (H100_LARGE, "70b", 2048, 128, 8, 1, 1024, 1058, 2097152, "DEFAULT", "FULL_SHARD", True, 64862437376),
    (H100_LARGE, "30b", 2048, 512, 8, 1, 4096, 2115, 8388608, "DEFAULT", "FULL_SHARD", True, 29975214080),
    (H100_LARGE, "30b", 2048, 256, 8, 1, 2048, 2148, 4194304, "DEFAULT", "FULL_SHARD", True, 29975214080),
    (H100_LARGE, "30b", 2048, 128, 8, 1, 1024, 2199, 2097152, "DEFAULT", "FULL_SHARD", True, 29975214080),
    (H100_LARGE, "13b", 2048, 512, 16, 1, 8192, 4952, 16777216, "DEFAULT", "FULL_SHARD", True, 12853954560),
    (H100_LARGE, "13b", 2048, 256, 16, 1, 4096, 4989, 8388608, "DEFAULT", "FULL_SHARD", True, 12853954560),
    (H100_LARGE, "13b", 2048, 128, 16, 1, 2048, 5080, 4194304, "DEFAULT", "FULL_SHARD", True, 12853954560),
    (H100_LARGE, "7b", 2048, 512, 6, 1, 3072, 9670, 6291456, "DEFAULT", "FULL_SHARD", False, 6658859008),
    (H100_LARGE, "7b", 2048, 256, 6, 1, 1536, 10119, 3145728, "DEFAULT", "FULL_SHARD", False, 6658859008),
    (H100_LARGE, "7b", 2048, 128, 6, 1, 768, 10475, 1572864, "DEFAULT", "FULL_SHARD", False, 6658859008),
    (H100_LARGE, "3b", 2048, 512, 8, 1, 4096, 21664, 8388608, "DEFAULT", "SHARD_GRAD_OP", False, 2651837440),
    (H100_LARGE, "3b", 2048, 256, 8, 1, 2048, 22772, 4194304, "DEFAULT", "SHARD_GRAD_OP", False, 2651837440),
    (H100_LARGE, "3b", 2048, 128, 8, 1, 1024, 23422, 2097152, "DEFAULT", "SHARD_GRAD_OP", False, 2651837440),
    (H100_LARGE, "1b", 2048, 512, 12, 1, 6144, 39837, 12582912, "DEFAULT", "SHARD_GRAD_OP", False, 1315950592),
    (H100_LARGE, "1b", 2048, 256, 12, 1, 3072, 42555, 6291456, "DEFAULT", "SHARD_GRAD_OP", False, 1315950592),
    (H100_LARGE, "1b", 2048, 128, 12, 1, 1536, 44123, 3145728, "DEFAULT", "SHARD_GRAD_OP", False, 1315950592),
    (H100, "70b", 2048, 64, 8, 4, 2048, 1039, 4194304, "DEFAULT", "FULL_SHARD", True, 64862437376),
    (H100, "70b", 2048, 32, 2, 16, 1024, 882, 2097152, "DEFAULT", "FULL_SHARD", True, 64862437376),
    (H100, "30b", 2048, 32, 14, 3, 1344, 2308, 2752512, "DEFAULT", "FULL_SHARD", True, 29975214080),
    (H100, "30b", 2048, 16, 10, 3, 480, 2263, 983040, "DEFAULT", "FULL_SHARD", True, 29975214080),
    (H100, "13b", 2048, 64, 2, 1, 128, 4800, 262144, "DEFAULT", "FULL_SHARD", False, 12853954560),
    (H100, "13b", 2048, 32, 2, 1, 64, 4811, 131072, "DEFAULT", "FULL_SHARD", False, 12853954560),
    (H100, "13b", 2048, 16, 2, 1, 32, 4767, 65536, "DEFAULT", "FULL_SHARD", False, 12853954560),
    (H100, "3b", 2048, 64, 6, 3, 1152, 22525, 2359296, "DEFAULT", "FULL_SHARD", False, 2651837440),
    (H100, "3b", 2048, 32, 6, 3, 576, 23021, 1179648, "DEFAULT", "FULL_SHARD", False, 2651837440),
    (H100, "3b", 2048, 16, 10, 3, 480, 24142, 983040, "DEFAULT", "FULL_SHARD", False, 2651837440),
    (H100, "1b", 2048, 64, 20, 1, 1280, 44402, 2621440, "DEFAULT", "FULL_SHARD", False, 1315950592),
    (H100, "1b", 2048, 32, 20, 1, 640, 45130, 1310720, "DEFAULT", "FULL_SHARD", False, 1315950592),
    (H100, "1b", 2048, 16, 20, 1, 320, 46037, 655360, "DEFAULT", "FULL_SHARD", False, 1315950592),
    (H100, "760m", 2048, 32, 24, 1, 768, 67971, 1572864, "DEFAULT", "FULL_SHARD", False, 760470528),
    (H100, "760m", 2048, 16, 24, 1, 384, 68551, 786432, "DEFAULT", "FULL_SHARD", False, 760470528),
    (A100, "70b", 2048, 64, 8, 4, 2048, 410, 4194304, "PURE", "FULL_SHARD", True, 64862437376),
    (A100, "70b", 2048, 32, 2, 16, 1024, 373, 2097152, "PURE", "FULL_SHARD", True, 64862437376),
]


def shape_params(size, seq):
    h, _, layers = SHAPES[size]
    return layers * (12 * h * h + 13 * h) + VOCAB * h + seq * h + 2 * h


def record(row):
    (table, size, seq, gpus, mb, accum, gbs, tps, gbt, mp, sharding, ac, num_params) = row
    h, heads, layers = SHAPES[size]
    h100 = table != A100
    zero = 3 if sharding == "FULL_SHARD" else 2
    kind = "fsdp" if zero == 3 else "zero2"
    gpu_tag = "h100" if h100 else "a100-80gb"
    rid = f"llm-foundry-mpt-{size}-{kind}-{gpus}{gpu_tag}"
    assert mb * gpus * accum == gbs and gbs * seq == gbt, rid
    row_text = f"'{size} | {seq} | {gpus} | {'h100_80gb' if h100 else 'a100_80gb'} | ...'"
    if h100:
        citation = (f"MosaicML, llm-foundry scripts/train/benchmarking/README.md, 'MPT Training "
                    f"Benchmarks', table '{table}' (github mosaicml/llm-foundry, commit {COMMIT}, "
                    "6 January 2024, 'Shashank/new benchmarks (#838)')")
        url = README
    else:
        citation = (f"MosaicML, llm-foundry scripts/train/benchmarking/README.md, 'MPT Training "
                    f"Benchmarks', table '{table}' (github mosaicml/llm-foundry, commit {COMMIT}; "
                    f"the rows unchanged since commit {A100_COMMIT}, 3 May 2023, which brought them "
                    "from mosaicml/examples)")
        url = README
    precision_note = (
        "mixed precision: the row's MP Mode DEFAULT, submit_benchmarks.py's default "
        "(fsdp_config_mixed_precision 'DEFAULT' overriding the yaml's PURE); Composer's DEFAULT "
        "gathers bf16 parameters and reduces gradients in fp32 (composer get_mixed_precision: "
        "param_dtype bf16, reduce_dtype fp32): model.precision.gradients fp32, "
        "workload.bytes_per_param 18 as for the other fp32-reduced records"
        if mp == "DEFAULT" else
        "mixed precision: the row's MP Mode PURE (parameters, reduction and buffers in bf16)")
    notes = [
        "tier latencies 5 us (scale-up) and 10 us (scale-out) are not published; assumed, as in "
        "scenarios/*.json",
        f"model: scripts/train/yamls/pretrain/mpt-{size}.yaml at {COMMIT[:9]}: d_model {h}, "
        f"n_heads {heads}, n_layers {layers}, expansion_ratio 4, vocab_size 50368, max_seq_len "
        f"{seq}; MPTConfig defaults (llmfoundry/models/mpt/configuration_mpt.py): learned "
        "position embeddings, biases on (no_bias False), no dropout, tied embeddings, "
        "low-precision LayerNorm (submit_benchmarks.py sets norm_type "
        "'low_precision_layernorm'), GELU MLP of 4h. The table's NumParams "
        f"{num_params:,} is L(12h^2 + 13h) + 50368h + {seq}h + 2h exactly",
        "loss: ComposerMPTCausalLM's default loss_fn 'fused_crossentropy' (flash_attn's "
        "CrossEntropyLoss; the runs install flash-attn): workload.fused_cross_entropy true",
        f"sharding: the row's Sharding Strategy {sharding} over every rank ("
        + ("plan.zero 3" if zero == 3 else
           "FSDP's SHARD_GRAD_OP gathers the parameters once for the forward and keeps them "
           "through the backward, then reduce-scatters the gradients: the traffic and peak "
           "weights of plan.zero 2")
        + "), activation checkpointing "
        + ("on (the row's True; non-reentrant, each block): plan.recompute 'full'" if ac else
           "off (the row's False): plan.recompute 'none'")
        + "; Composer wraps each MPTBlock as an FSDP unit and the model as the root: "
        "workload.fsdp_root_unit true (FSDP1 keeps the root's parameters after the forward)",
        precision_note,
        "batch: MicroBatchSize, GradAccum and GlobalBatchSize as the row states (micro-batch x "
        "ranks x accumulation = global batch)",
        "optimizer: decoupled AdamW (the yamls): fp32 sharded master parameters and gradients "
        "and two moments",
        ("software: sweep.sh at the same commit submits the H100 runs with image "
         "mosaicml/pytorch:2.1.0_cu121-python3.10-ubuntu20.04 and flash-attn 2.4.2 installed; "
         "no torch.compile: workload.elementwise_kernels 'eager'" if h100 else
         "software: mosaicml/pytorch:1.13.1 (the A100 tables' image); no torch.compile: "
         "workload.elementwise_kernels 'eager'"),
        ("network: not stated for the H100 tables; the catalog's DGX H100 reference network "
         "(8 x 400 Gb/s per node, 50 GB/s per GPU) assumed; H100 80GB taken as the SXM part"
         if h100 else
         "network: the table's heading says 1600 Gbps node-node interconnect (RoCE): 200 GB/s "
         "per 8-GPU node, 25 GB/s per GPU; A100 80GB taken as the SXM4 part"),
    ]
    cluster = {
        "nodes": gpus // 8,
        "gpus_per_node": 8,
        "gpu": {"catalog": "H100-SXM" if h100 else "A100-SXM4-80GB"},
        "intra_node": {"latency": "5 us"},
        "inter_node": {"latency": "10 us"} if h100 else
                      {"bandwidth": "25 GB/s", "latency": "10 us"},
    }
    model = {
        "layers": layers, "hidden": h, "heads": heads, "kv_heads": heads,
        "ffn_hidden": 4 * h, "gated_mlp": False, "vocab": VOCAB, "tied_embeddings": True,
        "dropout": False, "norm": "layernorm", "position_embedding": "learned",
        "seq_len": seq, "params": num_params,
    }
    workload = {
        "kind": "training", "global_batch_tokens": gbt, "micro_batch": mb,
        "bytes_per_param": 18 if mp == "DEFAULT" else 16,
        "fused_cross_entropy": True, "elementwise_kernels": "eager", "fsdp_root_unit": True,
    }
    if mp == "DEFAULT":
        model["precision"] = {"gradients": "fp32"}
    not_modelled = {
        "attention_kernel": "attn_impl 'triton' (llm-foundry's Triton FlashAttention, "
        "submit_benchmarks.py --attn_impl default): "
        + ("timed as FlashAttention-2 (workload.attention_kernel 'flash2'), the nearest kernel "
           "the catalog measures on Hopper" if h100 else
           "the planner times tiled attention on A100 at its GEMM rate"),
        "elementwise": "the linear layers' bias gradients (one sum over each GEMM's output "
        "gradient, 9h per token and layer) are not counted",
        "biases": "the 9h bias and 4h LayerNorm parameters of each block and the position "
        "table are in model.params (memory, MFU) but not in the per-layer shape the time model "
        "reads",
    }
    if h100:
        workload["attention_kernel"] = "flash2"
    return {
        "id": rid,
        "set": "validation",
        "family": f"llm-foundry-mpt-{size}-{gpu_tag}",
        "source": {
            "citation": citation,
            "url": url,
            "location": f"table '{table}', row {row_text}, column 'Throughput (T/s/GPU)': {tps}",
        },
        "name": (f"MPT {size} (llm-foundry benchmark shape), FSDP {sharding} on {gpus} "
                 f"{'H100 80GB' if h100 else 'A100 80GB'} (llm-foundry benchmarks, bf16, "
                 f"activation checkpointing {'on' if ac else 'off'})"),
        "model": model,
        "cluster": cluster,
        "workload": workload,
        "plan": {
            "dp": gpus, "tp": 1, "pp": 1, "cp": 1, "zero": zero,
            "recompute": "full" if ac else "none", "flash_attention": True,
            "sequence_parallel": False, "micro_batch": mb, "grad_accum": accum,
        },
        "measured": {
            "tokens_per_second_per_gpu": tps,
            "derivation": "Throughput (T/s/GPU) as published",
        },
        "not_modelled": not_modelled,
        "notes": notes,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with validation/ instead of writing")
    args = parser.parse_args()
    for row in ROWS:
        size, seq, num_params = row[1], row[2], row[-1]
        if shape_params(size, seq) != num_params:
            sys.exit(f"{size}: NumParams {num_params} is not the shape's "
                     f"{shape_params(size, seq)}; nothing written")
    write_or_check([record(row) for row in ROWS], args.check)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes validation/ records for KempnerForge's weak-scaling runs of dense 13B and 70B models
on 8-160 H200 (benchmarks/weak_scaling_160gpu/README.md, github KempnerInstitute/KempnerForge
at e9f9189: TP 4 inside each 4-GPU node x FSDP2 across nodes, the per-GPU batch held fixed),
from the rows typed below as published. Every run spans at least two nodes: validation under
calibration rule v2, nothing fitted.

    python3 tools/kempnerforge_records.py            # writes validation/kempnerforge-*.json
    python3 tools/kempnerforge_records.py --check    # exits 1 if a written record differs
"""
import argparse

from record_files import write_or_check

COMMIT = "e9f91892905dc840f7048a01e8028083eb4033e7"
BASE = (f"https://github.com/KempnerInstitute/KempnerForge/blob/{COMMIT}/"
        "benchmarks/weak_scaling_160gpu")
SEQ = 4096

# The bench script's model flags (weak_scaling_160gpu_bench.sh M13B / M70B): dim, layers,
# heads, KV heads, FFN (13B: ffn_dim_multiplier 1.3, the README's 17,920), vocabulary 128,256
# (Llama-3 tokenizer), untied output layer (config/model.py tie_embeddings False); batch per
# data-parallel rank and accumulation steps (B13 / B70).
MODELS = {
    "13b": dict(hidden=5120, layers=40, heads=40, kv_heads=8, ffn=17920, micro_batch=4,
                accum=4, params="14.84B"),
    "70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, ffn=28672, micro_batch=2,
                accum=4, params="70.55B"),
}

# (model, GPUs, total tok/s as the README's Results table prints it, repeats)
ROWS = [
    ("13b", 8, 29860, 1), ("13b", 32, 110373, 1), ("13b", 64, 216507, 1),
    ("13b", 128, 423306, 1), ("13b", 160, 534644, 2),
    ("70b", 8, 3623, 1), ("70b", 32, 18688, 1), ("70b", 64, 35824, 1), ("70b", 96, 52190, 1),
    ("70b", 128, 69985, 1), ("70b", 160, 85571, 2),
]


def record(size, gpus, tok_s, repeats):
    m = MODELS[size]
    dp = gpus // 4
    gbt = dp * m["micro_batch"] * m["accum"] * SEQ
    rid = f"kempnerforge-{size}-tp4-fsdp{dp}-{gpus}h200"
    per_gpu = round(tok_s / gpus, 2)
    return {
        "id": rid,
        "set": "validation",
        "family": f"kempnerforge-{size}-h200",
        "source": {
            "citation": ("Kempner Institute, KempnerForge benchmarks/weak_scaling_160gpu/"
                         "README.md, 'Weak Scaling to 160 H200 GPUs (dense 13B / 70B)', "
                         "2026-06-30, git 3ad9d9a (github KempnerInstitute/KempnerForge, commit "
                         f"{COMMIT})"),
            "url": f"{BASE}/README.md",
            "location": (f"Results table, row '{size} | {gpus} | tp4_fsdp{dp}': tok/s {tok_s:,}"
                         + (f" (mean of {repeats} repeats)" if repeats > 1 else "")),
        },
        "name": (f"{size.upper()} Llama-3-style model, TP 4 x FSDP2 {dp} on {gpus} H200 "
                 "(KempnerForge weak scaling, bf16, full activation checkpointing, torch.compile)"),
        "model": {
            "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"],
            "kv_heads": m["kv_heads"], "ffn_hidden": m["ffn"], "gated_mlp": True,
            "vocab": 128256, "tied_embeddings": False, "dropout": False, "seq_len": SEQ,
        },
        "cluster": {
            "nodes": gpus // 4, "gpus_per_node": 4, "gpu": {"catalog": "H200"},
            "intra_node": {"latency": "5 us"}, "inter_node": {"latency": "10 us"},
        },
        "workload": {
            "kind": "training", "global_batch_tokens": gbt, "micro_batch": m["micro_batch"],
            "bytes_per_param": 16, "fused_cross_entropy": False, "tp_saved_inputs": "gathered",
            "fsdp_root_unit": True, "attention_kernel": "flash2",
        },
        "plan": {
            "dp": dp, "tp": 4, "pp": 1, "cp": 1, "zero": 3, "recompute": "full",
            "flash_attention": True, "sequence_parallel": True,
            "micro_batch": m["micro_batch"], "grad_accum": m["accum"],
        },
        "measured": {
            "tokens_per_second_per_gpu": per_gpu,
            "derivation": (f"the table's tok/s, {tok_s:,} for all {gpus} GPUs (metrics/tracker.py: "
                           "tokens in the step over the step time), over the GPUs: the median "
                           "of the back half of each run (parse_results.py); the table's Mem/GPU "
                           "is torch's max_memory_allocated (metrics/memory.py), which the "
                           "planner's reserved peak does not measure: not compared"),
        },
        "not_modelled": {
            "torch_compile": ("--train.compile_model=true: Inductor's fused kernels, counted as "
                              "Megatron-LM's and Transformer Engine's fused ones; what else "
                              "compilation changes is not modelled"),
            "network": ("the README says InfiniBand between nodes without its rate; the "
                        "catalog's reference scale-out network (400 Gb/s per GPU) assumed"),
        },
        "notes": [
            "multi-node (at least 2 nodes of 4 GPUs): validation under shared/calibration/"
            "README.md rule v2; no calibrated sibling (the H200 has no calibration run: pooled "
            "efficiency); added in the eighteenth session, nothing tuned",
            f"model: weak_scaling_160gpu_bench.sh's flags (dim {m['hidden']}, n_layers "
            f"{m['layers']}, n_heads {m['heads']}, n_kv_heads {m['kv_heads']}, vocab_size 128256, "
            f"FFN {m['ffn']}); the README's {m['params']} parameters; Llama-3 architecture "
            "(GQA, SwiGLU, RMSNorm, RoPE), no dropout, untied output layer (config/model.py)",
            f"batch: --train.batch_size={m['micro_batch']} per data-parallel rank, "
            f"grad_accum_steps={m['accum']}, seq_len 4096: plan.micro_batch {m['micro_batch']}, "
            f"grad_accum {m['accum']}; tokens per step {gbt:,} (the README's tok/s x step time "
            "agrees)",
            "parallelism: --distributed.tp=4 inside each node with SequenceParallel on the norms "
            "and the column-parallel inputs gathered (distributed/tensor_parallel.py: "
            "input_layouts Shard(1)), --distributed.dp_shard = FSDP2 over the nodes (plan.zero "
            "3); each block wrapped, then fully_shard(model) as the root (distributed/"
            "parallel.py): workload.fsdp_root_unit",
            "precision: FSDP2 MixedPrecisionPolicy param bf16, reduce fp32 (default_mp_policy): "
            "16 bytes per parameter with fused AdamW (--optimizer.fused=true)",
            "recompute: --train.activation_checkpointing=full (run_one.sbatch)",
            "loss: F.cross_entropy outside the compiled model (training/loss.py "
            "cross_entropy_loss): workload.fused_cross_entropy false",
            "attention: SDPA with backend 'auto' (config/model.py), FlashAttention-2 on Hopper "
            "unless cuDNN is opted into: workload.attention_kernel flash2",
            "tier latencies 5 us (scale-up) and 10 us (scale-out) are not published; assumed, as "
            "in scenarios/*.json",
        ],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    write_or_check([record(*row) for row in ROWS], ap.parse_args().check)


if __name__ == "__main__":
    main()

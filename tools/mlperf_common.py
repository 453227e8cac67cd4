"""What tools/mlperf_training_records.py's record builders share: the results repositories at
their commits, the models' shapes, the FP8 wording of the records' not_modelled entries, and the
cluster, workload and plan every submission's record has in common."""

COMMIT = {"3.0": "63e326c400f5", "3.1": "d06288b2bd67", "4.0": "6fe954378efe",
          "4.1": "b87b9e396f77", "5.0": "0fdc28f01325"}
REPO = {r: f"mlcommons/training_results_v{r}" for r in COMMIT}


def blob(rnd, path):
    return f"https://github.com/{REPO[rnd]}/blob/{COMMIT[rnd]}/{path}"

# The config scripts' MINIBS (local batch per data-parallel rank): GBS = MINIBS x dp.
MINIBS = {"config_DGXH100_64x8x192x4x8_mbs1.sh": 192}

GPT3 = dict(layers=96, hidden=12288, heads=96, ffn_hidden=49152, gated_mlp=False, vocab=50688,
            tied_embeddings=True, dropout=False, norm="layernorm",
            position_embedding="learned", linear_bias="all", seq_len=2048)
LLAMA405 = dict(layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=53248,
                gated_mlp=True, vocab=32768, tied_embeddings=False, dropout=False,
                seq_len=8192)

# The GPT-3 submissions' FP8 settings (v3.x-v4.x config scripts) and FP8 weights (v4.x), as the
# records' not_modelled entries say them.
FP8_DELAYED_HYBRID = ("fp8 (Transformer Engine delayed scaling: FP8 True, FP8_HYBRID True "
                      "(E4M3 forward, E5M2 backward), amax history 1024, 'max'); modelled as "
                      "model.precision.compute fp8 with the fitted tensor-wise ratio")
FP8_PARAMS = ("true: the weights are held in FP8 instead of bf16 (the planner keeps 16 bytes "
              "per parameter)")
LAT_NOTE = ("tier latencies 5 us (scale-up) and 10 us (scale-out) are not published; assumed, "
            "as in scenarios/*.json")


def impl_dir(rnd, submitter, system):
    if rnd in ("3.0", "3.1"):
        return f"{submitter}/benchmarks/gpt3/implementations/pytorch"
    return f"{submitter}/benchmarks/llama31_405b/implementations/{system}"

SYSTEM_NAME = {"NVIDIA": "NVIDIA Eos", "Azure+NVIDIA": "Azure ND H100 v5",
               "NVIDIA_CoreWeave": "CoreWeave HGX H100"}


def layout(nodes, gpu, batch_tokens, mbs, dp, tp, pp, cp, accum, tables=False):
    """The cluster, workload and plan of one submission, alike in every round: 8-GPU nodes of
    the catalog GPU with the tier latencies assumed as in scenarios/*.json, the distributed
    optimizer (ZeRO-1), no recompute, SP and tp overlap, overlapped pipeline sends, and (the
    405B) the embedding and loss as stage layers."""
    plan = {"dp": dp, "tp": tp, "pp": pp, "cp": cp, "zero": 1, "recompute": "none",
            "flash_attention": True, "sequence_parallel": True, "micro_batch": mbs,
            "grad_accum": accum, "tp_comm_overlap": True, "pp_comm_overlap": True}
    if tables:
        plan["tables_in_pipeline_split"] = True
    return {
        "cluster": {"nodes": nodes, "gpus_per_node": 8, "gpu": {"catalog": gpu},
                    "intra_node": {"latency": "5 us"}, "inter_node": {"latency": "10 us"}},
        "workload": {"kind": "training", "global_batch_tokens": batch_tokens, "micro_batch": mbs,
                     "bytes_per_param": 16},
        "plan": plan,
    }


def median_step(gbs, seq, step, gpus, tps, logged, nsteps, nfiles):
    """A record's measured step: `step` the median of the log's per-step time `logged` (its
    key) over `nsteps` steps of `nfiles` result files, the first three of each left out."""
    return {
        "step_time": f"{step} s",
        "tokens_per_second_per_gpu": round(tps, 2),
        "derivation": f"{gbs} sequences x {seq} tokens / ({step} s x {gpus} GPUs); {step} s "
                      f"is the median of the logged {logged} over {nsteps} steps of "
                      f"{nfiles} result files (the first three steps of each left out)",
    }

#!/usr/bin/env python3
"""Writes validation/serving/ records for the dense FP8 rows of TensorRT-LLM's
docs/source/performance/perf-overview.md (commit 00f37686, the v1.0 page: `trtllm-bench
throughput` on the PyTorch backend, every request queued at once) on H100 SXM and H200 SXM:
Llama 3.1 8B, Llama 3.3 70B and Llama 3.1 405B, ten input/output lengths each. The engine's
settings the page leaves to trtllm-bench are derived as its code derives them (cited below);
the model's error is filled in afterwards by tools/serving_records.py.
Usage: tools/trtllm_perf_overview_records.py BUILD/planner [--dry-run]"""
import math, sys

from record_files import write_serving
from serving_records import reserve_for_kv_fraction

COMMIT = "00f37686aa854010d68bcbd0f4ab000221541ca6"
URL = (f"https://github.com/NVIDIA/TensorRT-LLM/blob/{COMMIT}/docs/source/performance/"
       "perf-overview.md")

# (input, output, num_requests): the page's "$num_requests" table.
LENGTHS = [(128, 128, 30000), (128, 2048, 3000), (128, 4096, 1500), (500, 2000, 3000),
           (1000, 1000, 3000), (1000, 2000, 1500), (2048, 128, 3000), (2048, 2048, 1500),
           (5000, 500, 1500), (20000, 2000, 1000)]

# name: (label on the page, checkpoint, shape, parameters, KV-cache dtype and why)
MODELS = {
    "llama3.1-8b": (
        "Llama 3.1 8B", "nvidia/Llama-3.1-8B-Instruct-FP8",
        dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, gated_mlp=True,
             vocab=128256, tied_embeddings=False),
        8.03e9, "fp8"),
    "llama3.3-70b": (
        "Llama 3.3 70B", "nvidia/Llama-3.3-70B-Instruct-FP8",
        dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, gated_mlp=True,
             vocab=128256, tied_embeddings=False),
        70.55e9, "fp8"),
    "llama3.1-405b": (
        "Llama 3.1 405B", "nvidia/Llama-3.1-405B-Instruct-FP8",
        dict(layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=53248, gated_mlp=True,
             vocab=128256, tied_embeddings=False),
        405.85e9, "bf16"),
}
SHAPE_SOURCE = ("Llama 3 shapes (Grattafiori et al. 2024, arXiv 2407.21783, Table 3: 8B 32 "
                "layers, 4096, FFN 14336, 32 heads; 70B 80, 8192, 28672, 64; 405B 126, 16384, "
                "53248, 128; 8 KV heads, vocabulary 128256, untied output layer; Llama 3.3 70B "
                "has Llama 3.1 70B's shape)")
KV_WHY = {
    "fp8": ("FP8 KV cache: the page does not state it and the checkpoint's hf_quant_config.json "
            "was not read; with a bf16 cache the row's throughput is out of reach of the HBM "
            "bandwidth (Llama 3.3 70B 2048/2048 on two H100 at 3,082 tokens/s: the cache that "
            "fits, 66 sequences, and the weights are 68.5 GB per GPU per step, 3.2 TB/s at "
            "21.4 ms a step before any prefill, 96 % of the datasheet's 3.35; Llama 3.1 8B "
            "at 9,305 tokens/s would need 4.3 TB/s), and TensorRT-LLM's engine tests run the "
            "8B checkpoint with kv_cache_quant_algo FP8 (assumed)"),
    "bf16": ("bf16 KV cache: the checkpoint's hf_quant_config.json (ModelOpt 0.17.0) has "
             "kv_cache_quant_algo null, and trtllm-bench's kv_cache_dtype 'auto' follows the "
             "checkpoint (tensorrt_llm/bench/benchmark/utils/general.py get_settings)"),
}

# gpu: (catalog entry, page column, tp per model)
GPUS = {
    "h100": ("H100-SXM", "H100", {"llama3.1-8b": 1, "llama3.3-70b": 2, "llama3.1-405b": 8}),
    "h200": ("H200", "H200", {"llama3.1-8b": 1, "llama3.3-70b": 1, "llama3.1-405b": 8}),
}
DEVICE_GIB = {"h100": 80.0, "h200": 141.0}  # trtllm-bench get_device_memory, nominal GB

# Total Output Throughput (tokens/s) as the page prints it, in LENGTHS order.
TABLE = {
    ("h100", "llama3.1-8b"): [28312, 22714, 14325, 17660, 15220, 13899, 3450, 9305, 3459, 1351],
    ("h200", "llama3.1-8b"): [27911, 26221, 18027, 20770, 17744, 16828, 3538, 12194, 3902, 1804],
    ("h100", "llama3.3-70b"): [6378, 6651, 4199, 5222, 4205, 4146, 762, 3082, 898, 437],
    ("h200", "llama3.3-70b"): [3803, 4336, 2872, 3666, 2909, 2994, 442, 2003, 566, 283],
    ("h100", "llama3.1-405b"): [3627, 4340, 3116, 3994, 2919, 2895, 453, 2296, 610, 345],
    ("h200", "llama3.1-405b"): [3814, 5348, 4741, 4724, 3330, 3722, 456, 2948, 650, 505],
}

KV_FRACTION = 0.90  # trtllm-bench throughput --kv_cache_free_gpu_mem_fraction default


def max_batch_size(model, gpu, tp, isl, osl):
    """trtllm-bench's max_batch_size when none is given (tensorrt_llm/bench/build/tuning.py
    calc_engine_setting and finetune_setting): the requests of isl + osl tokens whose cache
    fits in the fraction of the memory left by the engine, capped at 4096, rounded up."""
    _, _, shape, params, kv = MODELS[model]
    kv_bytes = 1.0 if kv == "fp8" else 2.0
    head = shape["hidden"] // shape["heads"]
    per_token_gib = 2 * shape["layers"] * max(tp, shape["kv_heads"]) * head * kv_bytes / 1024**3
    available = DEVICE_GIB[gpu] * tp - params * 1.0 / 1024**3
    requests = available * KV_FRACTION / (per_token_gib * (isl + osl))
    raw = min(requests, 4096)
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    if raw < 1024:
        return 128 * math.ceil(raw / 128)
    return 256 * math.ceil(raw / 256)


def scenario(planner, name, gpu, model, isl, osl, requests):
    catalog, _, tps = GPUS[gpu]
    tp = tps[model]
    _, _, shape, _, kv = MODELS[model]
    fields = dict(shape, seq_len=isl + osl,
                  precision={"weights": "fp8", "kv_cache": kv, "compute": "fp8"})
    doc = {
        "name": name,
        "model": fields,
        "cluster": {"nodes": 1, "gpus_per_node": tp, "gpu": {"catalog": catalog},
                    "intra_node": {"bandwidth": "450 GB/s", "latency": "3 us"},
                    "inter_node": {"bandwidth": "400 Gb/s", "latency": "10 us"}},
        "workload": {"kind": "serving", "concurrency": requests, "input_tokens": isl,
                     "output_tokens": osl, "slo_per_token": "100 s", "batching": "mixed",
                     "max_batch": max_batch_size(model, gpu, tp, isl, osl),
                     "kv_block_tokens": 32},
        "plan": {"tp": tp},
    }
    return reserve_for_kv_fraction(planner, doc, KV_FRACTION)


def assumptions(gpu, model, doc):
    catalog = GPUS[gpu][0]
    w = doc["workload"]
    return (f"{catalog}: the planner's catalog entry (datasheet peaks, HBM bandwidth and "
            "memory; its GEMM efficiency, FP8 ratio and HBM read fractions are fitted under the "
            "calibration rule, data/gpus.json), nothing typed, so the record tests the defaults "
            "a user gets. FP8 weights and GEMMs (ModelOpt FP8 checkpoint); "
            + KV_WHY[MODELS[model][4]] + ". " + SHAPE_SOURCE + ". "
            "Every request queued at once (trtllm-bench throughput: 'an infinite rate'): a "
            f"closed loop of {w['concurrency']} users, the page's num_requests. Engine limit "
            f"max_batch {w['max_batch']}: trtllm-bench's own choice when none is given "
            "(tensorrt_llm/bench/build/tuning.py calc_engine_setting / finetune_setting: the "
            "requests of input + output tokens whose cache fits in 0.90 of the memory the "
            "engine leaves, capped at 4096, rounded up); its max_num_tokens, sized by the same "
            "code to a full batch's decode tokens plus its mean prompt tokens per step, is not "
            "binding in the steady state and not modelled. KV cache: 0.90 of the memory free "
            "after the weights and the planner's default runtime reserve (--kv_cache_free_gpu_"
            "mem_fraction's default; the page says 0.95 was used 'in many cases' and which rows "
            "is not stated), the other 0.10 added to the reserve. In-flight batching "
            "(batching 'mixed'): the PyTorch executor schedules context and generation requests "
            "into one forward (tensorrt_llm/_torch/pyexecutor/py_executor.py _forward_step over "
            "the scheduler's context_requests and generation_requests); chunked prefill off (its "
            "default). Cache blocks of 32 tokens (the KV cache manager's default "
            "tokens_per_block; assumed). Decode attention grouped (XQA). NVLink 4: 450 GB/s "
            "per direction.")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    planner = sys.argv[1]
    records = []
    for (gpu, model), values in TABLE.items():
        label, checkpoint = MODELS[model][0], MODELS[model][1]
        tp = GPUS[gpu][2][model]
        for (isl, osl, requests), value in zip(LENGTHS, values):
            name = f"trtllm-v1.0-{gpu}-fp8-{model}-tp{tp}-{isl}-{osl}-throughput"
            doc = scenario(planner, name, gpu, model, isl, osl, requests)
            records.append({
                "name": name,
                "source": {
                    "document": "NVIDIA TensorRT-LLM, docs/source/performance/perf-overview.md "
                                "(v1.0 page)",
                    "repository": "NVIDIA/TensorRT-LLM", "commit": COMMIT, "url": URL,
                    "row": f"Throughput Measurements, {label}, column {GPUS[gpu][1]} TP{tp} "
                           f"(FP8), ISL/OSL {isl}/{osl}: {value:,} Total Output Throughput "
                           f"(tokens/sec) ({checkpoint}; trtllm-bench throughput, PyTorch "
                           f"backend, {requests} requests)"},
                "assumptions": assumptions(gpu, model, doc),
                "measured": {"pointer": "/plan/time/tokens_per_second", "value": float(value)},
                "scenario": doc,
                "target": 0.25,
            })
    write_serving(records, keep_existing=False, dry_run="--dry-run" in sys.argv)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes validation/serving/ records for the NIM (TensorRT-LLM backend) measurements that the
'inference GPU cluster sizing' notebooks of github wbing520/ai-performance-engineering ship as
dataset/nim.csv (commit 0e25b2e, "pre-collected benchmarks", measured with GenAI-Perf): Llama 3
8B and 70B Instruct on one node of A100 SXM4 80GB or H100 80GB HBM3, tp 1-8, fp16/bf16/fp8, six
input/output lengths, a fixed number of concurrent clients sending identical requests. The
rows at concurrency 1, 5, 25, 100 and 250 (of the file's 1-250; chosen before any was
evaluated, a log-spaced sweep) are copied unchanged into validation/serving/sources/nim-dli-genai-perf.csv; repeated runs of one
setting are averaged. Each setting gives three records: mean time to first token, mean
inter-token latency, output tokens/s. Nothing is fitted to them.
Usage: tools/nim_genai_perf_records.py BUILD/planner [--dry-run]"""
import csv, pathlib, statistics, sys

from record_files import write_serving
from serving_records import reserve_for_kv_fraction

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "validation" / "serving" / "sources" / "nim-dli-genai-perf.csv"
COMMIT = "0e25b2e236211ad01ed2221bd2c1cfa5b3f47b55"
PATH = "code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv"
URL = f"https://github.com/wbing520/ai-performance-engineering/blob/{COMMIT}/{PATH}"

# Llama 3 shapes (Grattafiori et al. 2024, arXiv 2407.21783, Table 3; the Instruct models'
# config.json: max_position_embeddings 8192).
MODELS = {
    "meta-llama3-8b-instruct": ("llama3-8b", dict(
        layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, gated_mlp=True,
        vocab=128256, tied_embeddings=False, seq_len=8192)),
    "meta-llama3-70b-instruct": ("llama3-70b", dict(
        layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, gated_mlp=True,
        vocab=128256, tied_embeddings=False, seq_len=8192)),
}
SHAPE_SOURCE = ("Llama 3 shapes (Grattafiori et al. 2024, arXiv 2407.21783, Table 3: 8B 32 "
                "layers, 4096, FFN 14336, 32 heads; 70B 80, 8192, 28672, 64; 8 KV heads, "
                "vocabulary 128256; the Instruct config.json's context 8192)")
# file's GPU column: (catalog entry, short name, NVLink bandwidth per direction)
GPUS = {
    "A100-SXM4-80GB": ("A100-SXM4-80GB", "a100", "300 GB/s", "NVLink 3"),
    "H100_80GB_HBM3": ("H100-SXM", "h100", "450 GB/s", "NVLink 4"),
}
# file's precision column: the planner's precision block and what it stands for
PRECISIONS = {
    "fp16": ({"weights": "fp16", "kv_cache": "fp16", "compute": "fp16"},
             "fp16 weights, KV cache and GEMMs"),
    "bf16": ({"weights": "bf16", "kv_cache": "bf16", "compute": "bf16"},
             "bf16 weights, KV cache and GEMMs"),
    "fp8": ({"weights": "fp8", "compute": "fp8"},
            "fp8 taken as the NIM FP8 profiles' quantized linear layers (weights and GEMM "
            "inputs in FP8), the KV cache and the messages between ranks 16-bit (not stated)"),
}
KV_FRACTION = 0.90  # TensorRT-LLM KvCacheConfig free_gpu_memory_fraction default
# Each metric: (record suffix, planner pointer, the file's column, unit factor, words)
METRICS = [
    ("ttft", "/plan/time/ttft_mean", "time_to_first_token-avg", 1e-9,
     "The mean time to first token (GenAI-Perf, from the request's send to its first streamed "
     "token) is compared with the model's mean: the prefill, the wait for the other clients' "
     "prefills ahead of it and for the decode step it lands in."),
    ("itl", "/plan/time/per_token", "inter_token_latency-avg", 1e-9,
     "GenAI-Perf's inter-token latency (request latency less time to first token, over the "
     "output tokens after the first) is compared with the model's mean time per output token, "
     "which includes the other requests' prefills that stall the decodes."),
    ("throughput", "/plan/time/tokens_per_second", "output_token_throughput-avg", 1.0,
     "Throughput is GenAI-Perf's output tokens/s over the deployment."),
]


def settings():
    """The file's rows grouped by setting, each metric averaged over its repeated runs."""
    groups = {}
    with open(TABLE, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["task_inputs-model"], row["task_inputs-GPU"],
                   int(row["task_inputs-n_gpus"]), row["task_inputs-precision"],
                   int(row["input_config-synthetic_input_tokens_mean"]),
                   int(row["input_config-output_tokens_mean"]),
                   int(row["input_config-concurrency"]))
            groups.setdefault(key, []).append(row)
    return groups


def scenario(planner, name, model, gpu, tp, precision, isl, osl, users):
    catalog, _, nvlink, _ = GPUS[gpu]
    doc = {
        "name": name,
        "model": dict(MODELS[model][1], precision=PRECISIONS[precision][0]),
        "cluster": {"nodes": 1, "gpus_per_node": tp, "gpu": {"catalog": catalog},
                    "intra_node": {"bandwidth": nvlink, "latency": "3 us"},
                    "inter_node": {"bandwidth": "400 Gb/s", "latency": "10 us"}},
        "workload": {"kind": "serving", "concurrency": users, "input_tokens": isl,
                     "output_tokens": osl, "slo_per_token": "100 s", "batching": "mixed",
                     "closed_loop": "lockstep",
                     "kv_block_tokens": 64},
        "plan": {"tp": tp},
    }
    return reserve_for_kv_fraction(planner, doc, KV_FRACTION)


def assumptions(gpu, tp, precision, words):
    catalog, _, nvlink, link = GPUS[gpu]
    return (f"{catalog}: the planner's catalog entry (datasheet peaks, HBM bandwidth and "
            "memory; its GEMM efficiency, FP8 ratio and HBM read fractions are fitted under the "
            "calibration rule, data/gpus.json), nothing typed, so the record tests the defaults "
            f"a user gets. {tp} GPU(s) of one node ({link}: {nvlink} per direction). "
            f"{PRECISIONS[precision][1]}. {SHAPE_SOURCE}. NIM's TensorRT-LLM engine: in-flight "
            "batching (batching 'mixed': context and generation requests in one forward), no "
            "engine batch limit stated (the model runs what the cache holds), KV cache 0.90 of "
            "the memory free after the weights and the planner's default runtime reserve "
            "(TensorRT-LLM's free_gpu_memory_fraction default; the other 0.10 joins the "
            "reserve), cache blocks of 64 tokens (trtllm-build's tokens_per_block default); "
            "all assumed, the file states none. Concurrency is GenAI-Perf's fixed number of "
            "clients, each sending its next request when one finishes (closed loop), all "
            "started together (perf_analyzer, which GenAI-Perf drives, keeps N requests "
            "outstanding from the start: triton-inference-server/client src/c++/perf_analyzer/"
            "docs/inference_load_modes.md, 'Concurrency Mode'), every request the same: "
            "synthetic prompts of the setting's length with standard deviation 0 and exactly the setting's output tokens (the "
            "file's output counts equal it at the mean and p95), so the clients' requests "
            "start and end together round after round: closed_loop 'lockstep' (docs/model.md "
            "§8.4). " + words)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    planner = sys.argv[1]
    records = []
    for (model, gpu, tp, precision, isl, osl, users), rows in sorted(settings().items()):
        short = MODELS[model][0]
        base = scenario(planner, "", model, gpu, tp, precision, isl, osl, users)
        for suffix, pointer, column, unit, words in METRICS:
            value = statistics.mean(float(r[column]) for r in rows) * unit
            name = (f"nim-dli-{GPUS[gpu][1]}-{precision}-{short}-tp{tp}-c{users}-{isl}-{osl}"
                    f"-{suffix}")
            runs = f"mean of {len(rows)} runs" if len(rows) > 1 else "one run"
            records.append({
                "name": name,
                "source": {
                    "document": "NIM (TensorRT-LLM backend) measurements, GenAI-Perf, "
                                "dataset/nim.csv of the inference GPU cluster sizing notebooks",
                    "repository": "wbing520/ai-performance-engineering", "commit": COMMIT,
                    "url": URL,
                    "row": f"{model}, {gpu}, {tp} GPU(s), {precision}, input {isl} / output "
                           f"{osl} tokens, concurrency {users}: {column} "
                           f"{statistics.mean(float(r[column]) for r in rows):.6g}"
                           f"{' ns' if unit != 1.0 else ' tokens/s'} ({runs})"},
                "assumptions": assumptions(gpu, tp, precision, words),
                "measured": {"pointer": pointer, "value": round(value, 9)},
                "scenario": dict(base, name=name),
                "target": 0.25,
            })
    write_serving(records, keep_existing=False, dry_run="--dry-run" in sys.argv)


if __name__ == "__main__":
    main()

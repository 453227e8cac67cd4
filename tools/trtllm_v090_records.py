#!/usr/bin/env python3
"""Writes validation/serving/ records for TensorRT-LLM 0.9.0 static-batch measurements that
the 'inference GPU cluster sizing' notebooks of github wbing520/ai-performance-engineering ship
as dataset/trt_llm_0_9_0_dli.csv (commit 5a4d0c3; gptSessionBenchmark-style runs: a static
batch of identical prompts prefilled together, then the decode steps together; first-token
latency, token-to-token latency, total latency and throughput per row). The rows of the
models and GPUs the planner's catalogs hold (Llama 2 7B, 13B, 70B, GPT-J 6B, Falcon 180B and
Mistral 7B on A100 SXM4 80GB, H100 SXM, H100 NVL, H200 and L40S; not GH200, L40, nor Mixtral
8x7B, whose fake-weight router, MODELS below, is not a Mixtral engine's) at batch 1, 16 and
256 (of 1-1,536; chosen before any was evaluated), pipeline 1, with every figure present, are
copied unchanged into validation/serving/sources/trtllm-v0.9-dli.csv. Each row gives
three records: first-token latency, token-to-token latency, throughput. Nothing is fitted.
Usage: tools/trtllm_v090_records.py BUILD/planner [--dry-run]"""
import csv, json, pathlib, sys

from record_files import write_serving
from serving_records import reserve_for_kv_fraction
from trtllm_table_records import SHAPES

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "validation" / "serving" / "sources" / "trtllm-v0.9-dli.csv"
COMMIT = "5a4d0c37a3231b2ff8a268df7f129be259c48a48"
PATH = "code/ch11_inference/inference_gpu_cluster_sizing/dataset/trt_llm_0_9_0_dli.csv"
URL = f"https://github.com/wbing520/ai-performance-engineering/blob/{COMMIT}/{PATH}"

# The file's model column: (short name, planner shape, where it comes from). The shapes are
# those of TensorRT-LLM's own tables (tools/trtllm_table_records.py SHAPES), and Llama 2 13B's.
LLAMA2_13B = dict(layers=40, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824,
                  gated_mlp=True, vocab=32000, tied_embeddings=False, seq_len=4096)
SHAPE_WORDS = {
    "gptj-6b": "GPT-J 6B shape (EleutherAI/gpt-j-6b config.json: 28 layers, 4096, 16 heads, FFN "
               "4 x 4096, GELU, vocabulary 50400, untied output layer)",
    "llama2-7b": "Llama-2-7B shape (Touvron et al. 2023, arXiv 2307.09288, and its config.json: "
                 "32 layers, 4096, FFN 11008, 32 heads, 32 KV heads, vocabulary 32000)",
    "llama2-13b": "Llama-2-13B shape (Touvron et al. 2023 and its config.json: 40 layers, 5120, "
                  "FFN 13824, 40 heads, 40 KV heads, vocabulary 32000)",
    "llama2-70b": "Llama-2-70B shape (Touvron et al. 2023: 80 layers, 8192, FFN 28672, 64 heads, "
                  "8 KV heads, vocabulary 32000)",
    "falcon-180b": "Falcon-180B shape (tiiuae/falcon-180B config.json: 80 layers, 14848, 232 "
                   "heads, 8 KV heads, FFN 4 x hidden, GELU, vocabulary 65024, tied embeddings)",
}
MODELS = {label: (short, LLAMA2_13B if short == "llama2-13b" else SHAPES[short][0],
                  SHAPE_WORDS[short])
          for label, short in [("GPTJ 6B", "gptj-6b"), ("LLaMA v2 7B", "llama2-7b"),
                               ("LLaMA v2 13B", "llama2-13b"), ("LLaMA v2 70B", "llama2-70b"),
                               ("Falcon 180B", "falcon-180b")]}


def catalog_model(name):
    """A model of the planner's catalog (data/models/<name>.json): its shape and source."""
    doc = json.loads((ROOT / "data" / "models" / f"{name}.json").read_text())
    shape = dict(doc["model"], seq_len=4096)
    return name, shape, f"{doc['description']}: data/models/{name}.json ({doc['source']})"


MODELS["Mistral 7B"] = catalog_model("mistral-7b")
# Not Mixtral 8x7B: the file's runs use fake weights ("Use Fake Weight: Yes"), harmless for a
# dense model but not for a router: at batch 16 its time per token on two H100s (7.8 ms) is
# below what the experts balanced routing touches take to read (all eight, 46.7 GB per GPU,
# 14 ms at the datasheet's 3.35 TB/s), so its tokens went to few experts and the rows do not
# measure a Mixtral engine.


def link(gpu, tp):
    """The slowest link of a tp ring on the file's GPU: (bandwidth per direction, words)."""
    if gpu == "A100-SXM4-80GB":
        return "300 GB/s", "NVLink 3: 300 GB/s per direction"
    if gpu in ("H100 80GB HBM3", "H200 141GB HBM3"):
        return "450 GB/s", "NVLink 4: 450 GB/s per direction (HGX baseboard)"
    if gpu == "H100 NVL":
        if tp <= 2:
            return "300 GB/s", "an NVLink bridge pair: 600 GB/s both directions"
        return "64 GB/s", ("pairs joined by PCIe Gen5 x16 beyond the NVLink bridge: 64 GB/s per "
                           "direction, the ring's slowest link")
    return "32 GB/s", "no NVLink: PCIe Gen4 x16, 32 GB/s per direction"


# file's GPU column: (catalog entry, short name)
GPUS = {
    "A100-SXM4-80GB": ("A100-SXM4-80GB", "a100"),
    "H100 80GB HBM3": ("H100-SXM", "h100"),
    "H100 NVL": ("H100-NVL", "h100nvl"),
    "H200 141GB HBM3": ("H200", "h200"),
    "L40S": ("L40S", "l40s"),
}
# file's precision column: (planner dtype, words)
PRECISIONS = {
    "FP8": ("fp8", "FP8 weights, KV cache and GEMMs (the precision column's FP8, taken as "
                   "TensorRT-LLM's FP8 engines with an FP8 KV cache, as its own performance "
                   "tables build them); messages between ranks 16-bit"),
    "Mixed": ("fp16", "FP16 weights, KV cache and GEMMs (the precision column's 'Mixed', taken "
                      "as TensorRT-LLM's float16 engines)"),
}
KV_FRACTION = 0.90  # TensorRT-LLM KvCacheConfig free_gpu_memory_fraction default
# (record suffix, planner pointer, the file's column, to base units, words)
METRICS = [
    ("ttft", "/plan/time/ttft", "1st Token Latency (ms)", 1e-3,
     "The first-token latency (the batch's prompts prefilled in one forward) is compared with "
     "the model's first token."),
    ("itl", "/plan/time/per_token", "Token-to-token Latency (ms)", 1e-3,
     "The token-to-token latency ((latency - first-token latency) / (output - 1), as the "
     "file's figures give it) is compared with the model's time per output token."),
    ("throughput", "/plan/time/tokens_per_second", "Throughput (tokens / sec)", 1.0,
     "Throughput is the batch's output tokens over its whole latency, first token included."),
]


def xqa(model):
    """Whether TensorRT-LLM's XQA decode kernel covers the model: its precompiled kernels of
    that generation are for head size 128 with 8 query heads per KV head (cpp/tensorrt_llm/
    kernels/decoderMaskedMultiheadAttention/cubin/xqa_kernel_cubin.h lists only d_128 nqpkv_8
    single-token kernels), which Llama 2 70B has; Falcon 180B (head size 64, 29 query heads
    per KV head) and Mistral 7B (head size 128, 4 per KV head) fall back to the
    masked multi-head attention kernel, one thread block per query head. Models without
    grouped heads read the same either way."""
    shape = MODELS[model][1]
    return shape["hidden"] // shape["heads"] == 128 and shape["heads"] // shape["kv_heads"] == 8 \
        or shape["heads"] == shape["kv_heads"]


def scenario(planner, model, gpu, tp, precision, batch, isl, osl):
    dtype = PRECISIONS[precision][0]
    fields = dict(MODELS[model][1])
    fields["seq_len"] = max(fields["seq_len"], isl + osl)
    fields["precision"] = {"weights": dtype, "kv_cache": dtype, "compute": dtype}
    if dtype == "fp16":
        fields["precision"]["activations"] = "fp16"
    doc = {
        "name": "",
        "model": fields,
        "cluster": {"nodes": 1, "gpus_per_node": tp, "gpu": {"catalog": GPUS[gpu][0]},
                    "intra_node": {"bandwidth": link(gpu, tp)[0], "latency": "3 us"},
                    "inter_node": {"bandwidth": "400 Gb/s", "latency": "10 us"}},
        "workload": {"kind": "serving", "batch": batch, "input_tokens": isl,
                     "output_tokens": osl, "slo_per_token": "100 s",
                     "closed_loop": "lockstep"},
        "plan": {"tp": tp},
    }
    if not xqa(model):
        doc["workload"]["decode_attention"] = "per_query_head"
    return reserve_for_kv_fraction(planner, doc, KV_FRACTION)


def assumptions(model, gpu, tp, precision, words):
    return (f"{GPUS[gpu][0]}: the planner's catalog entry (datasheet peaks, HBM bandwidth and "
            "memory; its GEMM efficiency, FP8 ratio and HBM read fractions are fitted under the "
            "calibration rule, data/gpus.json), nothing typed, so the record tests the defaults "
            f"a user gets. {tp} GPU(s) of one node ({link(gpu, tp)[1]}; assumed). "
            f"{PRECISIONS[precision][1]}. {MODELS[model][2]}. TensorRT-LLM 0.9.0 with XQA "
            "enabled (the file's column): " + (
                "grouped decode attention, the planner's default (XQA's kernels cover head "
                "size 128 with 8 query heads per KV head, or the heads are not grouped). "
                if xqa(model) else
                "but XQA's kernels of that generation cover head size 128 with 8 query heads "
                "per KV head only (cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"
                "cubin/xqa_kernel_cubin.h), so this model's decode attention runs the masked "
                "multi-head attention kernel, one thread block per query head "
                "(decode_attention 'per_query_head'). ") + "A "
            "static batch (closed_loop 'lockstep', docs/model.md §8.4): every prompt of the "
            "batch prefilled in one forward, then the decode steps together. KV cache 0.90 of "
            "the memory free after the weights and the planner's default runtime reserve "
            "(TensorRT-LLM's free_gpu_memory_fraction default; the other 0.10 joins the "
            "reserve). " + words)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    planner = sys.argv[1]
    records = []
    with open(TABLE, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        model, gpu, precision = row["Model"], row["GPU"], row["Precision"]
        tp, batch = int(row["Tensor Model Parallel Size"]), int(row["Batch Size"])
        isl, osl = (int(x) for x in row["Input/Output Lengths"].split(","))
        base = scenario(planner, model, gpu, tp, precision, batch, isl, osl)
        for suffix, pointer, column, unit, words in METRICS:
            name = (f"trtllm-v0.9-{GPUS[gpu][1]}-{PRECISIONS[precision][0]}-"
                    f"{MODELS[model][0]}-tp{tp}-b{batch}-{isl}-{osl}-{suffix}")
            records.append({
                "name": name,
                "source": {
                    "document": "TensorRT-LLM 0.9.0 static-batch measurements, "
                                "dataset/trt_llm_0_9_0_dli.csv of the inference GPU cluster "
                                "sizing notebooks",
                    "repository": "wbing520/ai-performance-engineering", "commit": COMMIT,
                    "url": URL,
                    "row": f"{model}, {gpu}, {precision}, TP {tp}, batch {batch}, input/output "
                           f"{isl}/{osl}: {column} {row[column]}"},
                "assumptions": assumptions(model, gpu, tp, precision, words),
                "measured": {"pointer": pointer, "value": round(float(row[column]) * unit, 9)},
                "scenario": dict(base, name=name),
                "target": 0.25,
            })
    write_serving(records, keep_existing=False, dry_run="--dry-run" in sys.argv)


if __name__ == "__main__":
    main()

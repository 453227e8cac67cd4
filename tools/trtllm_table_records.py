#!/usr/bin/env python3
"""Writes validation/serving/ records for every row of TensorRT-LLM's docs/source/performance.md
(commit 138f96d4: v0.6.1 Peak Throughput, v0.5 L40S and Low Latency tables) that no record
holds yet. Each row is typed below as the table prints it; the model shapes come from each
model's paper or config.json, cited in SHAPES. The model's error is filled in afterwards by
tools/serving_records.py. Usage: tools/trtllm_table_records.py [--dry-run]"""
import sys

from record_files import write_serving

COMMIT = "138f96d45f90b9667426f7c47297d8c06bafac73"
URL = f"https://github.com/NVIDIA/TensorRT-LLM/blob/{COMMIT}/docs/source/performance.md"

# name: (scenario model fields, where the shape comes from)
SHAPES = {
    "gptj-6b": (dict(layers=28, hidden=4096, heads=16, kv_heads=16, ffn_hidden=16384,
                     gated_mlp=False, vocab=50400, tied_embeddings=False, seq_len=2048),
                "GPT-J 6B shape (EleutherAI/gpt-j-6b config.json, and the table's build "
                "command: 28 layers, 4096, 16 heads, FFN 4 x 4096, GELU, vocabulary 50400, "
                "untied output layer)"),
    "llama2-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008,
                       gated_mlp=True, vocab=32000, tied_embeddings=False, seq_len=4096),
                  "'LLaMA 7B' is Llama-2-7b (the document's methodology section benchmarks "
                  "Llama2-7b). Llama-2-7B shape (Touvron et al. 2023, arXiv 2307.09288, and "
                  "its config.json: 32 layers, 4096, FFN 11008, 32 heads, 32 KV heads, "
                  "vocabulary 32000)"),
    "llama2-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        gated_mlp=True, vocab=32000, tied_embeddings=False, seq_len=4096),
                   "Llama-2-70B shape (Touvron et al. 2023, arXiv 2307.09288: 80 layers, "
                   "8192, FFN 28672, 64 heads, 8 KV heads, vocabulary 32000)"),
    "falcon-180b": (dict(layers=80, hidden=14848, heads=232, kv_heads=8, ffn_hidden=59392,
                         gated_mlp=False, vocab=65024, tied_embeddings=True, seq_len=2048),
                    "Falcon-180B shape (the table's build command: 80 layers, 14848, 232 "
                    "heads, 8 KV heads, vocabulary 65024, new decoder architecture; "
                    "tiiuae/falcon-180B config.json: FFN 4 x hidden, GELU, tied embeddings; "
                    "179.5 B parameters as the model card's 180 B)"),
}
LABEL = {"gptj-6b": "GPT-J 6B", "llama2-7b": "LLaMA 7B", "llama2-70b": "LLaMA 70B",
         "falcon-180b": "Falcon 180B"}

KERNEL = (" Decode attention per query head: TensorRT-LLM v0.5/v0.6.1 decode with the masked "
          "multi-head attention kernel, one thread block per head (docs/source/advanced/"
          "gpt-attention.md); the XQA kernel that shares a KV head's load among its query heads "
          "came with v0.8 (docs/source/blogs/XQA-kernel.md: 2.4x Llama-70B throughput at "
          "128/2048 over it). The document's Llama2-70b and Falcon-180B commands export "
          "TRTLLM_ENABLE_XQA=1, an experimental early version that a heuristic may decline; "
          "which kernel ran is not stated (assumed). No effect on a model without grouped heads.")

STATIC = (" Lockstep closed loop (`closed_loop: \"lockstep\"`, docs/model.md §8.4): "
          "gptSessionBenchmark runs static batches, all the batch's prompts prefilled in one "
          "forward, then the decode steps together.")

# gpu: (catalog entry, table heading, precision, tp link, what the assumptions say)
GPUS = {
    "h100": ("H100-SXM", "H100 GPUs (FP8)", "fp8", "450 GB/s",
             "H100 SXM: the planner's catalog entry H100-SXM"),
    "l40s": ("L40S", "L40S GPUs (FP8)", "fp8", "32 GB/s",
             "L40S: the planner's catalog entry L40S"),
    "a100": ("A100-SXM4-80GB", "A100 GPUs (FP16)", "fp16", "300 GB/s",
             "A100 SXM 80GB: the planner's catalog entry A100-SXM4-80GB"),
}

# (gpu, model, batch, tp, input, output, figure, version); output tokens/s per GPU.
THROUGHPUT = [
    ("h100", "gptj-6b", 1024, 1, 128, 128, 26150, "v0.6.1"),
    ("h100", "gptj-6b", 120, 1, 128, 2048, 8011, "v0.6.1"),
    ("h100", "gptj-6b", 64, 1, 2048, 128, 2551, "v0.6.1"),
    ("h100", "gptj-6b", 64, 1, 2048, 2048, 3327, "v0.6.1"),
    ("h100", "llama2-7b", 768, 1, 128, 128, 19694, "v0.6.1"),
    ("h100", "llama2-7b", 112, 1, 128, 2048, 6818, "v0.6.1"),
    ("h100", "llama2-7b", 80, 1, 2048, 128, 2244, "v0.6.1"),
    ("h100", "llama2-70b", 1024, 2, 128, 128, 2657, "v0.6.1"),
    ("h100", "llama2-70b", 480, 4, 128, 2048, 1486, "v0.6.1"),
    ("h100", "falcon-180b", 1024, 4, 128, 128, 987, "v0.6.1"),
    ("h100", "falcon-180b", 1024, 8, 128, 2048, 724, "v0.6.1"),
    ("h100", "falcon-180b", 64, 4, 2048, 128, 112, "v0.6.1"),
    ("h100", "falcon-180b", 64, 4, 2048, 2048, 264, "v0.6.1"),
    ("l40s", "gptj-6b", 64, 1, 128, 128, 3630, "v0.5"),
    ("l40s", "gptj-6b", 64, 1, 128, 2048, 1859, "v0.5"),
    ("l40s", "gptj-6b", 32, 1, 2048, 128, 616, "v0.5"),
    ("l40s", "gptj-6b", 32, 1, 2048, 2048, 757, "v0.5"),
    ("l40s", "llama2-7b", 64, 1, 128, 128, 3240, "v0.5"),
    ("l40s", "llama2-7b", 64, 1, 128, 2048, 1622, "v0.5"),
    ("l40s", "llama2-7b", 32, 1, 2048, 128, 581, "v0.5"),
    ("l40s", "llama2-7b", 16, 1, 2048, 2048, 531, "v0.5"),
    ("a100", "gptj-6b", 512, 1, 128, 128, 6374, "v0.6.1"),
    ("a100", "gptj-6b", 120, 2, 128, 2048, 2192, "v0.6.1"),
    ("a100", "gptj-6b", 60, 1, 2048, 128, 670, "v0.6.1"),
    ("a100", "gptj-6b", 64, 2, 2048, 2048, 903, "v0.6.1"),
    ("a100", "llama2-7b", 384, 1, 128, 128, 5586, "v0.6.1"),
    ("a100", "llama2-7b", 60, 1, 128, 2048, 1928, "v0.6.1"),
    ("a100", "llama2-7b", 52, 1, 2048, 128, 591, "v0.6.1"),
    ("a100", "llama2-7b", 64, 2, 2048, 2048, 782, "v0.6.1"),
    ("a100", "llama2-70b", 1280, 4, 128, 128, 670, "v0.6.1"),
    ("a100", "llama2-70b", 240, 4, 128, 2048, 525, "v0.6.1"),
    ("a100", "llama2-70b", 120, 4, 2048, 128, 79, "v0.6.1"),
    ("a100", "falcon-180b", 1024, 8, 128, 128, 232, "v0.6.1"),
    ("a100", "falcon-180b", 128, 8, 128, 2048, 180, "v0.6.1"),
]

# (gpu, model, tp, input, first-token milliseconds); batch 1, TensorRT-LLM v0.5.
FIRST_TOKEN = [
    ("h100", "gptj-6b", 1, 128, 7), ("h100", "gptj-6b", 1, 2048, 29),
    ("h100", "llama2-7b", 1, 128, 7),
    ("h100", "falcon-180b", 8, 128, 27), ("h100", "falcon-180b", 8, 2048, 205),
    ("l40s", "gptj-6b", 1, 128, 12), ("l40s", "gptj-6b", 1, 2048, 71),
    ("l40s", "llama2-7b", 1, 128, 14), ("l40s", "llama2-7b", 1, 2048, 73),
    ("a100", "gptj-6b", 1, 128, 12), ("a100", "gptj-6b", 1, 2048, 129),
    ("a100", "llama2-7b", 1, 128, 16), ("a100", "llama2-7b", 1, 2048, 133),
    ("a100", "llama2-70b", 4, 128, 47),
    ("a100", "falcon-180b", 8, 128, 61), ("a100", "falcon-180b", 8, 2048, 509),
]


def scenario(name, gpu, model, tp, batch, isl, osl):
    catalog, _, dtype, link, _ = GPUS[gpu]
    fields = dict(SHAPES[model][0])
    fields["seq_len"] = max(fields["seq_len"], isl + osl)
    fields["precision"] = {"weights": dtype, "kv_cache": dtype, "compute": dtype}
    if dtype == "fp16":
        fields["precision"]["activations"] = "fp16"
    return {
        "name": name,
        "model": fields,
        "cluster": {"nodes": 1, "gpus_per_node": tp,
                    "gpu": {"catalog": catalog, "reserve": "6 GiB"},
                    "intra_node": {"bandwidth": link, "latency": "3 us"},
                    "inter_node": {"bandwidth": "400 Gb/s", "latency": "10 us"}},
        "workload": {"kind": "serving", "batch": batch, "input_tokens": isl,
                     "output_tokens": osl, "slo_per_token": "1 s",
                     "decode_attention": "per_query_head"},
        "plan": {"tp": tp},
    }


def assumptions(gpu, model):
    _, _, dtype, link, lead = GPUS[gpu]
    text = (f"{lead} (datasheet peaks, HBM bandwidth and memory; its GEMM efficiency, FP8 "
            "ratio and HBM read fractions are fitted under the calibration rule, "
            "data/gpus.json), nothing typed, so the record tests the defaults a user gets. ")
    if dtype == "fp8":
        text += ("FP8 weights, KV cache and GEMMs as the table's --enable_fp8 --fp8_kv_cache "
                 "engines; messages between ranks in 16 bits. ")
    else:
        text += "FP16 weights, KV cache and GEMMs (the document: remove the FP8 options on A100). "
    if gpu == "l40s":
        text += "No NVLink: ranks talk over PCIe Gen4 x16, 32 GB/s per direction (unused at tp 1). "
    elif gpu == "a100":
        text += f"NVLink 3: {link} per direction. "
    return text + SHAPES[model][1] + "." + KERNEL


def record(name, gpu, model, row, pointer, value, scenario_doc):
    return {
        "name": name,
        "source": {"document": "NVIDIA TensorRT-LLM, docs/source/performance.md",
                   "repository": "NVIDIA/TensorRT-LLM", "commit": COMMIT, "url": URL,
                   "row": row},
        "assumptions": assumptions(gpu, model),
        "measured": {"pointer": pointer, "value": value},
        "scenario": scenario_doc,
        "target": 0.25,
    }


def main():
    out = []
    for gpu, model, batch, tp, isl, osl, per_gpu, version in THROUGHPUT:
        name = f"trtllm-{gpu}-{GPUS[gpu][2]}-{model}-tp{tp}-b{batch}-{isl}-{osl}-throughput"
        engine = per_gpu * tp
        row = (f"Peak Throughput, {GPUS[gpu][1]}: {LABEL[model]}, batch {batch}, TP {tp}, "
               f"input {isl}, output {osl}: {per_gpu:,} output tokens/s per GPU"
               + (f", {engine:,} for the {tp}-GPU engine" if tp > 1 else "")
               + f" (TensorRT-LLM {version}; gptSessionBenchmark, static batches: {batch} "
               f"prompts prefilled, then {osl} decode steps)")
        doc = scenario(name, gpu, model, tp, batch, isl, osl)
        doc["workload"]["closed_loop"] = "lockstep"  # static batches
        r = record(name, gpu, model, row, "/plan/time/tokens_per_second", float(engine), doc)
        r["assumptions"] += STATIC
        out.append(r)
    for gpu, model, tp, isl, ms in FIRST_TOKEN:
        name = f"trtllm-{gpu}-{GPUS[gpu][2]}-{model}-tp{tp}-in{isl}-ttft"
        row = (f"Low Latency, {GPUS[gpu][1]}: {LABEL[model]}, batch 1, TP {tp}, input {isl}: "
               f"1st token latency {ms} ms (TensorRT-LLM v0.5; gptSessionBenchmark with one "
               "output token)")
        out.append(record(name, gpu, model, row, "/plan/time/ttft", ms / 1000.0,
                          scenario(name, gpu, model, tp, 1, isl, 1)))
    write_serving(out, keep_existing=True, dry_run="--dry-run" in sys.argv)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes validation/serving/ records for the rows of LMDeploy's docs/en/benchmark/a100_fp16.md
(commit 3e391df4, lmdeploy v0.1.0a1 on A100-80G, static inference benchmark: `batch` client
threads, each sending its next request when one finishes) that no record holds yet: per row the
output throughput and the mean first-token latency FTL(ave), and at batch 1 the median token
latency. A row whose clients' caches do not fit one engine (`planner memory` finds no plan: the
engine then runs fewer sequences and the others wait for a slot, which the model does not
represent) is listed, not written. The model's error is filled in by tools/serving_records.py.
Usage: tools/lmdeploy_table_records.py BUILD/planner [--dry-run]"""
import json, os, subprocess, sys, tempfile

COMMIT = "3e391df4673326f79363eebe030876861a9b7090"
URL = f"https://github.com/InternLM/lmdeploy/blob/{COMMIT}/docs/en/benchmark/a100_fp16.md"

# name: (model fields, where the shape comes from)
SHAPES = {
    "llama2-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008,
                       vocab=32000),
                  "Llama-2-7B shape (Touvron et al. 2023, arXiv 2307.09288, and its config.json: "
                  "32 layers, 4096, FFN 11008, 32 heads, 32 KV heads, vocabulary 32000)"),
    "llama2-13b": (dict(layers=40, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824,
                        vocab=32000),
                   "Llama-2-13B shape (Touvron et al. 2023, arXiv 2307.09288, and its "
                   "config.json: 40 layers, 5120, FFN 13824, 40 heads, 40 KV heads, vocabulary "
                   "32000)"),
    "internlm-20b": (dict(layers=60, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824,
                          vocab=103168),
                     "InternLM-20B shape (InternLM/InternLM model_cards/internlm_20b.md: 60 "
                     "layers; internlm/internlm-20b config.json: 5120, FFN 13824, 40 heads, "
                     "vocabulary 103168, untied; 20.1 B parameters as the card's 20 B)"),
    "llama2-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        vocab=32000),
                   "Llama-2-70B shape (Touvron et al. 2023, arXiv 2307.09288: 80 layers, 8192, "
                   "FFN 28672, 64 heads, 8 KV heads, vocabulary 32000)"),
}

# The table's columns kept: batch, tp, prompt_tokens, output_tokens, throughput (out tok/s),
# FTL(ave) (s), token latency 50 % (s); typed from the document at COMMIT.
ROWS = {
    "llama2-7b": """
1 1 1 128 100.02 0.011 0.009
1 1 128 128 102.21 0.022 0.01
1 1 128 2048 98.92 0.022 0.01
1 1 2048 128 86.1 0.139 0.01
1 1 2048 2048 93.78 0.14 0.011
16 1 1 128 1504.72 0.021 0.01
16 1 128 128 1272.47 0.129 0.011
16 1 128 2048 1010.62 0.13 0.015
16 1 2048 128 348.87 2.897 0.02
16 1 2048 2048 601.63 2.678 0.025
32 1 1 128 2136.73 0.079 0.011
32 1 128 128 2125.47 0.214 0.012
32 1 128 2048 1462.12 0.2 0.021
32 1 2048 128 450.43 4.288 0.031
32 1 2048 2048 733.34 4.118 0.04
64 1 1 128 4154.81 0.042 0.012
64 1 128 128 3024.07 0.44 0.014
64 1 128 2048 1852.06 0.535 0.03
64 1 2048 128 493.46 6.59 0.046
64 1 2048 2048 755.65 39.105 0.047
""",
    "llama2-13b": """
1 1 1 128 57.49 0.018 0.017
1 1 128 128 56.58 0.04 0.017
1 1 128 2048 55.29 0.04 0.018
1 1 2048 128 48.99 0.242 0.019
1 1 2048 2048 52.12 0.243 0.019
16 1 1 128 869.45 0.036 0.018
16 1 128 128 757.3 0.252 0.019
16 1 128 2048 605.88 0.253 0.026
16 1 2048 128 257.92 3.442 0.033
16 1 2048 2048 366.67 3.122 0.04
32 1 1 128 1667.5 0.034 0.019
32 1 128 128 1301.27 0.461 0.021
32 1 128 2048 860.14 0.833 0.034
32 1 2048 128 291.54 5.315 0.046
32 1 2048 2048 389.64 38.725 0.047
64 1 1 128 3049.16 0.044 0.02
64 1 128 128 2033.22 0.703 0.024
64 1 128 2048 998.86 7.805 0.045
64 1 2048 128 286.32 19.69 0.047
64 1 2048 2048 387.86 190.453 0.047
""",
    "internlm-20b": """
1 2 1 128 61.14 0.018 0.016
1 2 128 128 60.03 0.042 0.016
1 2 128 2048 58.26 0.042 0.017
1 2 2048 128 51.93 0.217 0.018
1 2 2048 2048 56.36 0.217 0.018
16 2 1 128 903.01 0.034 0.017
16 2 128 128 794.13 0.227 0.018
16 2 128 2048 669.87 0.227 0.024
16 2 2048 128 288.60 3.09 0.029
16 2 2048 2048 441.46 3.172 0.035
32 2 1 128 1673.64 0.037 0.019
32 2 128 128 1347.57 0.351 0.02
32 2 128 2048 1025.62 0.391 0.031
32 2 2048 128 352.45 6.062 0.042
32 2 2048 2048 514.60 10.36 0.049
64 2 1 128 2954.34 0.05 0.021
64 2 128 128 2122.92 0.591 0.024
64 2 128 2048 1276.61 2.529 0.042
64 2 2048 128 350.82 12.382 0.05
64 2 2048 2048 512.37 111.149 0.05
""",
    "llama2-70b": """
1 4 1 128 33.94 0.031 0.029
1 4 128 128 33.63 0.074 0.029
1 4 128 2048 32.38 0.074 0.031
1 4 2048 128 28.32 0.402 0.031
1 4 2048 2048 31.9 0.405 0.031
16 4 1 128 468.52 0.071 0.03
16 4 128 128 439.77 0.437 0.03
16 4 128 2048 482.99 0.403 0.033
16 4 2048 128 189.34 5.776 0.035
16 4 2048 2048 399.42 5.773 0.036
32 4 1 128 906.03 0.098 0.032
32 4 128 128 746.36 0.749 0.032
32 4 128 2048 853.56 0.732 0.036
32 4 2048 128 232.6 11.834 0.04
32 4 2048 2048 636.23 11.711 0.043
64 4 1 128 1425.79 0.213 0.037
64 4 128 128 1159.84 1.292 0.037
64 4 128 2048 1391.8 1.173 0.043
64 4 2048 128 270.47 17.402 0.05
64 4 2048 2048 930.46 21.29 0.055
""",
}

ASSUMPTIONS = (
    "A100 SXM 80GB: the planner's catalog entry A100-SXM4-80GB (datasheet peaks, HBM bandwidth "
    "and memory; its GEMM efficiency, FP8 ratio and HBM read fractions are fitted under the "
    "calibration rule, data/gpus.json), nothing typed, so the record tests the defaults a user "
    "gets. NVLink 3: 300 GB/s per direction. FP16 weights, KV cache and GEMMs: the table is "
    "'A100 (FP16)' and TurboMind keeps an fp16 cache unless told otherwise. Batch is the "
    "benchmark's number of client threads, each sending its next request when one finishes "
    "(a closed loop); throughput is generated tokens over total time including prefill, FTL(ave) "
    "the mean first-token latency over the requests, compared with the model's mean "
    "(docs/en/benchmark/profile_generation.md). Lockstep closed loop (`closed_loop: "
    "\"lockstep\"`, docs/model.md §8.4): profile_generation starts every client thread at once, "
    "each sending the same prompt for exactly the same number of output tokens "
    "(benchmark/profile_generation.py: one input_ids for all threads, test_round rounds each, "
    "the output length asserted), so the clients' rounds stay together: each round's prompts "
    "arrive together, the lead one alone on the idle engine (src/turbomind/models/llama/"
    "Request.h at v0.1.0a1: dequeue blocks only while nothing is queued) and the others at its "
    "next iteration. First token from a decode step (`first_token: \"decode_step\"`, "
    "docs/model.md §8.1): TurboMind v0.1.0a1's LlamaBatch::ContextDecode prefills the prompt "
    "but its last token ('subtract input/context len by 1 to skip last input token (will "
    "process with decoder later)'), which the next Generate step takes with the batch. ")


def scenario(name, model, batch, tp, isl, osl):
    fields = dict(SHAPES[model][0], gated_mlp=True, tied_embeddings=False,
                  seq_len=max(4096, isl + osl),
                  precision={"weights": "fp16", "kv_cache": "fp16", "compute": "fp16",
                             "activations": "fp16"})
    return {
        "name": name,
        "model": fields,
        "cluster": {"nodes": 1, "gpus_per_node": tp,
                    "gpu": {"catalog": "A100-SXM4-80GB", "reserve": "6 GiB"},
                    "intra_node": {"bandwidth": "300 GB/s", "latency": "3 us"},
                    "inter_node": {"bandwidth": "200 Gb/s", "latency": "10 us"}},
        "workload": {"kind": "serving", "concurrency": batch, "input_tokens": isl,
                     "output_tokens": osl, "slo_per_token": "1 s", "closed_loop": "lockstep",
                     "first_token": "decode_step"},
        "plan": {"tp": tp},
    }


def fits(planner, doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    out = subprocess.run([planner, "memory", path, "--format", "json"], capture_output=True,
                         text=True)
    os.unlink(path)
    try:
        return bool(json.loads(out.stdout)["fits"])
    except (json.JSONDecodeError, AttributeError):
        return False


def main():
    planner = sys.argv[1]
    folder = os.path.join(os.path.dirname(__file__), "..", "validation", "serving")
    have = set(os.listdir(folder))
    for model, table in ROWS.items():
        for line in table.strip().splitlines():
            b, tp, isl, osl, tput, ftl, tok50 = line.split()
            b, tp, isl, osl = int(b), int(tp), int(isl), int(osl)
            stem = f"lmdeploy-a100-fp16-{model}-tp{tp}-b{b}-{isl}-{osl}"
            where = f"{model}: batch {b}, tp {tp}, prompt_tokens {isl}, output_tokens {osl}: "
            metrics = [("throughput", "/plan/time/tokens_per_second", float(tput),
                        f"throughput {tput} out tok/s (FTL(ave) {ftl} s; token latency 50 % "
                        f"{tok50} s)"),
                       ("ttft", "/plan/time/ttft_mean", float(ftl),
                        f"FTL(ave) {ftl} s (throughput {tput} out tok/s)")]
            if b == 1:
                metrics.append(("itl", "/plan/time/per_token", float(tok50),
                                f"token latency 50 % {tok50} s (throughput {tput} out tok/s)"))
            doc = scenario(stem, model, b, tp, isl, osl)
            if not fits(planner, doc):
                print(f"not written, not one client's cache fits one engine: {stem}")
                continue
            for metric, pointer, value, row in metrics:
                name = f"{stem}-{metric}"
                if name + ".json" in have or duplicate(have, model, tp, b, isl, osl, metric):
                    continue
                record = {
                    "name": name,
                    "source": {"document": "InternLM LMDeploy, docs/en/benchmark/a100_fp16.md "
                               "(static inference benchmark, lmdeploy v0.1.0a1, x8 A100-80G, "
                               "CUDA 11.8)", "repository": "InternLM/lmdeploy", "commit": COMMIT,
                               "url": URL, "row": where + row},
                    "assumptions": ASSUMPTIONS + SHAPES[model][1] + ".",
                    "measured": {"pointer": pointer, "value": value},
                    "scenario": dict(doc, name=name),
                    "target": 0.25,
                }
                print(name)
                if "--dry-run" not in sys.argv:
                    with open(os.path.join(folder, name + ".json"), "w") as f:
                        json.dump(record, f, indent=2, ensure_ascii=False)
                        f.write("\n")


def duplicate(have, model, tp, b, isl, osl, metric):
    """The first records of this table were named by the row they quote (b1-in2048-ttft)."""
    if metric == "ttft" and b == 1:
        return f"lmdeploy-a100-fp16-{model}-tp{tp}-b1-in{isl}-ttft.json" in have and osl == 128
    return False


if __name__ == "__main__":
    main()

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

from nemo_common import LABEL, NAME, SHAPES, flops_per_token, record
from mbridge_perf_records import mbridge_b200_records, mbridge_moe_records, mbridge_records

NEMO = "https://github.com/NVIDIA/NeMo/blob"
SUMMARY_COMMIT = "8e3d65dcfe3504689bfc5b6e67d502780aacad41"
LONGSEQ_COMMIT = "19fadb67b09ba94c55094d34df119d6f9c565068"
LAUNCHER_COMMIT = "fee1762f"
LAUNCHER = ("NVIDIA/NeMo-Framework-Launcher @ fee1762f (2024-08-02), "
            "launcher_scripts/conf/training/{}.yaml")

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


def check_convention():
    """The summary table prints both tokens/s and TFLOP/s: the formula must join them."""
    for (m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, tflops) in SUMMARY:
        model = dict(SHAPES[m][0], seq_len=seq)
        ratio = tflops * 1e12 / (tps * flops_per_token(model, SHAPES[m][3]))
        if abs(ratio - 1) > 0.01:
            sys.exit(f"{m} on {gpus}: NeMo's FLOPs formula joins the row's figures only to "
                     f"{ratio:.4f}; the convention assumed for the long-sequence table fails")


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

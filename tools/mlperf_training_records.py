#!/usr/bin/env python3
"""Writes validation/ records for MLPerf Training closed-division LLM pre-training submissions on
H100 / H200 (github mlcommons/training_results_v3.0, v3.1, v4.0, v4.1 and v5.0), from the rows
typed below.

    python3 tools/mlperf_training_records.py            # writes validation/mlperf*.json
    python3 tools/mlperf_training_records.py --check    # exits 1 if a written record differs

- v3.0 (June 2023), benchmark gpt3: NVIDIA's 64 and 96 DGX H100 nodes and NVIDIA+CoreWeave's
  96, 192 and 448 HGX H100 nodes (512 to 3,584 GPUs; NeMo 1.17 on NGC 23.04, TP 4 PP 8 VP 12,
  FP8; the same layout as v3.1 on older software).
- v3.1 (November 2023), benchmark gpt3 (GPT-3 175B, continued pre-training from the reference
  checkpoint): NVIDIA's Eos submissions on 64, 96, 512, 768, 1024, 1280 and 1344 DGX H100 nodes
  (512 to 10,752 GPUs; the same NeMo 23.09 recipe, TP 4 PP 8 VP 12, FP8, one weak-scaling
  series), and Azure+NVIDIA's 1344 ND H100 v5 nodes (10,752 GPUs, the same recipe).
- v4.0 (June 2024), benchmark gpt3: NVIDIA's Eos submissions on 64, 1344 and 1452 DGX H100
  nodes (512, 10,752 and 11,616 GPUs; NeMo 24.04, FP8 with FP8 weights; TP 4 PP 8 VP 4
  micro-batch 2 on 64 nodes, TP 4 PP 6 VP 8 micro-batch 1 with per-layer CUDA graphs on the two
  large ones). Their logs print no per-step time: the step time is a block mean (below).
- v4.1 (November 2024), benchmark gpt3: NVIDIA's Eos submissions on 32 and 64 DGX H100 nodes
  (TP 4 PP 8 VP 6, micro-batch 2) and Oracle's on 192 and 384 OCI BM.GPU.H100.8 nodes (1,536
  and 3,072 GPUs, RoCE; TP 4 PP 8 VP 4, micro-batch 2); NeMo 24.09, FP8 with FP8 weights.
- v5.0 (June 2025), benchmark llama31_405b (Llama 3.1 405B, Mixtral 8x22B tokenizer, sequence
  8192): NVIDIA's Eos-dfw submissions on 64, 256, 304, 320 and 1024 H100 nodes (TP 8 PP 8 CP 2
  VP 8, FP8) and Nebius's on 64 and 128 H200 nodes (TP 4 PP 8 CP 2 VP 8).

The results publish no throughput table: each result_*.txt is the run's MLLOG, which prints the
global batch, the gradient accumulation and the sequence length once, and the time of every
training step (gpt3 v3.0 to v4.1: tracked_stats 'train_step_timing' ('train_step_timing in s' in
v4.1); llama31_405b v5.0: tracked_stats
'train_step_time', seconds, rank 0). The step time below is the median over every logged step of
the submission's result files (each file's first three steps left out: warm-up), computed once
from the logs at the commits named below and typed here with the number of steps it pools;
tokens/s per GPU = global batch x sequence / (step time x GPUs). Evaluation time is not in it
(the eval runs between steps, outside train_step_timing). The parallel layout is the config
script of the same submission; the logged accumulation (= GBS / (dp x micro-batch)) is checked
against it before anything is written.

v4.0 gpt3 is the exception: NVIDIA's NeMo 24.04 logs print no tracked_stats, only the time_ms
of block_start / block_stop around the training steps between two evaluations. A block's step
count is exact: its metadata epoch_count (tokens) / (global batch x sequence), which equals
conf/custom.yaml's val_check_interval ceil(24576 / global batch) (11, 10 and 9 steps). The
step time is the median over the blocks of the result files, each file's first block left out
(warm-up), of (block_stop - block_start) / steps: a block mean, not a per-step median. Checked
on v4.1's NVIDIA n32 and n64 logs, which print both: block mean 18.41 s and 9.5415 s against
per-step medians 18.3777 s and 9.5004 s (+0.18 %, +0.43 %).

Left out: v4.1 gpt3 on eos-dfw_n1452 (11,616 H100, NGC 24.04): its result files are v4.0's
eos-dfw_n1452 runs again (identical MLLOG lines and times, less two SYSJSON lines), recorded
once as the v4.0 record; v4.0's Supermicro (smc, 64 nodes) and Intel Gaudi2 gpt3
submissions (not examined); Google's v4.1 TPU submissions (not NVIDIA GPUs), the B200 and GB200
submissions (v4.1 b200_n8_preview is a single node; v5.0 NVL72 placement not stated), and every
single-node run.
"""
import argparse
import sys

from record_files import write_or_check
from mlperf_common import (COMMIT, FP8_DELAYED_HYBRID, GPT3, LAT_NOTE, LLAMA405, MINIBS, REPO,
                           SYSTEM_NAME, blob, impl_dir, layout, median_step)
from mlperf_gpt3_v4_records import gpt3_v40_record, gpt3_v41_record


# (round, submitter, results system dir, config script, nodes, GPU catalog, global batch
#  (sequences, logged), accumulation (logged), tp, pp, cp, vp, micro-batch, median step s,
#  steps pooled, result files)
ROWS = [
    ("3.0", "NVIDIA", "dgxh100_n64_nemo", "config_DGXH100_64x8x128x4x8_mbs1.sh", 64,
     "H100-SXM", 2048, 128, 4, 8, 1, 12, 1, 12.0771, 855, 3),
    ("3.0", "NVIDIA", "dgxh100_n96_nemo", "config_DGXH100_96x8x128x4x8_mbs1.sh", 96,
     "H100-SXM", 3072, 128, 4, 8, 1, 12, 1, 12.1263, 583, 3),
    ("3.0", "NVIDIA_CoreWeave", "coreweave_hgxh100_n96_ngc23.04_pytorch",
     "config_DGXH100_96x8x128x4x8_mbs1.sh", 96, "H100-SXM", 3072, 128, 4, 8, 1, 12, 1, 12.2993,
     591, 3),
    ("3.0", "NVIDIA_CoreWeave", "coreweave_hgxh100_n192_ngc23.04_pytorch",
     "config_DGXH100_192x8x64x4x8_mbs1.sh", 192, "H100-SXM", 3072, 64, 4, 8, 1, 12, 1, 6.3378,
     607, 3),
    ("3.0", "NVIDIA_CoreWeave", "coreweave_hgxh100_n448_ngc23.04_pytorch",
     "config_DGXH100_448x8x24x4x8_mbs1.sh", 448, "H100-SXM", 2688, 24, 4, 8, 1, 12, 1, 2.5976,
     651, 3),
    ("3.1", "NVIDIA", "eos_n64_ngc23.09_nemo", "config_DGXH100_64x8x192x4x8_mbs1.sh", 64,
     "H100-SXM", 2048, 128, 4, 8, 1, 12, 1, 11.052, 855, 3),
    ("3.1", "NVIDIA", "eos_n96_ngc23.09_nemo", "config_DGXH100_96x8x128x4x8_mbs1.sh", 96,
     "H100-SXM", 3072, 128, 4, 8, 1, 12, 1, 11.0751, 591, 3),
    ("3.1", "NVIDIA", "eos-dfw_n512_ngc23.09_nemo", "config_DGXH100_512x8x16x4x8_mbs1.sh", 512,
     "H100-SXM", 2048, 16, 4, 8, 1, 12, 1, 1.6086, 855, 3),
    ("3.1", "NVIDIA", "eos-dfw_n768_ngc23.09_nemo", "config_DGXH100_768x8x16x4x8_mbs1.sh", 768,
     "H100-SXM", 3072, 16, 4, 8, 1, 12, 1, 1.6153, 591, 3),
    ("3.1", "NVIDIA", "eos-dfw_n1024_ngc23.09_nemo", "config_DGXH100_1024x8x16x4x8_mbs1.sh",
     1024, "H100-SXM", 4096, 16, 4, 8, 1, 12, 1, 1.6192, 465, 3),
    ("3.1", "NVIDIA", "eos-dfw_n1280_ngc23.09_nemo", "config_DGXH100_1280x8x8x4x8_mbs1.sh", 1280,
     "H100-SXM", 2560, 8, 4, 8, 1, 12, 1, 0.9255, 681, 3),
    ("3.1", "NVIDIA", "eos-dfw_n1344_ngc23.09_nemo", "config_DGXH100_1344x8x8x4x8_mbs1.sh", 1344,
     "H100-SXM", 2688, 8, 4, 8, 1, 12, 1, 0.9296, 651, 3),
    ("3.1", "Azure+NVIDIA", "ND_H100_v5_n1344_pytorch", "config_DGXH100_1344x8x8x4x8_mbs1.sh",
     1344, "H100-SXM", 2688, 8, 4, 8, 1, 12, 1, 0.946, 651, 3),
    ("4.0", "NVIDIA", "eos_n64_ngc24.04_nemo", "config_DGXH100_64x8x128x4x8_mbs2.sh", 64,
     "H100-SXM", 2304, 72, 4, 8, 1, 4, 2, 10.9797, 67, 3),
    ("4.0", "NVIDIA", "eos-dfw_n1344_ngc24.04_nemo", "config_DGXH100_1344x8x6x4x6_mbs1_cg.sh",
     1344, "H100-SXM", 2688, 6, 4, 6, 1, 8, 1, 0.9207, 63, 3),
    ("4.0", "NVIDIA", "eos-dfw_n1452_ngc24.04_nemo", "config_DGXH100_1452x8x6x4x6_mbs1_cg.sh",
     1452, "H100-SXM", 2904, 6, 4, 6, 1, 8, 1, 0.9217, 66, 3),
    ("4.1", "NVIDIA", "eos_n32_ngc24.09_nemo", "config_DGXH100_32x8x256x4x8_mbs2.sh", 32,
     "H100-SXM", 2048, 128, 4, 8, 1, 6, 2, 18.3777, 867, 3),
    ("4.1", "NVIDIA", "eos_n64_ngc24.09_nemo", "config_DGXH100_64x8x128x4x8_mbs2.sh", 64,
     "H100-SXM", 2048, 64, 4, 8, 1, 6, 2, 9.5004, 867, 3),
    ("4.1", "Oracle", "1536xBM.GPU.H100.8", "config_DGXH100_192x8x64x4x8_mbs2.sh", 192,
     "H100-SXM", 3072, 32, 4, 8, 1, 4, 2, 5.1669, 607, 3),
    ("4.1", "Oracle", "3072xBM.GPU.H100.8", "config_DGXH100_384x8x32x4x8_mbs2.sh", 384,
     "H100-SXM", 3072, 16, 4, 8, 1, 4, 2, 3.0676, 607, 3),
    ("5.0", "NVIDIA", "eos-dfw_n64_ngc25.01_nemo", "config_DGXH100_64x8x288xtp8pp8cp2.sh", 64,
     "H100-SXM", 1152, 288, 8, 8, 2, 8, 1, 55.1342, 729, 3),
    ("5.0", "NVIDIA", "eos-dfw_n256_ngc25.01_nemo", "config_DGXH100_256x8x72xtp8pp8cp2.sh", 256,
     "H100-SXM", 1152, 72, 8, 8, 2, 8, 1, 14.22, 770, 3),
    ("5.0", "NVIDIA", "eos-dfw_n304_ngc25.01_nemo", "config_DGXH100_304x8x64xtp8pp8cp2.sh", 304,
     "H100-SXM", 1216, 64, 8, 8, 2, 8, 1, 12.7279, 810, 3),
    ("5.0", "NVIDIA", "eos-dfw_n320_ngc25.01_nemo", "config_DGXH100_320x8x56xtp8pp8cp2.sh", 320,
     "H100-SXM", 1120, 56, 8, 8, 2, 8, 1, 11.1742, 765, 3),
    ("5.0", "NVIDIA", "eos-dfw_n1024_ngc25.01_nemo", "config_DGXH100_1024x8x24xtp8pp8cp2.sh",
     1024, "H100-SXM", 1536, 24, 8, 8, 2, 8, 1, 5.1794, 642, 3),
    ("5.0", "Nebius", "nebius_soperator_8xH200_n64_ngc25.01_nemo",
     "config_DGXH200_64x8x144xtp4pp8cp2.sh", 64, "H200", 1152, 144, 4, 8, 2, 8, 1, 50.0129, 729,
     3),
    ("5.0", "Nebius", "nebius_soperator_8xH200_n128_ngc25.01_nemo",
     "config_DGXH200_128x8x72xtp4pp8cp2.sh", 128, "H200", 1152, 72, 4, 8, 2, 8, 1, 25.3557, 729,
     3),
]



# What differs between the two gpt3 rounds' implementations (same layout and FP8 recipe).
GPT3_ROUND = {
    "3.0": dict(
        month="June 2023", software="NeMo v1.17.0_pt_23.04, Transformer Engine release_v0.8, "
        "NGC PyTorch 23.04 (the implementation's Dockerfile)", nemo="NeMo 1.17",
        recipe="config_common.sh (NUM_LAYERS 96, HIDDEN_SIZE 12288, FFN_HIDDEN_SIZE 49152, "
        "NUM_ATTENTION_HEADS 96, INTERLEAVED_PIPELINE 12, USE_DIST_OPTIMIZER True, "
        "ACT_CKPT_GRANULARITY null) with config_tp_h100.sh (TP_COMM_OVERLAP True, "
        "h100tp4pp8mbs1_tp_comm_overlap_cfg.yaml) and config_fp8.sh; run_and_time.sh passes "
        "them to conf/megatron_gpt_config.yaml (sequence_parallel True, overlap_p2p_comm True, "
        "hidden/attention/ffn dropout 0.0, normalization 'layernorm1p', "
        "make_vocab_size_divisible_by 128, distributed_fused_adam with grad_sync_dtype bf16 and "
        "overlapped gradient and parameter syncs)",
        files="config_common.sh, config_tp_h100.sh, config_fp8.sh, run_and_time.sh, "
        "conf/megatron_gpt_config.yaml, Dockerfile",
        tp_kernels=None),
    "3.1": dict(
        month="November 2023", software="NeMo at bd0b818a, Transformer Engine at 09ba8427, NGC "
        "PyTorch 23.09 (the implementation's Dockerfile)", nemo="NeMo 23.09",
        recipe="conf/custom.yaml (num_layers 96, hidden_size 12288, ffn_hidden_size 4 x hidden, "
        "num_attention_heads 96, virtual pipeline 12 as the default of INTERLEAVED_PIPELINE, "
        "which no config sets, sequence_parallel True, overlap_p2p_comm True, no activation "
        "checkpointing, hidden and attention dropout 0.0, normalization 'layernorm1p') with "
        "config_common.sh (USE_DIST_OPTIMIZER True) and config_fp8.sh; "
        "conf/optim/distributed_fused_adam.yaml: grad_sync_dtype bf16, overlapped gradient and "
        "parameter syncs",
        files="config_common.sh, config_fp8.sh, conf/custom.yaml, "
        "conf/optim/distributed_fused_adam.yaml, Dockerfile",
        tp_kernels="the tensor-parallel reduce-scatter runs as FP8 atomic GEMMs "
        "(NVTE_UB_ATOMIC_GEMM_RS=1, NVTE_RS_STRIDED_ATOMIC=1); the planner's tp overlap does not "
        "distinguish the kernel"),
}


def gpt3_record(row):
    (rnd, sub, system, cfg, nodes, gpu, gbs, accum, tp, pp, cp, vp, mbs, step, nsteps,
     nfiles) = row
    R = GPT3_ROUND[rnd]
    gpus = nodes * 8
    seq = GPT3["seq_len"]
    impl = impl_dir(rnd, sub, system)
    results = f"{sub}/results/{system}/gpt3"
    sysname = SYSTEM_NAME[sub] if rnd == "3.1" or sub != "NVIDIA" else "NVIDIA DGX H100"
    notes = [
        LAT_NOTE,
        "model: GPT-3 175B as the implementation configures it (96 layers, hidden 12288, FFN 4 x "
        "hidden, 96 heads, sequence 2048, no dropout, 'layernorm1p', a LayerNorm); NeMo's GPT "
        "defaults underneath (learned absolute positions, biases on every linear layer, shared "
        "input and output embeddings). Vocabulary: the benchmark's SentencePiece model "
        "c4_en_301_5Mexp2_spm (50,257 tokens, the reference's PassThroughVocabulary(size=50257)) "
        "padded by NeMo to a multiple of make_vocab_size_divisible_by 128 x tp = 512: 50,688",
        f"parallel layout: the config script {cfg} (TENSOR_MODEL_PARALLEL {tp}, "
        f"PIPELINE_MODEL_PARALLEL {pp}, MICRO_BATCH_SIZE {mbs}, TP_COMM_OVERLAP True) and "
        + R["recipe"] + ": virtual pipeline 12 (one layer per virtual stage), plan.zero 1, "
        "bytes_per_param 16, plan.recompute none",
        f"batch: the log's global_batch_size {gbs} and gradient_accumulation_steps {accum} "
        f"(= {gbs} / (dp {gpus // (tp * pp)} x micro-batch {mbs}), checked)",
        "tensor-parallel communication overlap with userbuffers (ub_tp_comm_overlap, the "
        "h100tp4pp8mbs1 configuration): plan.tp_comm_overlap; stage sends overlapped with compute "
        "(overlap_p2p_comm): plan.pp_comm_overlap",
        "software: " + R["software"],
        f"network: the system description ({sub}/systems/{system}.json): 8 x 400 Gb/s "
        "InfiniBand NDR (ConnectX-7) per node for compute, NVLink 4 with NVSwitch: the "
        "catalog's DGX H100 reference network (8 x 400 Gb/s per node, 50 GB/s per GPU)",
        "the run continues from the benchmark's reference checkpoint (MLPerf's gpt3 starts at "
        "step 4000 of a 175B pre-training); per-step cost is that of pre-training",
    ]
    if cfg in MINIBS and rnd == "3.1":
        notes.append(
            f"the submission's {cfg} sets MINIBS {MINIBS[cfg]} (global batch "
            f"{MINIBS[cfg] * gpus // (tp * pp)}), but every result log prints global_batch_size "
            f"{gbs} and gradient_accumulation_steps {accum}: the record follows the logs (the run "
            "that was timed)")
    tag = {"NVIDIA": "", "Azure+NVIDIA": "azure-", "NVIDIA_CoreWeave": "coreweave-"}[sub]
    rid = f"mlperf{rnd.replace('.', '')}-{tag}gpt3-175b-fp8-{gpus}gpu"
    family_tag = {"NVIDIA": "eos" if rnd == "3.1" else "dgxh100", "Azure+NVIDIA": "azure",
                  "NVIDIA_CoreWeave": "coreweave"}[sub]
    tps = gbs * seq / (step * gpus)
    not_modelled = {
        "vpp": vp,
        "precision": FP8_DELAYED_HYBRID,
    }
    if R["tp_kernels"]:
        not_modelled["tp_overlap_kernels"] = R["tp_kernels"]
    not_modelled["attention_kernel"] = (
        "Transformer Engine of the submission (" + R["software"].split(", NGC")[0] + ") picks "
        "FlashAttention or cuDNN fused attention itself; timed with the planner's cudnn curve "
        "(cuDNN 9.19 of 2026)")
    return {
        "id": rid,
        "set": "validation",
        "family": f"mlperf{rnd.replace('.', '')}-gpt3-175b-fp8-{family_tag}",
        "source": {
            "citation": f"MLPerf Training v{rnd} results ({R['month']}; github {REPO[rnd]}, "
                        f"commit {COMMIT[rnd]}), closed division, benchmark gpt3, submitter "
                        f"{sub}, system {system} ({nodes} x 8 H100 SXM5 80GB)",
            "url": blob(rnd, f"{results}/result_0.txt"),
            "location": f"{results}/result_0.txt .. result_{nfiles - 1}.txt: MLLOG "
                        f"'global_batch_size' {gbs}, 'gradient_accumulation_steps' {accum}, "
                        f"'max_sequence_length' {seq}, and tracked_stats 'train_step_timing' "
                        f"of every step: median {step} s over {nsteps} steps",
            "secondary": [
                f"same commit, {impl}/{cfg}, {R['files']}: the recipe",
                f"same commit, {sub}/systems/{system}.json: the machine",
            ],
        },
        "name": (f"GPT-3 175B (MLPerf Training v{rnd} gpt3) on {gpus} H100 ({sysname}, "
                 f"{R['nemo']}, FP8)"),
        "model": dict(GPT3, precision={"compute": "fp8"}),
        **layout(nodes, gpu, gbs * seq, mbs, gpus // (tp * pp * cp), tp, pp, cp, accum),
        "measured": median_step(gbs, seq, step, gpus, tps, "train_step_timing", nsteps, nfiles),
        "not_modelled": not_modelled,
        "notes": notes,
    }

def llama_record(row):
    (rnd, sub, system, cfg, nodes, gpu, gbs, accum, tp, pp, cp, vp, mbs, step, nsteps,
     nfiles) = row
    gpus = nodes * 8
    seq = LLAMA405["seq_len"]
    h200 = gpu == "H200"
    impl = impl_dir(rnd, sub, system)
    results = f"{sub}/results/{system}/llama31_405b"
    dp = gpus // (tp * pp * cp)
    notes = [
        LAT_NOTE,
        "model: pretrain.py's Llama31Config405B (NeMo v2.2.0: 126 layers, hidden 16384, FFN "
        "53248 SwiGLU, 128 heads, 8 query groups, untied embeddings, no dropout; the planner's "
        "preset data/models/llama-3.1-405b.json) with conf/custom.yaml's num_layers 126 and "
        "encoder_seq_length 8192; vocabulary 32,768: the benchmark replaces Llama 3's "
        "tokenizer with Mixtral 8x22B's (the implementation's README.md, 'Model details'; "
        "already a multiple of 128 x tp)",
        f"parallel layout: the submission's {cfg} (TENSOR_MODEL_PARALLEL {tp}, "
        f"PIPELINE_MODEL_PARALLEL {pp}, INTERLEAVED_PIPELINE {vp}, CONTEXT_PARALLEL {cp}, "
        f"MICRO_BATCH_SIZE {mbs}, TP_COMM_OVERLAP True, ASYM_PP_EMBED and ASYM_PP_LOSS True: "
        "plan.tables_in_pipeline_split, 126 layers + embedding + loss = 2 per virtual stage) "
        "and config_common.sh (FP8 True, FP8_PARAMS True, USE_DIST_OPTIMIZER True, "
        "OVERLAP_GRAD_REDUCE, OVERLAP_PARAM_GATHER, OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP, "
        "DEFER_EMBEDDING_WGRAD_COMPUTE); conf/custom.yaml: sequence_parallel True, "
        "overlap_p2p_comm True, no activation checkpointing, cross_entropy_loss_fusion True",
        "optimizer: distributed optimizer (plan.zero 1); pretrain.py builds the mixed precision "
        "with grad_reduce_in_fp32 False: gradients reduced in bf16, bytes_per_param 16",
        f"batch: the log's global_batch_size {gbs} and gradient_accumulation_steps {accum} "
        f"(= {gbs} / (dp {dp} x micro-batch {mbs}), checked; the config's GBS = MINIBS x dp)",
        "tensor-parallel communication overlap with userbuffers (conf/tp_overlap/"
        f"h100tp{tp}mbs1.yaml): plan.tp_comm_overlap; overlapped interleaved stage sends: "
        "plan.pp_comm_overlap",
        "software: NGC PyTorch 25.01 with NeMo v2.2.0 (the implementation's Dockerfile)",
        ("network: the system description (Nebius/systems/" + system + ".json): H200-SXM5-"
         "141GB, 8 x ConnectX-7 IB NDR 400 Gb/s per node, NVLink Gen4 + NVSwitch Gen3; the "
         "catalog's H200 entry and its reference network. The H200 has no calibration run: "
         "the pooled default efficiency" if h200 else
         "network: the system description (NVIDIA/systems/" + system + ".json): H100-SXM5-"
         "80GB, 8 x ConnectX-7 IB NDR 400 Gb/s per node, NVLink Gen4 900 GB/s + NVSwitch Gen3: "
         "the catalog's DGX H100 reference network"),
        "the log's tracked_stats also print 'max_memory_usage' (H100 runs 50.9-58.8, H200 "
        "104.8-109.1); its unit and statistic (allocated or reserved, GB or GiB) are set in "
        "mlperf_common, which the submission does not include: not recorded as memory_peak",
    ]
    if h200:
        gpu_name, tag = "H200", "h200"
    else:
        gpu_name, tag = "H100", "gpu"
    rid = f"mlperf50-{'nebius-' if h200 else ''}llama3.1-405b-fp8-{gpus}{tag}"
    tps = gbs * seq / (step * gpus)
    return {
        "id": rid,
        "set": "validation",
        "family": "mlperf50-llama3.1-405b-fp8-" + ("nebius-h200" if h200 else "eos"),
        "source": {
            "citation": f"MLPerf Training v5.0 results (github {REPO[rnd]}, commit "
                        f"{COMMIT[rnd]}), closed division, benchmark llama31_405b, submitter "
                        f"{sub}, system {system} ({nodes} x 8 {gpu_name})",
            "url": blob(rnd, f"{results}/result_0.txt"),
            "location": f"{results}/result_0.txt .. result_{nfiles - 1}.txt: MLLOG "
                        f"'global_batch_size' {gbs}, 'gradient_accumulation_steps' {accum}, "
                        f"'max_sequence_length' {seq}, and tracked_stats 'train_step_time' of "
                        f"every step: median {step} s over {nsteps} steps",
            "secondary": [
                f"same commit, {impl}/{cfg}, config_common.sh, conf/custom.yaml, pretrain.py, "
                "Dockerfile, README.md: the recipe",
                f"same commit, {sub}/systems/{system}.json: the machine",
            ],
        },
        "name": (f"Llama 3.1 405B (MLPerf Training v5.0 llama31_405b) on {gpus} {gpu_name} "
                 f"({'Nebius' if h200 else 'NVIDIA Eos-dfw'}, NeMo 25.01, FP8)"),
        "model": dict(LLAMA405, precision={"compute": "fp8"}),
        **layout(nodes, gpu, gbs * seq, mbs, dp, tp, pp, cp, accum, tables=True),
        "measured": median_step(gbs, seq, step, gpus, tps, "train_step_time", nsteps, nfiles),
        "not_modelled": {
            "vpp": vp,
            "precision": "fp8 (Transformer Engine delayed scaling, conf/custom.yaml fp8_recipe "
                         "'delayed', amax history 1, 'most_recent'; FP8_HYBRID not set, so "
                         "pretrain.py selects 'e4m3' for forward and backward); modelled as "
                         "model.precision.compute fp8 with the fitted tensor-wise ratio",
            "fp8_params": "true: the weights are held in FP8 instead of bf16 (the planner "
                          "keeps 16 bytes per parameter)",
            "attention_kernel": "cuDNN fused attention of the NGC 25.01 container (Transformer "
                                "Engine on Hopper); the planner's cudnn curve is cuDNN 9.19's",
            "overlaps": "the embedding's weight gradient deferred (DEFER_EMBEDDING_WGRAD_COMPUTE,"
                        " WGRAD_DEFERRAL_LIMIT 50) and the parameter all-gather overlapped with "
                        "the optimizer step (OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP); NCCL SHARP "
                        "on Eos (NCCL_SHARP_GROUP_SIZE_THRESH)",
        },
        "notes": notes,
    }


def check_rows():
    for row in ROWS:
        (rnd, sub, system, cfg, nodes, gpu, gbs, accum, tp, pp, cp, vp, mbs, *_ ) = row
        gpus = nodes * 8
        mp = tp * pp * cp
        if gpus % mp or gbs % (gpus // mp * mbs) or gbs // (gpus // mp * mbs) != accum:
            sys.exit(f"{system}: global batch {gbs} / (dp x mbs) is not the logged accumulation "
                     f"{accum}; nothing written")
        layers = 126 + 2 if rnd == "5.0" else 96
        if layers % (pp * vp):
            sys.exit(f"{system}: {layers} layers do not split over pp {pp} x vp {vp}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with validation/ instead of writing")
    args = parser.parse_args()
    check_rows()
    records = [{"5.0": llama_record, "4.1": gpt3_v41_record,
                "4.0": gpt3_v40_record}.get(row[0], gpt3_record)(row) for row in ROWS]
    write_or_check(records, args.check)

if __name__ == "__main__":
    main()

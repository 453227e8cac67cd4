"""The GPT-3 175B records of MLPerf Training v4.0 and v4.1 (tools/mlperf_training_records.py
types their rows and writes them; its docstring says what each round's logs give)."""
from mlperf_common import (COMMIT, FP8_DELAYED_HYBRID, FP8_PARAMS, GPT3, LAT_NOTE, REPO, blob,
                           layout, median_step)


# v4.1 (November 2024): the same GPT-3 175B benchmark on NeMo 24.09 with micro-batch 2, FP8
# weights and fewer virtual stages. NVIDIA's implementation directory holds its conf/; Oracle's
# five gpt3 directories hold identical files without conf/, and every Oracle log prints the
# resolved NeMo configuration, which the record cites instead.
ORACLE_IMPL = "Oracle/benchmarks/gpt3/DGXH100_384x8x32x4x8_mbs2"
V41_SOFTWARE = ("NeMo 24.09-alpha.rc0 (base r2.0.0) and Megatron-LM 24.09-alpha.rc0 on NGC "
                "PyTorch 24.09 with its Transformer Engine (TE_REVISION SKIP; the "
                "implementation's Dockerfile)")


def gpt3_v41_record(row):
    (rnd, sub, system, cfg, nodes, gpu, gbs, accum, tp, pp, cp, vp, mbs, step, nsteps,
     nfiles) = row
    oracle = sub == "Oracle"
    gpus = nodes * 8
    dp = gpus // (tp * pp * cp)
    seq = GPT3["seq_len"]
    impl = ORACLE_IMPL if oracle else f"NVIDIA/benchmarks/gpt3/implementations/{system}"
    results = f"{sub}/results/{system}/gpt3"
    minibs = gbs // dp
    per_stage = GPT3["layers"] // (pp * vp)
    if oracle:
        layout_src = (
            f"the config script {cfg} (MINIBS {minibs}, TENSOR_MODEL_PARALLEL {tp}, "
            f"PIPELINE_MODEL_PARALLEL {pp}, INTERLEAVED_PIPELINE {vp}, MICRO_BATCH_SIZE {mbs}, "
            "TP_COMM_OVERLAP True) with config_common.sh (USE_DIST_OPTIMIZER True, FP8_PARAMS "
            "True, BUCKET_CAP_MB 200, MC_TP_OVERLAP_AG/RS True, NVTE_UB_ATOMIC_GEMM_RS 1) and "
            "config_fp8.sh, all in " + impl + " (the five Oracle gpt3 directories hold the same "
            "files; the submission has no conf/ directory). Each result log prints the resolved "
            "NeMo configuration, which agrees: tensor_model_parallel_size 4, "
            "pipeline_model_parallel_size 8, virtual_pipeline_model_parallel_size 4, "
            "micro_batch_size 2, sequence_parallel true, overlap_p2p_comm true, "
            "activations_checkpoint_granularity null, ub_tp_comm_overlap true, fp8 true, "
            "fp8_params true, defer_embedding_wgrad_compute false, distributed_fused_adam with "
            "grad_sync_dtype bf16 and overlap_grad_sync/overlap_param_sync true, normalization "
            "layernorm1p, hidden_dropout and attention_dropout 0.0")
    else:
        layout_src = (
            f"the config script {cfg} (MINIBS {minibs}, TENSOR_MODEL_PARALLEL {tp}, "
            f"PIPELINE_MODEL_PARALLEL {pp}, INTERLEAVED_PIPELINE {vp}, MICRO_BATCH_SIZE {mbs}, "
            "TP_COMM_OVERLAP True, DEFER_EMBEDDING_WGRAD_COMPUTE True, WGRAD_DEFERRAL_LIMIT 65"
            + (", BUCKET_CAP_MB 125 ('Fix OOM')" if nodes == 32 else "") + ") with "
            "config_common.sh (USE_DIST_OPTIMIZER True, FP8_PARAMS True, MC_TP_OVERLAP_AG/RS "
            "True, NVTE_UB_ATOMIC_GEMM_RS 1) and config_fp8.sh; conf/custom.yaml: "
            "sequence_parallel True, overlap_p2p_comm True, no activation checkpointing "
            "(ACT_CKPT_GRANULARITY null), hidden and attention dropout 0.0, normalization "
            "'layernorm1p'; conf/optim/distributed_fused_adam.yaml: grad_sync_dtype bf16, "
            "overlapped gradient and parameter syncs. The logs print no configuration")
    if oracle:
        network = (
            f"network: the system description (Oracle/systems/{system}.json): H100-SXM5-80GB, "
            "NVLink Gen4 900 GB/s + NVSwitch Gen3, scale-out 'ROCE2' (Ethernet/RDMA RoCE v2 on "
            "a switched network) with no NIC count or speed; config_common.sh lists 16 HCAs in "
            "NCCL_IB_HCA. The per-node scale-out bandwidth is not published: assumed the "
            "catalog's DGX H100 reference network (3.2 Tb/s per node, 50 GB/s per GPU), and "
            "SHARP is off (NCCL_SHARP_GROUP_SIZE_THRESH commented out)")
    else:
        network = (
            f"network: the system description (NVIDIA/systems/{system}.json): H100-SXM5-80GB, "
            "8 x ConnectX-7 IB NDR 400 Gb/s per node for compute, NVLink Gen4 900 GB/s + "
            "NVSwitch Gen3: the catalog's DGX H100 reference network (8 x 400 Gb/s per node, "
            "50 GB/s per GPU)")
    notes = [
        LAT_NOTE,
        "model: GPT-3 175B as the implementation configures it (96 layers, hidden 12288, FFN 4 x "
        "hidden, 96 heads, sequence 2048, no dropout, 'layernorm1p', a LayerNorm); learned "
        "absolute positions, biases on every linear layer, shared input and output embeddings. "
        "Vocabulary: the benchmark's SentencePiece model c4_en_301_5Mexp2_spm (50,257 tokens) "
        "padded by NeMo to a multiple of make_vocab_size_divisible_by 128 x tp = 512: 50,688",
        f"parallel layout: {layout_src}: virtual pipeline {vp} ({per_stage} layers per virtual "
        "stage), plan.zero 1, bytes_per_param 16, plan.recompute none",
        f"batch: the log's global_batch_size {gbs} and gradient_accumulation_steps {accum} "
        f"(= {gbs} / (dp {dp} x micro-batch {mbs}), checked; the config's GBS = MINIBS {minibs} "
        f"x dp {dp})",
        f"tensor-parallel communication overlap with userbuffers (h100tp{tp}mbs{mbs}): "
        "plan.tp_comm_overlap; stage sends overlapped with compute (overlap_p2p_comm): "
        "plan.pp_comm_overlap",
        "software: " + V41_SOFTWARE + (
            "; Oracle's Dockerfile builds from nvcr.io/nvdlfwea/pytorch:24.09-py3 and the logs' "
            "SYSJSON prints 'PyTorch NVIDIA Release 24.09' (the system description's 'Release "
            "24.04' disagrees; the logs are followed)" if oracle else ""),
        network,
        "the run continues from the benchmark's reference checkpoint (step 4000 of a 175B "
        "pre-training, converted by convert_v4.0_checkpoint_to_v4.1.sh); per-step cost is that "
        "of pre-training",
    ]
    gpus_tag = f"{gpus}gpu"
    rid = f"mlperf41-{'oracle-' if oracle else ''}gpt3-175b-fp8-{gpus_tag}"
    tps = gbs * seq / (step * gpus)
    not_modelled = {
        "vpp": vp,
        "precision": FP8_DELAYED_HYBRID,
        "fp8_params": FP8_PARAMS,
        "tp_overlap_kernels": "the tensor-parallel reduce-scatter runs as FP8 atomic GEMMs "
                              "(NVTE_UB_ATOMIC_GEMM_RS=1, NVTE_RS_STRIDED_ATOMIC=1) and the "
                              "all-gather and reduce-scatter through multicast (MC_TP_OVERLAP_AG,"
                              " MC_TP_OVERLAP_RS); the planner's tp overlap does not distinguish "
                              "the kernel",
        "attention_kernel": "Transformer Engine of the NGC 24.09 container picks FlashAttention "
                            "or cuDNN fused attention itself; timed with the planner's cudnn "
                            "curve (cuDNN 9.19 of 2026)",
    }
    if not oracle:
        not_modelled["overlaps"] = ("the embedding's weight gradient deferred "
                                    "(DEFER_EMBEDDING_WGRAD_COMPUTE, WGRAD_DEFERRAL_LIMIT 65); "
                                    "NCCL SHARP on Eos (NCCL_SHARP_GROUP_SIZE_THRESH 2)")
    sysname = "Oracle OCI BM.GPU.H100.8" if oracle else "NVIDIA Eos"
    return {
        "id": rid,
        "set": "validation",
        "family": f"mlperf41-gpt3-175b-fp8-{'oracle' if oracle else 'eos'}",
        "source": {
            "citation": f"MLPerf Training v4.1 results (November 2024; github {REPO[rnd]}, "
                        f"commit {COMMIT[rnd]}), closed division, benchmark gpt3, submitter "
                        f"{sub}, system {system} ({nodes} x 8 H100 SXM5 80GB)",
            "url": blob(rnd, f"{results}/result_0.txt"),
            "location": f"{results}/result_0.txt .. result_{nfiles - 1}.txt: MLLOG "
                        f"'global_batch_size' {gbs}, 'gradient_accumulation_steps' {accum}, "
                        f"'max_sequence_length' {seq}, and tracked_stats 'train_step_timing "
                        f"in s' of every step: median {step} s over {nsteps} steps",
            "secondary": [
                f"same commit, {impl}/{cfg}, config_common.sh, config_fp8.sh"
                + (", Dockerfile; the logs' printed NeMo configuration: the recipe" if oracle
                   else ", conf/custom.yaml, conf/optim/distributed_fused_adam.yaml, "
                        "Dockerfile: the recipe"),
                f"same commit, {sub}/systems/{system}.json: the machine",
            ],
        },
        "name": (f"GPT-3 175B (MLPerf Training v4.1 gpt3) on {gpus} H100 ({sysname}, "
                 "NeMo 24.09, FP8)"),
        "model": dict(GPT3, precision={"compute": "fp8"}),
        **layout(nodes, gpu, gbs * seq, mbs, dp, tp, pp, cp, accum),
        "measured": median_step(gbs, seq, step, gpus, tps, "train_step_timing", nsteps, nfiles),
        "not_modelled": not_modelled,
        "notes": notes,
    }


# v4.0 (June 2024): NVIDIA's Eos gpt3 submissions on NeMo 24.04. Their logs print no per-step
# time (no tracked_stats): only block_start / block_stop around each run of training steps
# between two evaluations. The block's step count is exact from the log: the events' metadata
# 'epoch_count' is the block's size in tokens (= steps x global_batch_size x
# max_sequence_length), and it equals conf/custom.yaml's val_check_interval
# ceil(24576 / global batch). The step time is the median over the blocks of the three result
# files (each file's first block left out: warm-up) of (block_stop - block_start time_ms) /
# steps. That is a block mean, not a per-step median; it was checked on v4.1's Eos n32 and n64
# logs, which print both: block mean / per-step median = 18.41 / 18.3777 s (+0.18 %) and
# 9.5415 / 9.5004 s (+0.43 %). The v4.1 eos-dfw_n1452_ngc24.04_nemo results are these v4.0
# logs again (the same time_ms, the same lines, less the two SYSJSON lines): one record.
V40_BLOCK = {  # system: training steps per block (epoch_count / (global batch x sequence))
    "eos_n64_ngc24.04_nemo": 11,
    "eos-dfw_n1344_ngc24.04_nemo": 10,
    "eos-dfw_n1452_ngc24.04_nemo": 9,
}
V40_CHECK = ("checked on v4.1 NVIDIA logs that print both (eos_n32_ngc24.09_nemo and "
             "eos_n64_ngc24.09_nemo, 12 steps per block): the median block mean is 18.41 s "
             "against a per-step median of 18.3777 s (+0.18 %) and 9.5415 s against 9.5004 s "
             "(+0.43 %): the block mean reads a few tenths of a percent slow (what runs between "
             "steps inside a block), within a few percent of the per-step time")
V40_SOFTWARE = ("NeMo v2.0.0.rc0.beta (base r2.0.0), Megatron-LM core_v0.7.0.beta, Transformer "
                "Engine v1.6rc1 on NGC PyTorch 24.04 (the implementation's Dockerfile; the "
                "system descriptions: NVIDIA NeMo Framework Release 24.04)")


def gpt3_v40_record(row):
    (rnd, sub, system, cfg, nodes, gpu, gbs, accum, tp, pp, cp, vp, mbs, step, nblocks,
     nfiles) = row
    gpus = nodes * 8
    dp = gpus // (tp * pp * cp)
    seq = GPT3["seq_len"]
    spb = V40_BLOCK[system]
    impl = "NVIDIA/benchmarks/gpt3/implementations/nemo"
    results = f"{sub}/results/{system}/gpt3"
    minibs_cfg = int(cfg.split("x")[2])
    per_stage = GPT3["layers"] // (pp * vp)
    big = nodes > 64
    defer = mbs == 1  # conf/custom.yaml: deferred unless pp 1, MINIBS > 256 or micro-batch != 1
    extra = (", LAYER_CUDA_GRAPH 1, NVTE_UB_FP8_RS 1, NVTE_RS_STRIDED_ATOMIC 2, "
             "NVTE_UB_ATOMIC_GEMM_RS_FC2 1, FC2_FPROP_METHOD pipeline" if big else "")
    layout_src = (
        f"the config script {cfg} (MINIBS {minibs_cfg}, TENSOR_MODEL_PARALLEL {tp}, "
        f"PIPELINE_MODEL_PARALLEL {pp}, INTERLEAVED_PIPELINE {vp}, MICRO_BATCH_SIZE {mbs}, "
        f"TP_COMM_OVERLAP True{extra}) with config_common.sh (USE_DIST_OPTIMIZER True, "
        "FP8_PARAMS True, BUCKET_CAP_MB 200, MC_TP_OVERLAP_AG/RS True, NVTE_UB_ATOMIC_GEMM_RS 1,"
        " NCCL_SHARP_GROUP_SIZE_THRESH 2) and config_fp8.sh; conf/custom.yaml: "
        "sequence_parallel True, overlap_p2p_comm True, no activation checkpointing "
        "(ACT_CKPT_GRANULARITY null), hidden and attention dropout 0.0, normalization "
        f"'layernorm1p', defer_embedding_wgrad_compute {defer} (its rule: off for pp 1, "
        "MINIBS > 256 or micro-batch other than 1); conf/optim/distributed_fused_adam.yaml: "
        "grad_sync_dtype bf16, overlapped gradient and parameter syncs. The logs print no "
        "configuration")
    notes = [
        LAT_NOTE,
        "measured step time: a block mean, not a per-step median. The logs print no per-step "
        f"time; each block_start/block_stop pair spans {spb} training steps (the events' "
        f"epoch_count {spb * gbs * seq} tokens = {spb} x {gbs} x {seq}; conf/custom.yaml's "
        f"val_check_interval ceil(24576 / {gbs}) = {spb}); step time = (block_stop - "
        "block_start) / steps, the median over the blocks of the result files with each "
        "file's first block (warm-up) left out; " + V40_CHECK,
        "model: GPT-3 175B as the implementation configures it (96 layers, hidden 12288, FFN 4 x "
        "hidden, 96 heads, sequence 2048, no dropout, 'layernorm1p', a LayerNorm); learned "
        "absolute positions, biases on every linear layer, shared input and output embeddings. "
        "Vocabulary: the benchmark's SentencePiece model c4_en_301_5Mexp2_spm (50,257 tokens) "
        "padded by NeMo to a multiple of make_vocab_size_divisible_by 128 x tp = 512: 50,688",
        f"parallel layout: {layout_src}: virtual pipeline {vp} ({per_stage} layers per virtual "
        "stage), plan.zero 1, bytes_per_param 16, plan.recompute none",
        f"batch: the log's global_batch_size {gbs} and gradient_accumulation_steps {accum} "
        f"(= {gbs} / (dp {dp} x micro-batch {mbs}), checked)",
        f"tensor-parallel communication overlap with userbuffers (h100tp{tp}mbs{mbs}): "
        "plan.tp_comm_overlap; stage sends overlapped with compute (overlap_p2p_comm): "
        "plan.pp_comm_overlap",
        "software: " + V40_SOFTWARE,
        f"network: the system description (NVIDIA/systems/{system}.json): H100-SXM5-80GB, "
        "8 x ConnectX-7 IB NDR 400 Gb/s per node for compute, NVLink Gen4 900 GB/s + "
        "NVSwitch Gen3: the catalog's DGX H100 reference network (8 x 400 Gb/s per node, "
        "50 GB/s per GPU)",
        "the run continues from the benchmark's reference checkpoint (the log's "
        f"init_checkpoint_step {round(4000 * 1536 / gbs)}: step 4000 at batch 1536 counted in "
        f"steps of {gbs}); per-step cost is that of pre-training",
    ]
    if minibs_cfg * dp != gbs:
        notes.append(
            f"the submission's {cfg} sets MINIBS {minibs_cfg} (global batch "
            f"{minibs_cfg * dp}), but every result log prints global_batch_size {gbs} and "
            f"gradient_accumulation_steps {accum} (MINIBS {gbs // dp}, set at launch: the "
            "config reads MINIBS from the environment first): the record follows the logs (the "
            "run that was timed)")
    if system == "eos-dfw_n1452_ngc24.04_nemo":
        notes.append(
            "MLPerf Training v4.1 (github mlcommons/training_results_v4.1, commit "
            f"{COMMIT['4.1']}) publishes NVIDIA/results/{system}/gpt3 again: the same three "
            "runs (every MLLOG line and time_ms identical; v4.0's files carry two more SYSJSON "
            "lines) and the same config scripts; one record, cited from v4.0")
    rid = f"mlperf40-gpt3-175b-fp8-{gpus}gpu"
    tps = gbs * seq / (step * gpus)
    not_modelled = {
        "vpp": vp,
        "precision": FP8_DELAYED_HYBRID,
        "fp8_params": FP8_PARAMS,
        "tp_overlap_kernels": "the tensor-parallel reduce-scatter runs as FP8 atomic GEMMs "
                              "(NVTE_UB_ATOMIC_GEMM_RS=1) and the all-gather and reduce-scatter "
                              "through multicast (MC_TP_OVERLAP_AG, MC_TP_OVERLAP_RS)"
                              + ("; FP8 reduce-scatter output (NVTE_UB_FP8_RS=1) and a "
                                 "pipelined FC2 forward" if big else "")
                              + "; the planner's tp overlap does not distinguish the kernel",
        "attention_kernel": "Transformer Engine v1.6rc1 of the submission picks FlashAttention "
                            "or cuDNN fused attention itself; timed with the planner's cudnn "
                            "curve (cuDNN 9.19 of 2026)",
        "overlaps": ("per-layer CUDA graphs (LAYER_CUDA_GRAPH 1); the embedding's weight "
                     "gradient deferred (defer_embedding_wgrad_compute); " if big else "")
                    + "NCCL SHARP on Eos (NCCL_SHARP_GROUP_SIZE_THRESH 2)",
    }
    return {
        "id": rid,
        "set": "validation",
        "family": "mlperf40-gpt3-175b-fp8-eos",
        "source": {
            "citation": f"MLPerf Training v4.0 results (June 2024; github {REPO[rnd]}, "
                        f"commit {COMMIT[rnd]}), closed division, benchmark gpt3, submitter "
                        f"{sub}, system {system} ({nodes} x 8 H100 SXM5 80GB)",
            "url": blob(rnd, f"{results}/result_0.txt"),
            "location": f"{results}/result_0.txt .. result_{nfiles - 1}.txt: MLLOG "
                        f"'global_batch_size' {gbs}, 'gradient_accumulation_steps' {accum}, "
                        f"'max_sequence_length' {seq}, and the time_ms of every block_start / "
                        f"block_stop ({spb} steps each, epoch_count {spb * gbs * seq}): median "
                        f"block mean {step} s per step over {nblocks} blocks (no per-step "
                        "time is logged)",
            "secondary": [
                f"same commit, {impl}/{cfg}, config_common.sh, config_fp8.sh, conf/custom.yaml,"
                " conf/optim/distributed_fused_adam.yaml, Dockerfile: the recipe",
                f"same commit, {sub}/systems/{system}.json: the machine",
                f"github {REPO['4.1']}, commit {COMMIT['4.1']}, NVIDIA/results/"
                "eos_n32_ngc24.09_nemo and eos_n64_ngc24.09_nemo: the block-mean check",
            ],
        },
        "name": (f"GPT-3 175B (MLPerf Training v4.0 gpt3) on {gpus} H100 (NVIDIA Eos, "
                 "NeMo 24.04, FP8)"),
        "model": dict(GPT3, precision={"compute": "fp8"}),
        **layout(nodes, gpu, gbs * seq, mbs, dp, tp, pp, cp, accum),
        "measured": {
            "step_time": f"{step} s",
            "tokens_per_second_per_gpu": round(tps, 2),
            "derivation": f"{gbs} sequences x {seq} tokens / ({step} s x {gpus} GPUs); {step} s "
                          f"is a block mean, not a per-step median: the median over {nblocks} "
                          f"blocks of {nfiles} result files (each file's first block left out)"
                          f" of (block_stop - block_start time_ms) / {spb} steps; "
                          + V40_CHECK,
        },
        "not_modelled": not_modelled,
        "notes": notes,
    }

"""Megatron-Bridge's performance-summary rows (tools/nemo_perf_records.py writes them; its
docstring names the tables and commits)."""
from nemo_common import LABEL, NAME, record

MBRIDGE = "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob"
# Megatron-Bridge DGX-H100 dense rows: (container, commit, file, model, GPUs, GBS, MBS, seq, TP,
# PP, CP, VP, tokens/s/GPU, TFLOP/s/GPU). The 26.02 table calls the precision "FP8"; its recipe
# (LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V2, LLAMA31_405B_..._H100_FP8_CS_V2) is current scaling.
MBRIDGE_ROWS = [
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "docs/performance-summary.md", "llama3-70b", 64, 128, 1, 8192, 4, 8,
     1, 5, 1602, 719),
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "docs/performance-summary.md", "llama3.1-405b", 1024, 512, 1, 8192,
     8, 8, 2, 8, 292, 737),
    ("26.02", "c0b9a00031b79b731ccefb56d0aba9629b4dd01b", "docs/performance-summary.md", "llama3-70b", 64, 256, 1, 8192, 4, 8,
     1, 5, 1621, 728),
    ("26.02", "c0b9a00031b79b731ccefb56d0aba9629b4dd01b", "docs/performance-summary.md", "llama3.1-405b", 1024, 1536, 1, 8192,
     8, 8, 2, 8, 311, 784),
]
# Megatron-Bridge DGX-H100 mixture-of-experts rows: as above plus EP and the token dispatcher of
# the recipe at that commit (QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS: ETP 1,
# moe_a2a_overlap true; 26.02's base config adds moe_flex_dispatcher_backend "deepep").
# Qwen3-30B-A3B's rows are left out: the 25.11 table prints VP 24 and MBS 2 where the recipe at
# that commit sets VP 12 and MBS 1, and 26.02's prints PP 2, EP 8 where the recipe sets no
# pipeline and EP 16; which ran is not known.
MBRIDGE_MOE_ROWS = [
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "qwen3-235b-a22b", 256, 2048, 1, 4096,
     2, 8, 1, 4, 32, 1575, 233, "alltoall"),
    ("26.02", "c0b9a00031b79b731ccefb56d0aba9629b4dd01b", "qwen3-235b-a22b", 256, 8192, 1, 4096,
     2, 8, 1, 4, 32, 1633, 242, "deepep"),
]


def mbridge_record(ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, location,
                   secondary, recipe_note, precision_note, attention_note, system="DGX-H100",
                   gpu="H100-SXM", tag="fp8cs", flavour="FP8 current scaling"):
    """One Megatron-Bridge row (DGX-H100 unless system says otherwise): the source, the record,
    the notes every kind shares."""
    path = "docs/performance-summary.md"
    short = system.replace("DGX-", "")
    source = {
        "citation": f"NVIDIA NeMo Megatron-Bridge, {path} ({ver} NeMo container, {system})",
        "url": f"{MBRIDGE}/{commit}/{path}",
        "location": location,
        "secondary": [f"NVIDIA-NeMo/Megatron-Bridge @ {commit[:9]}, {secondary}"],
        "derivation": "the table's tokens / sec / GPU; step time = GBS x sequence / "
                      "(tokens/s/GPU x GPUs)",
    }
    where = "" if system == "DGX-H100" else f"-{short.lower()}"
    rec = record(f"mbridge{ver.replace('.', '')}-{m}-{tag}{where}-{gpus}gpu",
                 f"{NAME[m]} pre-training on {gpus} {short} (Megatron-Bridge, NeMo {ver}, "
                 f"{flavour})",
                 f"mbridge-{m}-{tag}{where}", m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, source,
                 ver, [], gpu)
    rec["plan"]["pp_comm_overlap"] = True
    rec["not_modelled"]["precision"] = precision_note
    rec["not_modelled"].pop("vboost", None)
    rec["not_modelled"]["attention_kernel"] = attention_note
    rec["notes"] = [n for n in rec["notes"] if "launcher configuration" not in n
                    and "source.secondary" not in n]
    rec["notes"].insert(1, "recipe settings from the Megatron-Bridge commit in "
                           "source.secondary; " + recipe_note)
    return rec


def mbridge_records():
    for (ver, commit, path, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, tflops) in MBRIDGE_ROWS:
        recipe = ("scripts/performance/configs/llama/llama3_llm_pretrain.py "
                  "llama3_70b_pretrain_config_h100 and src/megatron/bridge/recipes/llama/llama3.py "
                  "llama3_70b_pretrain_config" if m == "llama3-70b" else
                  "scripts/performance/configs/llama/llama31_llm_pretrain.py "
                  "llama31_405b_pretrain_config_h100 and src/megatron/bridge/recipes/llama/"
                  "llama3.py llama31_405b_pretrain_config (account_for_embedding_in_pipeline_split "
                  "and account_for_loss_in_pipeline_split true)")
        rec = mbridge_record(
            ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps,
            f"{ver} NeMo Container, Pre-Training Performance, System: DGX-H100, row {LABEL[m]}: "
            f"{gpus} GPUs, FP8(-CS), GBS {gbs}, MBS {mbs}, sequence {seq}, FSDP 0, TP {tp}, PP "
            f"{pp}, CP {cp}, VP {vp}: {tps} tokens/s/GPU ({tflops} model TFLOP/s/GPU)",
            f"{recipe}: tp_comm_overlap with the H100 userbuffers configuration, distributed "
            "optimizer with overlapped gradient reduce and parameter gather, grad_reduce_in_fp32 "
            "false (set_llama3_common_configs), no recompute, sequence parallel with tp, TE "
            "cross-entropy fusion",
            "tp overlap and overlapped interleaved sends as Megatron-LM's defaults under that "
            "recipe",
            f"fp8 current scaling (Megatron-Bridge {ver}, Transformer Engine Float8CurrentScaling: "
            "one scale per tensor, computed from the tensor being cast; modelled as "
            "model.precision.compute fp8 with the tensor-wise recipe, data/gpus.json "
            "fp8_efficiency_ratio, fitted to delayed-scaling pairs)",
            "cuDNN fused attention of the container (Transformer Engine on Hopper); the planner's "
            "cudnn curve is cuDNN 9.19's")
        rec["plan"]["tp_comm_overlap"] = True
        if m == "llama3.1-405b":
            rec["plan"]["tables_in_pipeline_split"] = True
        yield rec


def mbridge_moe_records():
    for (ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, ep, tps, tflops,
         dispatcher) in MBRIDGE_MOE_ROWS:
        rec = mbridge_record(
            ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps,
            f"{ver} NeMo Container, Pre-Training Performance, DGX-H100, row {LABEL[m]}: {gpus} "
            f"GPUs, FP8(-CS), GBS {gbs}, MBS {mbs}, sequence {seq}, FSDP 0, TP {tp}, PP {pp}, CP "
            f"{cp}, VP {vp}, EP {ep}: {tps} tokens/s/GPU ({tflops} model TFLOP/s/GPU); 'we "
            "force-balance the token distribution among experts and all benchmarks are "
            "token-dropless'",
            "scripts/performance/configs/qwen/qwen3_llm_pretrain.py "
            "qwen3_235b_a22b_pretrain_config_h100 (CommOverlapConfig(tp_comm_overlap=False); "
            "set_qwen3_common_configs: no recompute, moe_router_force_load_balancing, "
            "grad_reduce_in_fp32 false), qwen3_workload_base_configs.py (ETP 1, moe_a2a_overlap "
            "true: overlap_moe_expert_parallel_comm and delay_wgrad_compute, utils/overrides.py) "
            "and src/megatron/bridge/recipes/qwen/qwen3_moe.py (account_for_embedding_in_"
            "pipeline_split and account_for_loss_in_pipeline_split true)",
            "no tp overlap (the recipe turns it off); the expert all-to-alls overlapped with "
            "another micro-batch's compute (moe_a2a_overlap), modelled as "
            "model.moe.overlap_all_to_all; balanced routing as forced (model.moe.imbalance 1)",
            f"fp8 current scaling (Megatron-Bridge {ver}, Transformer Engine Float8CurrentScaling; "
            "modelled as model.precision.compute fp8 with the tensor-wise recipe)",
            "cuDNN fused attention of the container; the planner's cudnn curve is cuDNN 9.19's")
        rec["plan"]["ep"] = ep
        rec["plan"]["etp"] = 1
        rec["plan"]["tables_in_pipeline_split"] = True
        rec["plan"].pop("tp_comm_overlap", None)
        rec["model"]["moe"] = dict(rec["model"]["moe"], overlap_all_to_all=True)
        rec["not_modelled"]["moe_dispatcher"] = (
            f"{dispatcher} token dispatcher"
            + (" (DeepEP's kernels, moe_flex_dispatcher_backend)" if dispatcher == "deepep" else
               " (Megatron-LM's default)") + "; the planner times the dispatch and combine as "
            "all-to-alls at the tier's bandwidth")
        yield rec


# Megatron-Bridge DGX-B200 multi-node dense rows (8 B200 per node): (container, commit of the
# table and of the recipe, precision tag, model, GPUs, GBS, MBS, seq, TP, PP, CP, VP, tokens/s/GPU,
# TFLOP/s/GPU). The tables' parenthesised MXFP8 figures (25.11: 624; 25.09: 622) are left out:
# the planner has no MX (32-element block, E8M0 scale) recipe, and the same plan at
# compute fp8 would predict the same step as the per-tensor row beside it.
R0_1_0 = "68c25f591e1323d4dd6da869b0d5308bad99e337"
MBRIDGE_B200_ROWS = [
    ("25.09", R0_1_0, "fp8", "llama3.1-405b", 128, 64, 1, 8192, 4, 8, 2, 8, 664, 1676),
    ("25.11", "5776a6d90b4dd8692902ab2eb581369484e19283", "fp8cs", "llama3.1-405b", 128, 64, 1,
     8192, 4, 8, 2, 8, 661, 1667),
]


def mbridge_b200_records():
    for (ver, commit, tag, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps,
         tflops) in MBRIDGE_B200_ROWS:
        if ver == "25.09":
            location = (
                f"25.09 NeMo Container, Pre-Training Performance, System: DGX-B200, row "
                f"{LABEL[m]}: {gpus} GPUs, GBS {gbs}, MBS {mbs}, sequence {seq}, FSDP 0, TP {tp}, "
                f"PP {pp}, CP {cp}, VP {vp}, EP 1, GA 32: {tps} (622) tokens/s/GPU ({tflops} "
                "(1569) model TFLOP/s/GPU); 'The numbers in parentheses indicate the use of "
                "different quantization granularities: In case of Gb200 and B200 systems, 32x32 "
                "for both weights and activations'")
            secondary = (
                "scripts/performance/configs/llama31/llama31_405b_llm_pretrain.yaml (perf_matrix "
                "b200 num_gpus_128: 8 GPUs per node, TP 4, PP 8, CP 2, VP 8, MBS 1, GBS 64, no "
                "CUDA graphs, no FSDP; recipes bf16, fp8_ds, fp8_cs, fp8_mx; grad_reduce_in_fp32 "
                "false, TE cross-entropy fusion), scripts/performance/utils/helpers.py "
                "(userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192) and src/megatron/bridge/"
                "recipes/llama/llama31_405b.py (tp_comm_overlap, distributed optimizer with "
                "overlapped gradient reduce and parameter gather, sequence parallel, "
                "account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split "
                "true, no recompute)")
            precision = (
                "fp8, per-tensor scaling (Megatron-Bridge 25.09): the table prints no precision; "
                "its footnote names the parenthesised figures as the 32x32 block-scaled ones, so "
                "the plain figure is assumed a per-tensor recipe, delayed (the scripts' default "
                "fp8_recipe ds) or current scaling (the 25.11 table labels the same plan FP8-CS), "
                "both modelled as model.precision.compute fp8 with the tensor-wise recipe, "
                "data/gpus.json fp8_efficiency_ratio, fitted on Hopper")
            extra = ["assumed: the unparenthesised figure is per-tensor FP8 (delayed or current "
                     "scaling); the 25.09 table states no precision"]
            flavour = "FP8"
        else:
            location = (
                f"{ver} NeMo Container, Pre-Training Performance, System: DGX-B200, row "
                f"{LABEL[m]}: {gpus} GPUs, FP8-CS (FP8-MX), GBS {gbs}, MBS {mbs}, sequence {seq}, "
                f"FSDP 0, TP {tp}, PP {pp}, CP {cp}, VP {vp}, EP 1, GA 32: {tps} (624) "
                f"tokens/s/GPU ({tflops} (1576) model TFLOP/s/GPU); the FP8-CS figure")
            secondary = (
                "scripts/performance/configs/llama/llama31_llm_pretrain.py "
                "llama31_405b_pretrain_config_b200 (LLAMA31_405B_PRETRAIN_CONFIG_B200_FP8_CS_BASE_"
                "CONFIG in llama31_workload_base_configs.py: TP 4, PP 8, CP 2, VP 8, GBS 64; "
                "tp_comm_overlap with userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192; "
                "grad_reduce_in_fp32 false, set_llama31_common_configs) and src/megatron/bridge/"
                "recipes/llama/llama3.py llama31_405b_pretrain_config (distributed optimizer with "
                "overlapped gradient reduce and parameter gather, sequence parallel, no "
                "recompute, account_for_embedding_in_pipeline_split and "
                "account_for_loss_in_pipeline_split true)")
            precision = (
                f"fp8 current scaling (Megatron-Bridge {ver}, Transformer Engine "
                "Float8CurrentScaling: one scale per tensor, computed from the tensor being "
                "cast; modelled as model.precision.compute fp8 with the tensor-wise recipe, "
                "data/gpus.json fp8_efficiency_ratio, fitted to delayed-scaling pairs on Hopper)")
            extra = []
            flavour = "FP8 current scaling"
        rec = mbridge_record(
            ver, commit, m, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, location, secondary,
            "tp overlap and overlapped interleaved sends as Megatron-LM's defaults under that "
            "recipe",
            precision,
            "cuDNN fused attention of the container (Transformer Engine on Blackwell); the "
            "planner's cudnn curve is cuDNN 9.19's",
            system="DGX-B200", gpu="B200", tag=tag, flavour=flavour)
        rec["plan"]["tp_comm_overlap"] = True
        rec["plan"]["tables_in_pipeline_split"] = True
        rec["notes"].insert(2, "DGX B200: eight B200 per node on NVLink 5 / NVSwitch, nodes "
                               "joined by eight 400 Gb/s ConnectX-7 each; the bandwidths are the "
                               "catalog's (data/gpus.json B200 scale_up and scale_out, reference "
                               "system DGX B200), the fabric of NVIDIA's benchmark cluster is not "
                               "published")
        rec["notes"][2:2] = extra
        yield rec

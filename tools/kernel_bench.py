#!/usr/bin/env python3
"""Microbenchmarks of one GPU for the planner's calibration (issue 29, issue 30).

Writes one CSV per section into --out-dir, each headed by '#' lines naming the device, the
driver, the software and the method:

  gemm.csv          transformer-layer GEMM shapes in bf16, FP8 tensor-wise and FP8 row-wise
                    (torch._scaled_mm, e4m3 operands, bf16 output): m,n,k,variant,seconds,tflops
  small_m.csv       the four GEMMs of a 70B layer on one of 4 tp ranks at 1 ... 8192 tokens, bf16
                    and FP8, replayed from a CUDA graph (prefill of short prompts, decode)
  quant.csv         the eager casts an FP8 recipe runs per operand (amax, scale, cast), with the
                    bytes they move: elements,op,seconds,bytes,bytes_per_second
  gemv.csv          decode-shaped matmuls x[b,k] @ W[k,n] cycling over enough weight copies
                    that none is in L2: achieved HBM bandwidth by weight size and batch
  attention.csv     scaled_dot_product_attention, causal, head dim 128, forward and
                    forward+backward, by sequence length and backend
  attention_long.csv  causal SDPA on one sequence of 32K-128K tokens, and the square blocks a
                    context-parallel ring computes per call (causal diagonal, full off it)
  decode_attn.csv   one query token against a KV cache (GQA), SDPA with enable_gqa and a Triton
                    kernel that runs one program per query head (as a masked-MHA decode kernel
                    does), so the L2 reuse across a query group shows: kv bytes and bandwidth
  copy_loop.csv     N copy_ calls of one slice each from a TorchScript (C++) or Python loop: the
                    per-rank copies of PyTorch 1.8's list-based collectives
  launch.csv        launch cost of a tiny kernel: eager back-to-back and inside a CUDA graph

Usage:  python3 tools/kernel_bench.py --out-dir DIR [--sections gemm,quant,...] [--quick]
        python3 tools/kernel_bench.py --out-dir DIR --dry-run   # no GPU: lists the work
Timing: CUDA events around a batch of back-to-back calls, the median of 5 batches after warm-up
(a pair of events per call adds ~20 us on H200: validation/gemm/README.md). Each section is
independent: one that fails writes its error as a '# failed:' line and the others still run.
Exit status: 0 done (see the files for failed sections); 2 bad arguments or no CUDA.
"""
import argparse
import datetime
import os
import statistics
import sys
import time

# The attention sections live beside this file (run as `python3 tools/kernel_bench.py`, its
# folder is on the import path).
from kernel_bench_attention import section_attention, section_attention_long, section_decode_attn

BATCHES = 5
SECTIONS = ("gemm", "small_m", "quant", "gemv", "attention", "attention_long", "decode_attn",
            "launch", "copy_loop")


def gemm_shapes(quick):
    """The four GEMMs of a GPT-style layer (QKV 3h, projection h, fc1 4h, fc2 from 4h) for
    hidden sizes 1K..16K at tp 1 and 8, and Llama-style (gated, GQA) at 4K and 8K, at 4K and
    16K tokens; then squares for the tile/wave picture."""
    out = []
    tokens_list = (4096,) if quick else (4096, 16384)
    for tokens in tokens_list:
        for h in (1024, 2048, 4096, 8192, 12288, 16384):
            for tp in (1, 8):
                out += [(tokens, 3 * h // tp, h), (tokens, h, h // tp),
                        (tokens, 4 * h // tp, h), (tokens, h, 4 * h // tp)]
        for h, f, kv in ((4096, 14336, 1024), (8192, 28672, 1024)):
            for tp in (1, 4, 8):
                out += [(tokens, (h + 2 * kv) // tp, h), (tokens, h, h // tp),
                        (tokens, 2 * f // tp, h), (tokens, h, f // tp)]
    out += [(s, s, s) for s in (1024, 2048, 4096, 8192)]
    seen, uniq = set(), []
    for s in out:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


def header(info, method):
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return [f"# device: {info['device']} ({info['sms']} SMs), driver {info['driver']}",
            f"# torch {info['torch']}, CUDA {info['cuda']}, cuDNN {info['cudnn']}, "
            f"triton {info['triton']}", f"# date: {now}", f"# {method}"]


class Writer:
    """One CSV: its rows go to disk as they come, so a run cut short keeps what it measured."""

    def __init__(self, path, head, columns):
        self.f = open(path, "w", encoding="utf-8")
        for line in head:
            self.f.write(line + "\n")
        self.f.write(columns + "\n")
        self.f.flush()

    def row(self, *values):
        text = ",".join(f"{v:.6e}" if isinstance(v, float) else str(v) for v in values)
        self.f.write(text + "\n")
        self.f.flush()
        print(text, flush=True)

    def note(self, text):
        self.f.write(f"# {text}\n")
        self.f.flush()
        print(f"# {text}", flush=True)

    def close(self):
        self.f.close()


def make_timer(torch):
    def time_call(fn, target_seconds=0.05, max_iters=50):
        """Seconds per call: one untimed call sizes the batch so it lasts ~target_seconds; a
        call longer than that is timed alone, the median of 3."""
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        once = max(time.perf_counter() - t0, 1e-6)
        if once >= target_seconds:
            iters, batches = 1, 3
        else:
            iters, batches = int(min(max_iters, max(3, target_seconds / once))), BATCHES
            for _ in range(min(iters, 5)):
                fn()
            torch.cuda.synchronize()
        times = []
        for _ in range(batches):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 1e3 / iters)
        return statistics.median(times)
    return time_call


def section_gemm(torch, t, w, quick):
    f8 = torch.float8_e4m3fn
    for m, n, k in gemm_shapes(quick):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        flop = 2.0 * m * n * k
        s = t(lambda: torch.matmul(a, b))
        w.row(m, n, k, "bf16", s, flop / s / 1e12)
        a8 = a.to(f8)
        b8 = b.t().contiguous().to(f8).t()  # column-major second operand, as cuBLASLt asks
        one = torch.ones((), device="cuda", dtype=torch.float32)
        try:
            s = t(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                           out_dtype=torch.bfloat16))
            w.row(m, n, k, "fp8_tensorwise", s, flop / s / 1e12)
        except Exception as e:  # noqa: BLE001 - recorded, the section goes on
            w.note(f"fp8_tensorwise {m}x{n}x{k} failed: {type(e).__name__}: {str(e)[:120]}")
        sa = torch.ones(m, 1, device="cuda", dtype=torch.float32)
        sb = torch.ones(1, n, device="cuda", dtype=torch.float32)
        try:
            s = t(lambda: torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb,
                                           out_dtype=torch.bfloat16))
            w.row(m, n, k, "fp8_rowwise", s, flop / s / 1e12)
        except Exception as e:  # noqa: BLE001
            w.note(f"fp8_rowwise {m}x{n}x{k} failed: {type(e).__name__}: {str(e)[:120]}")
        del a, b, a8, b8


def section_small_m(torch, t, w, quick):
    """Prefill and decode GEMMs of a few tokens: the four GEMMs of Llama 2/3 70B's layer on one
    of 4 tp ranks (hidden 8192, 8 KV heads of 128, gated MLP 28672) at m = 1 ... 8192 tokens,
    bf16 and FP8 tensor-wise, each call on its own weight copy (none in L2) and all replayed
    from one CUDA graph, as serving engines run them."""
    f8 = torch.float8_e4m3fn
    one = torch.ones((), device="cuda", dtype=torch.float32)
    shapes = (("qkv", 2560, 8192), ("proj", 8192, 2048), ("fc1", 14336, 8192),
              ("fc2", 8192, 7168))
    ms = (1, 128, 1024) if quick else (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
    for name, n, k in shapes:
        copies = int(min(16, max(2, (1 << 30) // (2 * k * n))))
        ws = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        w8 = [x.t().contiguous().to(f8).t() for x in ws]
        for m in ms:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            a8 = a.to(f8) if m % 16 == 0 else None
            variants = [("bf16", lambda i: torch.matmul(a, ws[i]))]
            if a8 is not None:
                variants.append(("fp8_tensorwise", lambda i: torch._scaled_mm(
                    a8, w8[i], scale_a=one, scale_b=one, out_dtype=torch.bfloat16)))
            for variant, call in variants:
                try:
                    stream = torch.cuda.Stream()
                    stream.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(stream):
                        outs = [call(i) for i in range(copies)]
                    torch.cuda.current_stream().wait_stream(stream)
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        outs = [call(i) for i in range(copies)]
                    s = t(lambda: g.replay(), max_iters=20) / copies
                    w.row(name, m, n, k, variant, s, 2.0 * m * n * k / s / 1e12)
                    del g, outs
                except Exception as e:  # noqa: BLE001
                    w.note(f"{name} m{m} {variant}: {type(e).__name__}: {str(e)[:160]}")
        del ws, w8


def section_quant(torch, t, w, quick):
    """Eager per-tensor delayed/current scaling of one operand: amax (read 2 B/elt), then
    scale-and-cast (read 2, write 1); row-wise: amax per row, then the same cast."""
    f8 = torch.float8_e4m3fn
    sizes = (1 << 22, 1 << 24, 1 << 26) if quick else (1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28)
    for elements in sizes:
        x = torch.randn(elements // 4096, 4096, device="cuda", dtype=torch.bfloat16)
        scale = torch.ones((), device="cuda", dtype=torch.float32)
        ops = (
            ("amax_tensor", lambda: x.abs().amax(), 2 * elements),
            ("cast_tensor", lambda: (x.float() * scale).to(f8), 3 * elements),
            ("amax_row", lambda: x.abs().amax(dim=1, keepdim=True), 2 * elements),
            ("copy_bf16", lambda: x.clone(), 4 * elements),
        )
        for name, fn, nbytes in ops:
            s = t(fn)
            w.row(elements, name, s, nbytes, nbytes / s)
        del x


def section_gemv(torch, t, w, quick):
    """Decode's weight read: y[b,n] = x[b,k] @ W[k,n], W a different buffer each call among
    copies totalling at least 1 GiB (L2 is 60 MB on H200), so every call reads its weights from
    HBM; the calls replayed from one CUDA graph (as serving engines run decode), so the host's
    launch rate does not bound the small ones."""
    sizes_mib = (4, 16, 64, 256) if quick else (1, 4, 16, 32, 64, 128, 256, 512, 1024)
    batches = (1, 16, 64) if quick else (1, 8, 32, 64, 128, 256)
    k = 8192
    for mib in sizes_mib:
        n = max(64, mib * (1 << 20) // (2 * k))
        copies = min(128, max(2, (1 << 30) // (2 * k * n)))
        ws = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        for b in batches:
            x = torch.randn(b, k, device="cuda", dtype=torch.bfloat16)
            ys = [None] * copies
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for i in range(copies):
                    ys[i] = torch.matmul(x, ws[i])
            torch.cuda.current_stream().wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(copies):
                    ys[i] = torch.matmul(x, ws[i])
            s = t(lambda: g.replay(), max_iters=20) / copies
            nbytes = 2.0 * k * n
            w.row(k, n, b, copies, s, nbytes, nbytes / s, 2.0 * b * k * n / s / 1e12)
            del g, ys
        del ws


def section_copy_loop(torch, t, w, quick):
    """What a list-based collective of PyTorch 1.8 adds per rank: ProcessGroupNCCL copies each
    rank's slice between the flat NCCL buffer and the caller's list with a copy_ of its own, in
    a C++ loop. Timed as N copy_ calls of one slice each, issued from a TorchScript loop (C++
    interpreter, no Python per call) and from a Python loop, for N ranks and two slice sizes:
    wall seconds per copy with the device synchronised at the end."""
    loops = []
    try:  # TorchScript source: List and Tensor are its own types, nothing to import
        unit = torch.jit.CompilationUnit(
            "def copy_all(dst: List[Tensor], src: List[Tensor]):\n"
            "    for i in range(len(dst)):\n"
            "        dst[i].copy_(src[i])\n")
        loops.append(("torchscript", unit.copy_all))
    except Exception as e:  # noqa: BLE001
        w.note(f"torchscript unavailable: {type(e).__name__}: {str(e)[:120]}")

    def python_loop(dst, src):
        for d, s in zip(dst, src):
            d.copy_(s)

    for ranks in ((8, 2240) if quick else (8, 64, 512, 2240)):
        for elements in (2048, 262144):
            flat = torch.randn(ranks * elements, device="cuda", dtype=torch.bfloat16)
            src = list(flat.view(ranks, elements).unbind(0))
            dst = [torch.empty(elements, device="cuda", dtype=torch.bfloat16) for _ in range(ranks)]
            for name, fn in loops + [("python", python_loop)]:
                for _ in range(3):
                    fn(dst, src)
                torch.cuda.synchronize()
                times = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    fn(dst, src)
                    torch.cuda.synchronize()
                    times.append((time.perf_counter() - t0) / ranks)
                w.row(name, ranks, elements * 2, statistics.median(times))
            del flat, src, dst


def section_launch(torch, t, w, quick):
    x = torch.zeros(1, device="cuda")
    n = 2000
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    host = (time.perf_counter() - t0) / n
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / n
    w.row("eager_add_host_issue", host)
    w.row("eager_add_wall", wall)
    s = t(lambda: x.add_(1), max_iters=2000)
    w.row("eager_add_gpu_events", s)
    g = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(g):
        for _ in range(100):
            x.add_(1)
    s = t(lambda: g.replay(), max_iters=200)
    w.row("graph_add_per_kernel", s / 100)


def device_info(torch):
    import subprocess
    info = {"device": torch.cuda.get_device_name(0),
            "sms": str(torch.cuda.get_device_properties(0).multi_processor_count),
            "torch": torch.__version__, "cuda": str(torch.version.cuda),
            "cudnn": str(torch.backends.cudnn.version()), "driver": "?", "triton": "none"}
    try:
        import triton
        info["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,power.limit,"
                              "clocks.max.sm,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        info["driver"] = out
    except Exception:  # noqa: BLE001
        pass
    return info


COLUMNS = {
    "gemm": ("m,n,k,variant,seconds,tflops", "bf16 torch.matmul; fp8 torch._scaled_mm e4m3 x e4m3 "
             "-> bf16, scales all ones (tensor-wise: scalars; row-wise: [m,1] and [1,n])"),
    "small_m": ("gemm,m,n,k,variant,seconds,tflops", "one call per weight copy (<= 16, none in "
                "L2) replayed from a CUDA graph; seconds per call; fp8: torch._scaled_mm e4m3"),
    "quant": ("elements,op,seconds,bytes,bytes_per_second", "eager PyTorch ops on a [n/4096, 4096] "
              "bf16 tensor; bytes = the minimum each op reads and writes"),
    "gemv": ("k,n,batch,copies,seconds,weight_bytes,bytes_per_second,tflops", "x[b,k] @ W[k,n] bf16, "
             "a CUDA graph of one call per each of `copies` distinct W (>= 1 GiB together, or 128), "
             "so no call finds its W in L2; seconds per call"),
    "attention": ("seq,batch,heads,head_dim,backend,fwd_seconds,fwd_bwd_seconds,fwd_tflops,"
                  "fwd_bwd_tflops", "F.scaled_dot_product_attention(is_causal=True) bf16; "
                  "FLOPs = causal half: fwd 2*b*h*d*s^2, fwd+bwd 3.5x fwd"),
    "attention_long": ("case,q_tokens,kv_tokens,backend,fwd_bwd_seconds,fwd_bwd_tflops",
                       "F.scaled_dot_product_attention bf16, 32 heads of 128, batch 1; FLOPs "
                       "3.5 x the forward's 4*h*d*sq*skv (halved when causal)"),
    "decode_attn": ("case,kernel,batch,q_heads,kv_heads,context,seconds,kv_bytes,bytes_per_second",
                    "one query token per sequence; kv_bytes = K and V read once (bf16)"),
    "copy_loop": ("loop,ranks,slice_bytes,seconds_per_copy", "N copy_ calls of one slice each "
                  "(TorchScript loop or Python loop), wall time over N with a final synchronise"),
    "launch": ("what,seconds", "x.add_(1) on one element: host issue rate, wall, GPU events; "
               "a CUDA graph of 100 such kernels, per kernel"),
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", required=True)
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--quick", action="store_true", help="fewer shapes (a check of the script)")
    p.add_argument("--dry-run", action="store_true", help="list the GEMM shapes; no GPU needed")
    a = p.parse_args(argv)
    chosen = [s for s in a.sections.split(",") if s]
    bad = [s for s in chosen if s not in SECTIONS]
    if bad:
        print(f"kernel_bench: unknown section {bad[0]!r}; expected some of {','.join(SECTIONS)}",
              file=sys.stderr)
        return 2
    if a.dry_run:
        shapes = gemm_shapes(a.quick)
        print(f"{len(shapes)} GEMM shapes; sections {','.join(chosen)}")
        for s in shapes:
            print(*s)
        return 0
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except (ImportError, RuntimeError) as e:
        print(f"kernel_bench: cannot time on a GPU: {e}", file=sys.stderr)
        return 2
    os.makedirs(a.out_dir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    info = device_info(torch)
    t = make_timer(torch)
    funcs = {"gemm": section_gemm, "small_m": section_small_m, "quant": section_quant, "gemv": section_gemv,
             "attention": section_attention, "attention_long": section_attention_long,
             "decode_attn": section_decode_attn,
             "launch": section_launch, "copy_loop": section_copy_loop}
    for name in chosen:
        columns, method = COLUMNS[name]
        w = Writer(os.path.join(a.out_dir, f"{name}.csv"), header(info, method), columns)
        t0 = time.perf_counter()
        try:
            funcs[name](torch, t, w, a.quick)
        except Exception as e:  # noqa: BLE001 - the next section still runs
            w.note(f"failed: {type(e).__name__}: {str(e)[:300]}")
        w.note(f"section took {time.perf_counter() - t0:.1f} s")
        w.close()
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

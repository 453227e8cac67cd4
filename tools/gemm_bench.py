#!/usr/bin/env python3
"""Time dense GEMMs on one GPU with PyTorch and write the CSV `planner calibrate --gemm` reads.

Usage:
  python3 tools/gemm_bench.py --out gemm.csv              # bf16, the default shape list
  python3 tools/gemm_bench.py --out gemm.csv --dtype fp16 --iters 50
  python3 tools/gemm_bench.py --out gemm.csv --backend fake   # no GPU: checks the script only

Output (docs/calibrate.md, "GEMM CSV"): comment lines starting with '#' naming the device,
driver, torch version and date, then the header `m,n,k,dtype,seconds,tflops` and one row per
shape. `seconds` is the time of one C[m,n] = A[m,k] @ B[k,n]: the median over 5 batches of
`--iters` back-to-back runs, each batch timed by one pair of CUDA events, after `--warmup` runs; `tflops` = 2*m*n*k / seconds / 1e12.
Exit status: 0 written; 2 bad arguments, or torch/CUDA missing for the torch backend.
"""
import argparse
import datetime
import statistics
import sys

DTYPES = ("bf16", "fp16", "fp32")
BATCHES = 5  # timed batches; the median batch is reported


def default_shapes():
    """Squares from 256 to 16384 (powers of two), a finer square sweep 1024..8192 step 512 that
    shows wave quantisation, and the GEMMs of a transformer layer at hidden 4096 and 8192."""
    shapes = [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192, 16384)]
    shapes += [(s, s, s) for s in range(1536, 8192, 512) if s & (s - 1)]
    for hidden, ffn in ((4096, 14336), (8192, 28672)):
        tokens = 8192
        shapes += [(tokens, 3 * hidden, hidden),  # QKV (no GQA)
                   (tokens, hidden, hidden),      # attention output projection
                   (tokens, 2 * ffn, hidden),     # gated MLP up
                   (tokens, hidden, ffn)]         # MLP down
    shapes += [(1024, 8192, 8192), (2048, 8192, 8192), (4096, 1024, 4096)]
    seen, out = set(), []
    for s in shapes:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def torch_timer(dtype_name, warmup, iters):
    import torch  # imported here so that --backend fake works without torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype_name]
    torch.backends.cuda.matmul.allow_tf32 = False

    def time_one(m, n, k):
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        for _ in range(warmup):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(BATCHES):
            # One event pair around `iters` back-to-back launches: a pair per launch adds
            # ~20 us of event overhead, which swamps GEMMs under 1024^3 (measured on H200).
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                torch.matmul(a, b)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 1e3 / iters)  # ms -> s per GEMM
        del a, b
        return statistics.median(times)

    props = torch.cuda.get_device_properties(0)
    info = {"device": torch.cuda.get_device_name(0), "sms": str(props.multi_processor_count),
            "torch": torch.__version__, "cuda": str(torch.version.cuda)}
    return time_one, info


def fake_timer(dtype_name, warmup, iters):
    """A made-up GPU (peak 500 TFLOP/s, half efficiency at 2 GFLOP): for checking the script."""
    del dtype_name, warmup, iters

    def time_one(m, n, k):
        flop = 2.0 * m * n * k
        return flop / (500e12 * flop / (flop + 2e9))

    return time_one, {"device": "fake", "sms": "0", "torch": "none", "cuda": "none"}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="CSV file to write ('-' for standard output)")
    p.add_argument("--dtype", default="bf16", choices=DTYPES)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--backend", default="torch", choices=("torch", "fake"))
    a = p.parse_args(argv)
    if a.warmup < 0 or a.iters < 1:
        print("gemm_bench: --warmup must be >= 0 and --iters >= 1", file=sys.stderr)
        return 2
    try:
        make = torch_timer if a.backend == "torch" else fake_timer
        time_one, info = make(a.dtype, a.warmup, a.iters)
    except (ImportError, RuntimeError) as e:
        print(f"gemm_bench: cannot time on a GPU: {e}; expected PyTorch with CUDA "
              "(or --backend fake to check the script)", file=sys.stderr)
        return 2
    lines = [f"# device: {info['device']} ({info['sms']} SMs)",
             f"# torch: {info['torch']}, CUDA {info['cuda']}",
             f"# date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
             f"# median of {BATCHES} batches of {a.iters} back-to-back runs (one event pair per batch) "
             f"after {a.warmup} warm-up runs; tflops = 2mnk/seconds/1e12",
             "m,n,k,dtype,seconds,tflops"]
    for m, n, k in default_shapes():
        seconds = time_one(m, n, k)
        tflops = 2.0 * m * n * k / seconds / 1e12
        lines.append(f"{m},{n},{k},{a.dtype},{seconds:.6e},{tflops:.2f}")
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

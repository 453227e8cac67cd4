#!/usr/bin/env python3
"""Side-by-side benchmark of two builds (docs/performance.md §Against an earlier commit).

Runs the two planner_bench binaries alternately, round after round (old, new, old, new, ...),
so that the noise of a shared machine falls on both alike, and prints for each benchmark the
median real time of each build over the rounds and their ratio.

    bench/compare.py OLD/bench/planner_bench NEW/bench/planner_bench [--rounds 7]
        [--filter REGEX]
"""
import argparse, json, statistics, subprocess

DEFAULT_FILTER = ("^(evaluate/405b_mix|search/405b/mode:1|plan_b/process/real_time|"
                  "sweep/a_1000/threads:1/real_time)$")


def run(binary, pattern):
    out = subprocess.run([binary, f"--benchmark_filter={pattern}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"]: (b["real_time"], b["time_unit"]) for b in json.loads(out)["benchmarks"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--filter", default=DEFAULT_FILTER)
    a = ap.parse_args()
    times = {"old": {}, "new": {}}
    for _ in range(a.rounds):
        for which in ("old", "new"):
            for name, (t, unit) in run(getattr(a, which), a.filter).items():
                times[which].setdefault(name, []).append((t, unit))
    print(f"| benchmark | old median | new median | new/old | rounds |")
    print(f"|---|---|---|---|---|")
    for name in times["old"]:
        if name not in times["new"]:
            continue
        old = statistics.median(t for t, _ in times["old"][name])
        new = statistics.median(t for t, _ in times["new"][name])
        unit = times["old"][name][0][1]
        print(f"| {name} | {old:.4g} {unit} | {new:.4g} {unit} | {new / old:.3f} | {a.rounds} |")


if __name__ == "__main__":
    main()

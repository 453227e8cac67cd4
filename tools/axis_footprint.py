#!/usr/bin/env python3
"""Which source files an axis of the search touches (issue 33: "a test or script shows which
files an added axis touches").

For each field of `Plan` (include/planner/inputs/plan.hpp) that the search enumerates, lists the
files under include/ and src/ that read or write it: a member access (`p.cp`, `plan->cp`), its
`Axis::` enumerator, its scenario/output key ("cp"), or its accessor (`expert_tp(p)`). Adding a new axis touches at least the
files its closest existing sibling touches, so the counts are the cost of the next one.

    python3 tools/axis_footprint.py            # counts per axis, and per layer
    python3 tools/axis_footprint.py --files    # and the files

The layer columns (docs/architecture.md) say where the cost of an axis lies: `inputs` holds
its field and its row of the search space's table (inputs/space.hpp, which --fix, the
constraints, the search's bound checks and `planner memory`'s flags read); `model` its cost
and legality; `search` its enumeration, framework rules and rank key; `io` its reading and
error words; `report` and `explain` what the output says of it (exports included).
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The searched fields of Plan, with the JSON key each has in scenarios and output and the
# accessor that reads it where the field has a default meaning (plan.hpp).
AXES = [
    ("dp", "dp", None),
    ("tp", "tp", None),
    ("pp", "pp", None),
    ("cp", "cp", None),
    ("ep", "ep", None),
    ("etp", "etp", "expert_tp"),
    ("dp_shard", "dp_shard", "shard_dp"),
    ("virtual_stages", "virtual_stages", None),
    ("zero", "zero", None),
    ("sequence_parallel", "sequence_parallel", None),
    ("recompute", "recompute", None),
    ("micro_batch", "micro_batch", None),
]


def pattern(field, key, accessor):
    rx = (r"(?:\.|->)" + re.escape(field) + r"\b"
          + r"|\bAxis::" + re.escape(field) + r"\b"
          + r'|"' + re.escape(key) + r'"')
    if accessor:
        rx += r"|\b" + re.escape(accessor) + r"\("
    return re.compile(rx)


def sources():
    for top in ("include", "src"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".hpp", ".cpp", ".h"):
                yield path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list the files of each axis")
    args = parser.parse_args()
    texts = {path: path.read_text(encoding="utf-8", errors="replace") for path in sources()}
    layers = ["inputs", "model", "search", "io", "explain", "report", "cli", "other"]
    print(f"{'axis':<18} files  " + " ".join(f"{l:>7}" for l in layers)
          + f"  (of {len(texts)} in include/ and src/)")
    for field, key, accessor in AXES:
        rx = pattern(field, key, accessor)
        hits = [p.relative_to(ROOT).as_posix() for p, t in texts.items() if rx.search(t)]
        counts = dict.fromkeys(layers, 0)
        for h in hits:
            parts = h.split("/")
            layer = parts[2] if parts[0] == "include" and len(parts) > 3 else parts[1]
            counts[layer if layer in counts else "other"] += 1
        print(f"{field:<18} {len(hits):>5}  " + " ".join(f"{counts[l]:>7}" for l in layers))
        if args.files:
            for h in hits:
                print(f"    {h}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

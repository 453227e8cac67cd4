#!/usr/bin/env python3
"""Refreshes validation/serving/*.json against the current planner: each record's
recorded_error, within_target and note (the model's components), so that the records say
what the model predicts and why, and the table of README.md's Figures.
Usage: tools/serving_records.py BUILD/planner [--catalog]

--catalog (one-off, issue 30) replaces a record's typed GPU numbers and decode-bandwidth
convention by the planner's catalog entry, so the records test the defaults a user gets."""
import json, os, re, subprocess, sys, tempfile

CATALOG = {"2.039 TB/s": "A100-SXM4-80GB", "3.35 TB/s": "H100-SXM", "4.8 TB/s": "H200"}


def to_catalog(record):
    s = record["scenario"]
    gpu = s["cluster"]["gpu"]
    if "catalog" in gpu:
        return
    name = CATALOG[gpu["memory_bandwidth"]]
    s["cluster"]["gpu"] = {"catalog": name, "reserve": gpu.get("reserve", "6 GiB")}
    s["workload"].pop("memory_bandwidth_efficiency", None)
    a = record["assumptions"]
    cut = a.find("not fitted")
    end = a.find(". ", cut)
    lead = a[: a.find(":")] if ":" in a[:40] else "The GPU"
    record["assumptions"] = (
        f"{lead}: the planner's catalog entry {name} (datasheet peaks, HBM bandwidth and "
        "memory; its GEMM efficiency, FP8 ratio and HBM read fractions are fitted under the "
        "calibration rule, data/gpus.json), nothing typed, so the record tests the defaults "
        "a user gets." + a[end + 1:])


def evaluate(planner, scenario):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scenario, f)
        path = f.name
    out = subprocess.run([planner, "memory", path, "--format", "json"], capture_output=True,
                         text=True)
    os.unlink(path)
    return json.loads(out.stdout)


def reserve_for_kv_fraction(planner, doc, fraction):
    """Sets doc's GPU reserve so that the KV cache takes `fraction` of the memory free after
    the weights and the planner's default runtime reserve (an engine's free-memory fraction,
    TensorRT-LLM's free_gpu_memory_fraction); the rest joins the reserve."""
    led = evaluate(planner, doc)["plan"]["memory"]
    free = led["capacity"] - led["weights"] - led["reserve"]
    doc["cluster"]["gpu"]["reserve"] = (
        f"{(led['reserve'] + (1 - fraction) * free) / 2**30:.3f} GiB")
    return doc


def pointer(doc, p):
    for part in p.strip("/").split("/"):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def ms(x):
    return f"{x * 1e3:.1f} ms"


def note(record, report, predicted, measured):
    t = report["plan"]["time"]
    err = predicted / measured - 1
    metric = record["measured"]["pointer"].rsplit("/", 1)[1]
    if metric.startswith("ttft"):
        p = t["prefill"]
        parts = (f"prefill {ms(p['seconds'])} (compute {ms(p['compute'])}, reads "
                 f"{ms(p['memory'])}, layer fixed costs {ms(p['fixed'])}, tp {ms(p['tp'])})")
        if t["queue_wait"]["quantile"] > 0:
            parts += f", queue {ms(t['queue_wait']['quantile'])}"
        if t.get("round_lead", 0) > 0:
            parts += (f"; lockstep round of {t['round_prompts']:.0f}: lead prompt "
                      f"{ms(t['round_lead'])}, the others {ms(t['round_prefill'])} after it")
        if t.get("first_token_step", 0) > 0:
            parts += f"; first-token decode step {ms(t['first_token_step'])}"
    else:
        parts = (f"decode step {ms(t['decode_step'])} at batch {t['batch']:.0f} (weights "
                 f"{ms(t['weight_read'])}, KV cache {ms(t['kv_read'])}, layer fixed costs "
                 f"{ms(t['layer_fixed'])}, compute "
                 f"{ms(t['decode_compute'])}, tp {ms(t['tp'])}), {ms(t['per_token'])} per "
                 "output token with the prefills")
    verdict = "within" if abs(err) <= record["target"] else "misses"
    return (f"Model {predicted:.4g} against {measured:.4g} measured ({err:+.0%}, {verdict} "
            f"the {record['target']:.0%} target): {parts}.")


def main():
    planner = sys.argv[1]
    catalog = "--catalog" in sys.argv
    folder = os.path.join(os.path.dirname(__file__), "..", "validation", "serving")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(folder, name)
        record = json.load(open(path))
        if catalog:
            to_catalog(record)
        report = evaluate(planner, record["scenario"])
        predicted = pointer(report, record["measured"]["pointer"])
        measured = record["measured"]["value"]
        record["recorded_error"] = round(predicted / measured - 1, 3)
        record["within_target"] = abs(predicted / measured - 1) <= record["target"]
        record["note"] = note(record, report, predicted, measured)
        with open(path, "w") as f:
            json.dump(record, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"{name[:70]:70} {record['recorded_error']:+.3f}")
    figures(folder)


def figures(folder):
    """Rewrites the table under README.md's '## Figures (this commit)' from the records."""
    rows = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        d = json.load(open(os.path.join(folder, name)))
        metric = d["measured"]["pointer"].rsplit("/", 1)[1]
        unit = "tokens/s" if metric == "tokens_per_second" else "s"
        rows.append(f"| `{d['name']}` | {metric} | {d['measured']['value']:.4g} {unit} | "
                    f"{d['recorded_error'] * 100:+.1f}% | "
                    f"{'yes' if d['within_target'] else 'no'} |")
    path = os.path.join(folder, "README.md")
    text = open(path).read()
    start = text.index("| record |", text.index("## Figures (this commit)"))
    lines = text[start:].split("\n")
    end = 2
    while end < len(lines) and lines[end].startswith("| `"):
        end += 1
    with open(path, "w") as f:
        f.write(text[:start] + "\n".join(lines[:2] + rows + lines[end:]))


if __name__ == "__main__":
    main()

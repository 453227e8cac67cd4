"""Writes validation/ records made by the tools/*_records.py scripts, or with --check compares
them with what validation/ holds (exit 1 naming each record that differs)."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def write_or_check(records, check):
    """Each record as validation/<id>.json (indent 1, UTF-8, a final newline)."""
    differ = 0
    for rec in records:
        text = json.dumps(rec, indent=1, ensure_ascii=False) + "\n"
        path = ROOT / "validation" / f"{rec['id']}.json"
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(f"differs: {path.name}")
                differ += 1
        else:
            path.write_text(text, encoding="utf-8")
    if check:
        sys.exit(1 if differ else 0)
    print(f"wrote {len(records)} records")


def write_serving(records, keep_existing, dry_run):
    """Each serving record as validation/serving/<name>.json (indent 2, UTF-8, a final
    newline), naming each one written; with keep_existing, a record already there is left."""
    for rec in records:
        path = ROOT / "validation" / "serving" / f"{rec['name']}.json"
        if keep_existing and path.exists():
            continue
        print(rec["name"])
        if not dry_run:
            path.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n",
                            encoding="utf-8")

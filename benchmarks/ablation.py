"""Ablation: regex only, classifier only, combined; on the held-out split of data/corpus and on any JSONL.

Usage: python benchmarks/ablation.py [EXTRA.jsonl ...]   (e.g. ../shared/eval/dev.jsonl)
Prints top-1, top-3 and false positives on `none` cases for each mode.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cudalogs.errors import InputError
from cudalogs.evaluate import read_cases, score
from cudalogs.pipeline import explain
from cudalogs.train import read_jsonl, split_of

ROOT = Path(__file__).resolve().parents[1]
MODES = ("regex", "classifier", "combined")


def kb_example_threads() -> set[str]:
    """Threads a KB entry quotes as an example: their logs shaped a signature, so they measure nothing."""
    from cudalogs.knowledge import load_kb

    return {ex.source.strip().rstrip("/") for e in load_kb().entries for ex in e.examples}


def held_out() -> list[dict]:
    """The test split of data/corpus + data/negative, less any thread that is also a KB example."""
    rows = read_jsonl((ROOT / "data" / "corpus").glob("*.jsonl"))
    rows += [dict(r, **{"class": "none"}) for r in read_jsonl((ROOT / "data" / "negative").glob("*.jsonl"))]
    quoted = kb_example_threads()
    return [r for r in rows if split_of(r.get("source", "")) == "test"
            and r.get("source", "").strip().rstrip("/") not in quoted]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extra", nargs="*", help="more labelled JSONL files, e.g. ../shared/eval/dev.jsonl")
    args = parser.parse_args()
    try:
        extra = [(p, read_cases(Path(p))) for p in args.extra]  # read first: a bad path fails fast
    except InputError as exc:  # a missing or unreadable file: say which, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    corpora = [("held-out split (data/)", held_out())] + extra
    print(f"| corpus | mode | top-1 | top-3 | false positives |\n|---|---|---|---|---|")
    for name, cases in corpora:
        for mode in MODES:
            s = score(cases, lambda log, m=mode: explain(log, mode=m).to_dict()).summary()
            print(f"| {name} ({s['positives']}+{s['negatives']}) | {mode} | {s['top1']:.3f} | {s['top3']:.3f} | "
                  f"{s['false_positives']}/{s['negatives']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Find knowledge-base examples and corpus rows that repeat a measurement log (a cross-post).

The measurement set (../shared/eval/dev.jsonl) must stay unseen: its logs may not be copied into kb/ or data/.
Users do post the same log in two threads, though, so a row mined honestly from another thread can still be the
measurement log itself. Standard messages (PyTorch's sm_120 warning, "no kernel image ...") are shared by many
threads and are fine; what matters is text that only one person could have produced: the same temporary file
name, home directory, timestamp or address. This script prints, for each measurement log, the kb/data texts that
hold most of its word 8-grams AND share such a one-off token with it, and the texts that repeat nearly all of a
longer log that no third thread repeats (a reporter's own words, posted twice).

    python benchmarks/dev_overlap.py ../shared/eval/dev.jsonl
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from cudalogs.errors import InputError, KBError
from cudalogs.evaluate import read_cases
from cudalogs.kb.load import entry_files, read_toml
from cudalogs.train import read_jsonl

ROOT = Path(__file__).resolve().parent.parent
SHINGLE = 8
MIN_SHARE = 0.5
# Tokens a second person would not produce: temp file ids, hex addresses, timestamps, home directories, pids.
ONE_OFF = re.compile(
    r"tmpxft_[0-9a-f_]+|0x[0-9a-f]{10,}|\b\d{2}:\d{2}:\d{2}[.,]\d+|/(?:home|Users)/[\w.-]+|[A-Z]:\\Users\\[\w.-]+"
    r"|\bpid=\d+|\b[0-9a-f]{12,}\b",
    re.IGNORECASE,
)


def shingles(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {" ".join(words[i : i + SHINGLE]) for i in range(max(0, len(words) - SHINGLE + 1))}


def our_texts() -> list[tuple[str, str]]:
    """Every example log in kb/ and every row in data/, with where it lives and its source."""
    out = []
    for path in entry_files(ROOT / "kb"):
        try:
            entry = read_toml(path)
        except KBError:
            continue  # `cudalogs kb validate` reports it
        for ex in entry.get("examples", []):
            out.append((f"{path.relative_to(ROOT)} {ex.get('source')}", ex.get("log", "")))
    for path in sorted((ROOT / "data").rglob("*.jsonl")):
        for n, row in enumerate(read_jsonl([path]), 1):
            out.append((f"{path.relative_to(ROOT)}:{n} {row.get('source')}", row.get("log", "")))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev", nargs="?", default=str(ROOT.parent / "shared/eval/dev.jsonl"),
                        help="the measurement set (default: ../shared/eval/dev.jsonl)")
    args = parser.parse_args()
    try:
        dev = read_cases(Path(args.dev))  # the measurement set's own reader, as ablation.py and `cudalogs eval` use it
    except InputError as exc:  # a missing, unreadable or malformed file: say which, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    index: dict[str, set[int]] = defaultdict(set)
    dev_sh = []
    for i, case in enumerate(dev):
        sh = shingles(case["log"])
        dev_sh.append(sh)
        for s in sh:
            index[s].add(i)
    candidates = []  # (dev index, share, where, text)
    sources_per_case: dict[int, set[str]] = defaultdict(set)
    for where, text in our_texts():
        hits = Counter(i for s in shingles(text) for i in index.get(s, ()))
        for i, n in hits.items():
            share = n / max(1, len(dev_sh[i]))
            if share >= MIN_SHARE:
                candidates.append((i, share, where, text))
                sources_per_case[i].add(where.rsplit(" ", 1)[-1].lower())
    flagged = 0
    for i, share, where, text in candidates:
        shared = {t.lower() for t in ONE_OFF.findall(dev[i]["log"])} & {t.lower() for t in ONE_OFF.findall(text)}
        repeated_words = share >= 0.9 and len(dev_sh[i]) >= 20 and len(sources_per_case[i]) <= 2
        if shared or repeated_words:
            flagged += 1
            why = f"shared: {', '.join(sorted(shared)[:3])}" if shared else f"{share:.0%} of its words, no third thread"
            print(f"CROSS-POST {dev[i].get('source')} <- {where}  ({why})")
    print(f"{len(candidates)} kb/data texts hold >= {MIN_SHARE:.0%} of a measurement log's 8-grams; {flagged} look like a cross-post")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())

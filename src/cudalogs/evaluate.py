"""`cudalogs eval`: measure explain() on a labelled JSONL corpus.

Same case format as the shared dev set: {"log", "class" ("none" = must stay silent),
optional "also" (other classes counted right), optional "gpu_cc", "source"}.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudalogs.errors import InputError


@dataclass
class Scores:
    cases: int = 0
    positives: int = 0
    negatives: int = 0
    top1: int = 0
    top3: int = 0
    false_positives: int = 0
    gpu_total: int = 0
    gpu_right: int = 0
    per_class: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))  # tp, fn, fp
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def rate(self, n: int, d: int) -> float:
        return n / d if d else 0.0

    def summary(self) -> dict[str, Any]:
        per = {}
        for cls, (tp, fn, fp) in sorted(self.per_class.items()):
            per[cls] = {"precision": round(self.rate(tp, tp + fp), 3), "recall": round(self.rate(tp, tp + fn), 3),
                        "support": tp + fn}
        return {
            "cases": self.cases,
            "top1": round(self.rate(self.top1, self.positives), 3),
            "top3": round(self.rate(self.top3, self.positives), 3),
            "false_positive_rate": round(self.rate(self.false_positives, self.negatives), 3),
            "false_positives": self.false_positives, "negatives": self.negatives, "positives": self.positives,
            "gpu_cc_accuracy": round(self.rate(self.gpu_right, self.gpu_total), 3) if self.gpu_total else None,
            "gpu_cases": self.gpu_total,
            "per_class": per,
            "confusion": [{"want": w, "got": g, "count": n} for (w, g), n in self.confusion.most_common()],
            "misses": self.misses,
        }


def read_cases(path: Path) -> list[dict[str, Any]]:
    cases = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{no}: not JSON ({exc.msg})") from None
        if not isinstance(case, dict) or "log" not in case or "class" not in case:
            raise InputError(f"{path}:{no}: each line needs \"log\" and \"class\"")
        cases.append(case)
    return cases


def score(cases: Iterable[dict[str, Any]], explain: Callable[[str], dict[str, Any]]) -> Scores:
    """Run `explain` (text -> the JSON document) on every case and count."""
    s = Scores()
    for case in cases:
        s.cases += 1
        doc = explain(case["log"])
        got = [d["class"] for d in doc.get("diagnoses", [])]
        want = case["class"]
        _count_gpu(s, case, doc)
        if want == "none":
            s.negatives += 1
            if got:
                s.false_positives += 1
                s.per_class[got[0]][2] += 1
                s.confusion[("none", got[0])] += 1
                s.misses.append({"want": "none", "got": got[:3], "source": case.get("source")})
            continue
        s.positives += 1
        right = {want, *case.get("also", [])}
        top = got[0] if got else "none"
        if top in right:
            s.top1 += 1
            s.per_class[want][0] += 1
        else:
            s.per_class[want][1] += 1
            if got:
                s.per_class[top][2] += 1
            s.confusion[(want, top)] += 1
            s.misses.append({"want": want, "got": got[:3], "source": case.get("source")})
        if right & set(got[:3]):
            s.top3 += 1
    return s


def _count_gpu(s: Scores, case: dict[str, Any], doc: dict[str, Any]) -> None:
    if case.get("gpu_cc"):
        s.gpu_total += 1
        if str((doc.get("gpu") or {}).get("compute_capability")) == str(case["gpu_cc"]):
            s.gpu_right += 1
        else:
            s.misses.append({"want_gpu_cc": case["gpu_cc"], "got": (doc.get("gpu") or {}).get("compute_capability"),
                             "source": case.get("source")})


def table(summary: dict[str, Any]) -> str:
    """The summary as a plain-text table for people."""
    lines = [
        f"cases {summary['cases']}  top-1 {summary['top1']:.3f}  top-3 {summary['top3']:.3f}  "
        f"false positives {summary['false_positives']}/{summary['negatives']}"
        + (f"  gpu cc {summary['gpu_cc_accuracy']:.3f} of {summary['gpu_cases']}" if summary["gpu_cc_accuracy"] is not None else ""),
        "",
        f"{'class':36s} {'precision':>9s} {'recall':>7s} {'n':>4s}",
    ]
    for cls, m in summary["per_class"].items():
        lines.append(f"{cls:36s} {m['precision']:9.3f} {m['recall']:7.3f} {m['support']:4d}")
    if summary["confusion"]:
        lines += ["", "confusion (want -> got):"] + [f"  {c['want']} -> {c['got']}: {c['count']}" for c in summary["confusion"]]
    if summary["misses"]:
        lines += ["", "misses:"] + [f"  {json.dumps(m)}" for m in summary["misses"]]
    return "\n".join(lines) + "\n"

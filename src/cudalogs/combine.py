"""Regex hits + classifier scores -> the final ranking, or an honest "unknown" with related entries.

Why both: signatures are precise but brittle (a truncated or paraphrased message misses
them); the classifier is robust but vague. A signature hit keeps its reasoning (captured
fields, variants) and the classifier only re-weights it; without a hit, the classifier
may answer on its own, but only above a threshold, and otherwise we say we do not know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from cudalogs import fixes, rank
from cudalogs.classifier import NONE_CLASS
from cudalogs.model import Diagnosis, Entry, Evidence, GpuContext, Line

# A signature's confidence outweighs the classifier's probability 90:10 in the blend: the classifier breaks near-ties
# between signature readings (gaps under 0.11) but cannot outvote a clearly more specific one (0.75, 0.8, 0.85 and 0.9
# gave the same top-1 on the held-out corpus split and the dev set, 2026-11-25; at 0.75, at 0.8 after round 12's
# retraining, and at 0.85 after round 49's, the model put the generic "invalid device function" (0.84) above ggml's
# ROCm two-line message that explains it (0.99); 0.9 costs 2 in-sample near-ties of 11,337 against 0.85, 2026-11-27).
REGEX_WEIGHT = 0.9
MAX_DIAGNOSES = 5
ALSO_MIN_PROB = 0.15
_ERROR_LINE = re.compile(r"(?i)error|exception|fail|assert|not supported|unsupported")


def with_classifier(diagnoses: list[Diagnosis], probs: Mapping[str, float]) -> list[Diagnosis]:
    """Blend the classifier's probability into each signature diagnosis and re-rank."""
    if not probs:
        return diagnoses
    blended = [replace(d, confidence=round(REGEX_WEIGHT * d.confidence + (1 - REGEX_WEIGHT) * probs.get(d.cls, 0.0), 2))
               for d in diagnoses]
    order = {d.id: i for i, d in enumerate(diagnoses)}
    return sorted(blended, key=lambda d: (-d.confidence, order[d.id]))


def classifier_only(lines: Sequence[Line], probs: Mapping[str, float], nearest: Callable[[str], Entry | None],
                    ctx: GpuContext, threshold: float, present: set[str]) -> list[Diagnosis]:
    """Diagnoses for classes the classifier is sure of (>= threshold) that no signature found."""
    out = []
    for cls, p in sorted(probs.items(), key=lambda kv: -kv[1]):
        if cls == NONE_CLASS or cls in present or p < threshold:
            continue
        entry = nearest(cls)
        if entry is not None:
            out.append(_from_entry(entry, cls, p, lines, ctx))
    return out


def top3_extras(lines: Sequence[Line], probs: Mapping[str, float], nearest: Callable[[str], Entry | None],
                ctx: GpuContext, present: set[str], room: int) -> list[Diagnosis]:
    """Lower-ranked alternatives after the signature diagnoses, when the classifier sees them."""
    out: list[Diagnosis] = []
    for cls, p in sorted(probs.items(), key=lambda kv: -kv[1]):
        if len(out) >= room:
            break
        if cls == NONE_CLASS or cls in present or p < ALSO_MIN_PROB:
            continue
        entry = nearest(cls)
        if entry is not None:
            out.append(_from_entry(entry, cls, p * 0.5, lines, ctx))
    return out


def _from_entry(entry: Entry, cls: str, p: float, lines: Sequence[Line], ctx: GpuContext) -> Diagnosis:
    env = fixes.environment(ctx, {}, entry)  # no signature matched: its captured fields render as "<name>"
    reading = rank.read_entry(entry, env, None)
    if reading.cls != cls:  # a variant read the message as another class: show the entry's own reading of `cls`
        reading = rank.own_reading(entry)
    evidence = tuple(Evidence(line.no, line.text.strip()) for line in lines if _ERROR_LINE.search(line.text))[:3]
    specs = rank.fix_specs(entry, reading)
    return Diagnosis(
        id=entry.id, cls=cls, title=fixes.render_title(reading.title, env), status=entry.status,
        confidence=round(min(0.95, p * 0.8), 2), evidence=evidence, root_cause=fixes.render(reading.root_cause, env),
        fixes=tuple(fixes.applicable(specs, env)), references=entry.references,
        why_ranked=f"classifier: p={p:.2f} for {cls}; no signature matched, nearest entry {entry.id}",
    )

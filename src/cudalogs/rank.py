"""Stage 4: hits + GPU -> ranked diagnoses, each with its variant chosen and its fixes rendered.

Ranking in multi-error logs: a fatal, specific message is the root; warnings that precede
it and generic cascade messages ("CUDA error: unknown error" after an OOM) rank lower.
Among equals, the earlier line wins: CUDA errors cascade forward, not backward.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cudalogs import conditions, fixes
from cudalogs.model import Diagnosis, Entry, Evidence, GpuContext, Hit, Line, Variant

SEVERITY_BONUS = {"fatal": 0.10, "error": 0.05, "warning": -0.10}
STATUS_BONUS = {"stable": 0.02, "test": 0.0, "experimental": -0.05}
MAX_EVIDENCE = 5


@dataclass(frozen=True)
class Reading:
    """An entry's message read for this GPU: the variant chosen and the resulting texts."""

    cls: str
    title: str
    root_cause: str
    variant: Variant | None


def read_entry(entry: Entry, env: Mapping[str, Any], log_has: Callable[[str], bool] | None) -> Reading:
    """The first variant whose condition holds replaces the entry's class, title and root cause."""
    for variant in entry.variants:
        if conditions.evaluate(variant.when, env, log_has) is True:
            return Reading(variant.cls or entry.cls, variant.title or entry.title,
                           variant.root_cause or entry.root_cause, variant)
    return own_reading(entry)


def own_reading(entry: Entry) -> Reading:
    """The entry read without any variant: its own class, title and root cause."""
    return Reading(entry.cls, entry.title, entry.root_cause, None)


def fix_specs(entry: Entry, reading: Reading) -> tuple:  # type: ignore[type-arg]
    """The variant's fixes first, then the entry's (unless the variant replaces them)."""
    if reading.variant is None:
        return entry.fixes
    return reading.variant.fixes if reading.variant.replace_fixes else (*reading.variant.fixes, *entry.fixes)


def diagnose(hits: Sequence[Hit], lines: Mapping[int, Line] | Sequence[Line], entries: Mapping[str, Entry],
             ctx: GpuContext, log_has: Callable[[str], bool] | None = None) -> list[Diagnosis]:
    """One diagnosis per class, best first (the pipeline then puts a root cause first: see root_first)."""
    line_text = _line_index(lines)
    by_entry: dict[str, list[Hit]] = {}
    for hit in hits:
        by_entry.setdefault(hit.entry_id, []).append(hit)
    scored = [pair for eid, eh in by_entry.items() if eid in entries
              if (pair := _diagnosis(entries[eid], eh, line_text, ctx, log_has)) is not None]
    scored.sort(key=lambda pair: (-pair[1], pair[0].evidence[0].line_no if pair[0].evidence else 0))
    return _merge_same_class([d for d, _ in scored])


def _line_index(lines: Mapping[int, Line] | Sequence[Line]) -> dict[int, str]:
    items = lines.values() if isinstance(lines, Mapping) else lines
    return {line.no: line.text for line in items}


def _diagnosis(entry: Entry, hits: list[Hit], line_text: Mapping[int, str], ctx: GpuContext,
               log_has: Callable[[str], bool] | None) -> tuple[Diagnosis, float] | None:
    """The entry's diagnosis and score; None when its `quiet_when` holds (the hit is known to be harmless here)."""
    fields: dict[str, str] = {}
    for hit in hits:  # the first hit's captures win; later hits fill in fields it lacked
        for key, value in hit.fields:
            fields.setdefault(key, value)
    env = fixes.environment(ctx, fields, entry)
    if entry.quiet_when and conditions.evaluate(entry.quiet_when, env, log_has) is True:
        return None
    reading = read_entry(entry, env, log_has)
    specs = fix_specs(entry, reading)
    score, why = _score(entry, hits, env, log_has)
    # two signatures of one entry can match the same line: it is one piece of evidence
    evidence = tuple(dict.fromkeys(Evidence(h.line_no, line_text.get(h.line_no, h.text).strip()) for h in hits))[:MAX_EVIDENCE]
    diagnosis = Diagnosis(
        id=entry.id, cls=reading.cls, title=fixes.render_title(reading.title, env), status=entry.status,
        confidence=round(score, 2), evidence=evidence, root_cause=fixes.render(reading.root_cause, env),
        fixes=tuple(fixes.applicable(specs, env, log_has)), references=entry.references,
        fields=tuple(sorted(fields.items())), why_ranked=why,
    )
    return diagnosis, score


def _score(entry: Entry, hits: list[Hit], env: Mapping[str, Any],
           log_has: Callable[[str], bool] | None) -> tuple[float, str]:
    """Confidence from how specific and how final the message is, adjusted by context: a pattern elsewhere in the
    log, or a condition on facts read from it once for every entry (`rocm`, `container`)."""
    score = 0.30 + 0.10 * entry.specificity + SEVERITY_BONUS.get(entry.severity, 0.0) + STATUS_BONUS.get(entry.status, 0.0)
    context = 0.0
    if log_has is not None:
        context = sum(c.weight for c in entry.context
                      if (conditions.evaluate(c.when, env, log_has) is True if c.when else log_has(c.pattern)))
    score += max(-0.2, min(0.2, context))
    if len(hits) > 1:
        score += 0.02
    why = f"{entry.severity} message, specificity {entry.specificity}/5"
    if context:
        why += f", context {context:+.2f}"
    return max(0.05, min(0.99, score)), why


ROOT_MARGIN = 0.05  # how much less sure a root cause may be than the failure it explains and still rank first


def root_first(diagnoses: list[Diagnosis], explains: Mapping[str, frozenset[str]]) -> list[Diagnosis]:
    """Move up a diagnosis whose class explains the one ranked first ("the driver is older than the runtime" before the
    bitsandbytes set-up that then found no GPU), saying why; the others keep their order. Only among near-equals: a
    vague reading of a root cause ("unspecified launch failure" as a hardware fault) does not outrank a clear failure."""
    if len(diagnoses) < 2:
        return diagnoses
    top = diagnoses[0]
    for i, d in enumerate(diagnoses[1:], 1):
        if top.cls in explains.get(d.cls, frozenset()) and d.confidence >= top.confidence - ROOT_MARGIN:
            if d.cls in explains.get(top.cls, frozenset()):
                return diagnoses  # each explains the other: keep the order the messages gave
            root = replace(d, why_ranked=f"{d.why_ranked}; ranked first: {d.cls} is the likely root of the {top.cls} also in this log")
            return [root, *diagnoses[:i], *diagnoses[i + 1:]]
    return diagnoses


def _merge_same_class(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """Keep the best diagnosis per class; the others' evidence is not lost, it joins the best."""
    best: dict[str, Diagnosis] = {}
    order: list[str] = []
    for d in diagnoses:
        if d.cls not in best:
            best[d.cls] = d
            order.append(d.cls)
            continue
        kept = best[d.cls]
        extra = tuple(e for e in d.evidence if e not in kept.evidence)
        if extra and len(kept.evidence) < MAX_EVIDENCE:
            best[d.cls] = replace(kept, evidence=(*kept.evidence, *extra)[:MAX_EVIDENCE])
    return [best[c] for c in order]

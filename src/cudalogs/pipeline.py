"""explain(): the whole flow, one stage per line. Read this file first.

log text -> clean numbered lines -> signature hits -> GPU context -> ranked diagnoses
with fixes for that GPU -> Report (rendered by render.py as text, JSON or Markdown).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import regex

from cudalogs import classifier, combine, fixes, normalize, rank, signatures
from cudalogs import gpu as gpu_context
from cudalogs.knowledge import KnowledgeBase, load_kb
from cudalogs.logtext import LogText
from cudalogs.model import Entry, Gpu, GpuContext, Hint, InputSummary, Line, Report

NO_DIAGNOSIS = "No known GPU error found in this log."
EMPTY_INPUT = "The input is empty: paste or pipe the log that shows the error."
FULL_LINES = 50_000  # lines kept whole; past this only lines that can matter are kept (bounded memory)
MAX_KEPT_AFTER = 20_000
BATCH_LINES = 20_000  # lines past FULL_LINES prefiltered together (a few MB of text at most)


def explain(log: str | bytes | BinaryIO, gpu: str | Gpu | None = None, cc: str | None = None, *,
            kb: KnowledgeBase | None = None, limits: normalize.Limits | None = None, mode: str = "combined") -> Report:
    """Diagnose a GPU error log for the user's GPU (named with `gpu`/`cc`, else found in the log).

    `mode` is for ablation: "combined" (default), "regex" (signatures only), "classifier" (no signatures).
    """
    kb = kb or load_kb(examples=False)  # example logs are never shown here: ~20 ms of start-up not spent
    override = gpu if isinstance(gpu, Gpu) else gpu_context.resolve(gpu, cc, kb.catalog)
    stats = normalize.Stats()
    blank = [0]  # how many blank lines were left out (a count: a huge log may have millions)
    kept = _read(log, kb, limits, stats, blank)
    text = LogText(kept)
    timeouts: list[str] = []
    hits = _signature_hits(text, kb, timeouts) if mode != "classifier" else []
    ctx = gpu_context.context(text, kb.catalog, kb.facts, override)
    diagnoses = rank.diagnose(hits, kept, kb.by_id, ctx, _log_has(text.text, text.case_folded))
    quieted = bool(hits) and not diagnoses  # every hit was a known-harmless case (an entry's quiet_when)
    diagnoses, related = _with_classifier(diagnoses, kept, kb, ctx, quieted) if mode != "regex" else (diagnoses, ())
    diagnoses = rank.root_first(diagnoses, kb.explains)  # on the final order: blending in the classifier re-sorts
    summary = InputSummary(stats.lines, stats.bytes, stats.truncated_input or len(kept) + blank[0] < stats.lines,
                           tuple(stats.notes + timeouts))
    message = "" if diagnoses else (EMPTY_INPUT if not any(line.text.strip() for line in kept) else NO_DIAGNOSIS)
    pointers = _hints(kept, kb, ctx) if message == NO_DIAGNOSIS else ()
    return Report(gpu=ctx, diagnoses=tuple(diagnoses), input=summary, message=message, related=related, hints=pointers)


def _hints(kept: list[Line], kb: KnowledgeBase, ctx: GpuContext) -> tuple[Hint, ...]:
    """For a log nothing explained: the features its GPU lacks that it mentions (see hints.py). Imported here, as
    only such logs need it."""
    from cudalogs import hints

    return hints.lacking_features(kept, ctx, kb.features)


def signatures_match(log: str, kb: KnowledgeBase | None = None) -> bool:
    """Whether any signature matches the log. Then the classifier never answers alone: the hit is diagnosed, or its
    entry declared the case harmless (quiet_when, or a condition on the GPU that does not hold) and explain() stays
    silent. Training calibrates the classifier's threshold only on negatives where this is False."""
    kb = kb or load_kb(examples=False)
    return bool(_signature_hits(LogText(_read(log, kb)), kb, []))


def _read(log: str | bytes | BinaryIO, kb: KnowledgeBase, limits: normalize.Limits | None = None,
          stats: normalize.Stats | None = None, blank: list[int] | None = None) -> list[Line]:
    """The lines a diagnosis reads: decoded and cleaned, a line-number gutter taken off, only those that matter."""
    return list(_lines_that_matter(normalize.without_gutter(normalize.lines(log, limits, stats)), kb, blank))


def _signature_hits(text: LogText, kb: KnowledgeBase, timeouts: list[str]) -> list:  # type: ignore[type-arg]
    hits = signatures.scan(text, kb.compiled, timeouts)
    if glue := signatures.hard_wrapped(text):
        # a paste a terminal hard-wrapped: what matched line by line may be the cut first half of a message (its
        # captures cut short too), so the rejoined reading of each entry comes first (rank takes the first hit's fields)
        return signatures.scan_joined(text, kb.compiled, timeouts, glue) + hits
    if _only_generic(hits, kb):
        # nothing matched, or only generic messages: a specific one may have been broken by a wrapped paste (a word
        # wrap: `glue` is [] here, so the joined pass does not work out the hard-wrap glue a second time)
        seen = {h.entry_id for h in hits}
        hits = hits + [h for h in signatures.scan_joined(text, kb.compiled, timeouts, glue) if h.entry_id not in seen]
    return hits


def explain_issue(body: str, gpu: str | Gpu | None = None, cc: str | None = None, *,
                  kb: KnowledgeBase | None = None) -> Report:
    """explain() for an issue body or chat message: reads its log-like parts (see issue.py)."""
    from cudalogs.issue import log_parts

    return explain(log_parts(body), gpu, cc, kb=kb)


@functools.lru_cache(maxsize=1)
def _model() -> classifier.Model | None:
    return classifier.load()


def _with_classifier(diagnoses: list, kept: list[Line], kb: KnowledgeBase, ctx,  # type: ignore[no-untyped-def]
                     quieted: bool = False):
    """Blend in the classifier; without a signature hit, answer only above its threshold, and not at all when the
    only hits were declared harmless by their entry (the classifier would read the same words as a fault)."""
    model = _model()
    if model is None or not kept:
        return diagnoses, ()
    vector = model.vector(classifier.classifier_text(kept))
    probs = model.probabilities_of(vector)

    @functools.cache
    def similar() -> list[tuple[float, str]]:
        """Entries by cosine to the log: computed only when an answer needs an entry (most signature hits do not)."""
        return sorted(((score, eid) for eid, score in model.similarities(vector).items() if eid in kb.by_id), reverse=True)

    def nearest(cls: str):  # type: ignore[no-untyped-def]
        return next((kb.by_id[eid] for score, eid in similar() if kb.by_id.cls_of(eid) == cls and score > 0), None)

    if diagnoses:
        blended = combine.with_classifier(diagnoses, probs)
        present = {d.cls for d in blended}
        return blended + combine.top3_extras(kept, probs, nearest, ctx, present, room=3 - len(blended)), ()
    reports = classifier.reports_failure("\n".join(line.text for line in kept[:classifier.MAX_LINES * 10]))
    found = [] if quieted else combine.classifier_only(kept, probs, nearest, ctx, model.threshold_for(reports), set())[:1]
    if found:  # the answer passed the threshold; its runners-up follow it, ranked below, as with a signature hit
        return found + combine.top3_extras(kept, probs, nearest, ctx, {found[0].cls}, room=2), ()
    related = tuple((eid, _headline(kb.by_id[eid], ctx), round(score, 2))
                    for score, eid in similar()[:3] if score >= 0.1)
    return found, related


def _headline(entry: Entry, ctx: GpuContext) -> str:
    """An entry's title as a diagnosis would read it for this GPU, nothing captured: "... capability <major> <minor>"
    or the aside left out, never the template's raw "{major}"."""
    return fixes.render_title(entry.title, fixes.environment(ctx, {}, entry))


GENERIC_SPECIFICITY = 3  # at or below: a message that a more specific one (perhaps wrapped) may explain


def _only_generic(hits: list, kb: KnowledgeBase) -> bool:  # type: ignore[type-arg]
    """True when no hit is specific: then the joined-lines pass runs too (it costs a few ms on a 50 KB log)."""
    return all(kb.by_id[h.entry_id].specificity <= GENERIC_SPECIFICITY for h in hits if h.entry_id in kb.by_id)


def _lines_that_matter(lines: Iterable[Line], kb: KnowledgeBase, blank: list[int] | None = None) -> Iterator[Line]:
    """All non-blank lines of an ordinary log; for a huge one, the first FULL_LINES and then only candidates.

    Blank lines are left out (counted in `blank[0]`): a paste with an empty line between every
    line (copied from some web pages and chat apps) must read like the log it came from, and a message
    spanning two lines must still be two neighbouring lines. Kept lines keep their own line numbers.

    Past FULL_LINES, lines are read in batches and kept when they hold one of the KB's prefilter
    words, found with one str.find scan per word over each batch's lowercase text (a per-line
    regex alternation of a few hundred literals was thirty times slower).
    NOTE: past FULL_LINES a signature without a required literal can no longer fire, and
    windowed signatures see only the kept neighbours; the report says the input was reduced.
    """
    kept_after, batch = 0, []
    blank = blank if blank is not None else [0]
    for line in lines:
        if not line.text.strip():
            blank[0] += 1
            continue
        if line.no <= FULL_LINES:
            yield line
            continue
        batch.append(line)
        if len(batch) == BATCH_LINES:
            for kept in _candidates(batch, kb)[:MAX_KEPT_AFTER - kept_after]:
                kept_after += 1
                yield kept
            batch = []
    for kept in _candidates(batch, kb)[:MAX_KEPT_AFTER - kept_after]:
        yield kept


def _candidates(batch: list[Line], kb: KnowledgeBase) -> list[Line]:
    """The lines of `batch` holding a prefilter word, in order."""
    if not batch:
        return []
    text = LogText(batch)
    found = set().union(*(text.lines_with(word) for word in kb.prefilter_words))
    return [batch[i] for i in sorted(found)]


def _log_has(text: str, case_folded: bool = False):  # type: ignore[no-untyped-def]
    """A cached `log_has(pattern)` for context patterns and conditions: searches the kept text
    (case-insensitively when the log arrived lowercased, as the signatures do)."""
    flags = regex.MULTILINE | (regex.IGNORECASE if case_folded else 0)

    @functools.lru_cache(maxsize=256)
    def log_has(pattern: str) -> bool:
        try:
            return regex.search(pattern, text, flags=flags, timeout=0.2) is not None
        except (regex.error, TimeoutError):
            return False

    return log_has

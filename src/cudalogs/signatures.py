"""Stage 2: compiled KB regexes -> hits with named captures.

One small generic engine for every entry (adding a signature adds no Python).
Why a literal prefilter: a 50 KB log has about a thousand lines and the KB a few
hundred patterns; testing every pattern on every line is too slow for a
sub-second answer. Each pattern's longest required literal is checked with a plain
substring test first, and the regex only runs on lines that contain it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex

from cudalogs.logtext import LogText
from cudalogs.model import Entry, Hit, Line

MATCH_TIMEOUT_S = 0.05  # per line and pattern; a pathological line is skipped, not waited on


@dataclass
class CompiledSignature:
    """A signature ready to scan; the regex itself is compiled on first use.

    NOTE: lazy compilation matters for start-up: most logs contain the literal of only a
    few signatures, so most patterns are never compiled in a given run.
    """

    entry_id: str
    index: int
    source: str
    window: int
    literals: tuple[str, ...]  # lowercase; a match contains one of them; () when none could be found
    _pattern: "regex.Pattern[str] | None" = None
    _folded: "regex.Pattern[str] | None" = None

    @property
    def pattern(self) -> "regex.Pattern[str]":
        if self._pattern is None:
            self._pattern = regex.compile(self.source)
        return self._pattern

    @property
    def folded(self) -> "regex.Pattern[str]":
        """The pattern matching without regard to case: for a log that arrived lowercased."""
        if self._folded is None:
            self._folded = regex.compile(self.source, flags=regex.IGNORECASE)
        return self._folded


def compile_entries(entries: Sequence[Entry]) -> list[CompiledSignature]:
    """Prepare every signature once (literal extracted now, regex compiled when first needed)."""
    return [CompiledSignature(entry.id, i, sig.pattern, sig.window,
                              sig.literals if sig.literals is not None else prefilter_literals(sig.pattern))
            for entry in entries for i, sig in enumerate(entry.signatures)]


def required_literal(pattern: str) -> str:
    """The longest run of literal characters every match must contain, lowercased ("" if none).

    Uses the stdlib regex parser on the top-level sequence, looking inside plain groups
    (`(?P<message>...)` around a whole message is required too); anything inside an
    alternation or a repeat may be optional, so it is not required.
    """
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    from re._constants import LITERAL, SUBPATTERN  # type: ignore[import-not-found]

    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError, TypeError):
        return ""

    def flat(items):  # type: ignore[no-untyped-def]
        for op, arg in items:
            if op is SUBPATTERN:
                yield from flat(arg[3])
            else:
                yield op, arg

    best, run = "", []
    for op, arg in flat(parsed):
        if op is LITERAL:
            run.append(chr(arg))
            continue
        best = max(best, "".join(run), key=len)
        run = []
    best = max(best, "".join(run), key=len)
    best = best.split("\n")[0]
    return best.lower() if len(best) >= 4 else ""


def prefilter_literals(pattern: str) -> tuple[str, ...]:
    """What a line must contain for `pattern` to match there: its required literal, else one per top-level
    alternative (`cudaErrorX|CUDA_ERROR_X`); () when neither exists and every line must be tried."""
    literal = required_literal(pattern)
    return (literal,) if literal else branch_literals(pattern, min_len=4)


def branch_literals(pattern: str, min_len: int = 2) -> tuple[str, ...]:
    """For a top-level alternation, one required lowercase literal per branch; () if any branch has none.

    A prefilter for patterns such as OS hints (`\\bWindows\\b|\\.dll\\b|...`): the pattern can only
    match where one of these literals occurs, so a text holding none of them is skipped unscanned.
    """
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    from re._constants import BRANCH, LITERAL  # type: ignore[import-not-found]

    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError, TypeError):
        return ()
    items = list(parsed)
    branches = items[0][1][1] if len(items) == 1 and items[0][0] is BRANCH else [items]
    out = []
    for branch in branches:
        best, run = "", []
        for op, arg in branch:
            if op is LITERAL:
                run.append(chr(arg))
            else:
                best, run = max(best, "".join(run), key=len), []
        best = max(best, "".join(run), key=len).split("\n")[0]
        if len(best) < min_len:
            return ()
        out.append(best.lower())
    return tuple(out)


def scan(log: Sequence[Line] | LogText, compiled: Iterable[CompiledSignature],
         timeouts: list[str] | None = None) -> list[Hit]:
    """Every signature hit in the lines, de-duplicated by (entry, fields), in line order.

    A log that arrived lowercased (`LogText.case_folded`) is matched case-insensitively: the
    literal prefilter is lowercase already, and a lowercased message is still that message.
    """
    finder = LogText.of(log)
    lines = finder.lines
    hits: list[Hit] = []
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for sig in compiled:
        pattern = sig.folded if finder.case_folded else sig.pattern
        for start in _candidate_starts(sig, finder):
            text = "\n".join(line.text for line in lines[start: start + sig.window]) if sig.window > 1 else lines[start].text
            try:
                m = pattern.search(text, timeout=MATCH_TIMEOUT_S)
            except TimeoutError:
                if timeouts is not None:
                    timeouts.append(f"{sig.entry_id}: pattern {sig.index} timed out on line {lines[start].no}")
                continue
            if m is None:
                continue
            fields = tuple(sorted((k, v) for k, v in m.groupdict().items() if v is not None))
            key = (sig.entry_id, fields)
            if key in seen:
                continue
            seen.add(key)
            end = start + text.count("\n", 0, m.end())
            hits.append(Hit(sig.entry_id, lines[start + text.count("\n", 0, m.start())].no, m.group(0), fields, lines[end].no))
    hits.sort(key=lambda h: (h.line_no, h.entry_id))
    return hits


def _candidate_starts(sig: CompiledSignature, finder: LogText) -> Iterable[int]:
    """Line indexes worth trying: those containing the literal (and, for windows, the lines before)."""
    if not sig.literals:
        return range(len(finder))
    found = finder.lines_with(sig.literals[0]) if len(sig.literals) == 1 else sorted(
        {i for literal in sig.literals for i in finder.lines_with(literal)})
    if sig.window == 1:
        return found
    starts: set[int] = set()
    for i in found:
        starts.update(range(max(0, i - sig.window + 1), i + 1))
    return sorted(starts)

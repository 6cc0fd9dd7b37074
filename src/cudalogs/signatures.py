"""Stage 2: compiled KB regexes -> hits with named captures.

One small generic engine for every entry (adding a signature adds no Python).
Why a literal prefilter: a 50 KB log has about a thousand lines and the KB a few
hundred patterns; testing every pattern on every line is too slow for a
sub-second answer. Each pattern's longest required literal is checked with a plain
substring test first, and the regex only runs on lines that contain it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex

from cudalogs.logtext import LogText, rule_out_keys
from cudalogs.model import Entry, Hit, Line, Signature
from cudalogs.normalize import strip_prefix

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


def compile_entries(entries: Sequence[Entry]) -> "SignatureList":
    """Prepare every signature once (literal extracted now, regex compiled when first needed)."""
    return compile_signatures((entry.id, entry.signatures) for entry in entries)


class SignatureList(list[CompiledSignature]):
    """The compiled signatures of a knowledge base, with an index of their literals' first and last three characters.

    Why: scan() used to ask every signature in turn whether the log may hold one of its literals (LogText.may_hold);
    with some 1,400 signatures that loop, in Python, was most of the cost of explaining a short log. The index asks
    the log's set of three-character runs once, in C, which first trigrams are there, and only the few signatures
    behind those are looked at. Built on first use; the list must not change after that (knowledge.py never does).
    """

    _by_first: dict[str, list[tuple[str, int]]] | None = None
    _always: tuple[int, ...] = ()

    def worth_trying(self, finder: LogText) -> list[CompiledSignature]:
        """The signatures, in order, that may match the text: one of their literals may be in it
        (LogText.may_hold's test), or they have no literal to rule them out by."""
        if self._by_first is None:
            self._index()
        assert self._by_first is not None
        trigrams = finder.trigrams()
        positions = set(self._always)
        for first in trigrams.intersection(self._by_first):
            positions.update(p for last, p in self._by_first[first] if last in trigrams)
        return [self[p] for p in sorted(positions)]

    def _index(self) -> None:
        by_first: dict[str, list[tuple[str, int]]] = {}
        always = []
        for position, sig in enumerate(self):
            keys = [k for k in map(rule_out_keys, sig.literals) if k is not None]
            if not sig.literals or len(keys) < len(sig.literals):  # a literal too short to rule out: always tried
                always.append(position)
                continue
            for first, last in keys:
                by_first.setdefault(first, []).append((last, position))
        self._by_first, self._always = by_first, tuple(always)


def compile_signatures(by_entry: Iterable[tuple[str, Sequence[Signature]]]) -> SignatureList:
    """compile_entries for (entry id, its signatures) pairs: what a knowledge base that has not built its entries has."""
    return SignatureList(CompiledSignature(entry_id, i, sig.pattern, sig.window,
                                           sig.literals if sig.literals is not None else prefilter_literals(sig.pattern))
                         for entry_id, sigs in by_entry for i, sig in enumerate(sigs))


MIN_LITERAL_WEIGHT = 4  # see literal_weight


def literal_weight(text: str) -> int:
    """How selective a literal is, for the 4+ rule: its characters, a CJK one (or other wide script) counting two.

    Why: the rule keeps a pattern from being tried on every line of every log; four Latin characters ("cuda")
    rarely occur by chance, and neither do two Chinese ones ("显存", GPU memory) or three ("爆显存"), which carry a
    word each. Counting characters alone rejected the commonest Chinese words for a failure.
    """
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


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
    return best.lower() if literal_weight(best) >= MIN_LITERAL_WEIGHT else ""


def prefilter_literals(pattern: str) -> tuple[str, ...]:
    """What a line must contain for `pattern` to match there: its required literal, else one per top-level
    alternative (`cudaErrorX|CUDA_ERROR_X`); () when neither exists and every line must be tried."""
    literal = required_literal(pattern)
    return (literal,) if literal else branch_literals(pattern, min_weight=MIN_LITERAL_WEIGHT)


def branch_literals(pattern: str, min_weight: int = 2) -> tuple[str, ...]:
    """For a top-level alternation, one required lowercase literal per branch; () if any branch has none.

    A prefilter for patterns such as OS hints (`\\bWindows\\b|\\.dll\\b|...`): the pattern can only
    match where one of these literals occurs, so a text holding none of them is skipped unscanned. Each branch's
    literal must weigh `min_weight` (literal_weight: a CJK character counts two).
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
        if literal_weight(best) < min_weight:
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
    for sig in compiled.worth_trying(finder) if isinstance(compiled, SignatureList) else compiled:
        starts = _candidate_starts(sig, finder)
        if not starts:
            continue  # NOTE: before touching sig.pattern, which compiles it: most patterns never are
        pattern = sig.folded if finder.case_folded else sig.pattern
        for start in starts:
            text = _window_text(lines, start, sig.window) if sig.window > 1 else lines[start].text
            m = _search(sig, pattern, text, lines[start].no, timeouts)
            fields = _unseen_fields(sig, m, seen) if m is not None else None
            if fields is None:
                continue
            end = start + text.count("\n", 0, m.end())
            hits.append(Hit(sig.entry_id, lines[start + text.count("\n", 0, m.start())].no, m.group(0), fields, lines[end].no))
    hits.sort(key=lambda h: (h.line_no, h.entry_id))
    return hits


JOINED_MAX_CHARS = 1_000_000  # the second pass (scan_joined) is for pastes, not for multi-gigabyte training logs


def scan_joined(log: LogText, compiled: Sequence[CompiledSignature], timeouts: list[str] | None = None,
                glue: list[bool] | None = None) -> list[Hit]:
    """A second pass for a log in which no signature matched: each message looked for across line breaks.

    Why: a message copied from a terminal, a notebook or an e-mail is often wrapped, so "no kernel
    image is available for execution on the device" arrives as two lines and no single line holds
    it. Here the lines are joined (prefixes taken off), the literals searched in that text, and each
    single-line pattern tried on the few lines around a literal. A terminal's hard wrap cuts words
    anywhere, so lines of the log's widest width are first joined with nothing; if that finds
    nothing (a word wrap, which cuts at spaces), every line is joined by a space. `glue`: hard_wrapped()'s answer,
    when the caller has it.
    """
    lines = log.lines
    if not lines or len(log.text) > JOINED_MAX_CHARS:
        return []
    glue = glue if glue is not None else hard_wrap_glue(lines)
    hits = _scan_joined(log, compiled, glue, timeouts) + _scan_unwrapped(log, compiled, glue, timeouts) if any(glue) else []
    return hits or _scan_joined(log, compiled, [False] * len(lines), timeouts)


def hard_wrap_glue(lines: Sequence[Line]) -> list[bool]:
    """For each line, whether a terminal's hard wrap cut it (it is as long as the log's widest lines, and more than
    one line is, or it ends mid-word): then it continues on the next line without a space. Never where the next
    line opens like this one (a record of its own, see _opens_like)."""
    if not lines:
        return []
    width, width_seen = _hard_wrap_width(lines)
    following = [*lines[1:], None]
    return [len(line.text) == width and (width_seen > 1 or _cut_mid_word(line, after))
            and not _opens_like(line, after)
            for line, after in zip(lines, following)]


def hard_wrapped(log: LogText) -> list[bool]:
    """hard_wrap_glue for a paste small enough for the joined-lines pass, when a terminal hard-wrapped it; else []
    (so its truth says whether the pass has something to rejoin)."""
    if not log.lines or len(log.text) > JOINED_MAX_CHARS:
        return []
    glue = hard_wrap_glue(log.lines)
    return glue if any(glue) else []


def _scan_unwrapped(log: LogText, compiled: Sequence[CompiledSignature], glue: list[bool],
                    timeouts: list[str] | None) -> list[Hit]:
    """The multi-line (window) signatures on the log with a terminal's hard wrap undone: each wrapped line joined
    to its continuations, the log's own line breaks kept (a window pattern matches across those). A hit is
    reported on the first line of the pieces it came from."""
    windowed = [sig for sig in compiled if sig.window > 1]
    if not windowed:
        return []
    lines = log.lines
    merged: list[Line] = []
    for i, line in enumerate(lines):
        if i and glue[i - 1]:
            merged[-1] = Line(merged[-1].no, merged[-1].text + line.text)
        else:
            merged.append(line)
    return scan(LogText(merged), windowed, timeouts)


def _scan_joined(log: LogText, compiled: Sequence[CompiledSignature], glue: list[bool],
                 timeouts: list[str] | None) -> list[Hit]:
    """scan_joined with line i glued to line i+1 without a space where glue[i]."""
    lines = log.lines
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for i, line in enumerate(lines):
        piece = line.text if i and glue[i - 1] else strip_prefix(line.text).strip()
        starts.append(pos)
        parts.append(piece if glue[i] else piece + " ")
        pos += len(parts[-1])
    joined = "".join(parts)
    lower = joined.lower() if not log.case_folded else joined
    hits: list[Hit] = []
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for sig in compiled:
        if sig.window > 1 or not sig.literals:
            continue
        tried: set[int] = set()
        for literal in sig.literals:
            at = lower.find(literal)
            while at != -1:
                first = max(0, bisect.bisect_right(starts, at) - 3)
                if first not in tried:
                    tried.add(first)
                    pattern = sig.folded if log.case_folded else sig.pattern  # compiled only when needed
                    _try_joined(sig, pattern, lines, joined, starts, first, hits, seen, timeouts)
                at = lower.find(literal, at + 1)
    hits.sort(key=lambda h: (h.line_no, h.entry_id))
    return hits


def _hard_wrap_width(lines: Sequence[Line]) -> tuple[int, int]:
    """The width a terminal may have wrapped this log at (its longest line, if 60 characters or more; else 0)
    and how many different lines have exactly it: two or more is a hard wrap; one is taken as a cut only mid-word.
    (A warning repeated a hundred times is one line: a wrap cuts different text at the same width.)"""
    longest = max(len(line.text) for line in lines)
    if longest < 60:
        return 0, 0
    return longest, len({line.text for line in lines if len(line.text) == longest})


def _cut_mid_word(line: Line, following: Line | None) -> bool:
    return following is not None and line.text[-1:].isalnum() and following.text[:1].isalnum()


RECORD_PREFIX_CHARS = 12


def _opens_like(line: Line, following: Line | None) -> bool:
    """Whether the next line starts with this line's first 12 characters: the host, process or timestamp prefix
    every record of the log carries ("10.10.23.10: so-ucloud-...", "2023-08-31 08:30:13"), so it is the next
    record, not the rest of a cut line. Without this a multi-host NCCL line ending "remote size 65536" was glued
    to the next record's "10.10.23.10:" and read as 6553610 bytes (NVIDIA/nccl#969's shape)."""
    return (following is not None and len(line.text) >= RECORD_PREFIX_CHARS
            and following.text[:RECORD_PREFIX_CHARS] == line.text[:RECORD_PREFIX_CHARS])


def _try_joined(sig: CompiledSignature, pattern: "regex.Pattern[str]", lines: Sequence[Line], joined: str,
                starts: list[int], first: int, hits: list[Hit], seen: set, timeouts: list[str] | None) -> None:
    """Try one pattern on five joined lines from `first`; a match is a hit on the lines it spans."""
    last = min(first + 5, len(starts))
    base = starts[first]
    region = joined[base: starts[last] if last < len(starts) else len(joined)]
    m = _search(sig, pattern, region, lines[first].no, timeouts)
    fields = _unseen_fields(sig, m, seen) if m is not None else None
    if fields is None:
        return
    start = bisect.bisect_right(starts, base + m.start()) - 1
    end = bisect.bisect_right(starts, base + max(m.end() - 1, m.start())) - 1
    hits.append(Hit(sig.entry_id, lines[start].no, m.group(0), fields, lines[end].no))


def _search(sig: CompiledSignature, pattern: "regex.Pattern[str]", text: str, line_no: int,
            timeouts: list[str] | None) -> "regex.Match[str] | None":
    """pattern.search under the per-line time limit: a pathological line is recorded and skipped, not waited on."""
    try:
        return pattern.search(text, timeout=MATCH_TIMEOUT_S)
    except TimeoutError:
        if timeouts is not None:
            timeouts.append(f"{sig.entry_id}: pattern {sig.index} timed out on line {line_no}")
        return None


def _unseen_fields(sig: CompiledSignature, m: "regex.Match[str]", seen: set) -> tuple[tuple[str, str], ...] | None:
    """The match's captured fields, or None when this entry already has a hit with the same fields."""
    fields = tuple(sorted((k, v) for k, v in m.groupdict().items() if v is not None))
    if (sig.entry_id, fields) in seen:
        return None
    seen.add((sig.entry_id, fields))
    return fields


def _window_text(lines: Sequence[Line], start: int, window: int) -> str:
    """The lines of a window joined by newlines, each after the first without its paste or tool prefix
    (`> `, `[rank0]:`, a timestamp...): a message that spans lines is still one message when quoted."""
    first, *rest = lines[start: start + window]
    return "\n".join([first.text, *(strip_prefix(line.text) for line in rest)])


def _candidate_starts(sig: CompiledSignature, finder: LogText) -> Iterable[int]:
    """Line indexes worth trying: those containing the literal (and, for windows, the lines before)."""
    if not sig.literals:
        return range(len(finder))
    present = [literal for literal in sig.literals if finder.may_hold(literal)]
    if len(present) == 1:
        found = finder.lines_with(present[0])  # already in order, one index per line
    else:
        found = sorted({i for literal in present for i in finder.lines_with(literal)})
    if sig.window == 1:
        return found
    starts: set[int] = set()
    for i in found:
        starts.update(range(max(0, i - sig.window + 1), i + 1))
    return sorted(starts)

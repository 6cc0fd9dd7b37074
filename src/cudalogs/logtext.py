"""The kept lines of a log joined once: its text, its lowercase form, and which line an offset is in.

Why: every stage that looks for something in a log (signature literals, GPU sightings, OS
hints, `log_has` conditions) is fastest as one C-level scan of the whole text rather than
a Python loop over a thousand lines; building that text once keeps `explain` start-up low.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from cudalogs.model import Line


def rule_out_keys(literal: str) -> tuple[str, str] | None:
    """The first and last three characters of `literal`: a text lacking either cannot hold it. None when the
    literal is too short to be ruled out this way. One definition for LogText.may_hold and the signature index."""
    return (literal[:3], literal[-3:]) if len(literal) >= 3 else None


class LogText:
    """Lines plus their joined text ("\\n" between lines) and lowercase text, with offset -> line lookups.

    `case_folded` is true when the whole text arrived lowercased (see __init__).
    """

    def __init__(self, lines: Sequence[Line]) -> None:
        self.lines = lines
        self.text = "\n".join(line.text for line in lines)
        self.lower = self.text.lower()
        # A log with cased letters but no capital at all was lowercased on its way here (an issue
        # title, a chat bot, a user retyping it): signatures then match without regard to case.
        self.case_folded = self.text == self.lower and self.text != self.text.upper()
        self.starts: list[int] = []
        pos = 0
        for line in lines:
            self.starts.append(pos)
            pos += len(line.text) + 1
        self._trigrams: set[str] | None = None

    @classmethod
    def of(cls, lines: "Sequence[Line] | LogText") -> "LogText":
        return lines if isinstance(lines, LogText) else cls(lines)

    def __len__(self) -> int:
        return len(self.lines)

    def index_at(self, pos: int) -> int:
        """The index (into `lines`) of the line holding text offset `pos`."""
        return bisect.bisect_right(self.starts, pos) - 1

    def may_hold(self, literal: str) -> bool:
        """False when the lowercase text cannot contain `literal`: its first or last three characters occur nowhere.

        Why: explain looks for some 1,300 signature literals in the kept lines of every log and nearly all are absent;
        two set lookups rule most of them out, where a full scan of the text for each costs about twice as much in all.
        Not for a few words over a big text (the streaming prefilter): there building the set costs more than it saves.
        """
        keys = rule_out_keys(literal)
        if keys is None:
            return True
        trigrams = self.trigrams()
        return keys[0] in trigrams and keys[1] in trigrams

    def trigrams(self) -> set[str]:
        """Every three-character run of the lowercase text (built on first use)."""
        if self._trigrams is None:
            low = self.lower
            self._trigrams = {low[i:i + 3] for i in range(len(low) - 2)}
        return self._trigrams

    def lines_with(self, literal: str) -> list[int]:
        """Indexes of the lines whose lowercase text contains `literal` (itself lowercase), in order."""
        found: list[int] = []
        pos = self.lower.find(literal)
        while pos != -1:
            index = self.index_at(pos)
            found.append(index)
            next_start = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.lower)
            pos = self.lower.find(literal, next_start)
        return found

    def lines_matching(self, pattern: "re.Pattern[str]") -> set[int]:
        """Indexes of the lines where `pattern` matches the lowercase text (one scan; matches do not span lines
        unless the pattern itself crosses a newline)."""
        return {self.index_at(m.start()) for m in pattern.finditer(self.lower)}

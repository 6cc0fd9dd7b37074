"""Issue bodies and chat messages -> the log-like parts explain() should read.

A bot receives Markdown, not a clean log: an issue template's headings, the user's words,
fenced code blocks, `<details>` blocks, collect_env or nvidia-smi output. We keep what is
machine output (fenced or indented blocks, details blocks) and drop template prose. When
the body has no such block at all, the whole body is the log: users also paste raw text.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_DETAILS = re.compile(r"<details[^>]*>(.*?)</details>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?(?:summary|details|br|p|pre|code)[^>]*>", re.IGNORECASE)
_INDENTED = re.compile(r"(?:^(?: {4}|\t)[^\n]*\n?){2,}", re.MULTILINE)
_ERRORISH = re.compile(r"(?i)error|exception|traceback|failed|warning|cuda|capability")


def log_parts(body: str) -> str:
    """The machine-output parts of an issue body, in their order, joined by newlines."""
    parts: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for m in _FENCE.finditer(body):
        parts.append((m.start(), m.group(2)))
        taken.append(m.span())
    for m in _DETAILS.finditer(body):
        if not any(s <= m.start() < e or m.start() <= s < m.end() for s, e in taken):
            parts.append((m.start(), _TAG.sub("", m.group(1))))
            taken.append(m.span())
    for m in _INDENTED.finditer(body):
        if not any(s <= m.start() < e for s, e in taken):
            parts.append((m.start(), m.group(0)))
    if not parts:
        return body
    text = "\n".join(p for _, p in sorted(parts))
    # A one-line error often sits in the prose around the blocks ("I get RuntimeError: ..."): keep such lines too.
    prose = [line for line in _outside(body, taken).splitlines() if _ERRORISH.search(line)]
    return "\n".join(prose + [text]) if prose else text


def _outside(body: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for start, end in sorted(spans):
        if start >= pos:
            out.append(body[pos:start])
            pos = end
    out.append(body[pos:])
    return "".join(out)

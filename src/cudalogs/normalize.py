"""Stage 1: whatever the user gave us (str, bytes, a binary stream) -> numbered clean lines.

Why streaming: people pipe multi-gigabyte training logs. We decode in chunks, so memory
does not grow with the input; the pipeline decides which lines to keep.
The user's data is never changed on disk: we only read.
"""

from __future__ import annotations

import codecs
import html
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from cudalogs.errors import InputError
from cudalogs.model import Line

# CSI sequences (colours, cursor moves), OSC sequences (terminal titles, hyperlinks), lone escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NEWLINES = re.compile(r"\r\n|\r|\n")
# HTML character references: a log scraped from a web page or an issue's HTML arrives as `&lt;module&gt;`.
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|apos|nbsp|#\d{1,6}|#[xX][0-9a-fA-F]{1,6});")
# Characters a web page or a word processor puts in place of plain ones: no-break and other Unicode spaces,
# zero-width marks, curly quotes. A message copied from a browser is still the same message.
_PLAIN = str.maketrans({**{c: " " for c in "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"},
                        **{c: None for c in "\u200b\u200c\u200d\u2060\ufeff"},
                        "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
# Python's `rich` logging handler (kohya_ss, accelerate, ComfyUI trainers, IOPaint) prints the source file and line in
# a right-aligned column after the message: "ERROR  Allocation on device          execution.py:430". It is no part
# of the message, and a pattern that ends where the message ends would not match with it there. It is blanked, not
# cut: rich pads its lines to the terminal's width, and a wrapped message is rejoined by that width.
_RICH_SOURCE = re.compile(r"(?<=\S)\s{3,}[\w.-]{1,60}\.py:\d{1,6}\s*$")
# What tools and people put in front of each line of a log: indentation, Markdown quote marks, torchrun's
# `[rank0]:`, Ray's `(RayWorker pid=1)`, docker compose's `service  | `, syslog's and journalctl's
# `Aug 13 16:58:56 host ollama[3010374]:`, a timestamp (with its `|` or `-`), llama.cpp's elapsed time and level
# (`1.22.756.116 E `, its log format since 2025). A message that spans lines is matched with
# these taken off each line (see strip_prefix).
_PREFIX = re.compile(
    r"^(?:\s*(?:>+|\[rank\d+\]:|\([\w.-]{1,40} pid=\d+(?:, ip=[\d.]+)?\)|[\w.-]{1,40}\s+\|(?=\s)|"
    r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [\w.-]{1,64} [\w.@/-]{1,64}(?:\[\d+\])?:(?=\s)|"
    r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?(?:\s+[|-](?=\s))?|"
    r"\d{1,4}\.\d{2}\.\d{3}\.\d{3} [DIWE](?=\s)))*\s*")

# Named masks, in order (Drain3's habit): make two logs of the same fault look alike for
# the classifier and for de-duplication. Matching and quoting always use the unmasked line.
MASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"https?://\S+")),
    ("path", re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+~@-]+){2,}[\\/]?")),
    ("hex", re.compile(r"\b0x[0-9a-fA-F]+\b")),
    ("timestamp", re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b")),
    ("pid", re.compile(r"\bpid[=: ]+\d+\b", re.IGNORECASE)),
    ("shape", re.compile(r"\(\d+(?:, ?\d+)+\)|\[\d+(?:, ?\d+)+\]")),
    ("size", re.compile(r"\b\d+(?:\.\d+)? ?(?:[KMGT]i?B|bytes)\b")),
    ("num", re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")),
)


@dataclass(frozen=True)
class Limits:
    """Input limits, passed in (never read from globals) so tests and servers can choose."""

    chunk_bytes: int = 1 << 20
    max_line_chars: int = 4000
    binary_sniff_bytes: int = 8192
    max_input_bytes: int | None = None  # None: stream any size


@dataclass
class Stats:
    """Filled in while lines stream past: what the report says about the input."""

    bytes: int = 0
    lines: int = 0
    truncated_lines: int = 0
    encoding: str = "utf-8"
    replaced_invalid: bool = False
    truncated_input: bool = False
    notes: list[str] = field(default_factory=list)


def _blank(match: re.Match[str]) -> str:
    """Spaces as wide as the match: the line keeps its width, by which a terminal's hard wrap is recognised."""
    return " " * len(match.group())


def clean(text: str) -> str:
    """Remove ANSI escapes and stray control characters from one line; decode HTML character references;
    make web-page spaces and quotes plain (see _PLAIN); join a line spelled out character by character (see
    unspaced); drop `rich`'s source column (see _RICH_SOURCE)."""
    if _spelled_out(text):
        text = unspaced(text)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if ".py:" in text:
        text = _RICH_SOURCE.sub(_blank, text)
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    if not text.isascii():
        text = text.translate(_PLAIN)
    if text.isprintable():  # the common case, checked in C without running a regex
        return text
    return _CONTROL.sub("", text)


SPELLED_OUT_MIN = 24  # characters (with their spaces) before a line counts as spelled out: "a b c" is just text


def _spelled_out(text: str) -> bool:
    """True for a line whose every second character is a space, at least half of the others letters or digits."""
    if text[1:2] != " " and text[2:3] != " ":  # most lines: no space among the first characters (one side indented)
        return False
    body = text.strip()
    chars = body[::2]
    return len(body) >= SPELLED_OUT_MIN and body[1::2].isspace() and 2 * sum(c.isalnum() for c in chars) >= len(chars)


def unspaced(text: str) -> str:
    """The line a Windows program wrote as UTF-16 and a console or paste showed byte by byte, each character followed
    by a space where its NUL byte was ("L o a d L i b r a r y   f a i l e d", ONNX Runtime's errors in cmd.exe): the
    characters joined again, a run of three spaces (a space and its NUL) being the space between two words."""
    words = text.strip().split("   ")
    return " ".join(word.replace(" ", "") for word in words)


def strip_prefix(text: str) -> str:
    """The line without what a tool or a paste put in front of it (see _PREFIX): for messages spanning lines."""
    return _PREFIX.sub("", text, count=1) if text[:1] in _PREFIX_STARTS or text[:1].isalnum() else text


_PREFIX_STARTS = frozenset(" \t>[(")

# A line-number gutter: `cat -n` ("     1\tText"), `nl`, an editor's or a web page's numbers ("  12  Text", "12: Text",
# "12| Text").
_GUTTER = re.compile(r"^ {0,8}(\d{1,7})(?:\t| {2,}|: |\| ?)")
GUTTER_SAMPLE = 40  # lines read to decide whether a paste is numbered


def without_gutter(lines: Iterable[Line]) -> Iterator[Line]:
    """The lines without a line-number gutter, when the paste has one: a log copied from `cat -n` or a numbered view
    must read like the log itself (a message spanning two lines is two neighbouring lines, not "12  ..." and
    "13  ..."). Decided on the first GUTTER_SAMPLE lines: nearly all numbered, one after another; a log that merely
    holds numbers (a table, "1/10 epochs") is left alone."""
    it = iter(lines)
    head = list(itertools.islice(it, GUTTER_SAMPLE))
    texts = [line.text for line in head if line.text.strip()]
    numbers = [int(m.group(1)) for text in texts if (m := _GUTTER.match(text))]
    steps = sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1)
    if len(texts) < 3 or len(numbers) < 0.9 * len(texts) or steps < 0.8 * (len(numbers) - 1):
        yield from head
        yield from it
        return
    for line in itertools.chain(head, it):
        yield Line(line.no, _GUTTER.sub("", line.text, count=1)) if _GUTTER.match(line.text) else line


def mask(text: str) -> str:
    """Apply the named masks: `<num>`, `<path>`, ... for the classifier."""
    for name, pattern in MASKS:
        text = pattern.sub(f"<{name}>", text)
    return text


def lines(source: str | bytes | BinaryIO, limits: Limits | None = None, stats: Stats | None = None) -> Iterator[Line]:
    """Yield clean, numbered lines from text, bytes or a binary stream.

    Raises InputError before the first line if the input is binary.
    """
    limits = limits or Limits()
    stats = stats if stats is not None else Stats()
    no = 0
    for text in _texts(source, limits, stats):
        for raw in _split(text):
            no += 1
            if len(raw) > limits.max_line_chars:
                raw = raw[: limits.max_line_chars]
                stats.truncated_lines += 1
            yield Line(no, clean(raw))
    stats.lines = no
    if stats.replaced_invalid:
        stats.notes.append("invalid UTF-8 bytes were shown as U+FFFD")
    if stats.truncated_lines:
        stats.notes.append(f"{stats.truncated_lines} very long line(s) were cut to {limits.max_line_chars} characters")


def _split(text: str) -> list[str]:
    """Lines of a piece that ends on a line boundary; a final terminator starts no new line."""
    if not text:
        return []
    parts = _NEWLINES.split(text)
    return parts[:-1] if parts[-1] == "" else parts


def _texts(source: str | bytes | BinaryIO, limits: Limits, stats: Stats) -> Iterator[str]:
    """Yield decoded text pieces that end on line boundaries."""
    if isinstance(source, str):
        stats.bytes = len(source.encode("utf-8", "surrogatepass"))
        if "\x00" in source[: limits.binary_sniff_bytes]:
            raise InputError("input contains NUL bytes: it looks binary, not a text log")
        yield source.removeprefix("\ufeff")
        return
    chunks = _chunks(source, limits, stats)
    first = next(chunks, b"")
    decoder = _decoder_for(first, limits, stats)
    pending = ""
    for chunk in _prepend(first, chunks):
        pending += decoder.decode(chunk)
        # A chunk may end between "\r" and "\n": never cut at a trailing "\r".
        end = len(pending) - 1 if pending.endswith("\r") else len(pending)
        cut = max(pending.rfind("\n", 0, end), pending.rfind("\r", 0, end))
        if cut >= 0:
            yield pending[: cut + 1]
            pending = pending[cut + 1:]
        elif len(pending) > limits.max_line_chars:
            # NOTE: a line longer than the cap (a minified blob, a binary-ish dump) must not grow
            # without bound: keep its start, drop the rest up to the next line break.
            pending = pending[: limits.max_line_chars + 1]
    yield pending + decoder.decode(b"", final=True)


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _chunks(source: bytes | BinaryIO, limits: Limits, stats: Stats) -> Iterator[bytes]:
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
        for start in range(0, len(data), limits.chunk_bytes):
            stats.bytes += min(limits.chunk_bytes, len(data) - start)
            yield data[start: start + limits.chunk_bytes]
        return
    while chunk := source.read(limits.chunk_bytes):
        stats.bytes += len(chunk)
        if limits.max_input_bytes is not None and stats.bytes > limits.max_input_bytes:
            stats.truncated_input = True
            stats.notes.append(f"input cut at {limits.max_input_bytes} bytes")
            return
        yield chunk


def _decoder_for(first: bytes, limits: Limits, stats: Stats) -> codecs.IncrementalDecoder:
    """Pick the decoder from a BOM; refuse binary data with a clear message."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if first.startswith(bom):
            stats.encoding = name
            return _ReplacingDecoder(name, stats)
    sniff = first[: limits.binary_sniff_bytes]
    if _looks_utf16le(sniff):
        stats.encoding = "utf-16-le"
        return _ReplacingDecoder("utf-16-le", stats)
    if b"\x00" in sniff:
        raise InputError("input contains NUL bytes: it looks binary, not a text log (for a core dump or a .nsys-rep, paste the text error instead)")
    return _ReplacingDecoder("utf-8", stats)


def _looks_utf16le(sniff: bytes) -> bool:
    """PowerShell's `>` writes UTF-16 without always a BOM: ASCII text with every other byte NUL."""
    return len(sniff) >= 16 and sniff[1::2].count(0) > 0.9 * (len(sniff) // 2) and sniff[0::2].count(0) == 0


class _ReplacingDecoder(codecs.IncrementalDecoder):
    """An incremental decoder that replaces invalid bytes and records that it did."""

    def __init__(self, encoding: str, stats: Stats) -> None:
        super().__init__()
        self._inner = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._stats = stats

    def decode(self, data: bytes, final: bool = False) -> str:  # type: ignore[override]
        text = self._inner.decode(data, final)
        if "\ufffd" in text:
            self._stats.replaced_invalid = True
        return text

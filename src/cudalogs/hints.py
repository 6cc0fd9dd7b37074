"""Features the user's GPU lacks that an unexplained log mentions: a pointer, never a diagnosis.

When no signature matched and the classifier stayed under its threshold, the text often still says what the user
tried: "flash-attn on our V100s", "bf16 training on a T4", a traceback through vllm on a GTX 1080. If the GPU is
known and lacks a feature the log names (data/features.toml: a feature's `mentions` pattern, its minimum compute
capability and the KB `entries` about it failing), that is worth one line. It is not ranked as a diagnosis: the same
words fill healthy logs too (a fallback warning such as "Flash Attention is disabled as it requires a GPU with
Ampere", a question, an unrelated error on an old card), where the feature is not what failed: 30 of the project's
6,364 healthy logs get a hint (round 113), against 68 of the 71 labelled logs with no answer that get one.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import regex

from cudalogs.gpu_report import needs, supports
from cudalogs.model import GpuContext, Hint, Line

MAX_HINTS = 3
_SCAN_CHARS = 2_000  # of each line: a mention is a word, and a huge line must not cost a long regex run


def lacking_features(lines: Iterable[Line], ctx: GpuContext, features: list[dict[str, Any]]) -> tuple[Hint, ...]:
    """The features (with a `mentions` pattern) that this NVIDIA GPU lacks and the log names, first mention first
    (features named on one line in data/features.toml's order). `kb validate` holds each `entries` id to the KB."""
    gpu = ctx.gpu
    if gpu is None or gpu.vendor != "nvidia" or not gpu.arch:
        return ()
    wanted = [f for f in features if f.get("mentions") and not supports(gpu, f)]
    if not wanted:
        return ()
    found: dict[str, Hint] = {}  # in the order found: by line, then by feature
    for line in lines:
        text = line.text[:_SCAN_CHARS]
        for feature in wanted:
            if feature["id"] not in found and _pattern(feature["mentions"]).search(text):
                found[feature["id"]] = Hint(feature["id"], feature["name"], needs(feature), line.no,
                                            line.text.strip()[:300], tuple(feature.get("entries", [])))
        if len(found) >= MAX_HINTS or len(found) == len(wanted):
            break
    return tuple(found.values())[:MAX_HINTS]


@functools.cache
def _pattern(source: str) -> regex.Pattern[str]:
    return regex.compile(source)

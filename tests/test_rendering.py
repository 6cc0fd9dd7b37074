"""What a user reads never shows a template's raw placeholder, whichever signature (or none) matched."""

import json
import re
from pathlib import Path

from cudalogs import explain

CORPUS = sorted((Path(__file__).parents[1] / "data" / "corpus").glob("*.jsonl"))
RAW_PLACEHOLDER = re.compile(r"\{\w+\}")


def test_no_title_or_root_cause_shows_a_raw_placeholder(kb):
    shown = []
    for path in CORPUS:
        for line in path.read_text(encoding="utf-8").splitlines():
            for d in explain(json.loads(line)["log"], kb=kb).diagnoses:
                shown += [(d.id, text) for text in (d.title, d.root_cause) if RAW_PLACEHOLDER.search(text)]
    assert shown == []


def test_a_field_only_one_signature_captures_renders_as_unknown(kb):
    # the bare exception form names no size: the title says so instead of printing "{requested}"
    top = explain("RuntimeError: CUDA out of memory", kb=kb).diagnoses[0]
    assert top.title == "PyTorch: CUDA out of memory (tried to allocate <requested>)"

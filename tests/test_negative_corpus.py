"""Real logs without a GPU fault (data/negative/) must stay silent, except reviewed exceptions."""

import json
import tomllib
from pathlib import Path

import pytest

from cudalogs import explain

DATA = Path(__file__).resolve().parents[1] / "data"
ALLOWED = tomllib.loads((DATA / "known_false_positives.toml").read_text()).get("allow", [])


def _cases():
    for path in sorted((DATA / "negative").glob("*.jsonl")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                yield pytest.param(json.loads(line), id=f"{path.stem}:{no}")


def _allowed(entry_id: str, log: str) -> bool:
    return any(a["entry"] == entry_id and a["match"] in log for a in ALLOWED)


@pytest.mark.parametrize("case", list(_cases()))
def test_negative_log_stays_silent(case, kb):
    fired = [d.id for d in explain(case["log"], kb=kb).diagnoses if not _allowed(d.id, case["log"])]
    assert fired == [], f"{case['source']}: {fired}"


def test_every_allowlisted_exception_has_a_reason():
    assert all(a.get("reason", "").strip() for a in ALLOWED)

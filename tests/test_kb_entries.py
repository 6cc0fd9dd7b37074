"""The real KB: valid, fresh in the bundle, covering the taxonomy, and each example diagnosed as its class."""

from pathlib import Path

import pytest

from cudalogs import explain
from cudalogs.kb import bundle
from cudalogs.kb.check import validate_tree
from cudalogs.kb.load import entry_files, entry_from_dict, read_toml

ROOT = Path(__file__).resolve().parents[1]
ENTRY_FILES = list(entry_files(ROOT / "kb"))


def test_kb_validates():
    result = validate_tree(ROOT / "kb", ROOT / "data")
    assert result.problems == []


def test_shipped_bundle_is_fresh(source_bundle):
    runtime, examples = bundle.split(source_bundle)
    assert bundle.BUNDLE_PATH.read_text(encoding="utf-8") == bundle.dumps(runtime), "run `cudalogs kb build`"
    shipped_examples = bundle.examples_path(bundle.BUNDLE_PATH).read_text(encoding="utf-8")
    assert shipped_examples == bundle.dumps(examples), "run `cudalogs kb build`"


def test_explain_reads_the_bundle_without_its_example_logs_and_kb_show_with_them():
    assert all("examples" not in raw for raw in bundle.read(examples=False)["entries"])
    assert sum(len(raw.get("examples", [])) for raw in bundle.read()["entries"]) >= 2 * len(ENTRY_FILES)


def test_every_taxonomy_class_has_an_entry(kb):
    covered = {e.cls for e in kb.entries} | {v.cls for e in kb.entries for v in e.variants if v.cls}
    assert set(kb.taxonomy) - covered == set()


def _examples():
    for path in ENTRY_FILES:
        entry = entry_from_dict(read_toml(path), str(path))
        for i, ex in enumerate(entry.examples):
            yield pytest.param(entry, ex, id=f"{entry.id}[{i}]")


@pytest.mark.parametrize(("entry", "example"), list(_examples()))
def test_each_example_is_diagnosed_as_its_class(entry, example, kb):
    report = explain(example.log, gpu=example.gpu or None, kb=kb)
    classes = [d.cls for d in report.diagnoses]
    assert classes[:1] == [example.cls or entry.cls], f"{example.source}: got {classes}"

"""The shipped classifier is reproducible from kb/ and data/, and scores exactly like scikit-learn."""

from pathlib import Path

import pytest

pytest.importorskip("sklearn")

from cudalogs.classifier import MODEL_PATH, Model, as_array, read  # noqa: E402
from cudalogs.train import corpus_cases, fit, kb_cases, split_of, to_text, train  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped():
    return read(MODEL_PATH)


@pytest.fixture(scope="module")
def rebuilt(source_bundle):
    return train(source_bundle, ROOT / "data")


def _floats(value):
    return as_array("f", value)


def test_shipped_model_is_fresh(shipped, rebuilt):
    """Fails when kb/ or data/ changed without `cudalogs kb build`."""
    assert shipped["classes"] == rebuilt["classes"]
    assert shipped["vocab"] == rebuilt["vocab"]
    assert list(_floats(shipped["coef"])) == pytest.approx(list(_floats(rebuilt["coef"])), abs=1e-4)
    assert shipped["intercept"] == pytest.approx(rebuilt["intercept"], abs=1e-4)


def test_exported_scorer_matches_scikit_learn_on_the_whole_corpus(source_bundle, shipped):
    cases = kb_cases(source_bundle) + [k for k in corpus_cases(ROOT / "data") if split_of(k.source) == "train"]
    vectorizer, model = fit(cases)
    exported = Model.from_dict(shipped)
    texts = [to_text(k.text) for k in kb_cases(source_bundle) + corpus_cases(ROOT / "data")]
    expected = model.predict_proba(vectorizer.transform(texts))
    for text, row in zip(texts, expected):
        got = exported.probabilities(text)
        assert [got[c] for c in model.classes_] == pytest.approx(list(row), abs=1e-4)

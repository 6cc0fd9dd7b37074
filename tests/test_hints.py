"""A log nothing explains still gets a pointer when it names a feature the user's GPU lacks (never a diagnosis)."""

import copy
import json

from cudalogs import explain, render
from cudalogs.kb.check import _feature_problems

QUESTION = ("I'm working with NVIDIA Tesla V100 GPUs and trying to integrate the flash-attn library into a "
            "transformer-based project, but it fails.")


def test_a_question_about_flash_attn_on_a_v100_points_at_the_ampere_entry(kb):
    report = explain(QUESTION, kb=kb)
    assert report.diagnoses == ()  # a pointer, not an answer: the same words fill healthy logs too
    (hint,) = report.hints
    assert (hint.feature, hint.needs, hint.line_no) == ("flash-attention-2", "compute capability 8.0", 1)
    assert hint.entries == ("flash-attn-requires-ampere",)


def test_the_text_report_says_what_the_gpu_lacks_and_where_to_read_on(kb):
    shown = render.text(explain(QUESTION, kb=kb))
    assert "No known GPU error found in this log." in shown
    assert "Tesla V100 (compute capability 7.0) lacks what this log mentions:" in shown
    assert "cudalogs kb show flash-attn-requires-ampere" in shown


def test_json_and_markdown_carry_the_hint(kb):
    report = explain(QUESTION, kb=kb)
    doc = json.loads(render.json_text(report))
    assert doc["hints"][0]["feature"] == "flash-attention-2" and doc["hints"][0]["line"] == 1
    assert "`cudalogs kb show flash-attn-requires-ampere`" in render.markdown(report)


def test_no_hint_when_the_gpu_has_the_feature(kb):
    assert explain(QUESTION, gpu="NVIDIA A100-SXM4-40GB", kb=kb).hints == ()


def test_no_hint_without_a_known_gpu_or_on_amd(kb):
    assert explain("flash-attn fails to run for me", kb=kb).hints == ()
    assert explain("bf16 training fails on my AMD Radeon RX 6600", kb=kb).hints == ()


def test_several_features_first_mention_first(kb):
    log = "Training on a Tesla T4.\nI set bf16=True and torch.compile, then it fails"
    assert [h.feature for h in explain(log, kb=kb).hints] == ["bf16"]  # T4 (7.5) runs Triton: only bf16 is lacking
    pascal = explain("GTX 1080 Ti here.\nvllm with fp8 weights crashes", kb=kb).hints
    assert [h.feature for h in pascal] == ["fp8", "vllm"]  # both on line 2, in features.toml order


def test_a_diagnosed_log_gets_no_hint(kb):
    log = ("Tesla T4\nValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
           "Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the "
           "`dtype` flag in CLI, for example: --dtype=half.")
    report = explain(log, kb=kb)
    assert report.diagnoses and report.hints == ()


def test_validate_names_a_feature_pointing_at_a_missing_entry_or_a_broken_pattern(kb, tmp_path):
    broken = copy.copy(kb)
    broken.features = [{"id": "x", "name": "X", "min_cc": "8.0", "mentions": "(", "entries": ["no-such-entry"]}]
    problems = _feature_problems(broken, tmp_path / "features.toml")
    assert [p.field for p in problems] == ["feature[0].mentions", "feature[0].entries"]

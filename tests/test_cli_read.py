"""`cudalogs kb show`, `kb list`, `gpu` and `search` through the CLI: exit codes and output shapes."""

import json

from cudalogs.cli import app


def test_kb_show_text_and_json(runner):
    result = runner.invoke(app, ["kb", "show", "ggml-no-device-code"])
    assert result.exit_code == 0
    assert result.stdout.startswith("ggml-no-device-code  [arch-not-compiled, test, ggml]\n")
    doc = json.loads(runner.invoke(app, ["kb", "show", "ggml-no-device-code", "--format", "json"]).stdout)
    assert "kernel-variant-missing" in [variant["class"] for variant in doc["variants"]]  # the V100 MMQ bug


def test_kb_show_unknown_id_suggests(runner):
    result = runner.invoke(app, ["kb", "show", "ggml"])
    assert result.exit_code == 2
    assert "did you mean: ggml-" in result.stderr


def test_kb_list_by_class(runner):
    result = runner.invoke(app, ["kb", "list", "--class", "rocm-gfx-unsupported"])
    assert result.exit_code == 0
    ids = [line.split()[0] for line in result.stdout.splitlines()]
    assert "hip-no-binary-for-gpu" in ids and "device-side-assert" not in ids
    assert "no-kernel-image" in ids  # listed through its variant: a "HIP error: no kernel image" is an AMD target


def test_kb_list_unknown_class(runner):
    result = runner.invoke(app, ["kb", "list", "--class", "nope"])
    assert result.exit_code == 2
    assert "unknown class 'nope'" in result.stderr


def test_gpu_profile(runner):
    result = runner.invoke(app, ["gpu", "Tesla T4", "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert (doc["compute_capability"], doc["family"]) == ("7.5", "turing")
    assert "bf16" in [f["id"] for f in doc["lacks"]]
    assert "flash-attn-requires-ampere" in [e["id"] for e in doc["entries"]]


def test_gpu_unknown_name_suggests(runner):
    result = runner.invoke(app, ["gpu", "GTX 9999 Ultra"])
    assert result.exit_code == 2
    assert "unknown GPU 'GTX 9999 Ultra'" in result.stderr


def test_search_json_is_a_ranked_list(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = runner.invoke(app, ["search", "bf16 v100", "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc[0]["class"] == "bf16-unsupported"
    assert {"id", "class", "title", "score", "snippet"} <= set(doc[0])
    assert [d["score"] for d in doc] == sorted((d["score"] for d in doc), reverse=True)

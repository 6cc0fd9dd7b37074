"""`cudalogs explain` through the CLI runner: exit codes, exact error lines, every format."""

import json

import pytest

from cudalogs import pipeline
from cudalogs.cli import app

P104_LINE = ("vec_dot_q8_0_q8_1_impl has no device code compatible with CUDA arch 610. "
             "ggml-cuda.cu was compiled for: 500,600,700,750,800,900\n")


@pytest.fixture(autouse=True)
def _use_tiny_kb(monkeypatch, tiny_kb):
    monkeypatch.setattr(pipeline, "load_kb", lambda **_: tiny_kb)


def test_explain_stdin_text(runner):
    result = runner.invoke(app, ["explain", "--cc", "6.1"], input=P104_LINE)
    assert result.exit_code == 0
    assert "arch-not-compiled: ggml: kernel vec_dot_q8_0_q8_1_impl has no device code for this GPU" in result.stdout
    assert "-DCMAKE_CUDA_ARCHITECTURES=61" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when stdout is not a terminal


def test_explain_file_json(runner, tmp_path):
    log = tmp_path / "err.log"
    log.write_bytes(P104_LINE.encode())
    result = runner.invoke(app, ["explain", str(log), "--format", "json", "--gpu", "GeForce GTX 1080"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["gpu"]["compute_capability"] == "6.1"
    assert doc["diagnoses"][0]["class"] == "arch-not-compiled"
    assert doc["environment"]["container"] is False   # nothing in the log says it ran in a container


def test_json_says_when_the_log_comes_from_a_container(runner):
    line = "fauxpilot-triton-1         | RuntimeError: No CUDA GPUs are available\n"
    doc = json.loads(runner.invoke(app, ["explain", "--format", "json"], input=line).stdout)
    assert doc["environment"]["container"] is True
    assert doc["environment"]["wsl"] is False
    assert doc["environment"]["rocm"] is False


def test_json_says_when_the_log_shows_amds_rocm_stack(runner):
    line = "RuntimeError: HIP error: invalid device function\n"
    doc = json.loads(runner.invoke(app, ["explain", "--format", "json"], input=line).stdout)
    assert doc["environment"]["rocm"] is True


def test_explain_markdown(runner):
    result = runner.invoke(app, ["explain", "--format", "markdown", "--cc", "6.1"], input=P104_LINE)
    assert result.stdout.startswith("### cudalogs diagnosis\n")
    assert "#### arch-not-compiled:" in result.stdout


def test_no_diagnosis_exits_1_with_an_honest_message(runner):
    result = runner.invoke(app, ["explain"], input="all good\n")
    assert result.exit_code == 1
    assert "No known GPU error found in this log." in result.stdout


def test_missing_file_is_one_line_on_stderr(runner):
    result = runner.invoke(app, ["explain", "nope.log"])
    assert result.exit_code == 2
    assert result.stderr == ("cudalogs: error: nope.log: no such file\n"
                             "hint: pipe the log instead: your-command 2>&1 | cudalogs explain\n")


def test_unknown_gpu_suggests_close_names(runner):
    result = runner.invoke(app, ["explain", "--gpu", "GeForce GTX 1800"], input=P104_LINE)
    assert result.exit_code == 2
    assert "unknown GPU 'GeForce GTX 1800'" in result.stderr
    assert "Traceback" not in result.output


def test_binary_input_is_refused(runner):
    result = runner.invoke(app, ["explain"], input=b"\x7fELF\x00\x00\x01")
    assert result.exit_code == 2
    assert result.stderr.startswith("cudalogs: error: input contains NUL bytes")


def test_directory_is_refused(runner, tmp_path):
    result = runner.invoke(app, ["explain", str(tmp_path)])
    assert result.exit_code == 2
    assert "is a directory" in result.stderr

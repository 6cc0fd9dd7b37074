"""`cudalogs kb validate` teaches: each problem names the file, the field and how to write it."""

import shutil

import pytest

from cudalogs.cli import app


@pytest.fixture
def broken_tree(tiny_tree, tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(tiny_tree, root)
    return root


def _entry(root):
    return root / "kb" / "ggml" / "ggml-no-device-code.toml"


def test_validate_passes_on_a_good_tree(runner, tiny_tree):
    result = runner.invoke(app, ["kb", "validate", "--kb", str(tiny_tree / "kb"), "--data", str(tiny_tree / "data")])
    assert result.exit_code == 0, result.output
    assert result.stdout == "ok: 1 entries, 2 examples\n"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("(?P<kernel>\\w+) has", "(?P<kernel>\\w+ has", "signatures[0].pattern: does not compile"),
        ("(?P<kernel>\\w+) has", "(?P<kernel>(\\w+)+) has", "signatures[0].pattern: a repeated group contains a repeat"),
        ('class = "arch-not-compiled"', 'class = "arch-missing"', "class: 'arch-missing' is not in kb/taxonomy.toml"),
        ("-DCMAKE_CUDA_ARCHITECTURES={arch}", "-DCMAKE_CUDA_ARCHITECTURES={archh}", "fixes[0].steps: placeholder {archh}"),
        ("-DCMAKE_CUDA_ARCHITECTURES={arch}", "-DCMAKE_CUDA_ARCHITECTURES={archh|61}", "fixes[0].steps: placeholder {archh}"),
        ('when = "vendor ==', 'when = "vendr ==', "fixes[0].when: unknown name(s) vendr"),
        ('when = "vendor ==', 'when = "log_has(\'\\\\bsm_\') or vendor ==', "fixes[0].when: a string holds a control character"),
        ('when = "vendor ==', 'when = "container or not known(container) or vendor ==', "fixes[0].when: known(container) is always true"),
        ("arch_seen = \"600\"", "arch_seen = \"601\"", "examples[0].expect.arch_seen: captured '600', expected '601'"),
        ('id = "ggml-no-device-code"', 'id = "other-id"', "id: 'other-id' differs from the file name"),
        ("CUDA arch 520. ggml", "CUDA arch 520, ggml", "examples[1]: the log from https://github.com/ggml-org/whisper.cpp/issues/2050 does not match"),
        ('family = "ggml"', 'family = "ggml"\ncontext = [{when = "rocm", pattern = "hip"}]', "context[0]: give either pattern"),
        ('family = "ggml"', 'family = "ggml"\ncontext = [{when = "rocmm", weight = 0.1}]', "context[0].when: unknown name(s) rocmm"),
        ('family = "ggml"', "family = \"ggml\"\nquiet_when = \"log_has('compiled for')\"", "examples[0]: the log from https://github.com/mozilla-ai/llamafile/issues/434 meets quiet_when"),
    ],
)
def test_each_problem_is_reported_with_file_and_field(runner, broken_tree, old, new, expected):
    path = _entry(broken_tree)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    result = runner.invoke(app, ["kb", "validate", "--kb", str(broken_tree / "kb"), "--data", str(broken_tree / "data")])
    assert result.exit_code == 2
    assert f"{path}: {expected}" in result.stdout


def test_a_placeholder_with_its_own_words_and_the_gpu_query_placeholder_pass(runner, broken_tree):
    path = _entry(broken_tree)
    text = path.read_text()
    assert "-DCMAKE_CUDA_ARCHITECTURES={arch}" in text
    path.write_text(text.replace("-DCMAKE_CUDA_ARCHITECTURES={arch}", "-DCMAKE_CUDA_ARCHITECTURES={arch|61}  # {find_gpu}", 1))
    result = runner.invoke(app, ["kb", "validate", "--kb", str(broken_tree / "kb"), "--data", str(broken_tree / "data")])
    assert result.exit_code == 0, result.output


def test_a_toml_syntax_error_is_one_line(runner, broken_tree):
    path = _entry(broken_tree)
    path.write_text(path.read_text() + "\n[[fixes]\n")
    result = runner.invoke(app, ["kb", "validate", "--kb", str(broken_tree / "kb"), "--data", str(broken_tree / "data")])
    assert result.exit_code == 2
    assert result.stdout.startswith(f"{path}: toml: ")
    assert "Traceback" not in result.output


def test_build_refuses_a_broken_tree_and_writes_nothing(runner, broken_tree, tmp_path):
    path = _entry(broken_tree)
    path.write_text(path.read_text().replace('status = "test"', 'status = "done"'))
    out = tmp_path / "bundle.json"
    result = runner.invoke(app, ["kb", "build", "--kb", str(broken_tree / "kb"), "--data", str(broken_tree / "data"),
                                 "--output", str(out), "--no-model"])
    assert result.exit_code == 2
    assert not out.exists()
    assert "status: write one of experimental, test, stable" in result.stderr


def test_build_can_write_the_search_database(runner, tiny_tree, tmp_path):
    import sqlite3

    db = tmp_path / "kb.db"
    result = runner.invoke(app, ["kb", "build", "--kb", str(tiny_tree / "kb"), "--data", str(tiny_tree / "data"),
                                 "--output", str(tmp_path / "bundle.json"), "--no-model", "--db", str(db)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select entries.id from entries_fts join entries on entries.rowid = entries_fts.rowid "
                            "where entries_fts match 'device' order by bm25(entries_fts)").fetchall()
    assert rows == [("ggml-no-device-code",)]


def test_a_taxonomy_explains_naming_no_class_is_reported(runner, broken_tree):
    path = broken_tree / "kb" / "taxonomy.toml"
    text = path.read_text()
    cls = text.split("[classes.", 1)[1].split("]", 1)[0]
    path.write_text(text.replace(f"[classes.{cls}]", f"[classes.{cls}]\nexplains = [\"cuda-oom\"]", 1))
    result = runner.invoke(app, ["kb", "validate", "--kb", str(broken_tree / "kb"), "--data", str(broken_tree / "data")])
    assert result.exit_code == 2
    assert f"{path}: classes.{cls}.explains: 'cuda-oom' is not another class of the taxonomy" in result.stdout

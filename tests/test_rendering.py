"""What a user reads never shows a template's raw placeholder, whichever signature (or none) matched."""

import json
import re
from pathlib import Path

from cudalogs import explain, render

CORPUS = sorted((Path(__file__).parents[1] / "data" / "corpus").glob("*.jsonl"))
RAW_PLACEHOLDER = re.compile(r"\{\w+(?:\|[^{}]*)?\}")


def test_no_title_or_root_cause_shows_a_raw_placeholder(kb):
    shown = []
    for path in CORPUS:
        for line in path.read_text(encoding="utf-8").splitlines():
            for d in explain(json.loads(line)["log"], kb=kb).diagnoses:
                shown += [(d.id, text) for text in (d.title, d.root_cause) if RAW_PLACEHOLDER.search(text)]
    assert shown == []


def test_the_entries_an_unknown_answer_lists_as_related_show_no_raw_placeholder(kb):
    # a reporter's words match no signature; the nearest entries are listed by their titles, as a diagnosis reads them
    related = [title for text in ("7840HS -amdgpu is not supported", "GPU with CUDA capability is not supported",
                                  "flash attention does not work on my old card")
               for _, title, _ in explain(text, kb=kb).related]
    assert related, "no unknown answer listed a related entry"
    assert [t for t in related if RAW_PLACEHOLDER.search(t)] == []


def test_a_field_only_one_signature_captures_leaves_the_title_and_shows_as_unknown_in_the_text(kb):
    # the bare exception form names no size: the title drops its "(tried to allocate ...)" aside
    top = explain("RuntimeError: CUDA out of memory", kb=kb).diagnoses[0]
    assert top.title == "PyTorch: CUDA out of memory"
    sized = explain("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", kb=kb).diagnoses[0]
    assert sized.title == "PyTorch: CUDA out of memory (tried to allocate 2.00 GiB)"


def test_a_sentence_about_a_field_no_signature_captured_reads_whole(kb):
    """`{requested|some}`: the bare exception names no size, so the root cause says "some", not "<requested>"."""
    bare = explain("RuntimeError: CUDA out of memory", kb=kb).diagnoses[0]
    assert "asked the GPU for some more memory" in bare.root_cause and "<requested>" not in bare.root_cause
    sized = explain("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", kb=kb).diagnoses[0]
    assert "asked the GPU for 2.00 GiB more memory" in sized.root_cause


def test_a_placeholder_with_its_own_words_uses_them_only_when_the_value_is_unknown():
    from cudalogs.fixes import render

    assert render("for {requested|some} more", {"requested": None}) == "for some more"
    assert render("for {requested|some} more", {"requested": "2.00 GiB"}) == "for 2.00 GiB more"
    assert render("{backend|GPU} out of memory", {"backend": ""}) == "GPU out of memory"
    assert render("code {x|y} stays", {}) == "code {x|y} stays"      # not a field: literal braces in a snippet


def test_a_title_never_shows_an_aside_about_an_unknown_value():
    from cudalogs.fixes import render_title

    unknown = {"gpu_name": None, "current": None, "op": None, "requested": None}
    assert render_title("vLLM: Bfloat16 needs compute capability 8.0; {gpu_name} has {current}", unknown) == \
        "vLLM: Bfloat16 needs compute capability 8.0"
    assert render_title("ggml CUDA: {op} failed", unknown) == "ggml CUDA: <op> failed"   # no aside to drop
    assert render_title("code {not_a_field} stays", unknown) == "code {not_a_field} stays"


def test_an_alternative_that_points_at_no_line_names_none(kb):
    from dataclasses import replace

    from cudalogs import render

    report = explain("RuntimeError: CUDA error: no kernel image is available for execution on the device", kb=kb)
    first = report.diagnoses[0]
    shown = render.text(replace(report, diagnoses=(first, replace(first, cls="arch-dropped", evidence=()))))
    assert "Also possible:" in shown and "[line ?]" not in shown
    assert shown.splitlines()[-1].strip().startswith("arch-dropped")


def test_with_no_gpu_in_the_log_the_hint_also_works_on_drivers_before_510(kb):
    """compute_cap is a query field only from driver 510 on; nvidia-smi -L names the GPU on any driver."""
    report = explain("RuntimeError: CUDA error: no kernel image is available for execution on the device", kb=kb)
    assert "nvidia-smi -L" in render.text(report).splitlines()[0]
    assert "`nvidia-smi -L` before driver 510" in render.markdown(report)


def test_an_amd_log_without_its_gpu_asks_rocminfo_not_nvidia_smi(kb):
    """On a ROCm machine nvidia-smi does not exist; rocminfo names the gfx target the fixes are scoped by."""
    report = explain("[    2.705392] amdgpu 0000:02:00.0: kfd not supported on this ASIC", kb=kb)
    assert report.gpu.gpu is None and report.gpu.rocm
    first = render.text(report).splitlines()[0]
    assert "rocminfo | grep gfx" in first and "nvidia-smi" not in first
    assert "run `rocminfo | grep gfx`" in render.markdown(report)

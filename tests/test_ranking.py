"""Logs with several faults: the fatal, root one comes first, and the report says why."""

from cudalogs import explain

# Lines from two real logs in the KB's examples (InvokeAI#6590's xFormers warning, a PyTorch OOM), as they
# appear together when a web UI starts with a broken xFormers and then runs out of memory.
XFORMERS_WARNING = """Launching Web UI with arguments: xformers
WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.0.1+cu118)
    Python  3.10.11 (you have 3.10.11)
    Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
"""
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of "
       "31.47 GiB of which 12.73 GiB is free.\n")


def test_the_fatal_error_outranks_an_earlier_warning(kb):
    report = explain(XFORMERS_WARNING + "Loading model...\n" + OOM, kb=kb)
    ids = [d.id for d in report.diagnoses]
    assert ids[0] == "torch-cuda-out-of-memory"
    assert "xformers-cant-load-extensions" in ids[1:]
    assert "fatal" in report.diagnoses[0].why_ranked
    assert "warning" in next(d.why_ranked for d in report.diagnoses if d.id == "xformers-cant-load-extensions")


def test_order_in_the_log_does_not_decide_it(kb):
    report = explain(OOM + XFORMERS_WARNING, kb=kb)
    assert report.diagnoses[0].id == "torch-cuda-out-of-memory"


def test_a_classifier_only_answer_keeps_its_runners_up_below_it(kb):
    """Which corpus logs the classifier answers alone moves with every retrained model and threshold, so the test
    takes the first ones it finds (some must exist: the path is alive) and checks each report's shape."""
    import json
    from pathlib import Path

    rows = [json.loads(line) for path in sorted((Path(__file__).parents[1] / "data/corpus").glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]
    reports = (explain(row["log"], kb=kb) for row in rows[:800])
    alone = [r for r in reports if r.diagnoses and r.diagnoses[0].why_ranked.startswith("classifier")][:5]
    assert alone, "no corpus log got a classifier-only answer"
    for report in alone:
        first, *rest = report.diagnoses
        assert all(d.confidence < first.confidence and d.why_ranked.startswith("classifier") for d in rest)


TOO_OLD = """/home/u/torch/cuda/__init__.py:87: UserWarning:
    Found GPU0 {name} which is of cuda capability 3.0.
    PyTorch no longer supports this GPU because it is too old.
    The minimum cuda capability that we support is 3.5."""


def test_an_entrys_quiet_when_keeps_a_known_harmless_hit_silent(kb):
    # on a ROCm build PyTorch misreads an AMD card as "cuda capability 3.0"; the GPU works (ROCm/pytorch#627)
    amd = explain(TOO_OLD.format(name="Ellesmere [Radeon RX 470/480/570/570X/580/580X]"), kb=kb)
    assert amd.diagnoses == ()                      # neither the entry nor the classifier answers
    nvidia = explain(TOO_OLD.format(name="GeForce GTX 660 Ti"), kb=kb)
    assert [d.id for d in nvidia.diagnoses][:1] == ["torch-gpu-too-old"]


COLLECT_ENV_CUDA = """PyTorch version: 2.1.0+cu118
CUDA used to build PyTorch: 11.8
ROCM used to build PyTorch: N/A
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090
HIP runtime version: N/A
MIOpen runtime version: N/A
"""


def test_collect_envs_na_lines_do_not_make_a_cuda_log_an_amd_one(kb):
    # "invalid device function" reads differently on CUDA and on HIP builds; collect_env names ROCm, HIP and MIOpen
    # on every CUDA machine (as N/A), which once sent this log to the AMD reading. The [[rocm]] fact knows the N/A.
    failure = "RuntimeError: CUDA Failure at src/ops/roi_align.cu:88: invalid device function\n"
    assert explain(COLLECT_ENV_CUDA + failure, kb=kb).diagnoses[0].cls == "arch-not-compiled"
    hip = "torch 2.1.0+rocm5.6\n" + failure
    assert explain(hip, kb=kb).diagnoses[0].cls == "rocm-gfx-unsupported"


def test_a_generic_hit_does_not_hide_a_specific_message_a_wrapped_paste_broke(kb):
    # an AWQ kernel build failing on Turing, wrapped at 80 columns: each ptxas line breaks before "Feature ...", so
    # only the generic "Feature ... requires .target" entry matches a single line; the joined pass finds the AWQ one
    import textwrap

    line = ("ptxas /tmp/tmpxft_00000033_00000000-6_gemm_cuda_gen.ptx, line 928; error   : "
            "Feature '.m16n8k16' requires .target sm_80 or higher")
    wrapped = "\n".join(textwrap.wrap(line, 80) * 3) + "\nptxas fatal   : Ptx assembly aborted due to errors"
    assert "\n" in textwrap.fill(line, 80)
    assert explain(wrapped, kb=kb).diagnoses[0].cls == "quantization-kernel-unsupported"


def _diagnosis(cls, confidence):
    from cudalogs.model import Diagnosis

    return Diagnosis(id=cls, cls=cls, title=cls, status="test", confidence=confidence, evidence=(), root_cause="",
                     fixes=(), references=(), why_ranked="a message")


EXPLAINS = {"driver-too-old": frozenset({"bitsandbytes-setup-failed"})}


def test_a_root_cause_as_sure_as_the_failure_it_explains_ranks_first():
    """A driver older than the runtime, then bitsandbytes finding no GPU: the driver is what to fix (lorax#595)."""
    from cudalogs.rank import root_first

    ranked = root_first([_diagnosis("bitsandbytes-setup-failed", 0.76), _diagnosis("driver-too-old", 0.76)], EXPLAINS)
    assert [d.cls for d in ranked] == ["driver-too-old", "bitsandbytes-setup-failed"]
    assert "likely root of the bitsandbytes-setup-failed" in ranked[0].why_ranked


def test_a_much_less_sure_root_cause_stays_below():
    from cudalogs.rank import root_first

    ranked = root_first([_diagnosis("bitsandbytes-setup-failed", 0.76), _diagnosis("driver-too-old", 0.40)], EXPLAINS)
    assert [d.cls for d in ranked] == ["bitsandbytes-setup-failed", "driver-too-old"]


def test_the_shipped_taxonomy_says_which_faults_cause_others(kb):
    assert "cuda-out-of-memory" in kb.explains["driver-too-old"]        # cuBLAS handles then fail to allocate
    assert "illegal-memory-access" in kb.explains["gpu-hardware-fault"]


def test_a_line_two_signatures_of_one_entry_match_is_quoted_once(kb):
    log = ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    out = scatter_add(src, index)\n'
           '  File "/usr/lib/python3/site-packages/torch_scatter/scatter.py", line 20\n'
           "RuntimeError: CUDA error: invalid device function\n")
    assert [e.line_no for e in explain(log, kb=kb).diagnoses[0].evidence] == [5]


def test_a_wsl_log_gets_the_wsl_fix_and_a_native_log_does_not(kb):
    """The same 'No CUDA GPUs are available' reads differently under WSL 2: the driver libraries come from Windows."""
    wsl_log = "Linux PC 5.15.153.1-microsoft-standard-WSL2 #1 SMP\nRuntimeError: No CUDA GPUs are available\n"
    native_log = "Linux node7 6.8.0-45-generic #45-Ubuntu SMP\nRuntimeError: No CUDA GPUs are available\n"
    titles = lambda log: [f.title for f in explain(log, kb=kb).diagnoses[0].fixes]  # noqa: E731
    assert any("/usr/lib/wsl/lib" in t for t in titles(wsl_log))
    assert not any("WSL" in t for t in titles(native_log))


def test_a_classifier_runner_up_reads_its_entry_as_the_class_it_is_labelled_with(kb):
    """On an RTX 5090 flash-attn's message reads as a Blackwell build problem (a variant); offered as the
    runner-up class flash-attention-unsupported, it must carry that class's own text, not the variant's."""
    from cudalogs import combine

    ctx = explain("FlashAttention only supports Ampere GPUs or newer.", gpu="RTX 5090", kb=kb).gpu
    entry = kb.by_id["flash-attn-requires-ampere"]
    [extra] = combine.top3_extras([], {"flash-attention-unsupported": 0.3}, lambda cls: entry, ctx, set(), room=1)
    assert extra.cls == "flash-attention-unsupported"
    assert extra.root_cause.startswith("FlashAttention-2's CUDA kernels need compute capability 8.0")

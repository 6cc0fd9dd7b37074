"""The shared scanning helpers: one joined text per log, and the literals that let a pattern be skipped."""

from cudalogs.logtext import LogText
from cudalogs.model import Line
from cudalogs.signatures import branch_literals, required_literal


def _log(*texts: str) -> LogText:
    return LogText([Line(i + 1, t) for i, t in enumerate(texts)])


def test_lines_with_finds_each_line_once_case_insensitively():
    log = _log("Loading model", "CUDA error: no kernel image", "cuda cuda twice", "done")
    assert log.lines_with("cuda") == [1, 2]


def test_lines_matching_maps_offsets_back_to_lines():
    import re

    log = _log("a", "torch 2.1", "b", "Driver Version: 535")
    assert log.lines_matching(re.compile("torch|driver")) == {1, 3}
    assert log.index_at(len("a\n")) == 1


def test_a_message_wrapped_in_a_named_group_still_has_its_literal():
    assert required_literal(r"(?P<m>CK only supports head dimension at most (?P<limit>\d+))") == (
        "ck only supports head dimension at most ")


def test_an_optional_part_is_never_taken_as_required():
    assert required_literal(r"(?:no kernel|bad image)?xyz") == ""


def test_each_branch_of_an_alternation_gives_its_own_literal():
    assert branch_literals(r"(?i)\bWindows\b|\.dll\b|[A-Z]:\\") == ("windows", ".dll", ":\\")
    assert branch_literals(r"Windows|\d+") == ()  # a branch with no literal: no prefilter possible


def test_an_alternation_of_two_spellings_is_prefiltered_by_either():
    from cudalogs.signatures import prefilter_literals

    assert prefilter_literals(r"cudaErrorSystemDriverMismatch|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH") == (
        "cudaerrorsystemdrivermismatch", "cuda_error_system_driver_mismatch")
    assert prefilter_literals(r"no kernel image (?P<x>\d+)") == ("no kernel image ",)


def test_two_chinese_characters_are_literal_enough_where_two_latin_ones_are_not():
    """The 4+ rule weighs a CJK character as two: "显存" (GPU memory) is as rare in logs as "cuda"."""
    from cudalogs.signatures import prefilter_literals

    assert prefilter_literals(r"显存(?:溢出|爆了)|爆显存") == ("显存", "爆显存")
    assert prefilter_literals(r"ab(?:cd|ef)|gh") == ()


def test_a_log_without_a_single_capital_counts_as_lowercased():
    assert _log("runtimeerror: cuda error: no kernel image", "device 0: tesla t4").case_folded
    assert not _log("RuntimeError: CUDA error", "ok").case_folded
    assert not _log("1234 5678", "-- --").case_folded  # no letters at all: nothing was lowercased


def test_signatures_ignore_case_only_in_a_lowercased_log():
    from cudalogs.model import Entry, Signature
    from cudalogs.signatures import compile_entries, scan

    entry = Entry(id="x", cls="arch-not-compiled", title="t", status="stable", family="f", root_cause="",
                  signatures=(Signature(r"no kernel image is available"),), fixes=(), references=(), examples=())
    compiled = compile_entries([entry])
    assert scan(_log("runtimeerror: cuda error: no kernel image is available"), compiled)
    assert not scan(_log("RuntimeError: CUDA error: NO KERNEL IMAGE IS AVAILABLE"), compiled)


def test_a_pattern_whose_literal_is_absent_is_never_compiled():
    from cudalogs.model import Entry, Signature
    from cudalogs.signatures import compile_entries, scan, scan_joined

    entry = Entry(id="x", cls="arch-not-compiled", title="t", status="stable", family="f", root_cause="",
                  signatures=(Signature(r"no kernel image is available"),), fixes=(), references=(), examples=())
    compiled = compile_entries([entry])
    for log in (_log("Epoch 1 loss 0.3", "saving checkpoint"), _log("epoch 1 loss 0.3")):
        scan(log, compiled), scan_joined(log, compiled)
    assert compiled[0]._pattern is None and compiled[0]._folded is None  # compiling every pattern costs ~130 ms


def test_the_quick_rule_out_never_rules_out_a_literal_that_is_there():
    """may_hold rules a literal out by its first and last three characters; it must never rule out one present."""
    log = _log("Epoch 1 loss 0.3", "RuntimeError: CUDA error: no kernel image", "is available for execution")
    assert log.may_hold("no kernel image") and log.may_hold("image\nis avail")   # across a line break too
    assert log.may_hold("rr")                                                    # shorter than three: not ruled out
    assert not log.may_hold("out of memory") and log.lines_with("out of memory") == []


def test_the_literal_index_picks_exactly_the_signatures_the_rule_out_would_try(kb):
    """SignatureList.worth_trying is a faster form of asking may_hold for each signature's literals: same answer."""
    compiled = kb.compiled
    for log in (_log("Epoch 1 loss 0.3", "saving checkpoint"),
                _log("RuntimeError: CUDA error: no kernel image is available for execution on the device"),
                _log("ggml_cuda_init: found 1 CUDA devices:", "  Device 0: Tesla T4, compute capability 7.5",
                     "CUDA error: the requested functionality is not supported")):
        expected = [sig for sig in compiled if not sig.literals or any(log.may_hold(lit) for lit in sig.literals)]
        assert compiled.worth_trying(log) == expected

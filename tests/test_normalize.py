"""Stage 1: any input becomes clean numbered lines, or a clear InputError."""

import io

import pytest

from cudalogs.errors import InputError
from cudalogs.normalize import Limits, Stats, clean, lines, mask


def texts(source, **kw):
    return [(line.no, line.text) for line in lines(source, **kw)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a\nb\n", [(1, "a"), (2, "b")]),
        ("a\r\nb", [(1, "a"), (2, "b")]),
        (b"a\r\nb\r\n", [(1, "a"), (2, "b")]),
        (b"\x1b[31mRuntimeError\x1b[0m: x\n", [(1, "RuntimeError: x")]),
        ("", []),
        (b"\xef\xbb\xbfwith BOM\n", [(1, "with BOM")]),
        ("step 1\rstep 2\n", [(1, "step 1"), (2, "step 2")]),
    ],
)
def test_lines(source, expected):
    assert texts(source) == expected


def test_utf16_from_powershell_redirect():
    data = "CUDA error: out of memory\r\n".encode("utf-16")
    assert texts(data) == [(1, "CUDA error: out of memory")]


def test_invalid_utf8_is_replaced_and_reported():
    stats = Stats()
    assert texts(b"caf\xe9 error\n", stats=stats) == [(1, "caf\ufffd error")]
    assert stats.notes == ["invalid UTF-8 bytes were shown as U+FFFD"]


def test_binary_input_is_refused_with_a_clear_message():
    with pytest.raises(InputError, match="looks binary"):
        list(lines(b"\x7fELF\x02\x01\x01\x00\x00\x00"))


def test_crlf_split_across_chunks_gives_no_empty_line():
    stream = io.BytesIO(b"one\r\ntwo\r\nthree")
    assert texts(stream, limits=Limits(chunk_bytes=4)) == [(1, "one"), (2, "two"), (3, "three")]


def test_very_long_lines_are_cut_and_reported():
    stats = Stats()
    out = texts("x" * 10_000, limits=Limits(max_line_chars=100), stats=stats)
    assert out == [(1, "x" * 100)]
    assert "cut to 100 characters" in stats.notes[0]


def test_mask_makes_two_logs_of_one_fault_alike():
    a = mask("Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total) at 0x7f3a2c")
    b = mask("Tried to allocate 512.00 MiB (GPU 1; 23.65 GiB total) at 0x55d1")
    assert a == b


def test_a_huge_line_without_newlines_does_not_grow_memory():
    stream = io.BytesIO(b"x" * 5_000_000 + b"\nnext\n")
    stats = Stats()
    out = texts(stream, limits=Limits(chunk_bytes=65536, max_line_chars=1000), stats=stats)
    assert out == [(1, "x" * 1000), (2, "next")]


def test_html_character_references_are_decoded():
    scraped = 'File &quot;train.py&quot;, line 3, in &lt;module&gt;'
    assert [line.text for line in lines(scraped)] == ['File "train.py", line 3, in <module>']
    assert [line.text for line in lines("A & B &gt")] == ["A & B &gt"]  # not a reference: left alone


@pytest.mark.parametrize("line, bare", [
    ("    CUDA error: invalid device function", "CUDA error: invalid device function"),
    ("> > CUDA error: x", "CUDA error: x"),
    ("[rank0]: RuntimeError: CUDA error", "RuntimeError: CUDA error"),
    ("(RayWorkerWrapper pid=2172) ERROR x", "ERROR x"),
    ("ollama  | CUDA error", "CUDA error"),
    ("Aug 13 16:58:56 monster ollama[3010374]:   current device: 0", "current device: 0"),   # journalctl / syslog
    ("2024-05-01T10:00:00.123Z CUDA error", "CUDA error"),
    ("2024-05-01 10:00:00,123 | CUDA error", "CUDA error"),           # a logger's timestamp and its separator
    ("2024-05-01 10:00:00 - RuntimeError: x", "RuntimeError: x"),
    ("2024-05-01 10:00:00 -1 offset", "-1 offset"),                  # a dash that starts the message stays
    ("1.22.756.116 E   current device: 0", "current device: 0"),       # llama.cpp's elapsed time and level
    ("0.00.160.791 I cmn  common_param: x", "cmn  common_param: x"),
    ("1.22.756 E x", "1.22.756 E x"),                                  # not llama.cpp's four-part time
    ("| 0  Tesla T4  On |", "| 0  Tesla T4  On |"),
    ("CUDA error: y", "CUDA error: y"),
])
def test_strip_prefix_takes_off_what_tools_put_before_a_line(line, bare):
    from cudalogs.normalize import strip_prefix

    assert strip_prefix(line) == bare


def test_web_page_spaces_and_curly_quotes_become_plain():
    copied = "no\u00a0kernel\u200b image is available \u2018here\u2019 \u201cnow\u201d"
    assert [line.text for line in lines(copied)] == ["no kernel image is available 'here' \"now\""]


def _spelled_out(text):
    """How a console shows UTF-16 text read byte by byte: each character followed by a space (its NUL byte)."""
    return "".join(c + " " for c in text).rstrip()


def test_a_line_spelled_out_character_by_character_reads_as_the_line():
    message = "[E:onnxruntime:Default, provider_bridge_ort.cc:1539] LoadLibrary failed with error 126"
    assert [line.text for line in lines(_spelled_out(message))] == [message]


@pytest.mark.parametrize("line", [
    " | _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",        # a box drawn with underscores
    "// * * * * * * * * * * * * * * * * * * * * * //",   # a comment banner
    "a b c d e",                                          # short: just text
])
def test_lines_of_spaced_symbols_stay_as_they_are(line):
    assert [found.text for found in lines(line)] == [line]


def _gutterless(text):
    from cudalogs.normalize import without_gutter

    return [line.text for line in without_gutter(lines(text))]


def test_a_numbered_paste_reads_like_the_log_it_numbers():
    log = "RuntimeError: CUDA error: no kernel image is available\nfor execution on the device\nbye"
    cat_n = "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(log.split("\n"), 1))   # `cat -n`
    editor = "\n".join(f"{i:4d}  {line}" for i, line in enumerate(log.split("\n"), 1))  # an editor's gutter
    assert _gutterless(cat_n) == _gutterless(editor) == log.split("\n")


@pytest.mark.parametrize("log", [
    "1  loss 0.9\n3  loss 0.7\n7  loss 0.5\n9  loss 0.4",                    # numbers, but not one after another
    "|   0  NVIDIA A100  On |\n|   1  NVIDIA A100  On |\nProcesses: none",    # a table
    "Epoch 1/3\nEpoch 2/3\nEpoch 3/3",
])
def test_a_log_that_only_holds_numbers_keeps_them(log):
    assert _gutterless(log) == log.split("\n")


def test_rich_logging_source_column_is_blanked_keeping_the_line_width():
    """rich's right-aligned "file.py:430" column is not part of the message; the width stays for hard-wrap rejoining."""
    line = "2025-07-08 10:39:40 ERROR    !!! Exception during processing !!! Allocation on device        execution.py:430"
    cleaned = clean(line)
    assert cleaned.rstrip().endswith("Allocation on device")
    assert len(cleaned) == len(line)
    assert clean("see train.py:12 for details") == "see train.py:12 for details"   # a file named in the text stays

"""explain() end to end on the tiny KB: the same message, reasoned differently per GPU."""

from cudalogs import explain
from cudalogs.normalize import Limits

V100_LINE = ("ggml_cuda_compute_forward: MUL_MAT failed\n"
             "mul_mat_q has no device code compatible with CUDA arch 700. ggml-cuda.cu was compiled for: "
             "500,520,530,600,610,620,700,720,750,800,860,870,890,900\n")
P104_LINE = ("vec_dot_q8_0_q8_1_impl has no device code compatible with CUDA arch 610. "
             "ggml-cuda.cu was compiled for: 500,600,700,750,800,900\n")


def test_device_arch_in_the_build_is_a_kernel_variant_bug(tiny_kb):
    report = explain(V100_LINE, gpu="Tesla V100-SXM2-32GB", kb=tiny_kb)
    top = report.diagnoses[0]
    assert (top.cls, top.id) == ("kernel-variant-missing", "ggml-no-device-code")
    assert [f.title for f in top.fixes] == ["Update past the fix"]
    assert report.gpu.source == "flag"


def test_device_arch_missing_from_the_build_gets_the_rebuild_for_its_numbers(tiny_kb):
    report = explain(P104_LINE, cc="6.1", kb=tiny_kb)
    top = report.diagnoses[0]
    assert top.cls == "arch-not-compiled"
    assert top.fixes[0].steps == "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=61"
    assert top.fixes[0].applies is True


def test_unknown_gpu_keeps_gpu_dependent_fixes_marked_as_such(tiny_kb):
    top = explain(P104_LINE, kb=tiny_kb).diagnoses[0]
    assert top.cls == "arch-not-compiled"
    assert top.fixes[0].applies is None
    assert "<your compute capability without the dot" in top.fixes[0].steps


def test_gpu_found_in_the_log_drives_the_reasoning(tiny_kb):
    log = "  Device 0: Tesla V100-SXM2-32GB, compute capability 7.0, VMM: yes\n" + V100_LINE
    report = explain(log, kb=tiny_kb)
    assert report.gpu.gpu.name == "Tesla V100-SXM2-32GB"
    assert (report.gpu.source, report.gpu.line_no) == ("log", 1)
    assert report.diagnoses[0].cls == "kernel-variant-missing"


def test_evidence_quotes_the_line_with_its_number(tiny_kb):
    top = explain(V100_LINE, kb=tiny_kb).diagnoses[0]
    assert top.evidence[0].line_no == 2
    assert top.evidence[0].text.startswith("mul_mat_q has no device code")


def test_no_diagnosis_is_an_honest_empty_answer(tiny_kb):
    report = explain("Loading checkpoint shards: 100%\nDone.\n", kb=tiny_kb)
    assert report.diagnoses == ()
    assert report.to_dict()["message"] == "No known GPU error found in this log."


def test_empty_input_says_so(tiny_kb):
    assert explain("", kb=tiny_kb).message.startswith("The input is empty")
    assert explain(b"\n\n  \n", kb=tiny_kb).message.startswith("The input is empty")


def test_to_dict_has_the_documented_shape(tiny_kb):
    doc = explain(V100_LINE, cc="7.0", kb=tiny_kb).to_dict()
    assert doc["schema_version"] == 1
    assert doc["gpu"]["compute_capability"] == "7.0"
    d = doc["diagnoses"][0]
    assert set(d) >= {"id", "class", "title", "confidence", "evidence", "root_cause", "fixes", "references"}
    assert 0 <= d["confidence"] <= 1


def test_huge_input_streams_and_keeps_the_lines_that_matter(tiny_kb, monkeypatch):
    import io

    from cudalogs import pipeline

    monkeypatch.setattr(pipeline, "FULL_LINES", 100)
    noise = b"epoch 1 step 5 loss 0.25\n" * 5000
    report = explain(io.BytesIO(noise + P104_LINE.encode() + noise), cc="6.1", kb=tiny_kb,
                     limits=Limits(chunk_bytes=4096))
    assert report.diagnoses[0].cls == "arch-not-compiled"
    assert report.diagnoses[0].evidence[0].line_no == 5001
    assert report.input.truncated


def test_past_the_full_lines_batches_keep_candidates_in_order_up_to_the_cap(tiny_kb, monkeypatch):
    from cudalogs import pipeline
    from cudalogs.model import Line

    monkeypatch.setattr(pipeline, "FULL_LINES", 2)
    monkeypatch.setattr(pipeline, "BATCH_LINES", 3)
    monkeypatch.setattr(pipeline, "MAX_KEPT_AFTER", 3)
    texts = ["a", "b", "noise", "CUDA error one", "noise", "noise", "gpu two", "cuda three", "cuda four"]
    kept = list(pipeline._lines_that_matter([Line(i + 1, t) for i, t in enumerate(texts)], tiny_kb))
    assert [line.text for line in kept] == ["a", "b", "CUDA error one", "gpu two", "cuda three"]


def test_a_log_that_arrived_lowercased_is_still_read(tiny_kb):
    report = explain(P104_LINE.lower(), cc="6.1", kb=tiny_kb)
    assert report.diagnoses[0].cls == "arch-not-compiled"
    assert report.diagnoses[0].fixes[0].steps == "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=61"



def test_a_hard_wrapped_message_is_read_across_the_break(tiny_kb):
    wrapped = ("vec_dot_q8_0_q8_1_impl has no device code compatible with CUDA arch 610.\n"
               "ggml-cuda.cu was compiled for: 500,600,700,750,800,900\n")
    top = explain(wrapped, cc="6.1", kb=tiny_kb).diagnoses[0]
    assert top.cls == "arch-not-compiled"
    assert [e.line_no for e in top.evidence] == [1]



def test_a_two_line_message_keeps_its_meaning_when_quoted_or_timestamped(kb):
    two_lines = ["ggml_cuda_compute_forward: RMS_NORM failed", "CUDA error: invalid device function"]
    for prefix in ("> ", "    ", "2024-08-01T10:00:00.123Z ", "[rank0]: "):
        log = "\n".join(prefix + line for line in two_lines)
        top = explain(log, kb=kb).diagnoses[0]
        assert (top.id, top.cls) == ("ggml-rocm-invalid-device-function", "rocm-gfx-unsupported"), prefix


def test_a_terminal_hard_wrap_that_cuts_words_is_rejoined(tiny_kb):
    one_line = P104_LINE.strip()
    cut = "\n".join(one_line[i:i + 64] for i in range(0, len(one_line), 64))
    assert explain(cut, cc="6.1", kb=tiny_kb).diagnoses[0].cls == "arch-not-compiled"


def test_an_empty_line_between_every_line_changes_nothing(tiny_kb):
    spaced = "\n\n".join(V100_LINE.splitlines())
    report = explain(spaced, gpu="Tesla V100-SXM2-32GB", kb=tiny_kb)
    assert report.diagnoses[0].cls == "kernel-variant-missing"
    assert report.diagnoses[0].evidence[0].line_no == 3  # numbered as the user pasted it
    assert not report.input.truncated


def test_a_name_the_console_wrapped_mid_word_is_still_read_and_titled_on_one_line(kb):
    log = ("UserWarning: Found GPU0 NVIDIA GeFor\nce GTX 1060 which is of compute capability (CC) 6.1.\n"
           "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports\n"
           ":\n- 7.5 which supports hardware CC >=7.5,<8.0\n- 8.0 which supports hardware CC >=8.0,<9.0\n")
    top = explain(log, kb=kb).diagnoses[0]
    assert top.cls == "arch-dropped"  # a Pascal card below the oldest CC in the build (InvokeAI#9532's shape)
    assert "\n" not in top.title


def test_a_message_spanning_lines_survives_a_terminal_hard_wrap(kb):
    """A multi-line (window) signature is tried on the log with the wrap undone: vLLM's dtype check, cut at 80
    columns by a console, is still the frame that raises (QAnything#233, an RTX 2080 Ti)."""
    example = next(ex for ex in kb.by_id["vllm-bf16-capability"].examples if "QAnything/issues/233" in ex.source)
    cut = "\n".join(line[i:i + 80] for line in example.log.split("\n") for i in range(0, max(len(line), 1), 80))
    assert cut != example.log
    assert explain(cut, gpu=example.gpu, kb=kb).diagnoses[0].cls == "bf16-unsupported"


def test_a_cut_first_half_does_not_hide_the_whole_message_of_a_hard_wrapped_paste(kb):
    """Cut at 80 columns, cuBLAS's call ends the line at "cublasGemmEx", which alone only another entry reads (and
    declares harmless without bf16); the rejoined line is the fp16 GEMM a Turing card refused (Latte#125)."""
    entry = kb.by_id["cublas-gemmex-not-supported"]
    example = next(ex for ex in entry.examples if "Latte/issues/125" in ex.source)
    cut = "\n".join(line[i:i + 80] for line in example.log.split("\n") for i in range(0, max(len(line), 1), 80))
    assert explain(cut, gpu=example.gpu or None, kb=kb).diagnoses[0].id == entry.id


def test_a_hard_wrap_that_cuts_a_captured_reason_reads_the_whole_reason(kb):
    """JAX's backend error cut at 80 columns leaves "... has no attrib" on the first line; the variant that reads a
    jaxlib without its CUDA parts (not a missing GPU) needs the rejoined reason (deepmind-research#420)."""
    entry = kb.by_id["jax-cuda-backend-failed"]
    example = next(ex for ex in entry.examples if "deepmind-research/issues/420" in ex.source)
    cut = "\n".join(line[i:i + 80] for line in example.log.split("\n") for i in range(0, max(len(line), 1), 80))
    want = [d.cls for d in explain(example.log, gpu=example.gpu or None, kb=kb).diagnoses][:1]
    assert [d.cls for d in explain(cut, gpu=example.gpu or None, kb=kb).diagnoses][:1] == want == [example.cls or entry.cls]


def test_a_warning_repeated_at_the_longest_width_is_no_hard_wrap():
    """A wrap cuts different text at the same width; the same warning a hundred times is one line, not a wrap."""
    from cudalogs import normalize, signatures
    from cudalogs.logtext import LogText

    warning = "UserWarning: TypedStorage is deprecated. To access UntypedStorage directly, use tensor.untyped_storage()"
    repeated = LogText(list(normalize.lines("\n".join([warning] * 5 + ["done"]))))
    message = "RuntimeError: CUDA error: no kernel image is available for execution on the device. " * 3
    wrapped = LogText(list(normalize.lines("\n".join(message[i:i + 80] for i in range(0, len(message), 80)))))
    assert not signatures.hard_wrapped(repeated)
    assert signatures.hard_wrapped(wrapped)


def test_a_record_that_opens_like_the_line_before_it_is_not_the_rest_of_a_cut_line():
    """Each line of a multi-host NCCL run starts with the host's prefix; the longest one ends in a number and the
    next begins with one, which alone reads as a word cut mid-way. Glued, "remote size 65536" became 6553610."""
    from cudalogs import normalize, signatures
    from cudalogs.logtext import LogText

    prefix = "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] "
    log = LogText(list(normalize.lines(
        prefix + "transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective "
        "mismatch error, local size 496640 remote size 65536\n" + prefix + "NCCL INFO include/net.h:32 -> 5\n")))
    assert signatures.hard_wrap_glue(log.lines) == [False, False]
    message = "RuntimeError: CUDA error: no kernel image is available for execution on the device. " * 3
    cut = LogText(list(normalize.lines("\n".join(message[i:i + 80] for i in range(0, len(message), 80)))))
    assert signatures.hard_wrapped(cut)  # a real wrap's pieces do not open alike

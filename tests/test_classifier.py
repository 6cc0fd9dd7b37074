"""The exported classifier scores exactly like scikit-learn (parity), and reads only the relevant lines."""

import pytest

pytest.importorskip("sklearn")

from cudalogs.classifier import Model, analyze, classifier_text, load, read, reports_failure, sidecar  # noqa: E402
from cudalogs.model import Line  # noqa: E402
from cudalogs.train import Case, abstention_threshold, export, fit, to_text, write  # noqa: E402

CASES = [
    Case("RuntimeError: CUDA error: out of memory", "cuda-out-of-memory", "https://a/1", "kb"),
    Case("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-out-of-memory", "https://a/2", "kb"),
    Case("RuntimeError: CUDA error: device-side assert triggered", "device-side-assert", "https://a/3", "kb"),
    Case("Assertion `t >= 0 && t < n_classes` failed.", "device-side-assert", "https://a/4", "kb"),
    Case("Loading checkpoint shards: 100%", "none", "https://a/5", "negative"),
    Case("Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes", "none", "https://a/6", "negative"),
]


def test_exported_scorer_matches_scikit_learn():
    vectorizer, model = fit(CASES)
    exported = Model.from_dict(export(vectorizer, model))
    probes = [c.text for c in CASES] + ["CUDA out of memory on device 1", "an unrelated sentence"]
    expected = model.predict_proba(vectorizer.transform([to_text(t) for t in probes]))
    for text, row in zip(probes, expected):
        got = exported.probabilities(to_text(text))
        for cls, p in zip(model.classes_, row):
            assert got[cls] == pytest.approx(p, abs=1e-5), (text, cls)


def test_a_written_model_reads_back_and_scores_the_same(tmp_path):
    vectorizer, model = fit(CASES)
    exported = export(vectorizer, model)
    write(exported, tmp_path / "model.json")
    text = "CUDA out of memory on device 1"
    assert load(tmp_path / "model.json").probabilities(text) == Model.from_dict(exported).probabilities(text)


def test_a_truncated_or_missing_sidecar_gives_no_model_rather_than_a_wrong_one(tmp_path):
    vectorizer, model = fit(CASES)
    json_path, bin_path = write(export(vectorizer, model), tmp_path / "model.json")
    bin_path.write_bytes(bin_path.read_bytes()[:-4])
    assert read(json_path) is None and load(json_path) is None
    sidecar(json_path).unlink()
    assert load(json_path) is None


def test_classifier_text_keeps_relevant_lines_masked():
    lines = [Line(1, "epoch 1 loss 0.3"), Line(2, "RuntimeError: CUDA error: out of memory at 0x7f00")]
    assert classifier_text(lines) == "RuntimeError: CUDA error: out of memory at <hex>"


def test_classifier_text_leaves_out_healthy_start_up_lines_that_read_like_faults():
    tf_trt = ("W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
              "library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file")
    lines = [Line(1, tf_trt), Line(2, "TF-TRT Warning: Cannot dlopen some TensorRT libraries."),
             Line(3, "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: not found")]
    assert classifier_text(lines) == lines[2].text  # the CUDA runtime itself missing is evidence; TensorRT's is not
    assert classifier_text(lines[:2]) == ""  # nothing left to read: the classifier sees an empty text


def test_analyze_gives_words_and_bigrams():
    assert analyze("CUDA error: <num>") == ["cuda", "error", "<num>", "cuda error", "error <num>"]


@pytest.mark.parametrize(("text", "reports"), [
    ("RuntimeError: CUDA error: out of memory", True),
    ("The software raises an error: GPUs with compute capability < 8.0 are not supported.", True),
    ("训练时报错 CUDA out of memory", True),
    ("I have no GPU usage, and my VRAM is empty", True),   # a report in words
    ("ollama is not using my gpu", True),
    ("        raise NotImplementedError(msg)\n    NotImplementedError: No operator found for `memory_efficient_", True),
    ("Can I run this model on a V100?", False),
    ("用bf16微调的模型，能在V100上跑吗？", False),          # a question: nothing failed
    ("Does flash attention 2 support A40 when the head dim >= 128?", False),
    ("Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes", False),
    # TensorFlow 2.1-2.3 starting up: its TensorRT notes say "dlerror" on working machines too
    ("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'libnvinfer.so.6'; "
     "dlerror: libnvinfer.so.6: cannot open shared object file: No such file or directory\n"
     "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:30] Cannot dlopen some TensorRT libraries.", False),
])
def test_reports_failure_tells_a_failure_from_a_question_or_a_banner(text, reports):
    assert reports_failure(text) is reports


def test_a_text_that_reports_no_failure_needs_the_stricter_threshold():
    vectorizer, model = fit(CASES)
    exported = export(vectorizer, model, threshold=0.5)
    exported["threshold_no_failure"] = 0.9
    scorer = Model.from_dict(exported)
    assert (scorer.threshold_for(True), scorer.threshold_for(False)) == (0.5, 0.9)
    del exported["threshold_no_failure"]  # a model from before the split reads as one threshold for both
    assert Model.from_dict(exported).threshold_for(False) == 0.5


class _Scores:
    """A stand-in vectorizer and model whose fault probabilities for each held-out negative are given outright."""

    classes_ = ["cpu-only-build", "none"]

    def __init__(self, fault_scores):
        self.rows = [[p, 1 - p] for p in fault_scores]

    def transform(self, texts):
        return texts

    def predict_proba(self, vectors):
        return self.rows[: len(vectors)]


def test_one_outlier_among_the_held_out_negatives_does_not_set_the_threshold():
    negatives = [Case(f"log {i}", "none", f"https://a/{i}", "negative") for i in range(4)]
    scores = _Scores([0.86, 0.79, 0.40, 0.10])  # one log far above the rest, as Deep-Live-Cam#786 was
    assert abstention_threshold(scores, scores, negatives) == 0.81  # 0.02 above the second-highest
    assert abstention_threshold(scores, scores, negatives[:1]) == 0.88  # a lone negative is not tolerated
    low = _Scores([0.2, 0.1])
    assert abstention_threshold(low, low, negatives[:2]) == 0.5  # never below the default


@pytest.mark.parametrize("content", [b"\xff\xfe not json", b"[1, 2]", b'{"format": 1}', b'{"format": 3, "vocab": []}'])
def test_an_unreadable_model_file_gives_no_model(tmp_path, content):
    (tmp_path / "model.json").write_bytes(content)
    assert load(tmp_path / "model.json") is None


@pytest.mark.parametrize("host_message", [
    "[856341.770960] Out of memory: Killed process 410126 (python) total-vm:79905000kB, anon-rss:22957108kB",
    "Out of memory:Killed process 217423（python）total-vm:112518872kB，  anon-rs:30204444kB，file-rss:kB",
    "MemoryError: Unable to allocate 12.0 GiB for an array with shape (40000, 40000) and data type float64",
    "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
    "Out of memory. Type HELP MEMORY for your options.",
])
def test_host_memory_messages_are_not_read_as_a_gpu_fault(host_message):
    """The host ran out of RAM, not the GPU: the classifier does not read it, nor count it as a reported failure."""
    assert classifier_text([Line(1, host_message)]) == ""
    assert not reports_failure(host_message)


@pytest.mark.parametrize("line", [
    "Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.",
    "E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:771] failed to alloc 23994040320 bytes "
    "unified memory; result: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "ERROR: Engine died unexpectedly without sending output, possibly due to out of memory: status 3221225501",
])
def test_a_recovered_or_guessed_out_of_memory_note_is_not_read_as_a_gpu_fault(line):
    """ComfyUI tiles the VAE and carries on; XLA asks for more unified memory than there is and carries on with less;
    KaTrain prints its memory guess for any engine crash."""
    assert classifier_text([Line(1, line)]) == ""
    assert not reports_failure(line)


def test_nvcc_failing_to_write_its_temporary_file_is_not_read_as_an_architecture_fault():
    """A full or read-only /tmp stops nvcc before it compiles anything: a host file-system problem, not the GPU's."""
    line = "nvcc fatal   : Could not open output file '/tmp/tmpxft_00004b98_00000000'"
    assert classifier_text([Line(1, line)]) == ""
    assert not reports_failure(line)

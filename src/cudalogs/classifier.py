"""The TF-IDF + logistic-regression classifier, scored in pure Python at run time.

Why pure Python here: importing scikit-learn costs over a second, more than the whole
`explain` budget. `cudalogs kb build` trains with scikit-learn (train.py) and exports the
vocabulary, idf weights and coefficients; this module recomputes exactly the same
probabilities from them (a parity test holds the two together on the whole corpus).
Both sides share `analyze()`, so the features cannot drift apart.
"""

from __future__ import annotations

import base64
import json
import math
import re
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudalogs.model import Line
from cudalogs.normalize import mask

MODEL_PATH = Path(__file__).resolve().parent / "_bundled" / "model.json"
MODEL_FORMAT = 3  # 2: centroids shipped inverted and packed (train.postings); 3: the arrays in a binary sidecar
# The numeric arrays, in the order the sidecar (model.bin, little-endian) holds them: (dict path, array type code).
# Why a sidecar: as base64 inside model.json they cost ~45 ms of every start-up (JSON scan + base64 decode of
# ~5 MB); read as raw bytes they cost ~2 ms.
ARRAYS = ((("idf",), "f"), (("coef",), "f"), (("postings", "offsets"), "i"), (("postings", "entry"), "H"),
          (("postings", "weight"), "f"))
NONE_CLASS = "none"
_TOKEN = re.compile(r"<\w+>|[a-z_][a-z0-9_]+|[a-z0-9]+")
# Lines worth classifying: the error, its context and the GPU; progress bars and banners are noise.
_RELEVANT = re.compile(  # matched against lowercased lines (IGNORECASE alternations are several times slower)
    r"error|exception|fail|warn|cuda|gpu|capab|kernel|nccl|cublas|cudnn|triton|rocm|hip|flash|bf16|bfloat|fp8|"
    r"memory|driver|nvcc|ptxas|assert|arch|sm_\d|compute|device|support|xformers|bitsandbytes|quant|marlin|ecc|xid|container")
# Start-up lines printed on healthy runs, which share words with real faults: TensorFlow's optional TensorRT
# libraries ("Could not load dynamic library 'libnvinfer.so.7'", "TF-TRT Warning: Cannot dlopen some TensorRT
# libraries", beside the fault "Cannot dlopen some GPU libraries"), its CPU-instruction banner, its duplicate
# cuDNN/cuFFT/cuBLAS factory registration, oneDNN's note, xFormers' "A matching Triton is not available",
# ComfyUI's note that it recovered from a VAE out-of-memory by tiling ("Ran out of memory when regular VAE decoding,
# retrying with tiled VAE decoding": the image is made; Acly/krita-ai-diffusion#86 scored 0.92 for out-of-memory),
# KaTrain's fixed message for any KataGo crash, which only guesses at memory ("Engine died unexpectedly without
# sending output, possibly due to out of memory": katrain#349, an illegal-instruction exit, scored 0.92), and XLA's
# unified-memory preallocation asking for more than there is and carrying on with less ("failed to alloc N bytes
# unified memory; result: CUDA_ERROR_OUT_OF_MEMORY" under TF_FORCE_UNIFIED_MEMORY=1 with a memory fraction above 1,
# as LocalColabFold's README sets: localcolabfold#62, a run that finished, scored 0.99).
# They are not evidence of anything: the classifier does not read them (googlecolab/colabtools#3408: the TF-TRT
# lines alone scored 0.95 for no-gpu-visible). Signatures still see every line.
_HARMLESS = (
    r"could not load dynamic library 'libnvinfer|tf-trt warning|cannot dlopen some tensorrt libraries|"
    r"this tensorflow binary is optimized|"
    r"rebuild tensorflow with the appropriate compiler flags|unable to register cu(?:dnn|fft|blas) factory|"
    r"onednn custom operations are on|a matching triton is not available|retrying with tiled vae (?:de|en)coding|"
    r"engine died unexpectedly without sending output, possibly due to out of memory|"
    r"failed to alloc \d+ bytes unified memory; result: cuda_error_out_of_memory")
# Messages about another memory than the GPU's. They share "out of memory" with the GPU fault and scored up to 0.998
# for it, so the classifier does not read them; a GPU's own out-of-memory messages are matched by signatures, which
# still see every line. One group per line below:
# - the host's RAM: the Linux OOM killer ("Out of memory: Killed process 4101 (python)", also pasted without the
#   space, "Out of memory:Killed process": Scaffold-GS#104, scored 0.92), a cgroup limit, numpy's
#   "MemoryError: Unable to allocate 12.0 GiB for an array", Node's and Java's heaps, errno 12 "Cannot allocate
#   memory" (Qwen-VL-Series-Finetune#135: a fine-tune killed for system RAM, scored 0.99), and MATLAB's own
#   "Out of memory. Type HELP MEMORY for your options." (host RAM; its GPU message is "Out of memory on device",
#   which a signature reads; Kilosort#300 scored 1.00);
# - a TPU's memory and TensorFlow's CPU allocator: XLA:TPU "Ran out of memory in memory space hbm", "(0x0x0_HBM0)",
#   "OOM when allocating tensor ... by allocator cpu" (tensorflow/tpu#385, scored 0.998);
# - Slurm's "oom-kill event" / "cgroup out-of-memory handler" notes, and ggml's pinned host buffer, a warning after
#   which it uses pageable memory ("failed to allocate 24000.00 MiB of pinned memory: out of memory; using pageable
#   cached fallback", scored 0.9+).
_OTHER_MEMORY = (
    r"out of memory:\s*kill(?:ed)? process|memory cgroup out of memory|invoked oom-killer|oom-kill:|oom_reaper|"
    r"javascript heap out of memory|java\.lang\.outofmemoryerror|memoryerror: unable to allocate [\d.]+ [kmgtp]?i?b "
    r"for an array|cannot allocate memory|out of memory\. type \"?help memory\"? for your options|"
    r"ran out of memory in memory space (?:hbm|vmem)|xla:tpu compile permanent error|_hbm\d\)|by allocator cpu\b|"
    r"oom-kill event|cgroup out-of-memory handler|of pinned memory: out of memory")
# The host's file system: nvcc cannot write its temporary files ("nvcc fatal : Could not open output file
# '/tmp/tmpxft_...'": a full or read-only /tmp, onnxruntime#7451, scored 0.91 for nvcc-arch-unsupported). Nothing
# about the GPU or its architecture.
_HOST_FILES = r"nvcc fatal\s*:\s*could not open output file"
# All kinds in one pattern: every line of a log is tested against it once.
_NOT_READ = re.compile(f"{_HARMLESS}|{_OTHER_MEMORY}|{_HOST_FILES}")
# Words by which a text reports that something went wrong. The classifier answers alone (no signature matched)
# only on such a text: a question ("can a bf16 model run on a V100?") or a healthy log that merely names the same
# things must not get a diagnosis, however close its words are to a fault's. "error" counts inside a word too: a
# Python exception's name ("NotImplementedError: No operator found" at the end of a traceback whose header was cut).
_FAILURE_CUE = re.compile(
    r"error|exception|traceback|failed|failure|fatal|abort|crash|assert|segmentation fault|core dumped|"
    r"(?:does ?n[o']t|do ?n[o']t|is ?n[o']t|wo ?n[o']t|not) (?:work|run|start|load|use|using|utiliz|detect|recogni)|"
    r"can ?n?o?[o']?t (?:run|use|load|start|find|detect)|unable to|\bno gpu usage|"
    r"out of memory|\boom\b|报错|错误|失败|崩溃|无法|不能用|用不了|跑不起来|显存不足|爆显存|エラー|오류|ошибк")
MAX_LINES = 300
MAX_CHARS = 20_000


def _meaningful(texts: Iterable[str]) -> list[str]:
    """The lines that say something: without the harmless notes, other-memory and host file-system messages above.
    One definition, so that what the classifier reads and what counts as reporting a failure cannot drift apart."""
    return [text for text in texts if not _NOT_READ.search(text.lower())]


def classifier_text(lines: Sequence[Line]) -> str:
    """The part of a log the classifier reads: relevant lines, masked, bounded in size."""
    meaningful = _meaningful(line.text for line in lines)
    picked = [text for text in meaningful if _RELEVANT.search(text.lower())][:MAX_LINES] or meaningful[:MAX_LINES]
    return mask("\n".join(picked))[:MAX_CHARS]


def reports_failure(text: str) -> bool:
    """Whether the text says something failed (an error, exception, traceback, crash, assertion). The harmless
    lines the classifier does not read do not count either: TensorFlow's TensorRT notes hold "dlerror" and
    "Cannot dlopen" on every GPU start-up of TF 2.1-2.3, working or not."""
    if _FAILURE_CUE.search(text.lower()) is None:  # most texts settle here, in one pass
        return False
    return any(_FAILURE_CUE.search(line.lower()) for line in _meaningful(text.splitlines()))


def analyze(text: str) -> list[str]:
    """Word unigrams and bigrams of the masked, lowercased text (shared by training and scoring)."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


@dataclass(frozen=True)
class Model:
    classes: tuple[str, ...]
    index: dict[str, int]
    idf: array
    coef: array  # len(vocab) * len(classes), row-major by term
    intercept: tuple[float, ...]
    threshold: float  # for a text that reports a failure (reports_failure); calibrated on held-out negatives that do
    sublinear_tf: bool = True
    # each entry's mean example vector, l2-normalised and inverted by term (see train.postings), so the cosine
    # with every entry is one pass over the log's own terms: term i's postings are [offsets[i], offsets[i+1])
    entry_ids: tuple[str, ...] = ()
    offsets: array = field(default_factory=lambda: array("i"))
    posting_entry: array = field(default_factory=lambda: array("H"))
    posting_weight: array = field(default_factory=lambda: array("f"))
    threshold_no_failure: float = 1.0  # for any other text: calibrated on every held-out negative

    def threshold_for(self, reports: bool) -> float:
        """The probability a classifier-only answer needs, by whether the text reports a failure."""
        return self.threshold if reports else max(self.threshold, self.threshold_no_failure)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Model":
        """From train.export()'s form (arrays as base64 text) or read()'s (arrays as `array`)."""
        vocab = data["vocab"]
        code = dict(ARRAYS)  # each array's type code, by its place in the dict: one table for read, write and this
        idf, coef = as_array(code[("idf",)], data["idf"]), as_array(code[("coef",)], data["coef"])
        packed = data.get("postings", {})
        arrays = [as_array(code[("postings", key)], packed.get(key, "")) for key in ("offsets", "entry", "weight")]
        return cls(tuple(data["classes"]), {t: i for i, t in enumerate(vocab)}, idf, coef,
                   tuple(data["intercept"]), float(data["threshold"]), bool(data.get("sublinear_tf", True)),
                   tuple(packed.get("entries", ())), *arrays,
                   float(data.get("threshold_no_failure", data["threshold"])))

    def vector(self, text: str) -> dict[int, float]:
        """The l2-normalised tf-idf vector, as scikit-learn's TfidfVectorizer computes it."""
        counts: dict[int, int] = {}
        for token in analyze(text):
            i = self.index.get(token)
            if i is not None:
                counts[i] = counts.get(i, 0) + 1
        weights = {i: ((1.0 + math.log(c)) if self.sublinear_tf else float(c)) * self.idf[i] for i, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        return {i: w / norm for i, w in weights.items()} if norm else {}

    def similarities(self, vector: dict[int, float]) -> dict[str, float]:
        """Entry id -> cosine between `vector` (unit length, from `vector()`) and the entry's examples' centroid;
        entries sharing no term with the log are absent (their cosine is 0)."""
        scores: dict[int, float] = {}
        offsets, entry, weight = self.offsets, self.posting_entry, self.posting_weight
        if not offsets:
            return {}
        for i, w in vector.items():
            for k in range(offsets[i], offsets[i + 1]):
                scores[entry[k]] = scores.get(entry[k], 0.0) + w * weight[k]
        return {self.entry_ids[n]: score for n, score in scores.items()}

    def probabilities(self, text: str) -> dict[str, float]:
        """Class -> probability (softmax of the linear scores)."""
        return self.probabilities_of(self.vector(text))

    def probabilities_of(self, vector: dict[int, float]) -> dict[str, float]:
        n, coef = len(self.classes), self.coef
        scores = list(self.intercept)
        for i, w in vector.items():
            scores = [s + w * c for s, c in zip(scores, coef[i * n: i * n + n])]  # a C-level slice of the row
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return {c: e / total for c, e in zip(self.classes, exps)}


def as_array(code: str, value: str | array) -> array:
    """An array of `code` from base64 text (train.export) or as it is (read)."""
    if isinstance(value, array):
        return value
    out = array(code)
    out.frombytes(base64.b64decode(value))
    return out


def sidecar(path: Path) -> Path:
    return path.with_suffix(".bin")


def array_slot(data: dict[str, Any], keys: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    """The dict that holds one of ARRAYS in the model's plain form, and its key there ("postings" is nested)."""
    *parents, last = keys
    for key in parents:
        data = data.setdefault(key, {})
    return data, last


def read(path: Path = MODEL_PATH) -> dict[str, Any] | None:
    """The shipped model as a plain dict (export()'s form, arrays as `array`), or None when it is missing,
    unreadable or of another format. The arrays come from the sidecar next to `path`."""
    try:
        data = json.loads(path.read_bytes())  # as bundle.read: no newline translation pass
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            return None
        raw = memoryview(sidecar(path).read_bytes())
    except (OSError, ValueError):  # bad JSON or bad UTF-8
        return None
    counts = data.get("arrays")
    if not isinstance(counts, list) or len(counts) != len(ARRAYS):
        return None
    start = 0
    for (keys, code), count in zip(ARRAYS, counts):
        arr = array(code)
        arr.frombytes(raw[start:start + count * arr.itemsize])
        if sys.byteorder == "big":
            arr.byteswap()
        start += count * arr.itemsize
        if len(arr) != count:
            return None  # a truncated sidecar: better no classifier than a wrong one
        holder, last = array_slot(data, keys)
        holder[last] = arr
    return data if start == len(raw) else None


def load(path: Path = MODEL_PATH) -> Model | None:
    """The shipped model, or None when it has not been built (explain then uses signatures only)."""
    data = read(path)
    return Model.from_dict(data) if data is not None else None

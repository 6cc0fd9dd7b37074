"""`cudalogs gpu`: profile, lacking features, entries that single the GPU out."""

import copy
import json

from cudalogs import gpu_report
from cudalogs.gpu import resolve

FEATURES = [
    {"id": "bf16", "name": "bf16 tensor-core GEMM", "min_cc": "8.0", "source": "https://example.org/bf16"},
    {"id": "int8-tensor-cores", "name": "int8 tensor cores (IMMA)", "min_cc": "7.5", "source": "https://example.org/i8"},
    {"id": "flash-attention-1", "name": "FlashAttention 1.x", "min_cc": "7.5", "max_cc": "9.0", "source": "https://x.org"},
]


def _with_features(kb):
    """A copy with these features: the session's tiny KB is shared (the page test serves its own features)."""
    kb = copy.copy(kb)
    kb.features = FEATURES
    return kb


def test_t4_lacks_bf16_but_has_int8_tensor_cores(tiny_kb):
    kb = _with_features(tiny_kb)
    p = gpu_report.profile(resolve("Tesla T4", None, kb.catalog), kb)
    assert [f["id"] for f in p.lacks] == ["bf16"]
    assert p.has == ("int8-tensor-cores", "flash-attention-1")


def test_profile_json_names_the_limits(tiny_kb):
    kb = _with_features(tiny_kb)
    doc = gpu_report.profile(resolve("8.6", None, kb.catalog), kb).to_dict()
    assert (doc["compute_capability"], doc["smem_per_block"], doc["family"]) == ("8.6", 101376, "ampere")
    json.dumps(doc)


def test_entries_that_single_out_a_gpu(tiny_kb):
    p = gpu_report.profile(resolve("Tesla V100-SXM2-32GB", None, tiny_kb.catalog), tiny_kb)
    assert p.entries == ()  # the tiny entry's conditions all read captured fields: never certain for a GPU alone

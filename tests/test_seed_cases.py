"""The founding seed cases, on the real logs of their threads (the KB examples), reasoned for their GPU."""

import pytest

from cudalogs import explain


def _example(kb, source):
    for entry in kb.entries:
        for ex in entry.examples:
            if ex.source == source:
                return ex
    raise AssertionError(f"no KB example from {source}")


def _all_fix_text(diagnosis):
    return "\n".join(f"{f.title}\n{f.steps}\n{f.cost}" for f in diagnosis.fixes)


def test_v100_mmq_is_a_kernel_variant_bug_not_a_missing_arch(kb):
    ex = _example(kb, "https://github.com/LostRuins/koboldcpp/issues/1390")
    report = explain(ex.log, gpu="Tesla V100-SXM2-32GB", kb=kb)
    top = report.diagnoses[0]
    assert top.cls == "kernel-variant-missing"
    assert report.gpu.gpu.cc == "7.0"
    text = _all_fix_text(top)
    assert "PR #12098" in text and "1.84.2" in text
    assert "nommq" in text and "several times slower" in text
    assert "CMAKE_CUDA_ARCHITECTURES" not in text  # rebuilding for 7.0 would not help: 700 is already built


def test_v100_mmq_without_a_gpu_is_still_reasoned_from_the_arch_list(kb):
    ex = _example(kb, "https://github.com/LostRuins/koboldcpp/issues/1390")
    assert explain(ex.log, kb=kb).diagnoses[0].cls == "kernel-variant-missing"


def test_p104_llamafile_needs_its_arch_compiled(kb):
    ex = _example(kb, "https://github.com/mozilla-ai/llamafile/issues/403")
    report = explain(ex.log, kb=kb)
    top = report.diagnoses[0]
    assert (top.cls, report.gpu.gpu.name, report.gpu.gpu.cc) == ("arch-not-compiled", "NVIDIA P104-100", "6.1")
    assert "-DCMAKE_CUDA_ARCHITECTURES=61" in _all_fix_text(top)
    assert "--recompile" in _all_fix_text(top)


def test_ktransformers_t4_image_and_marlin(kb):
    ex = _example(kb, "https://github.com/kvcache-ai/ktransformers/issues/44")
    report = explain(ex.log, gpu="Tesla T4", kb=kb)
    top = report.diagnoses[0]
    assert top.cls == "arch-not-compiled"
    text = _all_fix_text(top)
    assert 'TORCH_CUDA_ARCH_LIST="7.5"' in text
    assert "KLinearTorch" in text


def test_latte_2080ti_cublas_gemmex_fixes_scoped_to_turing(kb):
    ex = _example(kb, "https://github.com/Vchitect/Latte/issues/125")
    report = explain(ex.log, kb=kb)
    top = report.diagnoses[0]
    assert top.cls == "cublas-gemm-unsupported"
    assert report.gpu.gpu.cc == "7.5"
    titles = [f.title for f in top.fixes]
    assert any("Turing and older" in t for t in titles)
    on_ampere = explain(ex.log, gpu="NVIDIA GeForce RTX 3090", kb=kb).diagnoses[0]
    assert not any("Turing and older" in f.title for f in on_ampere.fixes)


@pytest.mark.parametrize(
    ("source", "gpu", "cls", "rendered"),
    [
        ("https://github.com/substratusai/vllm-docker/issues/37", None, "bf16-unsupported", "--dtype half"),
        ("https://github.com/FlashML-org/FreeToken/issues/246", None, "triton-shared-memory", "num_stages=1"),
        ("https://github.com/komikndr/raylight/issues/68", "Quadro RTX 5000", "flash-attention-unsupported", 'attn_implementation="sdpa"'),
    ],
)
def test_more_seed_shapes(kb, source, gpu, cls, rendered):
    top = explain(_example(kb, source).log, gpu=gpu, kb=kb).diagnoses[0]
    assert top.cls == cls
    assert rendered in _all_fix_text(top)

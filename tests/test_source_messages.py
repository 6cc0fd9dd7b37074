"""Messages known only from a library's source (no public thread pastes them yet) are still read by their entry.

KB examples must be real logs, so these lines cannot be examples; the entry cites the source line instead, and this
test keeps the signature honest. Each line is the message as the cited source builds it, nothing invented.
"""

import pytest

from cudalogs import explain


@pytest.mark.parametrize(("line", "entry", "title_part"), [
    # TransformerEngine transformer_engine/pytorch/quantization.py#L175 and #L168, jax/quantize/helper.py#L100
    ("AssertionError: Device compute capability 10.0 or higher required for NVFP4 execution.",
     "transformer-engine-fp8-unavailable", "NVFP4 recipe needs a Blackwell GPU"),
    ("AssertionError: Device compute capability 10.0 or higher required for MXFP8 execution.",
     "transformer-engine-fp8-unavailable", "MXFP8 recipe needs a Blackwell GPU"),
    ("Device compute capability 9.9 or higher required for MXFP8 execution.",
     "transformer-engine-fp8-unavailable", "MXFP8 recipe needs a Blackwell GPU"),
    # torchao/float8/inference.py#L304 and #L309
    ("AssertionError: Float8 dynamic quantization requires CUDA compute capability ≥8.9 or MI300+ or XPU.",
     "torchao-float8-capability", "needs compute capability 8.9"),
    ("AssertionError: Float8 1x128 activation and 128x128 weight scaling requires CUDA compute capability ≥8.9 or XPU.",
     "torchao-float8-capability", "needs compute capability 8.9"),
])
def test_a_source_only_message_is_read_by_its_entry(kb, line, entry, title_part):
    top = explain(line, kb=kb, gpu="NVIDIA GeForce RTX 3090").diagnoses[0]
    assert (top.id, top.cls) == (entry, "fp8-unsupported")
    assert title_part in top.title


def test_cusolver_architecture_mismatch_is_not_read_as_out_of_memory(kb):
    """jaxlib's words for CUSOLVER_STATUS_ARCH_MISMATCH (jaxlib/gpu/gpu_kernel_helpers.cc#L62 at cec06d1), in the
    handle-creation line jaxlib prints for its other cuSOLVER statuses: the GPU is too old for this cuSOLVER, which
    freeing memory does not change."""
    line = "operation gpusolverDnCreate(&handle) failed: cuSolver architecture mismatch error"
    top = explain(line, kb=kb, gpu="Tesla K80").diagnoses[0]
    assert (top.id, top.cls) == ("cusolver-handle-create-failed", "arch-dropped")


def test_cudajl_toolkit_13_wording_is_read_as_a_dropped_gpu(kb):
    """CUDA.jl's current wording (CUDACore/lib/cudadrv/state.jl#L193 at fd1008d) says "CUDA toolkit 13+" where older
    releases said "CUDA 12.0": a Volta card is below what the CUDA 13 toolkit builds for."""
    line = "Your Tesla V100-SXM2-32GB GPU (compute capability 7.0) is not supported by CUDA toolkit 13+."
    top = explain(line, kb=kb).diagnoses[0]
    assert (top.id, top.cls) == ("cudajl-capability-not-supported", "arch-dropped")

"""A fix is shown to the GPUs it helps and kept from the ones it would break (fact-checks of 2026-11-27)."""

from cudalogs import explain


def _fix_text(log, kb, gpu=None):
    report = explain(log, gpu, kb=kb)
    return "\n".join(f"{f.title}\n{f.steps}" for f in report.diagnoses[0].fixes)


def test_a_cpu_only_wheel_is_replaced_by_cu128_on_blackwell_and_cu126_on_pascal(kb):
    """cu126 wheels hold no sm_120, and cu128 wheels from torch 2.8 on hold no sm_61."""
    log = "torch.cuda.is_available() returns False on my machine"
    on_5090 = _fix_text(log, kb, "RTX 5090")
    on_1080 = _fix_text(log, kb, "GTX 1080")
    assert "whl/cu128" in on_5090 and "whl/cu126" not in on_5090
    assert "whl/cu126" in on_1080 and "whl/cu128" not in on_1080


def test_tensorflow_unknown_error_303_is_a_missing_libcuda_not_a_broken_uvm_module(kb):
    """TF 2.x's stub returns 303 when libcuda.so.1 cannot be loaded; reloading nvidia_uvm cannot help there."""
    log = ("W dso_loader.cc:60] Could not load dynamic library 'libcuda.so.1'\n"
           "E cuda_driver.cc:328] failed call to cuInit: UNKNOWN ERROR (303)\n")
    text = _fix_text(log, kb)
    assert "libcuda.so.1 loadable" in text
    assert "nvidia_uvm" not in text


def test_accelerate_refusing_fp16_on_apple_silicon_is_not_sent_to_nvidia_smi(kb):
    text = _fix_text("ValueError: fp16 mixed precision requires a GPU (not 'mps').", kb)
    assert "Apple silicon" in text
    assert "nvidia-smi" not in text and "download.pytorch.org/whl/cu" not in text


def test_transformers_bare_bf16_refusal_means_no_cuda_device(kb):
    """transformers appends 'You need Ampere+ GPU' only when CUDA is available; the bare sentence means no GPU."""
    bare = explain("ValueError: Your setup doesn't support bf16/gpu.", kb=kb).diagnoses[0]
    old_gpu = explain("ValueError: Your setup doesn't support bf16/gpu. You need Ampere+ GPU with cuda>=11.0",
                      kb=kb).diagnoses[0]
    assert bare.cls == "no-gpu-visible"
    assert old_gpu.cls == "bf16-unsupported"


_NEEDS_NEWER = "Device architecture 61 is unsupported. Minimum supported architecture: 70\n"


def test_the_gpu_query_falls_back_to_the_plain_list_when_the_driver_is_unknown(kb):
    """compute_cap is a query field only from driver 510 on; an older driver refuses the whole query."""
    text = _fix_text(_NEEDS_NEWER, kb)
    assert "nvidia-smi --query-gpu=name,compute_cap --format=csv || nvidia-smi -L" in text
    assert "{find_gpu}" not in text


def test_a_driver_before_510_gets_only_the_plain_list(kb):
    text = _fix_text(_NEEDS_NEWER + "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n", kb)
    assert "nvidia-smi -L" in text and "compute_cap --format" not in text


def test_a_driver_from_510_on_gets_the_capability_query_alone(kb):
    text = _fix_text(_NEEDS_NEWER + "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n", kb)
    assert "nvidia-smi --query-gpu=name,compute_cap --format=csv" in text and "|| nvidia-smi -L" not in text


def test_a_kepler_card_gets_the_plain_list_since_no_driver_after_470_runs_it(kb):
    text = _fix_text(_NEEDS_NEWER, kb, "Tesla K80")
    assert "compute_cap --format" not in text


_CPU_TORCH = "AssertionError: Torch not compiled with CUDA enabled\n"


def _index_lines(log, kb, gpu=None):
    return [line.strip() for line in _fix_text(log, kb, gpu).splitlines() if "--index-url" in line]


def test_the_wheel_index_follows_the_gpu_so_an_rtx_50_never_gets_a_wheel_without_sm_120(kb):
    """cu126 has no sm_120, cu128 from torch 2.8 on has no Pascal, and only cu118 still holds the K80's sm_37."""
    assert any(line.endswith("whl/cu128") for line in _index_lines(_CPU_TORCH, kb, "RTX 5090"))
    assert any(line.endswith("whl/cu126") for line in _index_lines(_CPU_TORCH, kb, "GTX 1080"))
    assert any(line.endswith("whl/cu118") for line in _index_lines(_CPU_TORCH, kb, "Tesla K80"))
    assert not any("cu126" in line for line in _index_lines(_CPU_TORCH, kb, "RTX 5090"))


def test_the_wheel_index_follows_the_driver_the_log_shows(kb):
    """CUDA 12 wheels need driver 525 (minor-version compatibility), cu130 needs 580."""
    old = _CPU_TORCH + "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n"
    new = _CPU_TORCH + "| NVIDIA-SMI 580.65.06    Driver Version: 580.65.06    CUDA Version: 13.0     |\n"
    assert any(line.endswith("whl/cu118") for line in _index_lines(old, kb, "RTX 3060"))
    assert any(line.endswith("whl/cu130") for line in _index_lines(new, kb, "RTX 5090"))


def test_a_rocm_log_that_names_no_gpu_gets_the_rocm_index_not_the_cuda_ones(kb):
    """A HIP error shows AMD's stack at work even when no card is named: cu126/cu128 would install a CUDA build."""
    lines = _index_lines("RuntimeError: HIP error: invalid device function\n"
                         "HIP kernel errors might be asynchronously reported at some other API call\n", kb)
    assert lines and all("rocm" in line and "cu12" not in line for line in lines)


def test_an_old_driver_decides_the_index_even_when_the_log_names_no_gpu(kb):
    """No CUDA 12 wheel loads on a driver before 525, and no GPU that needs more than cu118 runs on one."""
    old = _CPU_TORCH + "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n"
    ancient = _CPU_TORCH + "| NVIDIA-SMI 418.56       Driver Version: 418.56       CUDA Version: 10.1     |\n"
    old_lines, ancient_lines = _index_lines(old, kb), _index_lines(ancient, kb)
    assert old_lines and all(line.endswith("whl/cu118") or "whl/cu118 " in line for line in old_lines)
    assert ancient_lines and all("update it first" in line for line in ancient_lines)


def test_an_unknown_gpu_is_shown_both_common_indexes_and_a_jetson_none(kb):
    assert any("<cu126; RTX 50 / Blackwell: cu128>" in line for line in _index_lines(_CPU_TORCH, kb))
    jetson = _index_lines(_CPU_TORCH, kb, "Jetson AGX Orin")
    assert jetson and all("download.pytorch.org" not in line for line in jetson)


_VLLM_MACHETE = ("NotImplementedError: Could not run '_C::machete_prepack_B' with arguments from the 'CUDA' backend. "
                 "This could be because the operator doesn't exist for this backend\n")


def _vllm_upgrade_lines(log, kb, gpu=None):
    return [line.strip() for line in _fix_text(log, kb, gpu).splitlines() if "install -U vllm" in line]


def test_the_vllm_upgrade_follows_the_driver_since_vllm_020_wheels_are_cuda_13(kb):
    """vLLM 0.20+ on PyPI is a CUDA 13.0 build (driver 580): an older or unknown driver gets uv's driver-aware install."""
    new = _VLLM_MACHETE + "| NVIDIA-SMI 580.65.06    Driver Version: 580.65.06    CUDA Version: 13.0     |\n"
    old = _VLLM_MACHETE + "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
    new_lines, old_lines, unknown_lines = (_vllm_upgrade_lines(log, kb, "RTX 3090") for log in (new, old, _VLLM_MACHETE))
    assert new_lines and all(line.startswith("pip install -U vllm") for line in new_lines)
    assert old_lines and all("--torch-backend=auto" in line for line in old_lines)
    assert unknown_lines and all("--torch-backend=auto" in line for line in unknown_lines)


def test_an_amd_gpu_is_given_vllms_rocm_wheels_not_the_cuda_build(kb):
    lines = _vllm_upgrade_lines(_VLLM_MACHETE, kb, "Radeon RX 7900 XTX")
    assert lines and all("wheels.vllm.ai/rocm" in line for line in lines)


def test_a_named_nvidia_gpu_outweighs_a_rocm_word_in_the_log_for_the_vllm_upgrade(kb):
    """The same rule as the PyTorch index (fixes._amd_stack): the GPU the user names decides, not a stray ROCm word."""
    lines = _vllm_upgrade_lines(_VLLM_MACHETE + "ROCm 6.2 is also installed on this box\n", kb, "RTX 3090")
    assert lines and all("--torch-backend=auto" in line and "rocm" not in line for line in lines)

"""Stage 5: evaluate fix conditions for this GPU and fill in the user's numbers.

A fix whose condition is false for this GPU is dropped. One whose condition depends
on something unknown (usually the GPU) is kept, marked `applies = None`, and the
renderers say which fact it depends on and how to find it out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cudalogs import conditions
from cudalogs.model import FLAG_FACTS, Entry, FixSpec, Fix, Gpu, GpuContext

GPU_FIELDS = ("gpu", "arch", "cc", "sm", "vendor", "family", "gfx", "tensor_cores", "smem_per_block",
              "memory_gb", "hsa_override")
# Read from the log as yes/no: no sign of a container (or of WSL, ROCm, ...) reads as False, never as unknown, so a
# condition's known() of one of these is always true (validation rejects it).
NEVER_UNKNOWN = ("container", "container_shell", *FLAG_FACTS)
ENV_FIELDS = ("os", *NEVER_UNKNOWN, "torch", "cuda", "driver", "vllm", "llamacpp_build",
              "koboldcpp", "llamafile")
UNKNOWN_TEXT = {
    "gpu": "<your GPU>",
    "cc": "<your compute capability, e.g. 8.6>",
    "arch": "<your compute capability without the dot, e.g. 86>",
    "sm": "sm_<your compute capability without the dot>",
    "gfx": "<your gfx target, e.g. gfx1030>",
    "hsa_override": "<the nearest supported gfx version, e.g. 10.3.0>",
    "torch_index": "https://download.pytorch.org/whl/<cu126; RTX 50 / Blackwell: cu128>",
}
FIND_OUT = "nvidia-smi --query-gpu=name,compute_cap --format=csv"
FIND_OUT_OLD_DRIVER = "nvidia-smi -L"  # compute_cap is a query field from driver 510 on; Kepler's last branch is 470
FIND_OUT_AMD = "rocminfo | grep gfx"
FIND_OUT_FALLBACK = f"{FIND_OUT} || {FIND_OUT_OLD_DRIVER}"
TEXT_FIELDS = ("find_gpu", "torch_index", "vllm_upgrade")  # filled from the context for fix text; no condition reads them
TORCH_WHEELS = "https://download.pytorch.org/whl/"
PLACEHOLDER = re.compile(r"\{(\w+)(?:\|([^{}|\n]*))?\}")  # {name} or {name|words said when name is unknown}


def environment(ctx: GpuContext, fields: Mapping[str, str], entry: Entry | None = None) -> dict[str, Any]:
    """The names a condition can read: GPU facts, versions, OS and the hit's captured fields.

    With `entry`, every field its signatures can capture is known to be unknown when not captured (another
    signature matched, or none did): it renders as "<name>", never as a raw "{name}".
    """
    gpu = ctx.gpu
    env: dict[str, Any] = {name: None for name in (*GPU_FIELDS, *ENV_FIELDS)}
    if entry is not None:
        env.update({name: None for sig in entry.signatures for name in _GROUP_NAME.findall(sig.pattern)})
    if gpu is not None:
        env.update(gpu=_spoken_name(gpu), arch=gpu.arch, cc=gpu.cc or None, sm=f"sm_{gpu.arch}" if gpu.arch else None,
                   vendor=gpu.vendor, family=gpu.family or None, gfx=gpu.gfx or None,
                   tensor_cores=gpu.tensor_cores, smem_per_block=gpu.smem_per_block,
                   memory_gb=gpu.memory_gb, hsa_override=gpu.hsa_override or None)
    env["os"] = ctx.os or None
    env.update({name: getattr(ctx, name) for name in NEVER_UNKNOWN})  # no sign in the log reads as False
    env.update(ctx.version_map)
    for key, value in fields.items():
        env[key] = int(value) if value.isdigit() else value
    env["find_gpu"] = how_to_find_gpu(ctx)
    env["torch_index"] = torch_index(ctx)
    env["vllm_upgrade"] = vllm_upgrade(ctx)
    return env


def _driver_major(ctx: GpuContext) -> int | None:
    """The NVIDIA driver branch the log shows (535 for "535.104.05"), or None."""
    parts = conditions.ver(ctx.version_map.get("driver") or "")
    return parts[0] if parts else None


def how_to_find_gpu(ctx: GpuContext) -> str:
    """The command a fix gives for "which GPU is this and what is its compute capability?" (`{find_gpu}`).

    `compute_cap` is a query field only from driver 510 on; older drivers (Kepler's last branch is 470) refuse the
    whole query. So a machine known to run an older driver, or a Kepler card, gets the plain list; one known to run
    510 or newer gets the query; and where the driver is unknown the query falls back to the list by itself.
    """
    major = _driver_major(ctx)
    kepler = ctx.gpu is not None and ctx.gpu.vendor == "nvidia" and ctx.gpu.family == "kepler"
    if kepler or (major is not None and major < 510):
        return FIND_OUT_OLD_DRIVER
    return FIND_OUT if major is not None else FIND_OUT_FALLBACK


_ROCM_INDEX_HINT = "<the ROCm index pytorch.org lists for your ROCm, e.g. https://download.pytorch.org/whl/rocm7.2>"


def torch_index(ctx: GpuContext) -> str | None:
    """The PyTorch wheel index whose builds hold machine code for this GPU and load on its driver (`{torch_index}`).

    "Reinstall the CUDA build of PyTorch" is the commonest fix in the KB, and the index is where it goes wrong: cu126
    wheels never hold sm_120 (an RTX 50 stays broken), cu128 wheels from torch 2.8 on hold no Maxwell or Pascal, and
    cu130 holds nothing below sm_75 and wants driver 580. So the index is derived here, once, from the GPU and the
    driver the log shows (facts: shared/reference/gpu_facts.md, C2-C3), instead of each entry pairing scoped fixes:
      - Kepler sm_37 (K80): cu118, the last variant with sm_37 (torch 2.7 at most); nothing current holds sm_30/35;
      - Maxwell to Hopper (5.0-9.0): cu126, which lists sm_50 to sm_90 in every release since 2.6 and loads on any
        CUDA 12 driver (525 on); a driver before 525 gets cu118 (450 on), and one before 450 nothing;
      - Blackwell (10.x, 12.x) and Jetson Thor (11.0): cu128 (torch >= 2.7), or cu130 where the driver is 580 or
        newer; GB10 (12.1) and Thor ship with CUDA 13 drivers and aarch64 builds, so cu130. cu128 left the release
        matrix at 2.12, so on a driver before 580 that index serves torch 2.7-2.11 (current torch needs the driver);
      - Jetson Orin and older: NVIDIA's JetPack builds (download.pytorch.org has none for them);
      - AMD: the ROCm index matching the installed ROCm, also where no GPU is named but the log shows the ROCm/HIP
        stack at work (a HIP error, gfx targets: the `rocm` fact), since the CUDA indexes are no choice there;
      - Intel: the xpu index.
    Where the GPU is unknown, a driver before 525 still decides it (no CUDA 12 wheel loads there, and no GPU that
    needs more than cu118 runs on such a driver); otherwise None, and the fix shows the two common choices.
    """
    gpu = ctx.gpu
    driver = _driver_major(ctx)
    if _amd_stack(ctx):
        return _ROCM_INDEX_HINT
    if gpu is None or not gpu.vendor:
        return _index_for_old_driver(driver)
    if gpu.vendor == "intel":
        return f"{TORCH_WHEELS}xpu"
    arch = gpu.arch
    if gpu.vendor != "nvidia" or arch is None:
        return None
    if gpu.segment == "jetson" and arch < 100:
        return "<NVIDIA's PyTorch wheel for your JetPack release: https://developer.download.nvidia.com/compute/redist/jp/>"
    if arch >= 100:
        cuda13 = arch in (110, 121) or (driver is not None and driver >= 580)
        return f"{TORCH_WHEELS}{'cu130' if cuda13 else 'cu128'}"
    if arch < 37:
        return f"<none: no current PyTorch wheel holds sm_{arch}; build PyTorch from source>"
    old_driver = _index_for_old_driver(driver)
    if old_driver:
        return old_driver
    return f"{TORCH_WHEELS}{'cu118' if arch < 50 else 'cu126'}"


def _amd_stack(ctx: GpuContext) -> bool:
    """Whether the user's GPU runs AMD's stack: an AMD GPU, or none named while the log shows ROCm/HIP at work (the
    `rocm` fact). A named NVIDIA or Intel GPU wins over the fact. One rule for every install command derived here."""
    gpu = ctx.gpu
    if gpu is not None and gpu.vendor:
        return gpu.vendor == "amd"
    return ctx.rocm


def _index_for_old_driver(driver: int | None) -> str | None:
    """The index a driver older than CUDA 12's floor (525) leaves, whatever the GPU: cu118 from 450, none before."""
    if driver is None or driver >= 525:
        return None
    if driver < 450:
        return "<none for this driver: update it first (every current PyTorch CUDA wheel needs 450 or newer)>"
    return f"{TORCH_WHEELS}cu118"


VLLM_UPGRADE = "pip install -U vllm"
VLLM_UPGRADE_ANY_DRIVER = "uv pip install -U vllm --torch-backend=auto"
VLLM_UPGRADE_ROCM = "uv pip install -U vllm --extra-index-url https://wheels.vllm.ai/rocm/"


def vllm_upgrade(ctx: GpuContext) -> str:
    """The command a fix gives to move to a newer vLLM (`{vllm_upgrade}`).

    vLLM 0.20 switched its default PyPI wheel to CUDA 13.0 (release notes: "Default CUDA wheel on PyPI ... switched
    to CUDA 13.0"), whose PyTorch wants driver 580: a plain `pip install -U vllm` on an older driver trades the user's
    error for "driver too old". vLLM's own install docs give `uv pip install vllm --torch-backend=auto`, where uv picks
    the PyTorch build the installed driver runs; that is the command unless the log shows driver 580 or newer. AMD
    GPUs (or a log showing ROCm at work, `_amd_stack`) get vLLM's ROCm wheel index instead, since the PyPI wheel is a
    CUDA build.
    """
    if _amd_stack(ctx):
        return VLLM_UPGRADE_ROCM
    major = _driver_major(ctx)
    return VLLM_UPGRADE if major is not None and major >= 580 else VLLM_UPGRADE_ANY_DRIVER


_GROUP_NAME = re.compile(r"\(\?P<(\w+)>")


def _spoken_name(gpu: Gpu) -> str:
    """How {gpu} reads in a sentence. A GPU known only by its capability (from --cc, or a log line such as "your
    device is of CUDA capability 6.1") is named "compute capability 6.1" in the catalog; in a title or a fix that
    reads as "compute capability 6.1 is too old", so it is said as "your GPU (compute capability 6.1)"."""
    return gpu.name if gpu.named else f"your GPU ({gpu.name})"


def render(template: str, env: Mapping[str, Any], marker: str = "") -> str:
    """Fill `{name}` placeholders; unknown values become a readable hint (or `marker`-wrapped names), other braces
    stay. `{name|words}` says `words` instead of a hint when the value is unknown, so a sentence reads whole
    either way ("asked for {requested|some} more memory"): a bare "<requested>" in prose reads like a template."""

    def fill(m: re.Match[str]) -> str:
        key, fallback = m.group(1), m.group(2)
        if key not in env:
            return m.group(0)  # literal braces in code, e.g. a dict in a Python snippet
        value = env[key]
        if value is None or value == "":
            if fallback is not None:
                return fallback
            return f"{marker}{key}{marker}" if marker else UNKNOWN_TEXT.get(key, f"<{key}>")
        return str(value)

    return PLACEHOLDER.sub(fill, template)


_MARK = "\x00"
_PAREN_WITH_UNKNOWN = re.compile(r"\s*\([^()\x00]*\x00[^()]*\)")
_CLAUSE_WITH_UNKNOWN = re.compile(r";[^;\x00]*\x00.*$")


def render_title(template: str, env: Mapping[str, Any]) -> str:
    """A title reads as a headline: an aside that would only say "<requested>" is left out ("CUDA out of memory
    (tried to allocate <requested>)" -> "CUDA out of memory"), and so is a trailing "; ..." clause about an unknown
    value; an unknown value elsewhere keeps its readable hint, as in render(). A value captured across a wrapped
    line ("NVIDIA GeFor" / "ce GTX 1060") is kept on one line: a headline has none."""
    marked = " ".join(render(template, env, marker=_MARK).split())
    tidy = _CLAUSE_WITH_UNKNOWN.sub("", _PAREN_WITH_UNKNOWN.sub("", marked)).strip()
    return re.sub(f"{_MARK}(\\w+){_MARK}", lambda m: UNKNOWN_TEXT.get(m.group(1), f"<{m.group(1)}>"), tidy)


def applicable(specs: Iterable[FixSpec], env: Mapping[str, Any], log_has: Callable[[str], bool] | None = None) -> list[Fix]:
    """The fixes whose condition holds (applies=True) or cannot be decided (applies=None)."""
    out = []
    for spec in specs:
        verdict = conditions.evaluate(spec.when, env, log_has)
        if verdict is False:
            continue
        applies = None if verdict is conditions.UNKNOWN else True
        out.append(Fix(title=render(spec.title, env), steps=render(spec.steps, env), cost=render(spec.cost, env),
                       applies=applies, condition=spec.when))
    return out

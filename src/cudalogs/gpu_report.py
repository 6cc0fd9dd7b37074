"""`cudalogs gpu NAME`: a GPU's profile and what the knowledge base knows about it.

Which features it lacks (from data/features.toml, each with its source), and which KB
entries single it out (one of their conditions is true for this GPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cudalogs import conditions
from cudalogs.conditions import cc as cc_to_arch
from cudalogs.fixes import environment
from cudalogs.kb.index import conditions_of
from cudalogs.knowledge import KnowledgeBase
from cudalogs.model import Gpu, GpuContext

_TENSOR_CORE_FEATURES = {"fp16-tensor-cores", "int8-tensor-cores"}


@dataclass(frozen=True)
class GpuProfile:
    gpu: Gpu
    lacks: tuple[dict[str, Any], ...]
    has: tuple[str, ...]
    entries: tuple[tuple[str, str, str], ...]  # id, class, title

    def to_dict(self) -> dict[str, Any]:
        g = self.gpu
        return {
            "name": g.name, "vendor": g.vendor, "family": g.family or None, "compute_capability": g.cc or None,
            "gfx": g.gfx or None, "memory_gb": g.memory_gb, "smem_per_block": g.smem_per_block,
            "tensor_cores": g.tensor_cores, "hsa_override": g.hsa_override or None,
            "lacks": [{"id": f["id"], "name": f["name"], "needs": needs(f), "source": f.get("source")} for f in self.lacks],
            "has": list(self.has),
            "entries": [{"id": i, "class": c, "title": t} for i, c, t in self.entries],
        }


def profile(gpu: Gpu, kb: KnowledgeBase) -> GpuProfile:
    lacks, has = [], []
    for feature in kb.features if gpu.vendor == "nvidia" and gpu.arch else []:
        (has if supports(gpu, feature) else lacks).append(feature)
    env = environment(GpuContext(gpu=gpu, source="flag"), {})
    entries = tuple((e.id, e.cls, e.title) for e in kb.entries
                    if any(conditions.evaluate(c, env) is True for c in conditions_of(e)))
    return GpuProfile(gpu, tuple(lacks), tuple(f["id"] for f in has), entries)


def supports(gpu: Gpu, feature: dict[str, Any]) -> bool:
    """Whether an NVIDIA GPU has a data/features.toml feature (its capability range; tensor cores where it needs them)."""
    arch = gpu.arch or 0
    if arch < cc_to_arch(feature["min_cc"]):
        return False
    if feature.get("max_cc") and arch > cc_to_arch(feature["max_cc"]):
        return False
    return not (feature["id"] in _TENSOR_CORE_FEATURES and gpu.tensor_cores is False)


def needs(feature: dict[str, Any]) -> str:
    return f"compute capability {feature['min_cc']}" + (f" to {feature['max_cc']}" if feature.get("max_cc") else "")


def text(p: GpuProfile) -> str:
    g = p.gpu
    head = f"{g.name}: {g.vendor.upper()} {g.family or ''}".rstrip()
    facts = [f"compute capability {g.cc}" if g.cc else "", g.gfx, f"{g.memory_gb:g} GB" if g.memory_gb else "",
             f"shared memory per block {g.smem_per_block} bytes" if g.smem_per_block else "",
             "no tensor cores" if g.tensor_cores is False else "",
             f"HSA_OVERRIDE_GFX_VERSION={g.hsa_override}" if g.hsa_override else ""]
    out = [head, "  " + ", ".join(f for f in facts if f)]
    if p.lacks:
        out += ["", "Lacks:"] + [f"  {f['name']} (needs {needs(f)})" for f in p.lacks]
    if p.entries:
        out += ["", "Knowledge-base entries that single it out:"] + [f"  {i}  [{c}]  {t}" for i, c, t in p.entries]
    return "\n".join(out) + "\n"

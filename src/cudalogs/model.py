"""Frozen values passed between the pipeline's stages.

Every stage takes and returns these plain dataclasses, so that each stage can be
tested on its own and nothing downstream can change what an earlier stage saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Line:
    """One line of the user's log: `no` is 1-based, `text` has ANSI codes and CR removed."""

    no: int
    text: str


@dataclass(frozen=True)
class Signature:
    """A regex that identifies an entry's message; `window` > 1 lets it span lines."""

    pattern: str
    name: str = ""
    window: int = 1
    literals: tuple[str, ...] | None = None  # the entry's own `literal`, else precomputed by `kb build`
    # (see signatures.prefilter_literals); None: work them out when the KB is loaded


@dataclass(frozen=True)
class ContextPattern:
    """A pattern anywhere in the log that raises (weight > 0) or lowers confidence."""

    pattern: str
    weight: float
    when: str = ""  # instead of a pattern, a condition (e.g. "vendor == 'amd' or rocm": a fact defined once)


@dataclass(frozen=True)
class FixSpec:
    """A fix as written in the KB: a template, with the condition under which it applies."""

    title: str
    steps: str = ""
    cost: str = ""
    when: str = ""


@dataclass(frozen=True)
class Variant:
    """An alternative reading of an entry's message, chosen by a condition on fields and GPU."""

    when: str
    cls: str = ""
    title: str = ""
    root_cause: str = ""
    fixes: tuple[FixSpec, ...] = ()
    replace_fixes: bool = False  # the variant's fixes replace the entry's instead of preceding them


@dataclass(frozen=True)
class Example:
    """A verbatim real log from a public thread that the entry must match."""

    log: str
    source: str
    gpu: str = ""
    cls: str = ""
    expect: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Entry:
    """One KB signature file, loaded and checked."""

    id: str
    cls: str
    title: str
    status: str
    family: str
    root_cause: str
    signatures: tuple[Signature, ...]
    fixes: tuple[FixSpec, ...]
    references: tuple[str, ...]
    examples: tuple[Example, ...]
    severity: str = "fatal"
    specificity: int = 3
    context: tuple[ContextPattern, ...] = ()
    variants: tuple[Variant, ...] = ()
    near_misses: tuple[str, ...] = ()
    false_positives: str = ""
    quiet_when: str = ""  # a condition under which a hit is not a fault (a known-harmless context): no diagnosis
    path: str = ""


@dataclass(frozen=True)
class Hit:
    """A signature match: which entry, where, and the named fields it captured."""

    entry_id: str
    line_no: int
    text: str
    fields: tuple[tuple[str, str], ...] = ()
    end_line: int = 0

    @property
    def field_map(self) -> dict[str, str]:
        return dict(self.fields)


CAPABILITY_ONLY = "compute capability "  # the name of a GPU known only by its capability: "compute capability 7.5"


@dataclass(frozen=True)
class Gpu:
    """A GPU model from the catalog (or built from a bare compute capability)."""

    name: str
    vendor: str
    family: str = ""
    cc: str = ""
    gfx: str = ""
    memory_gb: float | None = None
    segment: str = ""
    tensor_cores: bool | None = None
    smem_per_block: int | None = None
    hsa_override: str = ""

    @property
    def arch(self) -> int | None:
        """Compute capability as an integer (7.5 -> 75), the scale KB conditions use."""
        if not self.cc:
            return None
        major, _, minor = self.cc.partition(".")
        return int(major) * 10 + int(minor or 0)

    @property
    def named(self) -> bool:
        """Whether this is a model, not a GPU known only by its capability (Catalog.from_cc, `--cc`, a log line that
        states only the capability): such a sighting yields to a named one, and is spoken of as "your GPU"."""
        return not self.name.startswith(CAPABILITY_ONLY)


# GpuContext's yes/no facts -> the data/log_facts.toml table that reads each one. A new fact is a table there, a
# field below and a line here: the reading (gpu.context) and the condition name (fixes.environment) follow from this.
FLAG_FACTS = {"wsl": "wsl", "rocm": "rocm", "paging_file_too_small": "paging_file", "hip_sdk_missing": "hip_sdk_missing"}


@dataclass(frozen=True)
class GpuContext:
    """The GPU a diagnosis is about, and where we learned it."""

    gpu: Gpu | None = None
    source: str = "unknown"  # "log" | "flag" | "unknown"
    line_no: int | None = None
    evidence: str = ""
    others: tuple[str, ...] = ()
    versions: tuple[tuple[str, str], ...] = ()
    os: str = ""
    container: bool = False  # the log shows the program running in a container (data/log_facts.toml [[container]])
    container_shell: bool = False  # ... and its own lines come from inside it (a container's prompt or compose prefix)
    # yes/no facts, each read by one data/log_facts.toml table (FLAG_FACTS) and never unknown:
    wsl: bool = False  # the log shows Windows' WSL2 (its kernel, its driver library path)
    rocm: bool = False  # the log shows AMD's ROCm/HIP stack at work (its runtime, libraries, gfx targets)
    paging_file_too_small: bool = False  # Windows ran out of virtual memory loading a DLL (error 1455)
    hip_sdk_missing: bool = False  # a Windows AMD launcher found AMD's HIP SDK absent or without its own DLLs

    @property
    def version_map(self) -> dict[str, str]:
        return dict(self.versions)


@dataclass(frozen=True)
class Evidence:
    line_no: int
    text: str


@dataclass(frozen=True)
class Fix:
    """A fix rendered for this GPU; `applies` is None when it depends on an unknown fact."""

    title: str
    steps: str
    cost: str
    applies: bool | None = True
    condition: str = ""


@dataclass(frozen=True)
class Diagnosis:
    id: str
    cls: str
    title: str
    status: str
    confidence: float
    evidence: tuple[Evidence, ...]
    root_cause: str
    fixes: tuple[Fix, ...]
    references: tuple[str, ...]
    fields: tuple[tuple[str, str], ...] = ()
    why_ranked: str = ""


@dataclass(frozen=True)
class InputSummary:
    lines: int
    bytes: int
    truncated: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hint:
    """A feature the user's GPU lacks that the log mentions: a pointer for a log nothing else explained."""

    feature: str  # data/features.toml id
    name: str
    needs: str  # "compute capability 8.0"
    line_no: int
    text: str  # the line that mentions it
    entries: tuple[str, ...] = ()  # KB entries about this feature failing


@dataclass(frozen=True)
class Report:
    """What `explain` returns; `to_dict()` is exactly the `--format json` document."""

    gpu: GpuContext
    diagnoses: tuple[Diagnosis, ...]
    input: InputSummary
    message: str = ""
    related: tuple[tuple[str, str, float], ...] = ()
    hints: tuple[Hint, ...] = ()
    schema_version: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        from cudalogs.render import to_dict

        return to_dict(self)

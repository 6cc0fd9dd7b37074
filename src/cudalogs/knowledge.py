"""The loaded knowledge: entries with compiled signatures, the GPU catalog, the log-fact patterns.

Loaded once per process (`load_kb()` caches the shipped bundle); tests and `kb validate`
build their own from a source tree with `KnowledgeBase.from_bundle(bundle.build(...))`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cudalogs.catalog import Catalog
from cudalogs.gpu import LogFacts
from cudalogs.kb import bundle as kb_bundle
from cudalogs.kb.load import entry_from_dict, signature_from_dict
from cudalogs.model import Entry
from cudalogs.signatures import SignatureList, compile_signatures

PREFILTER_WORDS = ("capability", "gpu", "cuda", "nvidia", "error", "rocm", "hip", "device")


class EntryIndex(Mapping[str, Entry]):
    """Entry id -> Entry, each built from the bundle's dict the first time it is asked for.

    Why: explain reads a few entries (those whose signatures matched, a few nearest ones for the classifier) of
    hundreds; building every one (fixes, variants, examples) cost more start-up than the whole scan of a 50 KB log.
    """

    def __init__(self, raws: list[dict[str, Any]]) -> None:
        self._raw = {raw["id"]: raw for raw in raws}
        self._built: dict[str, Entry] = {}

    def __getitem__(self, entry_id: str) -> Entry:
        entry = self._built.get(entry_id)
        if entry is None:
            raw = self._raw[entry_id]
            entry = self._built[entry_id] = entry_from_dict(raw, raw.get("_path", ""))
        return entry

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def cls_of(self, entry_id: str) -> str:
        """An entry's class without building it (the classifier's nearest-entry search reads many)."""
        return self._raw[entry_id]["class"]

    def raw(self) -> Iterator[dict[str, Any]]:
        """The entries as the bundle holds them, in order (no Entry built)."""
        return iter(self._raw.values())


@dataclass
class KnowledgeBase:
    by_id: EntryIndex
    taxonomy: dict[str, dict[str, Any]]
    catalog: Catalog
    facts: LogFacts
    features: list[dict[str, Any]] = field(default_factory=list)
    _data: dict[str, Any] = field(default_factory=dict, repr=False)
    _digest: str = ""
    _compiled: SignatureList | None = None
    _prefilter_words: tuple[str, ...] | None = None

    @classmethod
    def from_bundle(cls, data: dict[str, Any]) -> "KnowledgeBase":
        catalog = Catalog.from_data(data.get("gpus", []), data.get("archs", []), data.get("gfx", []))
        kb = cls(EntryIndex(data["entries"]), data.get("taxonomy", {}), catalog, LogFacts.from_data(data.get("log_facts", {})))
        kb.features = list(data.get("features", []))
        kb._data = data
        return kb

    @property
    def entries(self) -> list[Entry]:
        """Every entry, in the bundle's order (builds them all: for kb show, search, training, tests)."""
        return list(self.by_id.values())

    @cached_property
    def explains(self) -> dict[str, frozenset[str]]:
        """Class -> the classes it causes as knock-on failures (kb/taxonomy.toml `explains`): ranking puts it first."""
        return {cls: frozenset(info.get("explains", ())) for cls, info in self.taxonomy.items() if info.get("explains")}

    @property
    def compiled(self) -> SignatureList:
        """Signatures compiled on first use (validate reports bad patterns before this runs)."""
        if self._compiled is None:
            self._compiled = compile_signatures((raw["id"], [signature_from_dict(sig) for sig in raw["signatures"]])
                                                for raw in self.by_id.raw())
        return self._compiled


    @property
    def digest(self) -> str:
        """A short content hash: names the search database built for this knowledge base."""
        if not self._digest:
            import hashlib  # only search and the server need the digest: kept off explain's start-up

            self._digest = hashlib.sha256(kb_bundle.dumps(self._data).encode()).hexdigest()[:16]
        return self._digest

    @property
    def prefilter_words(self) -> tuple[str, ...]:
        """Lowercase text one of which every line that can matter holds: which lines of a huge log to keep.

        The signatures' literals plus GPU words, minus any literal that holds a shorter one (a line holding
        "cuda error: out of memory" holds "cuda"): fewer words, fewer scans, the same lines kept.
        """
        if self._prefilter_words is None:
            words = sorted({literal for s in self.compiled for literal in s.literals} | set(PREFILTER_WORDS), key=len)
            kept: list[str] = []
            for word in words:
                if not any(shorter in word for shorter in kept):
                    kept.append(word)
            self._prefilter_words = tuple(kept)
        return self._prefilter_words


def load_kb(path: Path | None = None, *, examples: bool = True) -> KnowledgeBase:
    """The shipped knowledge base (or another bundle file), loaded once per process.

    `examples=False` leaves the entries' example logs unread: what `explain` loads (it never shows them). Once the
    whole KB is loaded, it serves both.
    """
    path = path or kb_bundle.BUNDLE_PATH
    kb = _loaded.get((path, True)) or _loaded.get((path, examples))
    if kb is None:
        kb = _loaded[(path, examples)] = KnowledgeBase.from_bundle(kb_bundle.read(path, examples=examples))
    return kb


_loaded: dict[tuple[Path, bool], KnowledgeBase] = {}  # (bundle path, with examples) -> the knowledge base

"""Stage 3: which GPU the log is about (or the one given with --gpu / --cc), and the versions seen.

Why "strongest report wins": a log can name several GPUs (nvidia-smi lists all of them,
a user's words mention the card they wish they had). The device's own report of itself
("Device 0: ..., compute capability 8.6", "Your Tesla T4 GPU has compute capability 7.5")
is worth more than a listing, and a listing more than a bare name in prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cudalogs.catalog import BARE_MODEL, Catalog
from cudalogs.errors import UnknownGpuError
from cudalogs.logtext import LogText
from cudalogs.model import FLAG_FACTS, Gpu, GpuContext, Line
from cudalogs.normalize import strip_prefix
from cudalogs.signatures import branch_literals, required_literal

_CC_TEXT = re.compile(r"^(?:sm_?|compute_)?(\d{1,3})(?:\.(\d))?$", re.IGNORECASE)
_GFX_TEXT = re.compile(r"^gfx[0-9a-f]{3,4}$", re.IGNORECASE)
_MENTION_STRENGTH = 1
# A whole generation named ("RTX 50 series", "an Ampere (RTX 30xx) or newer GPU is required"): weaker than any model
# or capability the log names, which may be the user's card inside that generation, or below the one required.
SERIES = "series"
_SERIES_STRENGTH = 0
_REQUIREMENT_WORDS = r"\b(?:or|and) (?:newer|later|above|higher|greater|up)\b|\brequired?\b|\bat least\b|\bminimum\b"
_REQUIREMENT = re.compile("(?i)" + _REQUIREMENT_WORDS)
# A line that states what is needed rather than what the device is: a capability written alone on it is a threshold
# ("requires compute capability 7.0", "GPUs below compute capability 7.5 are not supported", ">= 8.0"). Wider than
# _REQUIREMENT, which guards a generation's name ("RTX 50 series GPUs" is the user's generation there).
_STATED_REQUIREMENT = re.compile(
    "(?i)" + _REQUIREMENT_WORDS + r"|\brequires\b|\bneeds?\b|\b(?:below|under|less than|lower than|greater than|higher than|above)\b"
    r"|>=|≥|\bsupports? only\b|\bonly supports?\b|\bsupported for\b|\bmake sure\b"
    r"|\bgpus\b")  # "GPUs with compute capability 8.9": a class of cards, not the user's
_WEAK = 2  # at most this strong: a name or capability in a user's own words, not a device's report


@dataclass
class _LazyPattern:
    """A log-fact pattern compiled on first use (most never are: their literal is absent)."""

    source: str
    strength: int
    literal: str
    not_in_requirement: bool = False  # a bare capability: skipped on a line that states a requirement
    unless: str = ""  # a regex: where the log holds a match, what this pattern reads is not the device (see reads_log)
    _compiled: "re.Pattern[str] | None" = None

    def reads(self, text: str) -> bool:
        """Whether this pattern may be tried on `text` (a bare capability is not read on a requirement's line)."""
        return not (self.not_in_requirement and _STATED_REQUIREMENT.search(text))

    def reads_log(self, log: LogText) -> bool:
        """Whether a match counts in this log: a weak reading of a build's target as the device is void where the log
        shows the target came from elsewhere (an arch list the user set, CMake probing its default arch)."""
        return not (self.unless and re.search(self.unless, log.text, re.IGNORECASE))

    @property
    def pattern(self) -> "re.Pattern[str]":
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def for_log(self, log: LogText) -> "re.Pattern[str]":
        """The pattern, ignoring case for a log that arrived lowercased (as signatures do)."""
        return _folded(self.pattern) if log.case_folded else self.pattern


def _folded(pattern: "re.Pattern[str]") -> "re.Pattern[str]":
    return re.compile(pattern.pattern, pattern.flags | re.IGNORECASE)  # re's own cache keeps this cheap


@dataclass(frozen=True)
class LogFacts:
    """Patterns from data/log_facts.toml (project data, so the stdlib `re` is enough here)."""

    gpu: tuple[_LazyPattern, ...]
    versions: tuple[tuple[str, "re.Pattern[str]"], ...]
    os: tuple[tuple[str, "re.Pattern[str]", tuple[str, ...]], ...]  # name, pattern, any-of literal prefilter
    container: tuple[tuple[str, "re.Pattern[str]", tuple[str, ...]], ...] = ()  # the same form: signs of a container
    # the same form, one table per yes/no fact (model.FLAG_FACTS: [[wsl]], [[rocm]], [[paging_file]])
    flags: tuple[tuple[str, tuple[tuple[str, "re.Pattern[str]", tuple[str, ...]], ...]], ...] = ()

    @classmethod
    def from_data(cls, raw: dict[str, Any]) -> "LogFacts":
        return cls(
            gpu=tuple(_LazyPattern(g["pattern"], int(g.get("strength", 3)), fact_literal(g),
                                   bool(g.get("not_in_requirement", False)), str(g.get("unless", "")))
                      for g in raw.get("gpu", [])),
            versions=tuple((v["name"], re.compile(v["pattern"])) for v in raw.get("version", [])),
            os=_named_patterns(raw.get("os", [])),
            container=_named_patterns(raw.get("container", [])),
            flags=tuple((table, _named_patterns(raw.get(table, []))) for table in FLAG_FACTS.values()),
        )


def _named_patterns(raw: list[dict[str, Any]]) -> tuple[tuple[str, "re.Pattern[str]", tuple[str, ...]], ...]:
    """[[os]] / [[container]] / [[wsl]] / [[rocm]] / [[paging_file]] tables: each name with its pattern and the
    literals that rule a text out unscanned."""
    return tuple((o["name"], re.compile(o["pattern"]), branch_literals(o["pattern"])) for o in raw)


def fact_literal(raw: dict[str, Any]) -> str:
    """What every match of a [[gpu]] log-fact pattern contains, lowercase: only lines holding it are tried. The
    author's own `literal` wins where the pattern's alternations hide it from required_literal (the bundle stores
    this, so start-up parses no pattern)."""
    given = raw.get("literal")
    return given.lower() if isinstance(given, str) else required_literal(raw["pattern"])


@dataclass(frozen=True)
class _Sighting:
    gpu: Gpu
    strength: int
    line: Line


def resolve(name: str | None, cc: str | None, catalog: Catalog) -> Gpu | None:
    """The GPU the user named on the command line; raises UnknownGpuError with suggestions."""
    if cc:
        m = _CC_TEXT.match(cc.strip())
        if not m:
            raise UnknownGpuError(cc, [])
        cc_text = _cc_from_match(m)
        base = catalog.lookup(name) if name else None
        return catalog.with_cc(base, cc_text) if base else catalog.from_cc(cc_text, name or "")
    if not name:
        return None
    gpu = catalog.lookup(name) or catalog.find_in(name)
    if gpu:
        return gpu
    if _GFX_TEXT.match(name.strip()):
        return catalog.from_gfx(name.strip().lower())
    m = _CC_TEXT.match(name.strip())
    if m and (m.group(2) is not None or name.lower().startswith(("sm", "compute"))):
        return catalog.from_cc(_cc_from_match(m))
    raise UnknownGpuError(name, catalog.suggest(name))


def _cc_from_match(m: re.Match[str]) -> str:
    if m.group(2) is not None:
        return f"{int(m.group(1))}.{m.group(2)}"
    digits = m.group(1)  # sm notation: "86" -> 8.6, "120" -> 12.0
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) > 1 else f"{digits}.0"


def context(lines: Sequence[Line] | LogText, catalog: Catalog, facts: LogFacts,
            override: Gpu | None = None) -> GpuContext:
    """The GPU context for a report: --gpu wins; else the strongest sighting in the log."""
    log = LogText.of(lines)
    sightings = _sightings(log, catalog, facts)
    sign = _first_named(log, facts.container)  # "shell" (the log's lines come from inside one), "named" or ""
    environment: dict[str, Any] = dict(versions=_versions(log, facts), os=_first_named(log, facts.os),
                                      container=bool(sign), container_shell=sign == "shell",
                                      **_flags(log, facts))
    others = tuple(dict.fromkeys(s.gpu.name for s in sightings))
    if override is not None:
        return GpuContext(override, "flag", others=tuple(o for o in others if o != override.name), **environment)
    if not sightings:
        return GpuContext(None, "unknown", **environment)
    best = _merge_best(sightings, catalog)
    # a capability-only sighting with the chosen GPU's capability is the same device, not another one
    same = {s.gpu.name for s in sightings if not s.gpu.named and s.gpu.cc == best.gpu.cc}
    return GpuContext(best.gpu, "log", best.line.no, best.line.text.strip()[:300],
                      others=tuple(o for o in others if o != best.gpu.name and o not in same), **environment)


def _sightings(log: LogText, catalog: Catalog, facts: LogFacts) -> list[_Sighting]:
    """Sightings in line order: a device's report of itself, else a line naming exactly one catalog GPU."""
    by_line: dict[int, list[_Sighting]] = {}
    for fact in facts.gpu:
        for i in log.lines_with(fact.literal) if fact.literal else range(len(log)):
            if not fact.reads(log.lines[i].text):
                continue
            m = fact.for_log(log).search(log.lines[i].text)
            gpu = _gpu_from_match(m.groupdict(), catalog) if m and fact.reads_log(log) else None
            if gpu is not None:
                by_line.setdefault(i, []).append(_Sighting(gpu, fact.strength, log.lines[i]))
    # a line whose report names the card is read no further; one that gives only a capability ("GPU NVIDIA RTX A2000
    # 6GB  ComputeCapability: '8.6'") may name it in words, and _merge_best borrows that name when the capability agrees
    reported = {i for i, found in by_line.items() if any(s.strength > _WEAK and s.gpu.named for s in found)}
    lists: set[int] = set()
    for i in log.lines_matching(catalog.mention_pattern()) - reported:
        mentioned = catalog.mentions(log.lines[i].text)
        models = [g for g, _s, _o in mentioned if g.segment != SERIES] or [g for g, _s, _o in mentioned]
        names = {g.name for g in models}
        if len(names) > 1 and len({(g.vendor, g.cc) for g in models}) == 1 and models[0].cc:
            names = {models[0].name}  # variants of one chip ("V100S ... V100", "A100 / A800"): one capability
        if len(names) != 1:  # a list of several models is not a sighting
            if names:
                lists.add(i)
            continue
        if models[0].segment != SERIES:
            by_line.setdefault(i, []).append(_Sighting(models[0], _MENTION_STRENGTH, log.lines[i]))
        elif not _states_requirement(log, i):
            by_line.setdefault(i, []).append(_Sighting(models[0], _SERIES_STRENGTH, log.lines[i]))
    if all(s.strength <= _WEAK for found in by_line.values() for s in found):
        # nothing, or only words ("my GPU has compute capability 7.5"): a device report may be wrapped in two
        for i, found in _wrapped_sightings(log, catalog, facts).items():
            by_line.setdefault(i, []).extend(found)
    if all(s.strength <= _MENTION_STRENGTH for found in by_line.values() for s in found):
        # no device report: a bare model number beside a card word or "my" ("my 5080") is the user's own card, as
        # good as a name they write ("Found this issue on my 5080 ... misdetected as (sm100/B200)": the earlier wins)
        for i in sorted(log.lines_matching(BARE_MODEL) - lists):  # nor is a bare number beside such a list
            named = catalog.bare_models(log.lines[i].text)
            if len({g.name for g, _s, _o in named}) == 1 and all(s.strength < _MENTION_STRENGTH or not s.gpu.named
                                                                 for s in by_line.get(i, [])):
                # beside a capability the same words state ("GPU 3060, GPU computing power is 8.6"), the name wins
                kept = [s for s in by_line.get(i, []) if s.strength >= _MENTION_STRENGTH]
                by_line[i] = kept + [_Sighting(named[0][0], _MENTION_STRENGTH, log.lines[i])]
    if not by_line:
        by_line = _bare_gfx_sighting(log, catalog)
    sightings = [s for i in sorted(by_line) for s in by_line[i]]
    return _amd_capabilities(sightings, log, catalog)


def _amd_capabilities(sightings: list[_Sighting], log: LogText, catalog: Catalog) -> list[_Sighting]:
    """A capability-only sighting that is the HIP version of the one AMD target the log names is that AMD device.

    Why: HIP reports an AMD GPU's "compute capability" as its target's version (gfx1201 -> 12.0, gfx942 -> 9.4), and
    PyTorch on ROCm and AMD's own tools print it ("AMD Radeon Graphics gfx1201 ... compute capability 12.0"); read
    as NVIDIA's, 12.0 would be a Blackwell card and every fix would be for the wrong vendor.
    """
    if all(s.gpu.named for s in sightings):
        return sightings
    targets = _named_targets(log, catalog)
    if len(targets) != 1:
        return sightings
    (gfx,) = targets
    device = next((s.gpu for s in sightings if s.gpu.named and s.gpu.gfx == gfx), None) or catalog.from_gfx(gfx)
    return [_Sighting(device, s.strength, s.line) if not s.gpu.named and s.gpu.cc == hip_version(gfx) else s
            for s in sightings]


def hip_version(gfx: str) -> str:
    """The "major.minor" HIP reports for an AMD target: gfx1201 -> "12.0", gfx90a -> "9.0", gfx1030 -> "10.3"."""
    digits = gfx.lower().removeprefix("gfx")
    return f"{int(digits[:-2])}.{int(digits[-2], 16)}"


# not "gfx908_metadata.tn.model", nor "non-gfx942" (every other target)
_GFX = re.compile(r"(?i)(?<![A-Za-z0-9_])(?<!non-)gfx([0-9][0-9a-f]{2,3})(?![0-9a-z_])")


def _states_requirement(log: LogText, i: int) -> bool:
    """Whether line `i` is part of a sentence that states what is needed ("at least", "or newer", "required"): the
    line itself, or the line before it when a paste wrapped the sentence (RELION's note ends one line with "needs at
    least NVIDIA" and names "gfx906" on the next, past a blank line; 3dem/relion#1056). A generation or a bare
    target named there is the requirement, not the user's GPU."""
    before = next((line.text for line in reversed(log.lines[max(0, i - 3):i]) if line.text.strip()), "")
    return bool(_REQUIREMENT.search(log.lines[i].text) or _REQUIREMENT.search(before))


def _bare_gfx_sighting(log: LogText, catalog: Catalog) -> dict[int, list[_Sighting]]:
    """An AMD target named alone in a log that names no GPU otherwise ("The GPU (gfx1031) is not supported",
    "GFX1103 fails"): the user's card, but only when it is the one target the whole log names (a list of
    supported targets, "gfx900 gfx906 gfx1030", names none), and not in a sentence that states a minimum ("needs at
    least NVIDIA GPUs with compute 5.0 or AMD MI GPUs with architecture gfx906", RELION's error note)."""
    seen = _named_targets(log, catalog)
    if len(seen) != 1:
        return {}
    (gfx, i), = seen.items()
    if _states_requirement(log, i):
        return {}
    return {i: [_Sighting(catalog.from_gfx(gfx), _MENTION_STRENGTH, log.lines[i])]}


def _named_targets(log: LogText, catalog: Catalog) -> dict[str, int]:
    """Each real AMD target the log names ("gfx000", ollama's placeholder, is none), with the first line naming it."""
    seen: dict[str, int] = {}
    for i in sorted(log.lines_matching(_GFX)):
        for m in _GFX.finditer(log.lines[i].text):
            gfx = f"gfx{m.group(1).lower()}"
            if gfx in catalog.gfx_facts:
                seen.setdefault(gfx, i)
    return seen


WRAPPED_MAX_LINES = 5000


def _wrapped_sightings(log: LogText, catalog: Catalog, facts: LogFacts) -> dict[int, list[_Sighting]]:
    """Device reports split over two lines by a wrapped paste ("... compute capability" / "7.5."), for a log
    in which no line names a GPU. Each pair of neighbouring lines is read as one (a space between them)."""
    if not 1 < len(log) <= WRAPPED_MAX_LINES:
        return {}
    lines = log.lines
    pairs = [f"{a.text.rstrip()} {strip_prefix(b.text).strip()}" for a, b in zip(lines, lines[1:])]
    joined = "\n".join(pairs).lower()
    found: dict[int, list[_Sighting]] = {}
    for fact in facts.gpu:
        if fact.literal and fact.literal not in joined:
            continue
        pattern = fact.for_log(log)
        for i, text in enumerate(pairs):
            if fact.literal and fact.literal not in text.lower():
                continue
            if not fact.reads(text):
                continue
            m = pattern.search(text)
            gpu = _gpu_from_match(m.groupdict(), catalog) if m and fact.reads_log(log) else None
            if gpu is not None:
                found.setdefault(i, []).append(_Sighting(gpu, fact.strength, lines[i]))
    return found


def _gpu_from_match(groups: dict[str, str | None], catalog: Catalog) -> Gpu | None:
    """Turn one pattern's captures into a GPU, trusting the log's capability over the catalog's."""
    name = (groups.get("name") or "").strip()
    cc = groups.get("cc")
    gfx = groups.get("gfx")
    cc_or_gfx = groups.get("cc_or_gfx")
    if cc_or_gfx:
        gfx, cc = (cc_or_gfx, None) if cc_or_gfx.startswith("gfx") else (None, cc_or_gfx)
    if groups.get("major") is not None and groups.get("minor") is not None:
        cc = f"{int(groups['major'] or 0)}.{int(groups['minor'] or 0)}"
    if groups.get("arch"):
        arch = int(groups["arch"] or 0)
        cc = f"{arch // 10}.{arch % 10}"
    known = (catalog.lookup(name) or catalog.find_in(name)) if name else None
    if known is None and name.endswith(("...", "…")):
        known = catalog.truncated(name)
    if known is not None:
        return catalog.with_cc(known, cc) if cc and known.vendor == "nvidia" else known
    if cc:
        return catalog.from_cc(cc, name)
    if gfx:
        return catalog.from_gfx(gfx.lower(), name)
    return None


def _merge_best(sightings: list[_Sighting], catalog: Catalog) -> _Sighting:
    """The strongest sighting; a capability-only sighting borrows the name of a same-cc named one."""
    # among a user's own words, a GPU's name beats a capability they state ("an RTX 5080, which should have compute
    # capability 8.9": the catalog knows the card better than its owner)
    best = max(sightings, key=lambda s: (s.strength, s.strength <= _WEAK and s.gpu.named, -s.line.no))
    if not best.gpu.named:
        for s in sightings:
            if s.gpu.cc == best.gpu.cc and s.gpu.named:
                return _Sighting(catalog.with_cc(s.gpu, best.gpu.cc), best.strength, best.line)
    return best


_VERSION_LINE = re.compile(r"version|torch|cuda|driver|vllm|build|kobold|llamafile")  # on lowercased text


def _versions(log: LogText, facts: LogFacts) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for i in sorted(log.lines_matching(_VERSION_LINE)):
        for name, pattern in facts.versions:
            if name not in found:
                m = (_folded(pattern) if log.case_folded else pattern).search(log.lines[i].text)
                if m:
                    found[name] = m.group("v")
    return tuple(sorted(found.items()))


def _flags(log: LogText, facts: LogFacts) -> dict[str, bool]:
    """Each of GpuContext's yes/no facts, read by its table (model.FLAG_FACTS)."""
    tables = dict(facts.flags)
    return {field: bool(_first_named(log, tables.get(table, ()))) for field, table in FLAG_FACTS.items()}


def _first_named(log: LogText, table: tuple[tuple[str, "re.Pattern[str]", tuple[str, ...]], ...]) -> str:
    """The name of the first pattern of a [[os]] / [[container]] / [[wsl]] / [[rocm]] / [[paging_file]] table that
    the log matches, "" if none.

    With its branches' literals known, a pattern is tried only on the lines holding one: these patterns open with
    an alternation that re cannot skip ahead on, so a scan of a whole 50 KB text costs milliseconds, and common
    literals ("hip" in "chip") would put most logs on that path. The patterns match within a line."""
    for name, pattern, literals in table:
        if not literals:
            if pattern.search(log.text):
                return name
            continue
        candidates = sorted({i for literal in literals for i in log.lines_with(literal)})
        if any(pattern.search(log.lines[i].text) for i in candidates):
            return name
    return ""

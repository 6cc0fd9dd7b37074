"""Whole-tree validation: static schema checks, then each entry run against its own examples.

Why run the real engine: an example is a test case (semgrep's `ruleid:`). It must match
through the same scanner, GPU detection and variant reasoning that users get, so a
passing `kb validate` means the entry works end to end, not just that it parses.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import regex

from cudalogs import gpu as gpu_context
from cudalogs import conditions, normalize, rank, signatures
from cudalogs.errors import KBError, UnknownGpuError
from cudalogs.fixes import environment
from cudalogs.kb import bundle as kb_bundle
from cudalogs.kb.load import entry_files, read_taxonomy, read_toml
from cudalogs.kb.schema import Problem, pattern_problem, validate_entry
from cudalogs.knowledge import KnowledgeBase
from cudalogs.model import Entry


@dataclass
class Validation:
    problems: list[Problem] = field(default_factory=list)
    entries: int = 0
    examples: int = 0
    bundle: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _taxonomy_problems(taxonomy: dict[str, dict[str, Any]], path: Path) -> list[Problem]:
    """`explains` names other classes of the taxonomy (a typo would silently never reorder anything)."""
    problems = []
    for cls, info in taxonomy.items():
        explains = info.get("explains", [])
        if not isinstance(explains, list):
            problems.append(Problem(str(path), f"classes.{cls}.explains", "must be a list of class ids"))
            continue
        for other in explains:
            if other not in taxonomy or other == cls:
                problems.append(Problem(str(path), f"classes.{cls}.explains", f"{other!r} is not another class of the taxonomy"))
    return problems


def validate_tree(kb_dir: Path, data_dir: Path) -> Validation:
    """Every problem in kb/ and data/; `bundle` is set when the tree is valid enough to build."""
    result = Validation()
    try:
        taxonomy = read_taxonomy(kb_dir)
    except KBError as exc:
        result.problems.append(Problem(exc.path, exc.field, exc.message))
        return result
    classes = set(taxonomy)
    result.problems += _taxonomy_problems(taxonomy, kb_dir / "taxonomy.toml")
    seen: dict[str, str] = {}
    for path in entry_files(kb_dir):
        try:
            raw = read_toml(path)
        except KBError as exc:
            result.problems.append(Problem(exc.path, exc.field, exc.message))
            continue
        problems = validate_entry(raw, path, classes)
        result.problems += problems
        entry_id = raw.get("id", path.stem)
        if entry_id in seen:
            result.problems.append(Problem(str(path), "id", f"{entry_id!r} is already used by {seen[entry_id]}; ids are unique"))
        seen[entry_id] = str(path)
        result.entries += 1
    result.problems += _catalog_problems(data_dir)
    if result.problems:
        return result
    try:
        data = kb_bundle.build(kb_dir, data_dir)
    except KBError as exc:
        result.problems.append(Problem(exc.path, exc.field, exc.message))
        return result
    kb = KnowledgeBase.from_bundle(data)
    result.problems += _feature_problems(kb, data_dir / "features.toml")
    for entry in kb.entries:
        entry = replace(entry, path=seen.get(entry.id, entry.path))  # messages name the file as given
        result.problems += entry_behaviour_problems(entry, kb, classes)
        result.examples += len(entry.examples)
    result.bundle = None if result.problems else data
    return result


def entry_behaviour_problems(entry: Entry, kb: KnowledgeBase, classes: set[str]) -> list[Problem]:
    """Each example matches with its expected captures and class; no near miss matches."""
    problems: list[Problem] = []
    compiled = signatures.compile_entries([entry])
    for i, ex in enumerate(entry.examples):
        where = f"examples[{i}]"
        lines = list(normalize.lines(ex.log))
        hits = signatures.scan(lines, compiled)
        if not hits:
            problems.append(Problem(entry.path, where, f"the log from {ex.source} does not match any signature; widen the pattern or fix the paste"))
            continue
        fields = hits[0].field_map
        for key, want in ex.expect:
            got = fields.get(key)
            if got != want:
                problems.append(Problem(entry.path, f"{where}.expect.{key}", f"captured {got!r}, expected {want!r}"))
        problems += _class_problem(entry, ex, lines, fields, kb, classes, where)
    for j, near in enumerate(entry.near_misses):
        if signatures.scan(list(normalize.lines(near)), compiled):
            problems.append(Problem(entry.path, f"near_misses[{j}]", "matches a signature; tighten the pattern so this line stays silent"))
    for k, variant in enumerate(entry.variants):
        if variant.cls and variant.cls not in classes:
            problems.append(Problem(entry.path, f"variants[{k}].class", f"{variant.cls!r} is not in kb/taxonomy.toml"))
    return problems


def _class_problem(entry: Entry, ex: Any, lines: list[Any], fields: dict[str, str], kb: KnowledgeBase,
                   classes: set[str], where: str) -> list[Problem]:
    """The variant reasoning, given the example's GPU, must give the example's class."""
    try:
        override = gpu_context.resolve(ex.gpu, None, kb.catalog) if ex.gpu else None
    except UnknownGpuError as exc:
        return [Problem(entry.path, f"{where}.gpu", str(exc))]
    ctx = gpu_context.context(lines, kb.catalog, kb.facts, override)
    text = "\n".join(line.text for line in lines)
    env = environment(ctx, fields)
    log_has = lambda p: regex.search(p, text, regex.MULTILINE) is not None  # noqa: E731
    if entry.quiet_when and conditions.evaluate(entry.quiet_when, env, log_has) is True:
        return [Problem(entry.path, f"{where}", f"the log from {ex.source} meets quiet_when, so it would get no diagnosis; "
                        "an example must show the fault (fix quiet_when or the example)")]
    reading = rank.read_entry(entry, env, log_has)
    want = ex.cls or entry.cls
    if want not in classes:
        return [Problem(entry.path, f"{where}.class", f"{want!r} is not in kb/taxonomy.toml")]
    if reading.cls != want:
        gpu = ctx.gpu.name if ctx.gpu else "unknown GPU"
        return [Problem(entry.path, f"{where}.class", f"reasoning gives {reading.cls!r} on {gpu}, expected {want!r}; check the variants' when conditions or set gpu = \"...\"")]
    return []


def _catalog_problems(data_dir: Path) -> list[Problem]:
    problems: list[Problem] = []
    path = data_dir / "gpus.toml"
    try:
        rows = read_toml(path).get("gpu", [])
        read_toml(data_dir / "log_facts.toml")
    except KBError as exc:
        return [Problem(exc.path, exc.field, exc.message)]
    seen: dict[str, str] = {}
    for i, row in enumerate(rows):
        name = row.get("name")
        if not isinstance(name, str) or row.get("vendor") not in ("nvidia", "amd", "intel"):
            problems.append(Problem(str(path), f"gpu[{i}]", "needs name = \"...\" and vendor = \"nvidia\" | \"amd\" | \"intel\""))
            continue
        if row["vendor"] == "nvidia" and not _is_cc(row.get("cc")):
            problems.append(Problem(str(path), f"gpu[{i}].cc", f"{name}: compute capability as a string like \"8.6\""))
        for spelling in [name, *row.get("aliases", [])]:
            key = " ".join(spelling.lower().split())
            if key in seen and seen[key] != name:
                problems.append(Problem(str(path), f"gpu[{i}].aliases", f"{spelling!r} also names {seen[key]}; a spelling must name one GPU"))
            seen[key] = name
    return problems


def _feature_problems(kb: KnowledgeBase, path: Path) -> list[Problem]:
    """data/features.toml: capabilities parse, `mentions` compiles, `entries` name KB entries (a renamed entry
    would silently drop out of explain's pointers)."""
    problems = []
    for i, feature in enumerate(kb.features):
        where = f"feature[{i}]"
        if not isinstance(feature.get("id"), str) or not isinstance(feature.get("name"), str):
            problems.append(Problem(str(path), where, "needs id = \"...\" and name = \"...\""))
        for key in ("min_cc", "max_cc"):
            if key in feature and not _is_cc(feature[key]):
                problems.append(Problem(str(path), f"{where}.{key}", "a compute capability as a string like \"8.0\""))
        if "min_cc" not in feature:
            problems.append(Problem(str(path), f"{where}.min_cc", "missing"))
        if "mentions" in feature:  # read on every unexplained log: the signatures' rules (compiles, cannot run away)
            mentions = feature["mentions"]
            problem = pattern_problem(mentions) if isinstance(mentions, str) and mentions else "a regex string"
            if problem:
                problems.append(Problem(str(path), f"{where}.mentions", problem))
        for entry_id in feature.get("entries", []):
            if entry_id not in kb.by_id:
                problems.append(Problem(str(path), f"{where}.entries", f"{entry_id!r} is not a KB entry id"))
    return problems


def _is_cc(value: Any) -> bool:
    if not isinstance(value, str) or "." not in value:
        return False
    major, _, minor = value.partition(".")
    return major.isdigit() and minor.isdigit()

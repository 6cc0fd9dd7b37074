"""`cudalogs kb validate`: every rule an entry must follow, each problem with a fix-it message.

Problems print as `kb/ggml/x.toml: fixes[1].when: ... - write it as ...`. Every file
is checked, not only changed ones, and the same command runs in CI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from cudalogs.signatures import MIN_LITERAL_WEIGHT, literal_weight, prefilter_literals

from cudalogs import conditions
from cudalogs.fixes import ENV_FIELDS, GPU_FIELDS, NEVER_UNKNOWN, PLACEHOLDER, TEXT_FIELDS

STATUSES = ("experimental", "test", "stable")
SEVERITIES = ("fatal", "error", "warning")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_URL = re.compile(r"^https://[^\s]+$")
# A group holding a quantifier, itself repeated: (\w+)+, (a*)*, (x+){2,}: exponential backtracking.
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*](?:[^()\\]|\\.)*\)(?:[+*]|\{\d*,\d*\})")
_ADVERSARIAL = ("a" * 3000, " " * 3000, "0" * 3000, "ab" * 1500, "a," * 1500, "_" * 3000 + "!")


@dataclass(frozen=True)
class Problem:
    path: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"


def validate_entry(raw: dict[str, Any], path: Path, classes: set[str]) -> list[Problem]:
    """Static checks on one parsed entry file (no matching of examples yet)."""
    p = str(path)
    problems: list[Problem] = []

    def bad(field: str, message: str) -> None:
        problems.append(Problem(p, field, message))

    for key, kind in (("id", str), ("class", str), ("title", str), ("status", str), ("family", str), ("root_cause", str)):
        if not isinstance(raw.get(key), kind) or not str(raw.get(key)).strip():
            bad(key, f"missing or empty; write it as {key} = \"...\" before any [[table]]")
    if problems:
        return problems
    if raw["id"] != path.stem:
        bad("id", f"{raw['id']!r} differs from the file name; rename the file to {raw['id']}.toml or set id = \"{path.stem}\"")
    if not _ID.match(raw["id"]):
        bad("id", "use lowercase words joined by '-', e.g. ggml-no-device-code")
    if raw["class"] not in classes:
        bad("class", f"{raw['class']!r} is not in kb/taxonomy.toml; use one of: {', '.join(sorted(classes))}")
    if raw["status"] not in STATUSES:
        bad("status", f"write one of {', '.join(STATUSES)}")
    if raw.get("severity", "fatal") not in SEVERITIES:
        bad("severity", f"write one of {', '.join(SEVERITIES)}")
    if raw["family"] != path.parent.name:
        bad("family", f"{raw['family']!r} differs from the folder {path.parent.name!r}; move the file or fix the field")
    spec = raw.get("specificity", 3)
    if not isinstance(spec, int) or not 1 <= spec <= 5:
        bad("specificity", "an integer from 1 (generic runtime error) to 5 (names the capability or kernel)")
    groups = _check_signatures(raw, bad)
    names = set(GPU_FIELDS) | set(ENV_FIELDS) | groups
    _check_context(raw, names, bad)
    _check_text_fields(raw, names, bad)
    _check_references(raw, bad)
    _check_examples(raw, bad)
    return problems


def _check_signatures(raw: dict[str, Any], bad: Any) -> set[str]:
    sigs = raw.get("signatures")
    if not isinstance(sigs, list) or not sigs:
        bad("signatures", "at least one [[signatures]] table with a pattern = '''...'''")
        return set()
    groups: set[str] = set()
    for i, sig in enumerate(sigs):
        where = f"signatures[{i}].pattern"
        pattern = sig.get("pattern") if isinstance(sig, dict) else None
        if not isinstance(pattern, str) or not pattern:
            bad(where, "missing; write pattern = '''...''' (a literal string keeps backslashes)")
            continue
        problem = pattern_problem(pattern)
        if problem:
            bad(where, problem)
            continue
        groups |= set(regex.compile(pattern).groupindex)
        literal = sig.get("literal")
        if literal is not None and (not isinstance(literal, str) or literal != literal.lower()
                                    or literal_weight(literal) < MIN_LITERAL_WEIGHT):
            bad(f"signatures[{i}].literal", "lowercase text of 4+ characters (a CJK character counts two) that every "
                                            "match contains")
        elif literal is None and not prefilter_literals(pattern):
            bad(where, "no fixed text of 4+ characters (a CJK character counts two) that every match must contain "
                       "(nor one in each top-level alternative), so every line of every log would be tried; put a "
                       "message word outside the alternation, or add literal = \"...\" (lowercase text every match "
                       "contains)")
        window = sig.get("window", 1)
        if not isinstance(window, int) or not 1 <= window <= 10:
            bad(f"signatures[{i}].window", "an integer from 1 to 10 (lines the pattern may span)")
    return groups


def pattern_problem(pattern: str) -> str:
    """Why a pattern is unusable ('' when fine): does not compile, or can backtrack catastrophically."""
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        return f"does not compile ({exc}); escape literal ( ) . [ ] with a backslash"
    if _NESTED_QUANTIFIER.search(pattern):
        return "a repeated group contains a repeat (e.g. (\\w+)+): this can backtrack catastrophically; use one bounded repeat such as [^\\n]{0,200}"
    for probe in _ADVERSARIAL:
        try:
            compiled.search(probe, timeout=0.25)
        except TimeoutError:
            return "took over 0.25 s on a 3,000-character line: simplify the pattern (avoid .*.* and alternations of overlapping repeats)"
    if compiled.search(""):
        return "matches the empty string, so it would fire on every log; anchor it on the message's words"
    return ""


def _check_context(raw: dict[str, Any], names: set[str], bad: Any) -> None:
    """Each [[context]] has a `pattern` or a `when` condition (a fact read once from the log, e.g. `rocm`)."""
    for i, ctx in enumerate(raw.get("context", [])):
        if isinstance(ctx, dict) and ("pattern" in ctx) == ("when" in ctx):
            bad(f"context[{i}]", "give either pattern = '...' or when = \"...\" (a condition), not both or neither")
        elif isinstance(ctx, dict) and "when" in ctx:
            _check_condition(f"context[{i}].when", str(ctx["when"]), names, bad)
        else:
            problem = pattern_problem(ctx.get("pattern", "")) if isinstance(ctx, dict) else "not a table"
            if problem:
                bad(f"context[{i}].pattern", problem)
        weight = ctx.get("weight", 0.1) if isinstance(ctx, dict) else 0
        if not isinstance(weight, (int, float)) or not -1 <= weight <= 1:
            bad(f"context[{i}].weight", "a number from -1 to 1")


def _check_text_fields(raw: dict[str, Any], names: set[str], bad: Any) -> None:
    """Conditions parse and read known names; placeholders name a captured field or a GPU/env field."""
    _check_placeholders("root_cause", raw.get("root_cause", ""), names, bad)
    _check_placeholders("title", raw.get("title", ""), names, bad)
    if "quiet_when" in raw:
        if not isinstance(raw["quiet_when"], str) or not raw["quiet_when"].strip():
            bad("quiet_when", "a condition string, e.g. quiet_when = \"vendor == 'amd'\"")
        else:
            _check_condition("quiet_when", raw["quiet_when"], names, bad)
    for i, variant in enumerate(raw.get("variants", [])):
        where = f"variants[{i}]"
        if not isinstance(variant, dict) or not isinstance(variant.get("when"), str):
            bad(where, "each [[variants]] needs when = \"...\"")
            continue
        _check_condition(f"{where}.when", variant["when"], names, bad)
        if variant.get("class") is not None and not isinstance(variant.get("class"), str):
            bad(f"{where}.class", "a class id string")
        _check_placeholders(f"{where}.root_cause", variant.get("root_cause", ""), names, bad)
        _check_fixes(f"{where}.fixes", variant.get("fixes", []), names, bad, required=False)
    _check_fixes("fixes", raw.get("fixes"), names, bad, required=True)


def _check_fixes(where: str, fixes: Any, names: set[str], bad: Any, required: bool) -> None:
    if not isinstance(fixes, list) or (required and not fixes):
        if required:
            bad(where, "at least one [[fixes]] table with title, steps, cost")
        return
    for i, fix in enumerate(fixes):
        at = f"{where}[{i}]"
        if not isinstance(fix, dict) or not str(fix.get("title", "")).strip():
            bad(f"{at}.title", "missing; one line saying what to do")
            continue
        if not str(fix.get("cost", "")).strip():
            bad(f"{at}.cost", "say what the fix costs (speed, memory, accuracy, effort), or 'none' when true")
        if fix.get("when"):
            _check_condition(f"{at}.when", str(fix["when"]), names, bad)
        for key in ("title", "steps", "cost"):
            _check_placeholders(f"{at}.{key}", str(fix.get(key, "")), names, bad)


def _check_condition(where: str, text: str, names: set[str], bad: Any) -> None:
    try:
        unknown = conditions.names(text) - names
    except conditions.ConditionError as exc:
        bad(where, str(exc))
        return
    if unknown:
        bad(where, f"unknown name(s) {', '.join(sorted(unknown))}; use a captured group or one of {', '.join(sorted(set(GPU_FIELDS) | set(ENV_FIELDS)))}")
    for name in sorted(conditions.known_of(text) & set(NEVER_UNKNOWN)):
        bad(where, f"known({name}) is always true: {name} is never unknown (no sign in the log reads as false); "
                   f"write the condition on {name} itself, or drop it to show the fix whatever the log says")
    if conditions.has_control_character(text):
        bad(where, "a string holds a control character: a regex escape such as \\b was read twice (by TOML, then by "
                   "the condition); write the condition as a TOML literal string (triple single quotes)")


def _check_placeholders(where: str, text: str, names: set[str], bad: Any) -> None:
    for name in {m.group(1) for m in PLACEHOLDER.finditer(text)} - names - set(TEXT_FIELDS):
        if name.isidentifier() and not name.isupper():
            bad(where, f"placeholder {{{name}}} is neither a captured group nor a GPU/env field; capture it with (?P<{name}>...) or remove the braces")


def _check_references(raw: dict[str, Any], bad: Any) -> None:
    refs = raw.get("references")
    if not isinstance(refs, list) or not refs:
        bad("references", "at least one public https:// URL (an issue thread, a docs page, a source line)")
        return
    for i, ref in enumerate(refs):
        if not isinstance(ref, str) or not _URL.match(ref):
            bad(f"references[{i}]", f"{ref!r} is not a bare https:// URL")


def _check_examples(raw: dict[str, Any], bad: Any) -> None:
    examples = raw.get("examples")
    if not isinstance(examples, list) or len(examples) < 2:
        bad("examples", "at least two [[examples]] with a verbatim real log and its public source URL")
        return
    for i, ex in enumerate(examples):
        if not isinstance(ex, dict) or not isinstance(ex.get("log"), str) or not ex["log"].strip():
            bad(f"examples[{i}].log", "missing; paste the real log as log = '''...'''")
        elif not isinstance(ex.get("source"), str) or not _URL.match(ex["source"]):
            bad(f"examples[{i}].source", "the public https:// URL the log was copied from")
        elif not isinstance(ex.get("expect", {}), dict):
            bad(f"examples[{i}].expect", "an inline table of captured values, e.g. expect = { arch = \"610\" }")
    if not isinstance(raw.get("near_misses", []), list):
        bad("near_misses", "a list of strings")

"""The KB's `when` condition language: a whitelisted subset of Python expressions, three-valued.

Why three values: a fix for "compute capability below 8.0" is neither true nor false
when we do not know the GPU. Such a condition evaluates to UNKNOWN, and the fix is
shown as "depends on your setup" instead of being hidden or asserted.

Why not `eval`: KB files are data reviewed like code, but a condition must never be
able to run code. We parse with `ast` and interpret only the nodes listed below.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any


class _Unknown:
    """The third truth value: the fact a condition needs is not known."""

    _instance: "_Unknown | None" = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # pragma: no cover - guarded against by the evaluator
        raise TypeError("UNKNOWN has no truth value; use the three-valued helpers")


UNKNOWN: Any = _Unknown()

_ARCH_TOKEN = re.compile(r"(?:sm_|compute_|gfx)?(\d+)(?:\.(\d+))?[a-z]?")


def archs(text: Any) -> list[int]:
    """Read an architecture list in any notation into integers on the `arch` scale (7.5 -> 75).

    `500,520,610` (ggml, x10), `sm_50 sm_86` (PyTorch), `7.5;8.0+PTX` (TORCH_CUDA_ARCH_LIST),
    `compute_89`. Plain numbers of 300 or more are ggml's scale (610 -> 61); smaller ones are
    already on the arch scale (86, 120).
    """
    if isinstance(text, int):
        return [text // 10 if text >= 300 else text]
    out: list[int] = []
    for m in _ARCH_TOKEN.finditer(str(text)):
        major, minor = m.group(1), m.group(2)
        if minor is not None:
            value = int(major) * 10 + int(minor)
        else:
            n = int(major)
            value = n // 10 if n >= 300 else n
        if value not in out:
            out.append(value)
    return out


def cc(text: Any) -> int | Any:
    """`"7.5"` or `75` or `"sm_75"` -> 75."""
    found = archs(text)
    return found[0] if found else UNKNOWN


def ggml_arch(value: Any) -> int:
    """ggml prints `__CUDA_ARCH__` (610); the arch scale is 61."""
    return int(value) // 10


# Every compute capability NVIDIA has shipped, on the arch scale.
KNOWN_ARCHS = (30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121)


def implied_arch(seen: Any, compiled: Any) -> int | Any:
    """The device arch implied by "code for `seen` ran, the build holds `compiled`", if unique.

    A device runs the highest compiled arch at or below its own, so the device lies in
    [seen, next compiled arch). When only one real arch lies there, that is the device.
    """
    seen = int(seen)
    higher = [c for c in compiled if c > seen]
    upper = min(higher) if higher else 10_000
    candidates = [a for a in KNOWN_ARCHS if seen <= a < upper]
    return candidates[0] if len(candidates) == 1 else UNKNOWN


def ver(text: Any) -> tuple[int, ...]:
    """A comparable version: `"2.7.0+cu128"` -> (2, 7, 0, 128); `"b4800"` -> (4800,)."""
    return tuple(int(n) for n in re.findall(r"\d+", str(text)))


def _contains(text: Any, part: Any) -> bool:
    return str(part).lower() in str(text).lower()


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "archs": archs,
    "cc": cc,
    "ggml_arch": ggml_arch,
    "ver": ver,
    "implied_arch": implied_arch,
    "max": lambda xs: max(xs) if xs else UNKNOWN,
    "min": lambda xs: min(xs) if xs else UNKNOWN,
    "len": len,
    "lower": lambda s: str(s).lower(),
    "contains": _contains,
}
_LAZY_OK = {"known", "log_has"}  # functions that accept UNKNOWN arguments or read the log
_OPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Compare,
            ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple, ast.Call, *_OPS)


class ConditionError(ValueError):
    """A condition uses syntax or names outside the language."""


@functools.lru_cache(maxsize=1024)
def parse(text: str) -> ast.Expression:
    """Parse and whitelist a condition; raises ConditionError with a hint."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an invalid escape such as '\.' in a string: newer Pythons reject it
            tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, SyntaxWarning, DeprecationWarning) as exc:
        message = str(getattr(exc, "msg", exc))
        hint = ("a backslash in a string must itself be escaped; in a log_has() regex write [.] for a dot"
                if "escape" in message else "write e.g. \"arch < 80 and vendor == 'nvidia'\"")
        raise ConditionError(f"not a valid condition ({message}); {hint}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ConditionError(f"{type(node).__name__} is not allowed in conditions; use and/or/not, comparisons, lists and the documented functions")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in {*_FUNCTIONS, *_LAZY_OK}:
                raise ConditionError(f"unknown function; use one of {', '.join(sorted({*_FUNCTIONS, *_LAZY_OK}))}")
            if node.keywords:
                raise ConditionError("functions take positional arguments only")
    return tree


def has_control_character(text: str) -> bool:
    """Whether a string in the condition holds a control character: the trace of an escape read twice, by a TOML
    basic string ("...") and then by the condition, so that a log_has() regex's \\b became a backspace."""
    return any(isinstance(node, ast.Constant) and isinstance(node.value, str)
               and any(ord(ch) < 32 and ch not in "\t\n" for ch in node.value)
               for node in ast.walk(parse(text)))


def names(text: str) -> set[str]:
    """Variable names a condition reads (validation checks they exist)."""
    called = {n.func.id for n in ast.walk(parse(text)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(parse(text)) if isinstance(n, ast.Name)} - called


def known_of(text: str) -> set[str]:
    """Names a condition asks known() about (validation rejects those that are never unknown: always true)."""
    return {n.args[0].id for n in ast.walk(parse(text)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id == "known" and n.args and isinstance(n.args[0], ast.Name)}


def evaluate(text: str, env: Mapping[str, Any], log_has: Callable[[str], bool] | None = None) -> bool | Any:
    """True, False or UNKNOWN. An empty condition is True."""
    if not text.strip():
        return True
    return _truth(_eval(parse(text).body, env, log_has))


def _truth(value: Any) -> bool | Any:
    return UNKNOWN if value is UNKNOWN else bool(value)


def _eval(node: ast.AST, env: Mapping[str, Any], log_has: Callable[[str], bool] | None) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        value = env.get(node.id)
        return UNKNOWN if value is None or value == "" else value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, env, log_has) for e in node.elts]
    if isinstance(node, ast.UnaryOp):
        value = _truth(_eval(node.operand, env, log_has))
        return UNKNOWN if value is UNKNOWN else not value
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, env, log_has)
    if isinstance(node, ast.Compare):
        return _compare(node, env, log_has)
    if isinstance(node, ast.Call):
        return _call(node, env, log_has)
    raise ConditionError(f"{type(node).__name__} is not allowed")  # pragma: no cover - parse() whitelists


def _bool_op(node: ast.BoolOp, env: Mapping[str, Any], log_has: Callable[[str], bool] | None) -> Any:
    decisive = isinstance(node.op, ast.Or)  # the value that settles the whole expression
    unknown = False
    for operand in node.values:
        value = _truth(_eval(operand, env, log_has))
        if value is UNKNOWN:
            unknown = True
        elif value is decisive:
            return decisive
    return UNKNOWN if unknown else not decisive


def _compare(node: ast.Compare, env: Mapping[str, Any], log_has: Callable[[str], bool] | None) -> Any:
    left = _eval(node.left, env, log_has)
    result: Any = True
    for op, comparator in zip(node.ops, node.comparators):
        right = _eval(comparator, env, log_has)
        if left is UNKNOWN or right is UNKNOWN or (isinstance(right, list) and UNKNOWN in right):
            result = UNKNOWN
        else:
            try:
                if not _OPS[type(op)](left, right):
                    return False
            except TypeError:
                result = UNKNOWN
        left = right
    return result


def _call(node: ast.Call, env: Mapping[str, Any], log_has: Callable[[str], bool] | None) -> Any:
    name = node.func.id  # type: ignore[attr-defined]
    args = [_eval(a, env, log_has) for a in node.args]
    if name == "known":
        return all(a is not UNKNOWN for a in args)
    if name == "log_has":
        return UNKNOWN if log_has is None else log_has(str(args[0]))
    if any(a is UNKNOWN for a in args):
        return UNKNOWN
    try:
        return _FUNCTIONS[name](*args)
    except (TypeError, ValueError):
        return UNKNOWN

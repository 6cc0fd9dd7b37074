"""Read KB entries: from the TOML source tree (contributors, validate, build) or from the bundle (explain).

Only this module and `bundle.py` touch KB files. Raw dicts are validated by
`schema.validate` before they become `Entry` objects, so every later stage can trust them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cudalogs.errors import KBError
from cudalogs.model import ContextPattern, Entry, Example, FixSpec, Signature, Variant

SOURCE_ROOT = Path(__file__).resolve().parents[3]


def default_kb_dir() -> Path:
    """The checkout's kb/ when running from source, else ./kb (for `kb validate` in a clone)."""
    candidate = SOURCE_ROOT / "kb"
    return candidate if (candidate / "taxonomy.toml").exists() else Path("kb")


def default_data_dir() -> Path:
    candidate = SOURCE_ROOT / "data"
    return candidate if (candidate / "gpus.toml").exists() else Path("data")


def entry_files(kb_dir: Path) -> Iterator[Path]:
    """Every entry file: kb/<family>/<id>.toml (taxonomy.toml and README.md are not entries)."""
    yield from sorted(p for p in kb_dir.glob("*/*.toml") if p.is_file())


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file; a syntax error becomes a KBError naming the file and line."""
    import tomllib  # here, not at the top: `explain` reads the JSON bundle and never parses TOML

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise KBError(str(path), "toml", f"{exc}; check quotes and that top-level keys come before [[tables]]") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KBError(str(path), "file", f"cannot read: {exc}") from None


def read_taxonomy(kb_dir: Path) -> dict[str, dict[str, Any]]:
    data = read_toml(kb_dir / "taxonomy.toml")
    return dict(data.get("classes", {}))


def entry_from_dict(raw: dict[str, Any], path: str = "") -> Entry:
    """Build an Entry from an already validated dict (from TOML or the bundle)."""
    return Entry(
        id=raw["id"],
        cls=raw["class"],
        title=raw["title"].strip(),
        status=raw["status"],
        family=raw["family"],
        root_cause=raw["root_cause"].strip(),
        signatures=tuple(signature_from_dict(s) for s in raw["signatures"]),
        fixes=tuple(_fix(f) for f in raw.get("fixes", [])),
        references=tuple(raw.get("references", [])),
        examples=tuple(_example(e) for e in raw.get("examples", [])),
        severity=raw.get("severity", "fatal"),
        specificity=int(raw.get("specificity", 3)),
        context=tuple(ContextPattern(c.get("pattern", ""), float(c.get("weight", 0.1)), str(c.get("when", "")).strip())
                      for c in raw.get("context", [])),
        variants=tuple(_variant(v) for v in raw.get("variants", [])),
        near_misses=tuple(raw.get("near_misses", [])),
        false_positives=str(raw.get("false_positives", "")).strip(),
        quiet_when=str(raw.get("quiet_when", "")).strip(),
        path=path,
    )


def signature_from_dict(raw: dict[str, Any]) -> Signature:
    """One signature of an entry (the knowledge base compiles these without building whole entries)."""
    return Signature(raw["pattern"], raw.get("name", ""), int(raw.get("window", 1)), _literals(raw))


def _fix(raw: dict[str, Any]) -> FixSpec:
    return FixSpec(title=raw["title"].strip(), steps=str(raw.get("steps", "")).strip(),
                   cost=str(raw.get("cost", "")).strip(), when=str(raw.get("when", "")).strip())


def _variant(raw: dict[str, Any]) -> Variant:
    return Variant(when=raw["when"], cls=raw.get("class", ""), title=raw.get("title", "").strip(),
                   root_cause=raw.get("root_cause", "").strip(), fixes=tuple(_fix(f) for f in raw.get("fixes", [])),
                   replace_fixes=bool(raw.get("replace_fixes", False)))


def _example(raw: dict[str, Any]) -> Example:
    expect = tuple((str(k), str(v)) for k, v in (raw.get("expect") or {}).items())
    return Example(log=raw["log"], source=raw["source"], gpu=raw.get("gpu", ""), cls=raw.get("class", ""), expect=expect)


def _literals(sig: dict[str, Any]) -> tuple[str, ...] | None:
    """A signature's prefilter literals: the bundle's precomputed list, or the author's `literal`."""
    if "literals" in sig:
        return tuple(sig["literals"])
    return (sig["literal"],) if isinstance(sig.get("literal"), str) else None

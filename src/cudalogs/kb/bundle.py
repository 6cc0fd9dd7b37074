"""The bundle: kb/ and data/ compiled into one JSON file that ships inside the package.

Why a bundle: `pip install .` must work without the checkout, and `explain` must start
fast. Parsing ~100 TOML files and a catalog at every start costs more than reading one
JSON document. kb/ and data/ stay the source of truth: `cudalogs kb build` writes the
bundle, and a test fails when the committed bundle is stale.

The entries' example logs (a third of the text) ship in a second file beside it, examples.json:
`explain` never reads them (~20 ms of start-up saved at 470 entries); `kb show`, search and
training do (read(..., examples=True), the default).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cudalogs.errors import KBError
from cudalogs.kb.load import entry_files, read_taxonomy, read_toml

BUNDLE_PATH = Path(__file__).resolve().parents[1] / "_bundled" / "kb.json"
BUNDLE_FORMAT = 1


def build(kb_dir: Path, data_dir: Path) -> dict[str, Any]:
    """Read every source file into one plain document (validation is `schema.validate_tree`)."""
    from cudalogs.gpu import fact_literal
    from cudalogs.signatures import prefilter_literals

    entries = []
    for path in entry_files(kb_dir):
        raw = read_toml(path)
        for sig in raw.get("signatures", []):
            if isinstance(sig, dict) and isinstance(sig.get("pattern"), str):
                # saves parsing every pattern at start-up; an author's own `literal` wins
                sig["literals"] = [sig["literal"]] if isinstance(sig.get("literal"), str) else list(
                    prefilter_literals(sig["pattern"]))
        raw["_path"] = path.relative_to(kb_dir.parent).as_posix() if kb_dir.parent in path.parents else str(path)
        entries.append(raw)
    gpus = read_toml(data_dir / "gpus.toml")
    archs = read_toml(data_dir / "archs.toml") if (data_dir / "archs.toml").exists() else {}
    log_facts = read_toml(data_dir / "log_facts.toml")
    for pattern in log_facts.get("gpu", []):
        pattern["literal"] = fact_literal(pattern)
    return {
        "format": BUNDLE_FORMAT,
        "taxonomy": read_taxonomy(kb_dir),
        "entries": entries,
        "gpus": gpus.get("gpu", []),
        "archs": archs.get("arch", []),
        "gfx": archs.get("gfx", []),
        "log_facts": log_facts,
        "features": read_toml(data_dir / "features.toml").get("feature", []) if (data_dir / "features.toml").exists() else [],
    }


def dumps(bundle: dict[str, Any]) -> str:
    """Stable text (sorted keys) so the staleness test compares like with like.

    ASCII only (non-ASCII characters as \\u escapes): Python decodes and parses an all-ASCII file about twice as fast,
    and every `explain` parses kb.json at start-up (2.5 MB: about 9 ms instead of 17 ms warm, more cold).
    """
    return json.dumps(bundle, sort_keys=True, ensure_ascii=True, indent=0) + "\n"


def examples_path(path: Path) -> Path:
    """Where the example logs of the bundle at `path` are kept."""
    return path.with_name("examples.json")


def split(bundle: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The bundle without the entries' examples, and the examples by entry id (the two files write() makes)."""
    runtime = dict(bundle, entries=[{k: v for k, v in raw.items() if k != "examples"} for raw in bundle["entries"]])
    return runtime, {raw["id"]: raw["examples"] for raw in bundle["entries"] if raw.get("examples")}


def write(bundle: dict[str, Any], path: Path = BUNDLE_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    runtime, examples = split(bundle)
    path.write_text(dumps(runtime), encoding="utf-8")
    examples_path(path).write_text(dumps(examples), encoding="utf-8")
    return path


def read(path: Path = BUNDLE_PATH, *, examples: bool = True) -> dict[str, Any]:
    """The bundle at `path`; with `examples`, each entry's example logs put back from examples.json."""
    data = _read_json(path)
    found = data.get("format") if isinstance(data, dict) else None
    if found != BUNDLE_FORMAT:
        raise KBError(str(path), "format", f"bundle format {found} != {BUNDLE_FORMAT}; run `cudalogs kb build`")
    if examples:
        by_id = _read_json(examples_path(path))
        if not isinstance(by_id, dict):
            raise KBError(str(examples_path(path)), "bundle", "not an object by entry id; run `cudalogs kb build`")
        for raw in data.get("entries", []):
            if isinstance(raw, dict) and raw.get("id") in by_id:
                raw["examples"] = by_id[raw["id"]]
    return data


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())  # bytes: read_text scans MBs for newlines to translate (~12 ms)
    except FileNotFoundError:
        raise KBError(str(path), "bundle", "missing; run `cudalogs kb build` in a checkout") from None
    except (OSError, ValueError) as exc:  # ValueError: bad JSON or bad UTF-8
        raise KBError(str(path), "bundle", f"unreadable ({exc}); run `cudalogs kb build`") from None

"""The searchable KB: an SQLite database with an FTS5 index, written with sqlite-utils.

Tables (foreign keys to entries.id): entries, signatures, fixes, examples, refs, classes, gpus,
and the FTS5 table entries_fts over title, messages, root_cause, fixes_text and hardware.
`hardware` lists the GPU families and model names for which one of the entry's GPU
conditions holds, so that "flash attention turing" or "bf16 v100" finds the right entry.
Queries use the stdlib sqlite3 (fast to import); only building needs sqlite-utils.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from cudalogs import conditions
from cudalogs.fixes import environment
from cudalogs.knowledge import KnowledgeBase
from cudalogs.model import Entry, GpuContext
from cudalogs.normalize import lines as log_lines

SCHEMA_VERSION = 1
FTS_COLUMNS = ("title", "messages", "root_cause", "fixes_text", "hardware")


def conditions_of(entry: Entry) -> list[str]:
    """Every GPU-facing condition of an entry (variants and fixes)."""
    found = [v.when for v in entry.variants] + [f.when for f in entry.fixes]
    found += [f.when for v in entry.variants for f in v.fixes]
    return [c for c in found if c.strip()]


def holds_for(entry: Entry, ctx: GpuContext) -> bool:
    """True when the entry has no GPU condition, or one of them can hold (true or unknown) for the GPU."""
    conds = conditions_of(entry)
    if not conds:
        return True
    env = environment(ctx, {})
    return any(conditions.evaluate(c, env) is not False for c in conds)


def _hardware(entry: Entry, kb: KnowledgeBase) -> str:
    """Families and GPU names the entry's conditions single out.

    GPUs for which a condition is true; failing that (conditions that also read captured
    fields stay unknown), GPUs for which one can hold, when that excludes some GPUs.
    """
    conds = conditions_of(entry)
    if not conds:
        return ""
    verdicts = []
    for gpu in kb.catalog.gpus:
        env = environment(GpuContext(gpu=gpu, source="flag"), {})
        results = [conditions.evaluate(c, env) for c in conds]
        verdicts.append((gpu, any(r is True for r in results), any(r is not False for r in results)))
    chosen = [g for g, true, _ in verdicts if true]
    if not chosen:
        possible = [g for g, _, maybe in verdicts if maybe]
        chosen = possible if len(possible) < len(verdicts) else []
    families = sorted({g.family for g in chosen if g.family})
    return " ".join(families + [g.name for g in chosen])


def _messages(entry: Entry) -> str:
    """The lines of the examples that carry the message: a pasted error line finds its entry."""
    from cudalogs.signatures import compile_entries, scan

    compiled = compile_entries([entry])
    out: list[str] = []
    for ex in entry.examples:
        for hit in scan(list(log_lines(ex.log)), compiled):
            if hit.text not in out:
                out.append(hit.text)
    return "\n".join(out)


def build(kb: KnowledgeBase, path: Path) -> Path:
    """Write the database at `path` (replacing it)."""
    import sqlite_utils

    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # concurrent first searches must not collide
    if tmp.exists():
        tmp.unlink()
    db = sqlite_utils.Database(tmp)
    db["classes"].insert_all(({"id": k, "summary": v.get("summary", ""), "usual_fix": v.get("usual_fix", "")}
                              for k, v in kb.taxonomy.items()), pk="id")
    db["entries"].insert_all((_entry_row(e, kb) for e in kb.entries), pk="id", foreign_keys=[("class", "classes", "id")])
    db["signatures"].insert_all(({"entry_id": e.id, "n": i, "pattern": s.pattern, "window": s.window}
                                 for e in kb.entries for i, s in enumerate(e.signatures)),
                                foreign_keys=[("entry_id", "entries", "id")])
    db["fixes"].insert_all(_fix_rows(kb), foreign_keys=[("entry_id", "entries", "id")])
    db["examples"].insert_all(({"entry_id": e.id, "source": x.source, "gpu": x.gpu, "class": x.cls or e.cls, "log": x.log}
                               for e in kb.entries for x in e.examples), foreign_keys=[("entry_id", "entries", "id")])
    db["refs"].insert_all(({"entry_id": e.id, "url": r} for e in kb.entries for r in e.references),
                          foreign_keys=[("entry_id", "entries", "id")])
    db["gpus"].insert_all(({"name": g.name, "vendor": g.vendor, "family": g.family, "compute_capability": g.cc or None,
                            "gfx": g.gfx or None, "memory_gb": g.memory_gb, "smem_per_block": g.smem_per_block}
                           for g in kb.catalog.gpus), pk="name", replace=True)
    db["entries"].enable_fts(list(FTS_COLUMNS), create_triggers=False, tokenize="porter")
    db["meta"].insert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key")
    db.conn.commit()
    db.close()
    os.replace(tmp, path)
    return path


def _entry_row(e: Entry, kb: KnowledgeBase) -> dict[str, Any]:
    fixes_text = " ".join(f"{f.title} {f.steps} {f.cost}" for f in (*e.fixes, *(f for v in e.variants for f in v.fixes)))
    return {"id": e.id, "class": e.cls, "title": e.title, "status": e.status, "family": e.family,
            "severity": e.severity, "root_cause": e.root_cause, "messages": _messages(e),
            "fixes_text": fixes_text, "hardware": _hardware(e, kb), "path": e.path}


def _fix_rows(kb: KnowledgeBase) -> list[dict[str, Any]]:
    rows = []
    for e in kb.entries:
        for v_index, fixes in [(None, e.fixes), *((i, v.fixes) for i, v in enumerate(e.variants))]:
            for f in fixes:
                rows.append({"entry_id": e.id, "variant": v_index, "title": f.title, "steps": f.steps,
                             "cost": f.cost, "when_condition": f.when or None})
    return rows


def cached_path(digest: str) -> Path:
    """Where the database for this exact knowledge base lives: a user cache dir, keyed by its hash."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cudalogs"
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = base / ".write-test"
        probe.touch()
        probe.unlink()
    except OSError:
        base = Path(tempfile.gettempdir()) / "cudalogs"
        base.mkdir(parents=True, exist_ok=True)
    return base / f"kb-{digest}.db"

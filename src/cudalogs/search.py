"""search(): find KB entries from a user's words or a pasted error line, optionally for one GPU.

Ranked by SQLite FTS5's bm25 over the database `kb/index.py` builds (once per bundle,
in the user's cache directory). Terms are OR-ed: a user's words rarely all appear in
one entry, and bm25 already ranks entries that match more of them higher.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from cudalogs import fixes
from cudalogs import gpu as gpu_context
from cudalogs.kb import index
from cudalogs.knowledge import KnowledgeBase, load_kb
from cudalogs.model import Fix, GpuContext

BM25_WEIGHTS = (5.0, 3.0, 1.0, 1.0, 2.0)  # title, messages, root_cause, fixes_text, hardware
_STOP = {"a", "an", "the", "on", "in", "of", "for", "to", "is", "does", "do", "with", "and", "or", "my", "what", "how",
         "why", "it", "i", "can", "not", "work", "works", "error", "run", "use"}
_TERM = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class SearchResult:
    id: str
    cls: str
    title: str
    status: str
    score: float
    snippet: str
    fixes: tuple[Fix, ...] = ()


def fts_query(text: str) -> str:
    """User words -> an FTS5 query: each term quoted (no FTS syntax injection), OR-ed."""
    terms = [t for t in _TERM.findall(text.lower()) if t not in _STOP]
    if not terms:
        terms = _TERM.findall(text.lower())
    return " OR ".join(f'"{t}"' for t in dict.fromkeys(terms))


def database(kb: KnowledgeBase, db_path: Path | None = None) -> Path:
    """The database for this knowledge base, built on first use."""
    path = db_path or index.cached_path(kb.digest)
    if not path.exists():
        index.build(kb, path)
    return path


def search(query: str, gpu: str | None = None, cls: str | None = None, limit: int = 10, *,
           kb: KnowledgeBase | None = None, db_path: Path | None = None) -> list[SearchResult]:
    """Entries for `query`, best first; with `gpu`, only entries that can apply to it, fixes rendered for it."""
    kb = kb or load_kb()
    match = fts_query(query)
    if not match:
        return []
    ctx = GpuContext(gpu_context.resolve(gpu, None, kb.catalog), "flag") if gpu else None
    rows = _query(database(kb, db_path), match, cls, limit * 4 if ctx else limit)
    results = []
    for entry_id, rank, snippet in rows:
        entry = kb.by_id.get(entry_id)
        if entry is None or (ctx is not None and not index.holds_for(entry, ctx)):
            continue
        rendered: tuple[Fix, ...] = ()
        if ctx is not None:
            env = fixes.environment(ctx, {})
            specs = (*(f for v in entry.variants for f in v.fixes), *entry.fixes)
            rendered = tuple(f for f in fixes.applicable(specs, env) if f.applies)
        results.append(SearchResult(entry.id, entry.cls, entry.title, entry.status, round(-rank, 3), snippet, rendered))
    return results[:limit]


def _query(path: Path, match: str, cls: str | None, limit: int) -> list[tuple[str, float, str]]:
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    sql = (f"select entries.id, bm25(entries_fts, {weights}) as rank, "
           "snippet(entries_fts, -1, '[', ']', '…', 14) from entries_fts "
           "join entries on entries.rowid = entries_fts.rowid where entries_fts match ?")
    params: list[object] = [match]
    if cls:
        sql += " and entries.class = ?"
        params.append(cls)
    sql += " order by rank limit ?"
    params.append(limit)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return [(r[0], float(r[1]), r[2]) for r in conn.execute(sql, params)]

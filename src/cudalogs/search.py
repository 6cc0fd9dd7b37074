"""search(): find KB entries from a user's words or a pasted error line, optionally for one GPU.

Ranked over the database `kb/index.py` builds (once per bundle, in the user's cache
directory). Terms are OR-ed, since a user's words rarely all appear in one entry, and
an entry's score is how many of the words its description holds (title, messages, root
cause, GPUs; not its fix steps), plus one when the query itself is a line its signatures
match (a pasted error line finds its own entry before the entries that merely mention it),
plus its FTS5 bm25 squashed into 0..1: bm25 alone lets a short title full of the common
words ("flash attention") beat the entry that also holds the distinguishing one ("turing").
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from cudalogs import fixes, normalize, signatures
from cudalogs import gpu as gpu_context
from cudalogs.kb import index
from cudalogs.knowledge import KnowledgeBase, load_kb
from cudalogs.model import Entry, Fix, GpuContext

BM25_WEIGHTS = (5.0, 3.0, 1.0, 1.0, 2.0)  # title, messages, root_cause, fixes_text, hardware
# The columns that describe the fault. A word counts as held only there: a word that only a fix step mentions (an
# app's name, "image" in a loader's name) says little about whether the entry is the user's problem, and counting it
# let such entries tie with the ones whose message holds the word. bm25 still reads every column.
_FAULT_COLUMNS = " ".join(column for column in index.FTS_COLUMNS if column != "fixes_text")
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


def query_terms(text: str) -> list[str]:
    """The words of a query worth matching, in order, once each (stop words dropped unless nothing else is left)."""
    terms = [t for t in _TERM.findall(text.lower()) if t not in _STOP]
    return list(dict.fromkeys(terms or _TERM.findall(text.lower())))


def fts_query(text: str) -> str:
    """User words -> an FTS5 query: each term quoted (no FTS syntax injection), OR-ed."""
    return " OR ".join(f'"{t}"' for t in query_terms(text))


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
    terms = query_terms(query)
    if not terms:
        return []
    ctx = GpuContext(gpu_context.resolve(gpu, None, kb.catalog), "flag") if gpu else None
    matched = {hit.entry_id for hit in signatures.scan(list(normalize.lines(query)), kb.compiled)}
    path = database(kb, db_path)
    ranked = sorted(((eid, score + (eid in matched)) for eid, score in _ranked(path, terms, cls)), key=lambda r: -r[1])
    chosen: list[tuple[Entry, float, tuple[Fix, ...]]] = []
    for entry_id, score in ranked:
        if len(chosen) == limit:
            break
        entry = kb.by_id.get(entry_id)
        if entry is None or (ctx is not None and not index.holds_for(entry, ctx)):
            continue
        rendered: tuple[Fix, ...] = ()
        if ctx is not None:
            env = fixes.environment(ctx, {})
            specs = (*(f for v in entry.variants for f in v.fixes), *entry.fixes)
            rendered = tuple(f for f in fixes.applicable(specs, env) if f.applies)
        chosen.append((entry, score, rendered))
    snippets = _snippets(path, terms, [entry.id for entry, _s, _f in chosen])
    return [SearchResult(entry.id, entry.cls, entry.title, entry.status, round(score, 3), snippets.get(entry.id, ""),
                         rendered)
            for entry, score, rendered in chosen]


def _ranked(path: Path, terms: list[str], cls: str | None) -> list[tuple[str, float]]:
    """(id, score) of every entry holding any term, best first (the KB is small: no LIMIT needed)."""
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    sql = (f"select entries.id, bm25(entries_fts, {weights}) from entries_fts "
           "join entries on entries.rowid = entries_fts.rowid where entries_fts match ?")
    params: list[object] = [" OR ".join(f'"{t}"' for t in terms)]
    if cls:
        sql += " and entries.class = ?"
        params.append(cls)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(sql, params).fetchall()
        holders = [{r[0] for r in conn.execute("select rowid from entries_fts where entries_fts match ?",
                                               (f'{{{_FAULT_COLUMNS}}} : "{t}"',))}
                   for t in terms] if len(terms) > 1 else []
        rowids = dict(conn.execute("select id, rowid from entries"))
    scored = []
    for entry_id, rank in rows:
        words = sum(rowids[entry_id] in h for h in holders) if holders else 1
        # Unrounded: the squashed bm25 of entries holding the same words differs only in the third or fourth
        # decimal, and rounding it before sorting turned those differences into ties broken by SQLite's row order.
        scored.append((entry_id, words + -rank / (1 - rank)))
    return sorted(scored, key=lambda r: -r[1])


def _snippets(path: Path, terms: list[str], ids: list[str]) -> dict[str, str]:
    """The highlighted snippet of each chosen entry: only for the results shown (snippet() is the costly part)."""
    if not ids:
        return {}
    sql = ("select entries.id, snippet(entries_fts, -1, '[', ']', '…', 14) from entries_fts "
           "join entries on entries.rowid = entries_fts.rowid where entries_fts match ? "
           f"and entries.id in ({', '.join('?' * len(ids))})")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return dict(conn.execute(sql, [" OR ".join(f'"{t}"' for t in terms), *ids]))

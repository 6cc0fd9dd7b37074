"""`cudalogs search`: find KB entries from your words or a pasted error line."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer

from cudalogs.cli.options import EXIT_FOUND, EXIT_NOT_FOUND, FormatOpt, GpuOpt, OutputFormat, errors_as_messages, write


def search(
    query: Annotated[str, typer.Argument(help="Words (\"flash attention turing\") or a pasted error line.")],
    gpu: GpuOpt = None,
    cls: Annotated[Optional[str], typer.Option("--class", help="Only entries of this class.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="At most this many results.")] = 10,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Search the knowledge base (SQLite FTS5, bm25), optionally for your GPU.

    Example: cudalogs search "bf16 v100"   or   cudalogs search "flash attention" --gpu "Tesla T4"
    """
    from cudalogs.search import search as run_search

    with errors_as_messages():
        results = run_search(query, gpu=gpu, cls=cls, limit=limit)
    if format is OutputFormat.json:
        doc = [{"id": r.id, "class": r.cls, "title": r.title, "status": r.status, "score": r.score, "snippet": r.snippet,
                "fixes": [{"title": f.title, "steps": f.steps, "cost": f.cost} for f in r.fixes]} for r in results]
        write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        write(_text(results, color=sys.stdout.isatty()))
    raise typer.Exit(EXIT_FOUND if results else EXIT_NOT_FOUND)


def _text(results: list, color: bool) -> str:  # type: ignore[type-arg]
    if not results:
        return "No entry matches. Try fewer or other words, or paste the error line itself.\n"
    out = []
    for r in results:
        snippet = r.snippet.replace("[", "\x1b[1m").replace("]", "\x1b[0m") if color else r.snippet
        out.append(f"{r.id}  [{r.cls}, {r.status}]  score {r.score:.2f}\n  {r.title}\n  {' '.join(snippet.split())}")
        out += [f"  fix: {f.title}" + (f"\n       {f.steps}" if f.steps else "") for f in r.fixes]
    return "\n".join(out) + "\n"

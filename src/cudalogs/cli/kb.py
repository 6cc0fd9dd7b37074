"""`cudalogs kb validate | build | show | list`: work on the knowledge base."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from cudalogs.cli.options import EXIT_ERROR, FormatOpt, OutputFormat, errors_as_messages, fail, write
from cudalogs.kb.load import default_data_dir, default_kb_dir

# NOTE: library modules are imported inside the commands: every `cudalogs` start pays for the
# imports at the top of every command module, and `explain` must start fast.

app = typer.Typer(help="Validate, build and read the knowledge base.", no_args_is_help=True)
KbDirOpt = Annotated[Optional[Path], typer.Option("--kb", help="The kb/ folder (default: the checkout's).")]
DataDirOpt = Annotated[Optional[Path], typer.Option("--data", help="The data/ folder (default: the checkout's).")]


@app.command()
def validate(kb: KbDirOpt = None, data: DataDirOpt = None) -> None:
    """Check every KB entry: schema, ids, classes, regexes, placeholders, examples, near misses.

    Example: cudalogs kb validate
    """
    from cudalogs.kb.check import validate_tree

    kb_dir, data_dir = kb or default_kb_dir(), data or default_data_dir()
    if not (kb_dir / "taxonomy.toml").exists():
        raise fail(f"{kb_dir}: no taxonomy.toml here", "run from a checkout, or pass --kb PATH/kb")
    result = validate_tree(kb_dir, data_dir)
    for problem in result.problems:
        typer.echo(str(problem))
    if result.problems:
        typer.echo(f"{len(result.problems)} problem(s) in {result.entries} entries", err=True)
        raise typer.Exit(EXIT_ERROR)
    typer.echo(f"ok: {result.entries} entries, {result.examples} examples")


@app.command()
def build(kb: KbDirOpt = None, data: DataDirOpt = None,
          output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Where to write the bundle.")] = None,
          model: Annotated[bool, typer.Option("--model/--no-model", help="Also train the classifier (needs scikit-learn).")] = True,
          db: Annotated[Optional[Path], typer.Option("--db", help="Also write the search database here (SQLite, opens in Datasette).")] = None) -> None:
    """Validate, then write the bundle `explain` loads (src/cudalogs/_bundled/kb.json) and train the classifier.

    Example: cudalogs kb build
    """
    from cudalogs.kb import bundle as kb_bundle
    from cudalogs.kb.check import validate_tree

    kb_dir, data_dir = kb or default_kb_dir(), data or default_data_dir()
    result = validate_tree(kb_dir, data_dir)
    if result.bundle is None:
        for problem in result.problems:
            typer.echo(str(problem), err=True)
        raise fail("the knowledge base has problems; nothing was written", "fix them, then run `cudalogs kb build` again")
    path = kb_bundle.write(result.bundle, output or kb_bundle.BUNDLE_PATH)
    typer.echo(f"wrote {path} ({result.entries} entries) and {kb_bundle.examples_path(path).name} ({result.examples} example logs)")
    if db is not None:
        from cudalogs.kb import index
        from cudalogs.knowledge import KnowledgeBase

        typer.echo(f"wrote {index.build(KnowledgeBase.from_bundle(result.bundle), db)}")
    if not model:
        return
    from cudalogs import train

    try:
        exported = train.train(result.bundle, data_dir)
    except ImportError:
        raise fail("scikit-learn is needed to train the classifier", "pip install '.[build]', or pass --no-model") from None
    model_path, arrays_path = train.write(exported, path.with_name("model.json"))
    typer.echo(f"wrote {model_path} and {arrays_path.name} ({len(exported['classes'])} classes, {len(exported['vocab'])} terms)")


@app.command()
def show(entry_id: Annotated[str, typer.Argument(help="The entry id, e.g. ggml-no-device-code.")], format: FormatOpt = OutputFormat.text) -> None:
    """Show one KB entry: its message, root cause, fixes and references.

    Example: cudalogs kb show ggml-no-device-code
    """
    from cudalogs.knowledge import load_kb

    with errors_as_messages():
        knowledge = load_kb()
    entry = knowledge.by_id.get(entry_id)
    if entry is None:
        near = [e.id for e in knowledge.entries if entry_id.lower() in e.id][:5]
        raise fail(f"no entry {entry_id!r}", f"did you mean: {', '.join(near)}" if near else "list them with: cudalogs kb list")
    from cudalogs.kb.show import entry_json, entry_text

    write(entry_json(entry) if format is OutputFormat.json else entry_text(entry))


@app.command(name="list")
def list_entries(cls: Annotated[Optional[str], typer.Option("--class", help="Only entries of this class.")] = None) -> None:
    """List KB entries (id, class, status, title).

    Example: cudalogs kb list --class arch-not-compiled
    """
    from cudalogs.knowledge import load_kb

    with errors_as_messages():
        knowledge = load_kb()
    if cls and cls not in knowledge.taxonomy:
        raise fail(f"unknown class {cls!r}", "classes: " + ", ".join(sorted(knowledge.taxonomy)))
    for entry in knowledge.entries:
        if cls is None or entry.cls == cls or any(v.cls == cls for v in entry.variants):
            typer.echo(f"{entry.id:44s} {entry.cls:34s} {entry.status:12s} {entry.title}")

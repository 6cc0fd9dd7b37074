"""The `cudalogs` command: wiring only; each command group lives in its own module."""

from __future__ import annotations

import typer

from cudalogs.cli import eval as eval_cmd
from cudalogs.cli import explain as explain_cmd
from cudalogs.cli import gpu as gpu_cmd
from cudalogs.cli import kb as kb_cmd
from cudalogs.cli import search as search_cmd
from cudalogs.cli import serve as serve_cmd

app = typer.Typer(
    name="cudalogs",
    help="Paste a GPU error log; learn why it broke on your GPU and what to do.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command(name="explain")(explain_cmd.explain)
app.command(name="search")(search_cmd.search)
app.command(name="gpu")(gpu_cmd.gpu)
app.command(name="serve")(serve_cmd.serve)
app.command(name="eval")(eval_cmd.eval_corpus)
app.add_typer(kb_cmd.app, name="kb")


def main() -> None:
    app()

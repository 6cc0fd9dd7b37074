"""`cudalogs explain`: read a log from a file or stdin, print the diagnosis for your GPU."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, BinaryIO

import typer

from cudalogs import render
from cudalogs.cli.options import EXIT_FOUND, EXIT_NOT_FOUND, CcOpt, FormatOpt, GpuOpt, OutputFormat, errors_as_messages, fail, write
from cudalogs.pipeline import explain as run_explain

PROGRESS_EVERY = 64 << 20


def explain(
    file: Annotated[str, typer.Argument(help="The log file, or - for standard input.")] = "-",
    gpu: GpuOpt = None,
    cc: CcOpt = None,
    format: FormatOpt = OutputFormat.text,
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Colour the text report (default: when stdout is a terminal).")] = None,
    issue: Annotated[bool, typer.Option("--issue", help="The input is an issue body or chat message (Markdown): read its code blocks.")] = False,
) -> None:
    """Explain a GPU error log for your GPU.

    Example: cudalogs explain error.log --gpu "Tesla T4"   or   python train.py 2>&1 | cudalogs explain

    Exit status: 0 a diagnosis was found, 1 no known GPU error was found, 2 the input or an option was unusable.
    """
    with errors_as_messages():
        stream = _open(file)
        try:
            if issue:
                from cudalogs.pipeline import explain_issue

                report = explain_issue(stream.read().decode("utf-8", "replace"), gpu=gpu, cc=cc)
            else:
                report = run_explain(_with_progress(stream), gpu=gpu, cc=cc)
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
        if format is OutputFormat.json:
            write(render.json_text(report))
        elif format is OutputFormat.markdown:
            write(render.markdown(report))
        else:
            use_color = sys.stdout.isatty() if color is None else color
            write(render.text(report, color=use_color))
    raise typer.Exit(EXIT_FOUND if report.diagnoses else EXIT_NOT_FOUND)


def _open(file: str) -> BinaryIO:
    if file == "-":
        if sys.stdin.isatty():
            typer.echo("Paste the log, then press Ctrl-D (Ctrl-Z Enter on Windows).", err=True)
        return sys.stdin.buffer
    path = Path(file)
    if path.is_dir():
        raise fail(f"{file} is a directory; give the log file inside it")
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise fail(f"{file}: no such file", "pipe the log instead: your-command 2>&1 | cudalogs explain") from None
    except OSError as exc:
        raise fail(f"{file}: cannot read ({exc.strerror})") from None


class _Progress:
    """A read-through wrapper that reports bytes read on stderr, only when stderr is a terminal."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner, self.done, self.next_report = inner, 0, PROGRESS_EVERY

    def read(self, size: int = -1) -> bytes:
        chunk = self.inner.read(size)
        self.done += len(chunk)
        if self.done >= self.next_report:
            self.next_report += PROGRESS_EVERY
            sys.stderr.write(f"\rcudalogs: read {self.done >> 20} MiB")
            sys.stderr.flush()
        elif not chunk and self.done >= PROGRESS_EVERY:
            sys.stderr.write("\n")
        return chunk


def _with_progress(stream: BinaryIO) -> BinaryIO:
    return _Progress(stream) if sys.stderr.isatty() else stream  # type: ignore[return-value]

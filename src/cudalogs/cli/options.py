"""Options shared by the commands, and the one place library errors become messages and exit codes."""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Optional

import typer

from cudalogs.errors import CudalogsError, InputError, KBError, UnknownGpuError

EXIT_FOUND, EXIT_NOT_FOUND, EXIT_ERROR = 0, 1, 2


class OutputFormat(str, enum.Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="text for a person, json for programs, markdown for an issue comment.")]
GpuOpt = Annotated[Optional[str], typer.Option("--gpu", help="Your GPU's name (\"Tesla T4\", \"RTX 3090\", \"gfx1030\"); wins over the log.")]
CcOpt = Annotated[Optional[str], typer.Option("--cc", help="Your GPU's compute capability, e.g. 7.5; wins over the log.")]


def fail(message: str, hint: str = "") -> typer.Exit:
    """Print one line (and an optional hint) on stderr; return the Exit to raise."""
    typer.echo(f"cudalogs: error: {message}", err=True)
    if hint:
        typer.echo(f"hint: {hint}", err=True)
    return typer.Exit(EXIT_ERROR)


@contextmanager
def errors_as_messages() -> Iterator[None]:
    """Library errors -> one stderr line and exit code 2, never a traceback."""
    try:
        yield
    except UnknownGpuError as exc:
        raise fail(str(exc), "nvidia-smi --query-gpu=name,compute_cap --format=csv prints both") from None
    except InputError as exc:
        raise fail(str(exc)) from None
    except KBError as exc:
        raise fail(str(exc), "run `cudalogs kb validate` in a checkout") from None
    except CudalogsError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except BrokenPipeError:
        sys.stderr.close()
        raise typer.Exit(0) from None


def write(text: str, emit: Callable[[str], None] | None = None) -> None:
    typer.echo(text, nl=False) if emit is None else emit(text)

"""`cudalogs gpu NAME`: a GPU's profile and what the knowledge base knows about it."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cudalogs.cli.options import FormatOpt, OutputFormat, errors_as_messages, write


def gpu(
    name: Annotated[str, typer.Argument(help="A GPU name (\"Tesla T4\", \"RTX 3090\"), a compute capability (7.5) or a gfx target.")],
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Show a GPU's profile: family, compute capability, limits, the features it lacks, the entries about it.

    Example: cudalogs gpu "Tesla T4"
    """
    from cudalogs import gpu_report
    from cudalogs.gpu import resolve
    from cudalogs.knowledge import load_kb

    with errors_as_messages():
        kb = load_kb()
        found = resolve(name, None, kb.catalog)
        assert found is not None
        p = gpu_report.profile(found, kb)
    write(json.dumps(p.to_dict(), indent=2) + "\n" if format is OutputFormat.json else gpu_report.text(p))

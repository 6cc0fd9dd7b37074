"""`cudalogs eval`: score explain() on a labelled JSONL corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cudalogs.cli.options import FormatOpt, OutputFormat, errors_as_messages, write


def eval_corpus(
    corpus: Annotated[Path, typer.Argument(help="A JSONL file: one {log, class, also?, gpu_cc?, source} per line.")],
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Measure top-1/top-3 accuracy, per-class precision and recall, false positives and GPU accuracy.

    Example: cudalogs eval data/corpus/test.jsonl
    """
    from cudalogs.evaluate import read_cases, score, table
    from cudalogs.pipeline import explain

    with errors_as_messages():
        cases = read_cases(corpus)
        summary = score(cases, lambda log: explain(log).to_dict()).summary()
    write(json.dumps(summary, indent=2) + "\n" if format is OutputFormat.json else table(summary))

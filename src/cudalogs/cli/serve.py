"""`cudalogs serve`: the HTTP API and the paste-a-log page (needs the `server` extra)."""

from __future__ import annotations

from typing import Annotated

import typer

from cudalogs.cli.options import fail


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Server processes; one per CPU core for the most requests/s.")] = 1,
) -> None:
    """Serve POST /v1/explain, GET /v1/search, /v1/entries/ID, /v1/gpus/NAME, /healthz and a page at /.

    Example: cudalogs serve --port 8000   then   curl -d '{"log": "..."}' localhost:8000/v1/explain
    """
    try:
        from cudalogs.server import serve as run
    except ImportError:
        raise fail("the server needs FastAPI and uvicorn", "pip install 'cudalogs[server]'") from None
    run(host, port, workers)

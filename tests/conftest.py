"""Shared fixtures: the real KB (loaded once), a tiny KB that never changes, a CLI runner, no network."""

from __future__ import annotations

import contextlib
import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cudalogs.kb import bundle
from cudalogs.kb.check import validate_tree
from cudalogs.knowledge import KnowledgeBase, load_kb

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing in cudalogs may reach the network; loopback stays allowed for the HTTP tests."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost") and not str(address).startswith("/"):
            raise RuntimeError(f"network access in a test: {address}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="session")
def tiny_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/fixtures/tiny plus the real taxonomy and log-fact patterns."""
    root = tmp_path_factory.mktemp("tiny")
    shutil.copytree(FIXTURES / "tiny", root, dirs_exist_ok=True)
    shutil.copy(ROOT / "kb" / "taxonomy.toml", root / "kb" / "taxonomy.toml")
    shutil.copy(ROOT / "data" / "log_facts.toml", root / "data" / "log_facts.toml")
    return root


@pytest.fixture(scope="session")
def tiny_kb(tiny_tree: Path) -> KnowledgeBase:
    result = validate_tree(tiny_tree / "kb", tiny_tree / "data")
    assert result.ok, [str(p) for p in result.problems]
    return KnowledgeBase.from_bundle(result.bundle)


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    """The shipped knowledge base, as `explain` loads it."""
    return load_kb()


@pytest.fixture(scope="session")
def source_bundle() -> dict:
    return bundle.build(ROOT / "kb", ROOT / "data")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@contextlib.contextmanager
def running(app):  # type: ignore[no-untyped-def]
    """A real uvicorn server for `app` on a free loopback port; yields its base URL."""
    import threading
    import time

    uvicorn = pytest.importorskip("uvicorn")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def base_url(tiny_kb):
    """A real cudalogs server on a free loopback port, serving the tiny KB."""
    pytest.importorskip("uvicorn")
    from cudalogs.server import ServerLimits, create_app

    with running(create_app(tiny_kb, ServerLimits(max_body_bytes=64 * 1024, time_budget_s=5))) as url:
        yield url

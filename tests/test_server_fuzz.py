"""Schema-driven fuzzing of the HTTP API (schemathesis): no input may produce a 5xx."""

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from cudalogs.server import ServerLimits, create_app  # noqa: E402
from tests.conftest import FIXTURES, ROOT  # noqa: E402


def _tiny_app():
    import shutil
    import tempfile
    from pathlib import Path

    from cudalogs.kb.check import validate_tree
    from cudalogs.knowledge import KnowledgeBase

    root = Path(tempfile.mkdtemp())
    shutil.copytree(FIXTURES / "tiny", root, dirs_exist_ok=True)
    shutil.copy(ROOT / "kb" / "taxonomy.toml", root / "kb" / "taxonomy.toml")
    shutil.copy(ROOT / "data" / "log_facts.toml", root / "data" / "log_facts.toml")
    result = validate_tree(root / "kb", root / "data")
    return create_app(KnowledgeBase.from_bundle(result.bundle), ServerLimits(max_body_bytes=64 * 1024))


schema = schemathesis.openapi.from_asgi("/openapi.json", _tiny_app())


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_produces_a_server_error(case):
    case.call_and_validate(checks=[not_a_server_error])

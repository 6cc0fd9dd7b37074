"""A broken bundle file gives a KBError that says what to run, never a traceback."""

import pytest

from cudalogs.errors import KBError
from cudalogs.kb import bundle


@pytest.mark.parametrize("content", [b"\xff\xfe\x00 not utf-8", b"{not json", b"[1, 2]", b'{"format": 999}'])
def test_a_broken_bundle_is_a_clear_error(tmp_path, content):
    path = tmp_path / "kb.json"
    path.write_bytes(content)
    with pytest.raises(KBError, match="kb build"):
        bundle.read(path)


def test_a_missing_bundle_says_how_to_build_it(tmp_path):
    with pytest.raises(KBError, match="kb build"):
        bundle.read(tmp_path / "absent.json")


def test_a_bundle_without_its_example_file_says_how_to_build_it(tmp_path):
    path = tmp_path / "kb.json"
    path.write_text('{"format": %d, "entries": []}' % bundle.BUNDLE_FORMAT)
    assert bundle.read(path, examples=False)["entries"] == []  # explain does not need them
    with pytest.raises(KBError, match="kb build"):
        bundle.read(path)

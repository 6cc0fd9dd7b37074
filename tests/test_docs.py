"""Every CLI command has help text and is documented in README.md."""

from pathlib import Path

import pytest
import typer

from cudalogs.cli import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _commands(typer_app: typer.Typer, prefix: str = ""):
    for info in typer_app.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        yield f"{prefix}{name}", info.callback
    for group in typer_app.registered_groups:
        yield from _commands(group.typer_instance, f"{prefix}{group.name} ")


COMMANDS = list(_commands(app))


@pytest.mark.parametrize(("name", "callback"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_command_has_help_with_an_example(name, callback):
    doc = callback.__doc__ or ""
    assert doc.strip(), f"{name} has no help text"
    assert "Example:" in doc, f"{name}'s help shows no example"


@pytest.mark.parametrize("name", [n for n, _ in COMMANDS])
def test_command_is_in_readme(name):
    group, _, sub = name.rpartition(" ")
    assert f"cudalogs {name}" in README or (group and f"cudalogs {group}" in README and sub in README)

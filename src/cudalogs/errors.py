"""The library's own exceptions; only the CLI and HTTP adapters turn them into messages and exit codes."""

from __future__ import annotations


class CudalogsError(Exception):
    """Base class for every error cudalogs raises on purpose."""


class InputError(CudalogsError):
    """The log cannot be read as text (binary, unreadable file)."""


class KBError(CudalogsError):
    """A knowledge-base file is broken; the message names the file and the field."""

    def __init__(self, path: str, field: str, message: str) -> None:
        self.path, self.field, self.message = path, field, message
        super().__init__(f"{path}: {field}: {message}")


class UnknownGpuError(CudalogsError):
    """`--gpu` names a GPU that is not in the catalog and is not a compute capability."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name, self.suggestions = name, suggestions
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown GPU {name!r}.{hint} Or give the compute capability with --cc X.Y.")

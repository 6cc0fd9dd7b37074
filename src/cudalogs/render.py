"""Stage 6: Report -> text for a person, JSON for programs, Markdown for an issue comment.

Pure functions returning str; the CLI writes them, the HTTP API returns `to_dict`.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from cudalogs.fixes import FIND_OUT, FIND_OUT_AMD, FIND_OUT_OLD_DRIVER
from cudalogs.model import Diagnosis, Fix, Gpu, GpuContext, Report

_BOLD, _DIM, _RED, _GREEN, _YELLOW, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"


def to_dict(report: Report) -> dict[str, Any]:
    """The `--format json` document (schema documented in README.md)."""
    return {
        "schema_version": report.schema_version,
        "gpu": _gpu_dict(report.gpu),
        "environment": {"os": report.gpu.os or None, "container": report.gpu.container,
                        "wsl": report.gpu.wsl, "rocm": report.gpu.rocm,
                        "versions": report.gpu.version_map},
        "diagnoses": [_diagnosis_dict(d) for d in report.diagnoses],
        "message": report.message or None,
        "related": [{"id": i, "title": t, "score": s} for i, t, s in report.related],
        "hints": [{"feature": h.feature, "name": h.name, "needs": h.needs, "line": h.line_no, "text": h.text,
                   "entries": list(h.entries)} for h in report.hints],
        "input": {"lines": report.input.lines, "bytes": report.input.bytes,
                  "reduced": report.input.truncated, "notes": list(report.input.notes)},
    }


def json_text(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"


def _gpu_dict(ctx: GpuContext) -> dict[str, Any]:
    gpu = ctx.gpu
    return {
        "name": gpu.name if gpu else None,
        "vendor": gpu.vendor if gpu else None,
        "family": (gpu.family or None) if gpu else None,
        "compute_capability": (gpu.cc or None) if gpu else None,
        "gfx": (gpu.gfx or None) if gpu else None,
        "memory_gb": gpu.memory_gb if gpu else None,
        "source": ctx.source,
        "line": ctx.line_no,
        "evidence": ctx.evidence or None,
        "others": list(ctx.others),
    }


def _diagnosis_dict(d: Diagnosis) -> dict[str, Any]:
    return {
        "id": d.id, "class": d.cls, "title": d.title, "status": d.status, "confidence": d.confidence,
        "evidence": [{"line": e.line_no, "text": e.text} for e in d.evidence],
        "root_cause": d.root_cause,
        "fixes": [{"title": f.title, "steps": f.steps, "cost": f.cost, "applies": f.applies,
                   "condition": f.condition or None} for f in d.fixes],
        "references": list(d.references), "fields": dict(d.fields), "why_ranked": d.why_ranked,
    }


def text(report: Report, color: bool = False, width: int = 100) -> str:
    """A person's report: readable in ten seconds, the first diagnosis in full, the rest in a line."""
    c = _Colors(color)
    out = [_gpu_line(report.gpu, c)]
    if not report.diagnoses:
        out.append(c.yellow(report.message or "No known GPU error found in this log."))
        out += _hint_lines(report, c)
        out += _related_lines(report)
        return "\n".join(out + _notes(report)) + "\n"
    first, *rest = report.diagnoses
    out += _diagnosis_lines(first, c, width)
    if rest:
        out.append(c.bold("Also possible:"))
        out += [f"  {d.cls} ({d.confidence:.2f}): {d.title}" + (f"  [line {d.evidence[0].line_no}]" if d.evidence else "")
                for d in rest]  # a classifier's alternative may point at no line of its own
    return "\n".join(out + _notes(report)) + "\n"


def _gpu_line(ctx: GpuContext, c: "_Colors") -> str:
    gpu = ctx.gpu
    if gpu is None:
        if ctx.rocm:  # an AMD log: nvidia-smi is no help there, rocminfo names the gfx target
            return c.dim(f"GPU: not named in the log. Give it with --gpu NAME (find it with: {FIND_OUT_AMD})")
        return c.dim("GPU: not named in the log. Give it with --gpu NAME or --cc X.Y "
                     f"(find it with: {FIND_OUT}; before driver 510: {FIND_OUT_OLD_DRIVER})")
    arch = f"compute capability {gpu.cc}" if gpu.cc else (gpu.gfx or "")
    arch = "" if arch == gpu.name else arch  # a GPU known only by its capability is named by it already
    where = f"from line {ctx.line_no}" if ctx.source == "log" else "from --gpu/--cc"
    return c.dim(f"GPU: {gpu.name} ({', '.join(x for x in (arch, gpu.family) if x)}) {where}")


def _diagnosis_lines(d: Diagnosis, c: "_Colors", width: int) -> list[str]:
    out = [c.red(c.bold(f"{d.cls}: {d.title}")) + c.dim(f"  [{d.id}, {d.status}, confidence {d.confidence:.2f}]"), ""]
    out.append(c.bold("Evidence:"))
    out += [f"  line {e.line_no}: {e.text[:width * 2]}" for e in d.evidence]
    out += ["", c.bold("Why:")]
    out += textwrap.wrap(d.root_cause, width, initial_indent="  ", subsequent_indent="  ")
    out += ["", c.bold("What to do:")]
    out += _fix_lines(d.fixes, c, width) or ["  No fix in the knowledge base applies to this GPU; see the references."]
    if d.references:
        out += ["", c.bold("References:")] + [f"  {r}" for r in d.references]
    return out


def _fix_lines(fixes: tuple[Fix, ...], c: "_Colors", width: int) -> list[str]:
    out: list[str] = []
    ordered = [f for f in fixes if f.applies] + [f for f in fixes if f.applies is None]
    for i, fix in enumerate(ordered, 1):
        prefix = "" if fix.applies else c.yellow("(depends on your setup: applies if " + fix.condition + ") ")
        out.append(f"  {i}. {prefix}{c.green(fix.title)}")
        out += [f"       {line}" for line in fix.steps.splitlines() if line.strip()]
        if fix.cost:
            out += textwrap.wrap(f"Cost: {fix.cost}", width, initial_indent="     ", subsequent_indent="       ")
    if any(f.applies is None for f in fixes):
        out.append(c.dim(f"  To see which apply, name your GPU: --gpu NAME (find it with: {FIND_OUT} or {FIND_OUT_AMD})"))
    return out


def _hint_lines(report: Report, c: "_Colors") -> list[str]:
    """What the log mentions that this GPU lacks: a pointer for the user, not a diagnosis (see hints.py)."""
    gpu = report.gpu.gpu
    if not report.hints or gpu is None:
        return []
    out = [c.bold(f"But {_hint_heading(gpu)}:")]
    for h in report.hints:
        out.append(f"  {h.name}: needs {h.needs}  [line {h.line_no}]")
        out += [f"    if that is what failed: cudalogs kb show {e}" for e in h.entries[:2]]
    return out


def _hint_heading(gpu: Gpu) -> str:
    return f"{gpu.name} (compute capability {gpu.cc}) lacks what this log mentions"


def _related_lines(report: Report) -> list[str]:
    if not report.related:
        return []
    return ["Possibly related:"] + [f"  {i} ({s:.2f}): {t}" for i, t, s in report.related]


def _notes(report: Report) -> list[str]:
    return [f"note: {n}" for n in report.input.notes]


def markdown(report: Report) -> str:
    """An issue-bot comment: headings, the evidence as code, fixes as a list."""
    gpu = report.gpu.gpu
    out = ["### cudalogs diagnosis", ""]
    out.append((gpu.name if not gpu.named else
                f"{gpu.name} (compute capability {gpu.cc or gpu.gfx or '?'})").join(("**GPU:** ", "")) if gpu else
               (f"**GPU:** not named in the log (run `{FIND_OUT_AMD}`)" if report.gpu.rocm else
                f"**GPU:** not named in the log (run `{FIND_OUT}`, or `{FIND_OUT_OLD_DRIVER}` before driver 510)"))
    out.append("")
    if not report.diagnoses:
        out.append(report.message or "No known GPU error found in this log.")
        if report.hints and gpu is not None:
            out += ["", f"{_hint_heading(gpu)}; if that is what failed:"]
            out += [f"- {h.name}: needs {h.needs} (line {h.line_no})"
                    + "".join(f"; see `cudalogs kb show {e}`" for e in h.entries[:2]) for h in report.hints]
        return "\n".join(out) + "\n"
    for rank, d in enumerate(report.diagnoses, 1):
        out += _markdown_diagnosis(d, full=(rank == 1))
    return "\n".join(out) + "\n"


def _markdown_diagnosis(d: Diagnosis, full: bool) -> list[str]:
    head = f"#### {d.cls}: {d.title}" if full else f"- also possible: **{d.cls}**: {d.title} (confidence {d.confidence:.2f})"
    if not full:
        return [head]
    out = [head, f"`{d.id}` · {d.status} · confidence {d.confidence:.2f}", "", "```"]
    out += [f"{e.line_no}: {e.text}" for e in d.evidence] + ["```", "", f"**Why:** {d.root_cause}", "", "**What to do:**"]
    for fix in d.fixes:
        tag = "" if fix.applies else f" _(if `{fix.condition}`)_"
        out.append(f"1. **{fix.title}**{tag}")
        if fix.steps:
            out += ["   ```", *[f"   {line}" for line in fix.steps.splitlines()], "   ```"]
        if fix.cost:
            out.append(f"   Cost: {fix.cost}")
    if d.references:
        out += ["", "References: " + ", ".join(d.references)]
    return out + [""]


class _Colors:
    def __init__(self, on: bool) -> None:
        self.on = on

    def _wrap(self, code: str, s: str) -> str:
        return f"{code}{s}{_RESET}" if self.on else s

    def bold(self, s: str) -> str:
        return self._wrap(_BOLD, s)

    def dim(self, s: str) -> str:
        return self._wrap(_DIM, s)

    def red(self, s: str) -> str:
        return self._wrap(_RED, s)

    def green(self, s: str) -> str:
        return self._wrap(_GREEN, s)

    def yellow(self, s: str) -> str:
        return self._wrap(_YELLOW, s)

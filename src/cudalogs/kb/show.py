"""Render one KB entry for `cudalogs kb show` (text or JSON)."""

from __future__ import annotations

import json

from cudalogs.model import Entry


def entry_text(entry: Entry) -> str:
    out = [f"{entry.id}  [{entry.cls}, {entry.status}, {entry.family}]", entry.title, "", "Signatures:"]
    out += [f"  {s.pattern}" for s in entry.signatures]
    out += ["", "Root cause:", f"  {entry.root_cause}", "", "Fixes:"]
    for variant in entry.variants:
        out.append(f"  when {variant.when}: class {variant.cls or entry.cls}")
        out += [f"    - {f.title}" + (f"  (when {f.when})" if f.when else "") for f in variant.fixes]
    out += [f"  - {f.title}" + (f"  (when {f.when})" if f.when else "") for f in entry.fixes]
    out += ["", "References:"] + [f"  {r}" for r in entry.references]
    out += ["", f"Examples: {len(entry.examples)} ({', '.join(e.source for e in entry.examples)})"]
    return "\n".join(out) + "\n"


def entry_json(entry: Entry) -> str:
    doc = {
        "id": entry.id, "class": entry.cls, "title": entry.title, "status": entry.status, "family": entry.family,
        "severity": entry.severity, "specificity": entry.specificity,
        "signatures": [s.pattern for s in entry.signatures], "root_cause": entry.root_cause,
        "variants": [{"when": v.when, "class": v.cls or entry.cls} for v in entry.variants],
        "fixes": [{"title": f.title, "steps": f.steps, "cost": f.cost, "when": f.when or None} for f in entry.fixes],
        "references": list(entry.references), "examples": [e.source for e in entry.examples],
    }
    return json.dumps(doc, indent=2) + "\n"

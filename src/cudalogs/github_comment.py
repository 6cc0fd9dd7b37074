"""`python -m cudalogs.github_comment`: the script behind examples/github-action.

Reads the GitHub event payload, explains the issue body, and posts (or updates, found by a
hidden marker, the way PyTorch's Dr. CI does) one Markdown comment, only for a confident diagnosis.
The HTTP client is injected so that tests run the real logic on a real payload shape offline.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from collections.abc import Callable
from typing import Any

from cudalogs.pipeline import explain_issue
from cudalogs.render import markdown

MARKER = "<!-- cudalogs:diagnosis -->"
API = "https://api.github.com"
Http = Callable[[str, str, dict[str, Any] | None], Any]  # method, url, json body -> parsed JSON


def comment_for(event: dict[str, Any], min_confidence: float) -> str | None:
    """The comment body for this issue event, or None when there is no confident diagnosis."""
    issue = event.get("issue") or {}
    body = issue.get("body") or ""
    if not body.strip():
        return None
    report = explain_issue(body)
    if not report.diagnoses or report.diagnoses[0].confidence < min_confidence:
        return None
    return f"{MARKER}\n{markdown(report)}"


def run(event: dict[str, Any], http: Http, min_confidence: float = 0.6) -> str:
    """Post or update the comment; returns what was done ('created', 'updated', 'skipped')."""
    text = comment_for(event, min_confidence)
    if text is None:
        return "skipped"
    comments_url = event["issue"]["comments_url"]
    for comment in http("GET", comments_url + "?per_page=100", None) or []:
        if MARKER in (comment.get("body") or ""):
            if comment["body"] != text:
                http("PATCH", comment["url"], {"body": text})
            return "updated"
    http("POST", comments_url, {"body": text})
    return "created"


def _github(token: str) -> Http:
    def call(method: str, url: str, body: dict[str, Any] | None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers={
            "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"null")

    return call


def main() -> None:
    path, token = os.environ.get("GITHUB_EVENT_PATH"), os.environ.get("GITHUB_TOKEN")
    if not path or not token:
        sys.exit("cudalogs.github_comment: needs GITHUB_EVENT_PATH and GITHUB_TOKEN (run it from a workflow)")
    with open(path, encoding="utf-8") as fh:
        event = json.load(fh)
    print(run(event, _github(token), float(os.environ.get("CUDALOGS_MIN_CONFIDENCE", "0.6"))))


if __name__ == "__main__":
    main()

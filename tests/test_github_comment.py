"""The issue-bot script on a real payload shape: one comment, updated in place, only when confident."""

import pytest

from cudalogs import github_comment, pipeline

P104 = ("vec_dot_q8_0_q8_1_impl has no device code compatible with CUDA arch 610. "
        "ggml-cuda.cu was compiled for: 500,600,700,750,800,900")


@pytest.fixture(autouse=True)
def _tiny(monkeypatch, tiny_kb):
    monkeypatch.setattr(pipeline, "load_kb", lambda **_: tiny_kb)


def event(body):
    # The fields GitHub's `issues` event carries that the script reads (trimmed real shape).
    return {"action": "opened", "issue": {"number": 7, "body": body,
            "comments_url": "https://api.github.com/repos/o/r/issues/7/comments"}}


class FakeGitHub:
    def __init__(self, comments=()):
        self.comments, self.calls = list(comments), []

    def __call__(self, method, url, body):
        self.calls.append((method, url, body))
        return self.comments if method == "GET" else {}


def test_a_confident_diagnosis_is_posted_once():
    gh = FakeGitHub()
    assert github_comment.run(event(f"```\n{P104}\n```"), gh, 0.5) == "created"
    method, url, body = gh.calls[-1]
    assert (method, url) == ("POST", "https://api.github.com/repos/o/r/issues/7/comments")
    assert body["body"].startswith(github_comment.MARKER)


def test_an_edit_updates_the_same_comment():
    old = {"url": "https://api.github.com/repos/o/r/issues/comments/1", "body": github_comment.MARKER + "\nold"}
    gh = FakeGitHub([{"url": "x", "body": "thanks!"}, old])
    assert github_comment.run(event(P104), gh, 0.5) == "updated"
    assert gh.calls[-1][0:2] == ("PATCH", old["url"])


def test_nothing_is_posted_without_a_confident_diagnosis():
    gh = FakeGitHub()
    assert github_comment.run(event("How do I install this?"), gh) == "skipped"
    assert github_comment.run(event(P104), gh, 0.999) == "skipped"
    assert gh.calls == []

"""The HTTP API, started for real on loopback: every endpoint, the limits, no stack traces."""

import json
import urllib.error
import urllib.request

import pytest

from tests.conftest import running

pytest.importorskip("uvicorn")

P104_LINE = ("vec_dot_q8_0_q8_1_impl has no device code compatible with CUDA arch 610. "
             "ggml-cuda.cu was compiled for: 500,600,700,750,800,900\n")


def call(url, data=None, content_type="application/json"):
    req = urllib.request.Request(url, data=data, headers={"Content-Type": content_type} if data is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def post(base_url, payload):
    status, body = call(f"{base_url}/v1/explain", json.dumps(payload).encode())
    return status, json.loads(body)


def test_explain_a_log(base_url):
    status, doc = post(base_url, {"log": P104_LINE, "cc": "6.1"})
    assert status == 200
    assert doc["report"]["diagnoses"][0]["class"] == "arch-not-compiled"
    assert doc["markdown"].startswith("### cudalogs diagnosis")


def test_explain_an_issue_body(base_url):
    status, doc = post(base_url, {"issue_body": "### Bug\nIt fails:\n```\n" + P104_LINE + "```\n", "gpu": "GeForce GTX 1080"})
    assert status == 200
    assert doc["report"]["gpu"]["compute_capability"] == "6.1"


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        (b"", 400, "empty body"),
        (b"{not json", 400, "body is not JSON"),
        (b"[1, 2]", 400, "body must be a JSON object"),
        (b"\xff\xfe\x00", 400, "not UTF-8"),
        (json.dumps({"log": "x", "issue_body": "y"}).encode(), 422, "exactly one of"),
        (json.dumps({"log": 5}).encode(), 422, "log"),
        (json.dumps({"log": "a\u0000b"}).encode(), 400, "NUL bytes"),
        (json.dumps({"log": "x", "gpu": "GTX 9999 Ultra"}).encode(), 422, "unknown GPU"),
        (json.dumps({"log": "x" * 100_000}).encode(), 413, "request body over 65536 bytes"),
    ],
)
def test_bad_requests_get_a_clear_4xx(base_url, data, status, message):
    got, body = call(f"{base_url}/v1/explain", data)
    assert got == status
    doc = json.loads(body)
    assert message in doc["error"]
    assert "Traceback" not in body.decode()


def test_the_server_keeps_serving_after_bad_input(base_url):
    call(f"{base_url}/v1/explain", b"\x00" * 100)
    assert call(f"{base_url}/healthz") == (200, b'{"status":"ok","entries":1}')


def test_search_entries_gpus(base_url):
    status, body = call(f"{base_url}/v1/search?q=no+device+code")
    assert status == 200 and json.loads(body)[0]["id"] == "ggml-no-device-code"
    status, body = call(f"{base_url}/v1/entries/ggml-no-device-code")
    assert status == 200 and json.loads(body)["class"] == "arch-not-compiled"
    assert call(f"{base_url}/v1/entries/nope")[0] == 404
    status, body = call(f"{base_url}/v1/gpus/Tesla%20T4")
    assert status == 200 and json.loads(body)["compute_capability"] == "7.5"


def test_openapi_and_page(base_url):
    status, body = call(f"{base_url}/openapi.json")
    assert status == 200 and "/v1/explain" in json.loads(body)["paths"]
    status, body = call(f"{base_url}/")
    assert status == 200 and b"<textarea" in body


def test_a_request_over_the_time_budget_gets_504_and_the_server_goes_on(tiny_kb):
    from cudalogs.server import ServerLimits, create_app

    with running(create_app(tiny_kb, ServerLimits(time_budget_s=1e-9))) as url:
        status, doc = post(url, {"log": P104_LINE})
        assert status == 504 and "budget" in doc["error"]
        assert call(f"{url}/healthz")[0] == 504  # every request has the same budget; the server still answers


def test_each_request_writes_one_json_access_log_line(base_url, caplog):
    import logging

    import time

    with caplog.at_level(logging.INFO, logger="cudalogs.access"):
        post(base_url, {"log": P104_LINE})
        for _ in range(100):  # the line is written once the response has gone out: wait for the server thread
            if any(r.name == "cudalogs.access" for r in caplog.records):
                break
            time.sleep(0.02)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "cudalogs.access"]
    assert [(entry["method"], entry["path"], entry["status"]) for entry in lines] == [("POST", "/v1/explain", 200)]


def test_serve_with_two_workers_answers_and_stops_cleanly(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "cudalogs", "serve", "--port", str(port), "--workers", "2"],
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                status, body = call(f"http://127.0.0.1:{port}/healthz")
                break
            except OSError:
                time.sleep(0.05)
        assert status == 200 and json.loads(body)["status"] == "ok"
        assert post(f"http://127.0.0.1:{port}", {"log": P104_LINE, "cc": "6.1"})[0] == 200
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    with socket.socket() as s:  # both workers are gone: nothing listens on the port any more
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # connections may linger in TIME_WAIT
        s.bind(("127.0.0.1", port))

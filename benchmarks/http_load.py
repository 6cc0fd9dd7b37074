"""Load benchmark of `POST /v1/explain` on loopback: 5 KB logs at a fixed concurrency for a bounded time.

Starts `cudalogs serve` (uvicorn) as a child process on a free 127.0.0.1 port, drives it with
asyncio clients over raw HTTP/1.1 keep-alive connections, prints requests/s and latency
percentiles, then stops the server. Traffic never leaves loopback; the loop is bounded in time.
Usage: python benchmarks/http_load.py [--concurrency 16] [--seconds 10] [--workers 1] [--uvicorn-workers]
(`--uvicorn-workers` runs uvicorn's own multi-process mode, one shared socket, instead of `cudalogs serve`'s)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

LOG_5KB = (
    "Loading checkpoint shards: 100%|##########| 8/8 [00:05<00:00,  1.48it/s]\n" * 40
    + "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
      "Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the"
      "`dtype` flag in CLI, for example: --dtype=half.\n"
)[:5 * 1024]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, workers: int, uvicorn_workers: bool = False) -> subprocess.Popen:
    if uvicorn_workers:
        cmd = [sys.executable, "-m", "uvicorn", "cudalogs.server:create_app", "--factory", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning", "--no-access-log", "--workers", str(workers)]
    else:
        cmd = [sys.executable, "-m", "cudalogs", "serve", "--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)  # the access log is still written, to nowhere
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start")


async def client(port: int, body: bytes, until: float, latencies: list[float], errors: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"POST /v1/explain HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    while time.perf_counter() < until:
        start = time.perf_counter()
        writer.write(head + body)
        await writer.drain()
        status_line = await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
        latencies.append(time.perf_counter() - start)
        if not status_line.startswith(b"HTTP/1.1 200"):
            errors.append(1)
    writer.close()


async def drive(port: int, concurrency: int, seconds: float) -> tuple[list[float], list[int]]:
    body = json.dumps({"log": LOG_5KB}).encode()
    latencies: list[float] = []
    errors: list[int] = []
    until = time.perf_counter() + seconds
    await asyncio.gather(*(client(port, body, until, latencies, errors) for _ in range(concurrency)))
    return latencies, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--uvicorn-workers", action="store_true", help="uvicorn's --workers (one shared socket)")
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, args.workers, args.uvicorn_workers)
    try:
        asyncio.run(drive(port, args.concurrency, 1.0))  # warm-up: first requests load the KB
        latencies, errors = asyncio.run(drive(port, args.concurrency, args.seconds))
    finally:
        server.terminate()
        server.wait(timeout=10)
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    mode = "uvicorn --workers" if args.uvicorn_workers else "cudalogs serve --workers"
    print(f"POST /v1/explain, 5 KB logs, concurrency {args.concurrency}, {mode} {args.workers}, {args.seconds:g} s: "
          f"{len(latencies) / args.seconds:.0f} requests/s, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms, "
          f"mean {statistics.mean(latencies) * 1000:.1f} ms, errors {len(errors)}")


if __name__ == "__main__":
    main()

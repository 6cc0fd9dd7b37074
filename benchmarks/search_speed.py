"""Benchmark search(): median latency of the README's example queries after start-up (database built).

Usage: python benchmarks/search_speed.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

from cudalogs.knowledge import load_kb
from cudalogs.search import search

QUERIES = ["flash attention turing", "no kernel image T4", "bf16 v100", "6700 xt rocm",
           "CUDA error: no kernel image is available for execution on the device"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    kb = load_kb()
    search("warm up", kb=kb)  # builds the database once, as the first real search would
    times = []
    for i in range(args.runs):
        query = QUERIES[i % len(QUERIES)]
        start = time.perf_counter()
        search(query, kb=kb)
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"search over {len(kb.entries)} entries, {args.runs} queries: median {statistics.median(times) * 1000:.2f} ms, "
          f"p99 {times[int(0.99 * len(times)) - 1] * 1000:.2f} ms")


if __name__ == "__main__":
    main()

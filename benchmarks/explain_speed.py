"""Benchmark `cudalogs explain FILE` end to end, as a user runs it (interpreter start-up included).

Prints the median wall time on a 50 KB log and the time and peak memory (max RSS) on a big log.
Usage: python benchmarks/explain_speed.py [--runs 15] [--big-mb 1024] [--quick]
`--quick` (CI smoke run) uses 3 runs and a 20 MB big log so the script cannot rot.

NOTE: the child runs without PYTHONDONTWRITEBYTECODE. Some sandboxes set it, which makes every run of an
editable install recompile all of cudalogs from source (about 60 ms here); a normal install writes the
bytecode once (pip at install time, or Python on the first run) and reads it afterwards, which is what a
user's runs look like. The warm-up run below writes it. The interpreter's own start-up is printed too.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOISE = [
    "Epoch 3/10 step 1200/5000 loss=0.4123 lr=2.0e-05 grad_norm=1.02 tokens/s=5321.2\n",
    "[INFO] 2024-06-01 12:00:01,123 trainer.py:412 saving checkpoint to /data/runs/exp42/ckpt-1200\n",
    "Loading checkpoint shards:  62%|######2   | 5/8 [00:03<00:01,  1.66it/s]\n",
    "  warnings.warn(\n",
]
ERROR = (
    "ggml_cuda_init: found 1 CUDA devices:\n"
    "  Device 0: Tesla V100-SXM2-32GB, compute capability 7.0, VMM: yes\n"
    "mul_mat_q has no device code compatible with CUDA arch 700. ggml-cuda.cu was compiled for: "
    "500,520,530,600,610,620,700,720,750,800,860,870,890,900\n"
)


def write_log(path: Path, size: int) -> None:
    """Noise up to `size` bytes with the error two thirds of the way in."""
    block = "".join(NOISE) * 200
    with path.open("w") as fh:
        written, placed = 0, False
        while written < size:
            if not placed and written >= size * 2 // 3:
                fh.write(ERROR)
                written += len(ERROR)
                placed = True
            fh.write(block)
            written += len(block)
        if not placed:
            fh.write(ERROR)


CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(log: Path) -> tuple[float, int]:
    """Wall seconds and the child's max RSS in MB for one `cudalogs explain` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cudalogs", "explain", str(log), "--format", "json"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=CHILD_ENV)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"explain failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) // 1024


def console_script_once(log: Path) -> float:
    exe = Path(sys.executable).with_name("cudalogs")
    cmd = [str(exe)] if exe.exists() else ["cudalogs"]
    start = time.perf_counter()
    subprocess.run([*cmd, "explain", str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=CHILD_ENV)
    return time.perf_counter() - start


def _interpreter_once() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=False, env=CHILD_ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--big-mb", type=int, default=1024)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs, big_mb = (3, 20) if args.quick else (args.runs, args.big_mb)
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.log"
        write_log(small, 50 * 1024)
        console_script_once(small)  # warm the file cache and any compiled-regex cache
        walls = sorted(console_script_once(small) for _ in range(runs))
        bare = sorted(_interpreter_once() for _ in range(5))
        print(f"explain 50 KB log (console script, {runs} runs): median {statistics.median(walls):.3f} s, "
              f"min {walls[0]:.3f} s, max {walls[-1]:.3f} s (of which the bare interpreter, "
              f"`python -c pass`: {statistics.median(bare):.3f} s)")
        big = Path(tmp) / "big.log"
        write_log(big, big_mb * 1024 * 1024)
        wall, peak = run_once(big)
        print(f"explain {big_mb} MB log: {wall:.1f} s, peak memory (max RSS) {peak} MB, "
              f"{big_mb / wall:.1f} MB/s")
        os.remove(big)


if __name__ == "__main__":
    main()

"""Paste damage: does each KB example keep its first diagnosis when the log arrives the way users paste it?

Usage: python benchmarks/paste_damage.py [--every N]   (N > 1 takes every Nth example, for a quick look)

Users rarely paste a log as the program printed it: a GitHub reply quotes it ("> "), docker compose prefixes
every line with the service name, a terminal or an e-mail client wraps it, a web page escapes its quotes, a
Windows console adds colour codes and CRLF, a chat message flattens it onto one line. The KB's example logs are
verbatim, so this takes each one, damages it in each of those ways, and counts how often `explain` still gives the
same first class, gives none, or gives another. The compose prefix is expected to move some no-gpu-visible answers
to container-gpu-access: the prefix itself says the program runs in a container.
"""

from __future__ import annotations

import argparse
import html
import textwrap
from collections.abc import Callable
from multiprocessing import Pool

from cudalogs.knowledge import load_kb
from cudalogs.pipeline import explain


def _each_line(prefix: str) -> Callable[[str], str]:
    return lambda log: "\n".join(prefix + line for line in log.splitlines())


def _word_wrap(width: int) -> Callable[[str], str]:
    def wrap(log: str) -> str:
        out: list[str] = []
        for line in log.splitlines():
            out += textwrap.wrap(line, width, break_on_hyphens=False, drop_whitespace=False) or [""]
        return "\n".join(out)
    return wrap


DAMAGE: dict[str, Callable[[str], str]] = {
    "github quote '> '": _each_line("> "),
    "compose prefix": _each_line("app-1  | "),
    "markdown indent": _each_line("    "),
    "timestamp prefix": _each_line("2024-05-01T12:00:00.123Z "),
    "html-escaped": html.escape,
    "ansi colour + crlf": lambda log: "\r\n".join(f"\x1b[31m{line}\x1b[0m" for line in log.splitlines()),
    "word wrap at 100": _word_wrap(100),
    "word wrap at 80": _word_wrap(80),
    "one line": lambda log: " ".join(log.split()),
}


def _first_class(log: str) -> str | None:
    diagnoses = explain(log).diagnoses
    return diagnoses[0].cls if diagnoses else None


def _compare(log: str) -> tuple[str | None, list[str | None]]:
    return _first_class(log), [_first_class(damage(log)) for damage in DAMAGE.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="take every Nth example (default: all)")
    args = parser.parse_args()
    logs = [ex.log for entry in load_kb().entries for ex in entry.examples][:: max(1, args.every)]
    with Pool(2) as pool:
        results = pool.map(_compare, logs, chunksize=40)
    answered = [(base, damaged) for base, damaged in results if base]
    print(f"{len(logs)} example logs, {len(answered)} answered as pasted")
    print("| damage | same first class | no answer | another class |\n|---|---|---|---|")
    for n, name in enumerate(DAMAGE):
        same = sum(1 for base, damaged in answered if damaged[n] == base)
        silent = sum(1 for _, damaged in answered if damaged[n] is None)
        print(f"| {name} | {same / len(answered):.3f} | {silent} | {len(answered) - same - silent} |")


if __name__ == "__main__":
    main()

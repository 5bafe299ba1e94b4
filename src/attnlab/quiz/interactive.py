"""The quiz in a terminal: ask each item, check each answer, keep score; stops cleanly at EOF."""

from __future__ import annotations

from typing import Callable, TextIO
import sys

from .bank import Item
from .check import MANUAL, RIGHT, UNREADABLE, check
from .kinds import KINDS
from .variants import illustration

TRIES = 3


def run(
    *,
    items: dict[str, Item],
    student: str | None = None,
    read: Callable[[], str] | None = None,
    out: TextIO | None = None,
) -> int:
    """Ask every item in turn (up to three tries each); return the number answered right.

    The session is practice: it counts right answers, not points (a practice item is worth no
    points in the graded quiz, yet is what a student can check here)."""
    out = out or sys.stdout
    read = read or _read_line
    ill = illustration(student=student)
    total = sum(KINDS[i.type].has_key for i in items.values())
    score = 0
    print("Attention Lab quiz. Type an answer and press Enter; an empty line skips; Ctrl-D quits.", file=out)
    for number, item in enumerate(items.values(), 1):
        print(f"\n[{number}/{len(items)}] {item.title} ({item.points:g} pt)\n{ill.render(item.prompt)}", file=out)
        for label, text in item.options.items():
            print(f"  {label}) {text}", file=out)
        if not KINDS[item.type].has_key:
            print(check(item, "").message, file=out)
            continue
        for _ in range(TRIES):
            try:
                answer = read()
            except (EOFError, KeyboardInterrupt):
                print(f"\nStopped. Right: {score} of {total} questions", file=out)
                return score
            if not answer.strip():
                break
            verdict = check(item, answer, student=student)
            print(verdict.message, file=out)
            if verdict.status == RIGHT:
                score += 1
                break
            if verdict.status == MANUAL:
                break
            if verdict.status != UNREADABLE:
                print("Try again (or press Enter to skip).", file=out)
    print(f"\nDone. Right: {score} of {total} questions", file=out)
    return score


def _read_line() -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")

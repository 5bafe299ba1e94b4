"""How long and how much a submission may take: one call, one statement, the whole submission,
memory, restarts. Its own module, without numpy, so that ``attnlab grade`` can start its workers
(which need the limits) before importing the grading engine."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    call: float = 10.0  # one call of a student function
    statement: float = 30.0  # one top-level statement while executing the submission
    wall: float = 300.0  # the whole submission
    memory_mb: int = 2048
    restarts: int = 5  # fresh sandboxes after crashes and timeouts
    strikes: int = 2  # timeouts after which a function is not called again
    output: int = 64 * 1024  # bytes of stdout/stderr kept

    @classmethod
    def from_timeout(cls, timeout: float, memory_mb: int) -> "Limits":
        return cls(call=timeout, statement=3 * timeout, wall=30 * timeout, memory_mb=memory_mb)

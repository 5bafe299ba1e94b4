"""The grading channel, every message in one table: who sends it, what it carries, what comes back,
and the limits that hold. ``tests/grade/test_protocol.py`` checks that each side handles exactly
these requests.

Three parties. The *worker* is trusted: it holds the tests and the oracle. The *zygote* is trusted
too: it never loads a test file or runs student code; it forks sandboxes. The *sandbox* runs the
student's code, in its own namespaces and allow-list root, as an unprivileged user (where user
namespaces are refused: confined by Landlock and a stricter system-call allow-list instead; the
README's security model has a row per mode).

Framing (``wire.py``): a 4-byte length (at most ``wire.MAX_FRAME``), the message's type (request,
reply, error), its number and a request's kind, then the body in a tagged encoding of plain data
only: None, bool, int (at most 4000 digits), float, complex, str, bytes, list, tuple, dict, numpy
arrays and scalars of numeric or bool dtype (decoded as fresh base-class ``ndarray``s), and two
references: ``Ref(name)``, a student function by name, and ``Handle(n)``, a function the worker lends
for the duration of one call (numbers are never reused). A handle is a number and nothing else:
whatever the lent function is (pure or stateful, with or without a table of known answers), the
sandbox can only call it, and each call is a ``cb`` request the worker answers; a function's table
of known answers stays in the worker, which answers calls on those inputs from it. The table is
``known_answers()``: stacked inputs and outputs of a pure function, or stacked inputs and a tuple of
stacked outputs, one for each way of answering, of which ``pick(i)`` names the one that answers the
call on ``inputs[i]`` now (it may decide from the calls before). A ``cb`` whose arguments are one
array (a checker calling its probe, about a thousand times per submission) travels in a short form,
the handle's number and the array, and the worker answers one in a table from the array's bytes.
Timing shows a table's answer from a computed one; so the oracle lends every probe it tables in the
second form with the same ``pick``, the stateful probe too, and a checker's calls on X and its
reorderings take the same time whichever it holds (``benchmarks/timing_channel.py``). Nothing is
unpickled; any malformed frame raises ``WireError`` (the general decoder and the fast paths for one
array alike), which costs the submission that sent it its sandbox, never the worker; an exception
while the worker grades one submission fails that submission's remaining cases, and a worker whose
resident size has grown past ``worker.MAX_GROWTH`` after a submission starts afresh.

Worker -> sandbox (each with a deadline: the request's CPU seconds of the sandbox's own cgroup, or
without one of its own process, and ``Sandbox.WALL_FACTOR`` times that of wall time; sends are
bounded by the same deadline):
"""

from __future__ import annotations

from typing import NamedTuple


class Message(NamedTuple):
    kind: str
    sender: str
    body: str
    reply: str
    limit: str


WORKER_TO_SANDBOX = (
    Message(
        "file",
        "worker",
        "(file name, bytes)",
        "None: the submission is written to the sandbox's working folder",
        "statement limit",
    ),
    Message(
        "load",
        "worker",
        "[cell source, ...]",
        "per cell: [statement line, ...] or (error type, "
        "message, line); IPython syntax is converted here, in the sandbox",
        "statement limit",
    ),
    Message(
        "exec",
        "worker",
        "(cell, statement)",
        "None or (error type, message, line)",
        "statement limit, bounded by what is left of the submission's wall limit",
    ),
    Message(
        "run",
        "worker",
        "(prelude source or None, [cell source, ...])",
        "per cell: None or (error type, message, line), each cell compiled whole from its text and run "
        "to its first error (the prelude first); None if the prelude failed. The fast path: when it "
        "fails in any way, a fresh sandbox runs the submission again with load and exec",
        "statement limit, bounded by what is left of the submission's wall limit",
    ),
    Message(
        "names",
        "worker",
        "snapshot: bool",
        "(snapshot number or None, {name: ('function', signature) | ('value', plain data) | ('opaque', type name)})",
        "call limit",
    ),
    Message(
        "calls",
        "worker",
        "None",
        "{function: [the other functions the submission defines that its code names]}: whose "
        "reference a question's cases are lent besides those the solution's call graph gives",
        "call limit",
    ),
    Message(
        "call",
        "worker",
        "(name, snapshot or None, args, kwargs, {global name: Handle}): plain data, Refs, Handles; "
        "the last lends references that stand in for the submission's globals of those names during "
        "this call only",
        "(result, [positions or keyword names of arguments changed in place]); the worker's own "
        "arrays are never changed. An error reply: (type name, standard base, message, the submission's "
        "line that raised: (cell, line, text) or None), the text at most 200 characters",
        "call limit",
    ),
)

SANDBOX_TO_WORKER = (
    Message(
        "cb",
        "sandbox",
        "(handle, args, kwargs)",
        "the lent function's result, or (type, type, "
        "short message) of its error; a handle is valid only while the call that lent it runs",
        "served by the worker, growing its resident size by no more than a sandbox's memory; its time is paused on the "
        "request it interrupts, up to that request's CPU limit in all",
    ),
    Message(
        "check",
        "sandbox",
        "question name or '*'",
        "None. Only while the submission first runs: "
        "the worker snapshots the names and runs that question's PUBLIC cases; its hidden cases "
        "run after the submission has finished, against the snapshot",
        "at most 20 per submission",
    ),
)

WORKER_TO_ZYGOTE = (
    Message(
        "allow",
        "worker",
        "first and once, as JSON (launch.Launched.allow): the sandboxes' user id and group id, and "
        "the assignment's packages and its slow optional modules (sandbox.yaml's preload); the zygote "
        "reads it once it has imported numpy",
        "none: the zygote's ('ready', mode, what isolates its sandboxes, the strongest mode this "
        "machine offers) comes once it is ready",
        "60 s socket timeout",
    ),
    Message(
        "load",
        "worker",
        "(modules,): optional ones (preloads.OPTIONAL and the assignment's) that a submission is going "
        "to import, named before its spawn (attnlab check, while it loads its tests)",
        "none: the zygote imports them, once, before it reads the next request",
        "60 s socket timeout",
    ),
    Message(
        "spawn",
        "worker",
        "(modules,) with two file descriptors: the channel and the output pipe. The zygote first "
        "imports those of the optional modules it has not imported yet (preloads.wanted: read off the "
        "submission's text) and ends a sandbox it started before them",
        "('spawned', sandbox pid, CPU-time file or None), with two file descriptors in place of the "
        "worker's when the sandbox was started before the request (the zygote's trial's, or, with "
        "namespaces, the one it starts after each spawn; never used before)",
        "60 s socket timeout",
    ),
    Message(
        "kill",
        "worker",
        "(sandbox pid, wait: bool)",
        "with wait, ('killed', wait status, whether all is gone); without, no reply: the zygote kills "
        "it before it reads the next request. The PID namespace dies with its first process; the "
        "cgroup (as root) is removed once the sandbox itself is reaped",
        "60 s socket timeout",
    ),
    Message("quit", "worker", "()", "none: the zygote kills what runs and exits", "10 s, then SIGKILL"),
)

LIMITS = {
    "call": "one call of a student function: --timeout CPU seconds (default 10)",
    "statement": "one top-level statement while the submission runs: 3x the call limit",
    "wall": "the whole submission: 30x the call limit",
    "memory": "--memory-mb for the sandbox's whole process tree where cgroups exist, and per process",
    "processes": "64 per sandbox (cgroup pids, or RLIMIT_NPROC for its own user id; under Landlock, its "
    "user's processes at its start plus 64)",
    "output": "stdout and stderr drained continuously; the first 64 KiB kept for the instructor",
    "frame": "64 MiB per message; 1,000,000 items; depth 64; at most 8 keys of a dict with one hash",
}


def requests_served_by(side: str) -> set[str]:
    """The request kinds a side must answer: "sandbox" answers the worker's, "worker" the sandbox's."""
    table = WORKER_TO_SANDBOX if side == "sandbox" else SANDBOX_TO_WORKER
    return {m.kind for m in table}

"""A trusted grading worker: one per core, started by ``batch``, grading the submissions it is sent.

It reads jobs as JSON lines on stdin and answers on its original stdout (test files' prints go to
stderr). It owns a zygote whose sandboxes run as a user id of their own, claimed with a lock file
so that concurrent runs never share one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from .. import importpath
from . import jail, launch

UID_RANGE = range(61000, 62000)
# resident size a worker may keep over what it held when ready, after a job and handing back what
# it can (``session.give_back_memory``): past it, the worker starts afresh. Grading the twelve
# samples one after another grows a worker by about 13 MiB; a forged reply listing 300,000 names
# takes it from 35 to 170 MiB, and back to about 50 once handed back. The config's
# ``max_growth_mb`` overrides it.
MAX_GROWTH = 96 << 20


def _uids_in_use() -> set[int]:
    used: set[int] = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                used.update(int(line.split()[1]) for line in f if line.startswith("Uid:"))
        except (OSError, ValueError, IndexError):
            continue
    return used


def claim_uid() -> tuple[int, int]:
    """A free sandbox user id and the lock file descriptor that holds it.

    The lock files only coordinate runs that share this file system view; a run in another mount
    namespace or chroot (a Gradescope simulation) cannot see them, so ids that any process uses are
    skipped too, and the search starts at a random point: a sweep must never hit another run."""
    import fcntl
    import random
    import tempfile

    folder = Path("/run/attnlab-grade") if Path("/run").is_dir() else Path(tempfile.gettempdir()) / "attnlab-grade"
    folder.mkdir(mode=0o700, exist_ok=True)
    used = _uids_in_use()
    candidates = [uid for uid in UID_RANGE if uid not in used]
    random.shuffle(candidates)
    for uid in candidates:
        fd = os.open(folder / f"{uid}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return uid, fd
        except BlockingIOError:
            os.close(fd)
    raise RuntimeError("no free sandbox user id")


def launch_zygote(config: dict) -> launch.Launched:
    """Start this worker's zygote: first of all, before numpy is imported here; its user id and
    the assignment's packages (the config's ``sandbox``, else read here; the lock files) follow
    while it imports numpy (``launch.Launched.allow``). A config that says ``follows`` (the batch
    started this worker before it had read them) gets its ``dependencies`` and ``sandbox`` from
    the first line of stdin, read once the zygote is starting: ``config`` then holds them."""
    limits = config["limits"]
    launched = launch.start(
        memory_mb=limits["memory_mb"],
        cpu_seconds=int(limits["wall"]) + 5,
        isolate=config["isolate"],
        cpu=config.get("cpu"),
    )
    try:
        if config.pop("follows", False):
            config.update(json.loads(sys.stdin.readline()))
        uid = gid = None
        if os.geteuid() == 0 and config["isolate"]:
            uid, _lock = claim_uid()
            gid = uid
            launch_zygote.lock = _lock  # type: ignore[attr-defined]  # held for the worker's lifetime
        # (read by the batch, once for all its workers: YAML's parser costs a worker ~20 ms to import)
        allowed = config.get("sandbox") or launch.sandbox_config(Path(config["tests_dir"]))
        launched.allow(uid=uid, gid=gid, packages=allowed["packages"], preload=allowed["preload"])
    except BaseException:
        launched.kill()
        raise
    return launched


def serve(config: dict) -> None:
    # a worker, its zygote and its sandboxes die with the batch that started them
    jail.die_with_parent()
    if os.getppid() != config.get("parent", os.getppid()):
        return
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # the zygote gets ready while this worker imports the rest and loads the tests, on another
    # core if one is free
    launched = launch_zygote(config)
    if config.get("cpu") is not None and hasattr(os, "sched_setaffinity"):
        # the worker, its zygote and its sandboxes ping-pong: on one core they skip cross-core
        # wakeups (the zygote pins itself before its first fork; pinned after it starts, not before,
        # it is not held to this core while it starts)
        os.sched_setaffinity(0, {config["cpu"]})
    from ..testfiles import BadTestFile
    from . import report, session
    from .runner import Grader, Limits, SandboxUnavailable
    from .session import Zygote

    zygote = Zygote.of(launched)
    limits = Limits(**config["limits"])
    dependencies = config["dependencies"]
    try:
        grader = Grader(
            zygote,
            Path(config["tests_dir"]),
            Path(config["support_dir"]) if config["support_dir"] else None,
            limits,
            calls=dependencies["calls"],
            isolate=dependencies["isolate"],
        )
    except BadTestFile:
        # the instructor's test file, which the batch loads too and names in one line: no worker's
        # traceback beside it (the batch sees this worker end before it was ready)
        launched.kill()
        importpath.exit_now(2)
    ready = {"ready": zygote.mode, "strongest": zygote.strongest, "isolation": zygote.isolation}
    # a worker that restarted itself is ready for the batch already: it speaks again only when its
    # new zygote isolates differently, so that no fallback goes unreported
    if config.get("reported") != ready:
        replies.write(json.dumps(ready) + "\n")
    baseline = session.give_back_memory(since=0)
    growth = MAX_GROWTH if config.get("max_growth_mb") is None else int(config["max_growth_mb"]) << 20
    for line in sys.stdin:
        job = json.loads(line)
        try:
            graded = grader.grade(Path(job["path"]))
        except SandboxUnavailable:
            # this worker can grade no more: it ends, and the batch retries the job on a fresh one
            zygote.close()
            importpath.exit_now(1)
        except Exception as e:  # noqa: BLE001 - whatever one submission did costs that submission alone
            graded = grader.ungraded(Path(job["path"]), f"grading stopped ({type(e).__name__})")
        report.write(Path(config["out"]), graded, job["fields"], job["who"])
        # what grades.csv needs, so that the batch never reads the results back
        scores = {q.name: q.score for q in graded.questions}
        replies.write(json.dumps({"name": job["name"], "score": graded.score, "questions": scores}) + "\n")
        del graded
        if session.give_back_memory(since=baseline) > baseline + growth:
            zygote.close()
            restart(dict(config, reported=ready), replies)
    zygote.close()
    replies.close()


def restart(config: dict, replies: Any) -> NoReturn:
    """Start this worker afresh in this process (what one submission's grading left in its memory
    is gone with it): the same pid and pipes, so the batch goes on sending it jobs."""
    replies.flush()
    os.dup2(replies.fileno(), 1)  # its replies' pipe as stdout again, as the batch started it
    command = importpath.python_command("attnlab.grade.worker", "main")
    os.execv(command[0], [*command, json.dumps({**config, "restarted": True})])


def main() -> None:
    """The worker's entry (``batch.WORKER``): the import path checked, then the config from argv."""
    importpath.make_trusted()
    serve(json.loads(sys.argv[1]))
    # everything is written and the zygote is gone: the batch waits for this exit, which the
    # interpreter's teardown of numpy, the tests and the oracle would delay by ~0.1 s
    importpath.exit_now(0)

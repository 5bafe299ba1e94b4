"""``attnlab grade``: grade many submissions in parallel, each in its own sandbox.

The main process schedules submissions onto worker processes (one per core by default) and owns
the outputs that span submissions: ``grades.csv`` (rewritten atomically after every submission),
the item analysis, and the Canvas import. A worker that dies or hangs costs only the submission it
was grading, which gets a zero row saying so; a new worker takes its place.
"""

from __future__ import annotations

import csv
import io
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from . import analysis, canvas, report, source
from .runner import Limits, load_tests


@dataclass
class Graded:
    submission: str
    score: float
    questions: dict[str, float]
    results: Path
    skipped: bool = False  # graded by an earlier run


class _Worker:
    def __init__(self, config: dict):
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "attnlab.grade.worker", json.dumps(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1,
            start_new_session=True,
        )
        self.cpu = config.get("cpu")
        self.job: dict | None = None
        self.since = 0.0
        self.ready = False

    def send(self, job: dict) -> None:
        self.job, self.since = job, time.monotonic()
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


def main(*, submissions: list[Path], out: Path, tests_dir: Path | None = None,
         support_dir: Path | None = None, jobs: int | None = None, force: bool = False,
         roster: Path | None = None, timeout: float = 10.0, memory_mb: int = 2048,
         progress: bool = True) -> list[Graded]:
    """Grade every submission (files, or folders of ``.ipynb``/``.py`` files) into ``out``.

    ``timeout`` bounds one call of a student function; executing the submission gets 3x that per
    statement and the whole submission 30x. Already graded submissions are skipped unless ``force``.
    """
    out = Path(out).resolve()
    tests_dir = Path(tests_dir or paths.tests_dir()).resolve()
    if support_dir is None and (paths.autograder_dir() / "support").is_dir():
        support_dir = paths.autograder_dir() / "support"
    support_dir = Path(support_dir).resolve() if support_dir else None
    files = source.find([Path(s) for s in submissions])
    tests = load_tests(tests_dir, support_dir)
    questions = [(tf.name, tf.points) for tf in tests]
    out.mkdir(parents=True, exist_ok=True)
    limits = Limits.from_timeout(timeout, memory_mb)

    done: dict[str, dict] = {}
    for path in sorted(out.glob("*/results.json")):
        data = report.read(path)
        if data is not None:
            done[path.parent.name] = data
    todo = [f for f in files if force or f.stem not in done]
    course = paths.current_course()  # the course folder holds the solutions: out of the sandbox's sight
    hide = sorted({str(paths.kit_root()), str(tests_dir), str(out), str(Path.home())}
                  | ({str(course)} if course else set())
                  | ({str(support_dir)} if support_dir else set())
                  | {str(f.resolve().parent) for f in files})
    config = dict(tests_dir=str(tests_dir), support_dir=str(support_dir) if support_dir else None,
                  out=str(out), limits=limits.__dict__, hide=hide, isolate=True)

    if todo:
        threading.Thread(target=analysis.preload, daemon=True).start()

    def finished(name: str, data: dict) -> None:
        done[name] = data
        report.write_atomic(out / "grades.csv", grades_csv(done, questions))

    _schedule(todo, config, jobs or os.cpu_count() or 1, limits, questions, out, finished, progress)
    report.write_atomic(out / "grades.csv", grades_csv(done, questions))

    results = [done[name] for name in sorted(done)]
    items, variants = analysis.write(out, results)
    if progress:
        from rich.console import Console

        console = Console(stderr=True)
        for t in analysis.table(items, variants):
            console.print(t)
    if roster is not None:
        totals = {name: float(d["score"]) for name, d in done.items()}
        _, unmatched = canvas.write(out, Path(roster), totals, paths.current_assignment(), sum(p for _, p in questions))
        if unmatched and progress:
            print(f"no roster row matches: {', '.join(unmatched)}", file=sys.stderr)
    todo_names = {f.stem for f in todo}
    return [Graded(f.stem, float(done[f.stem]["score"]), dict(done[f.stem]["extra_data"]["questions"]),
                   out / f.stem / "results.json", f.stem not in todo_names) for f in files]


def grades_csv(done: dict[str, dict], questions: list[tuple[str, float]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission", *(q for q, _ in questions), "total"])
    for name in sorted(done):
        scores = done[name]["extra_data"]["questions"]
        w.writerow([name, *(f"{scores.get(q, 0.0):g}" for q, _ in questions), f"{done[name]['score']:g}"])
    return buf.getvalue()


def _schedule(todo: list[Path], config: dict, jobs: int, limits: Limits,
              questions: list[tuple[str, float]], out: Path, finished, progress: bool) -> None:
    if not todo:
        return
    queue = list(todo)
    sel = selectors.DefaultSelector()
    workers: list[_Worker] = []
    spares = 2 * jobs   # replacements for workers that die
    watchdog = limits.wall + 60

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pin = jobs <= len(cpus)

    def start() -> None:
        used = [w.cpu for w in workers]
        cpu = min(cpus, key=used.count) if pin else None
        w = _Worker(dict(config, cpu=cpu))
        workers.append(w)
        sel.register(w.proc.stdout, selectors.EVENT_READ, w)

    def retire(w: _Worker, why: str | None) -> None:
        nonlocal spares
        sel.unregister(w.proc.stdout)
        workers.remove(w)
        w.kill()
        if w.job is not None and why is not None:
            name = w.job["name"]
            data = report.failed_results(name, questions, why)
            report.write_atomic(out / name / "results.json", json.dumps(data, indent=1))
            finished(name, data)
            bar.advance(name)
        if queue and spares > 0:
            spares -= 1
            start()

    bar = _Progress(len(todo), progress)
    try:
        for _ in range(min(jobs, len(queue))):
            start()
        while workers:
            for w in list(workers):
                if w.ready and w.job is None:
                    if queue:
                        path = queue.pop(0)
                        w.send({"path": str(path), "name": path.stem})
                    else:
                        sel.unregister(w.proc.stdout)
                        workers.remove(w)
                        w.close()
                elif w.job is not None and time.monotonic() - w.since > watchdog:
                    retire(w, f"grading took longer than {watchdog:g} s")
            for key, _ in sel.select(timeout=0.5):
                w = key.data
                line = w.proc.stdout.readline()
                if not line:
                    retire(w, "the grading worker died")
                    continue
                msg = json.loads(line)
                if "ready" in msg:
                    w.ready = True
                    continue
                data = report.read(Path(msg["results"]))
                if data is None:
                    data = report.failed_results(msg["name"], questions, "unreadable results")
                finished(msg["name"], data)
                bar.advance(msg["name"])
                w.job = None
            if not workers and queue:
                for path in queue:
                    data = report.failed_results(path.stem, questions, "no grading worker could run")
                    report.write_atomic(out / path.stem / "results.json", json.dumps(data, indent=1))
                    finished(path.stem, data)
                break
    finally:
        for w in workers:
            w.kill()
        bar.close()


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.progress = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("{task.description}"),
                                     transient=False)
            self.progress.start()
            self.task = self.progress.add_task("", total=total)

    def advance(self, name: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=1, description=name)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()

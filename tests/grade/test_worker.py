"""A grading worker as the batch drives it: jobs in, one reply per job out, whatever a job does."""

import json
import os
import subprocess
from pathlib import Path

from attnlab import importpath, paths
from attnlab.grade import calls
from attnlab.grade.limits import Limits

from known_outcomes import FIXTURES


def _worker(tmp_path: Path, **config) -> subprocess.Popen:
    """A worker started as the batch starts one, grading the shared tests, restarting after every
    job (memory threshold 0), with ``config`` besides."""
    config = dict(
        tests_dir=str(paths.tests_dir()),
        support_dir=str(paths.autograder_dir() / "support"),
        out=str(tmp_path / "out"),
        limits=Limits.from_timeout(2, 1024).__dict__,
        isolate=True,
        parent=os.getpid(),
        max_growth_mb=0,
        **config,
    )
    return subprocess.Popen(
        [*importpath.python_command("attnlab.grade.worker", "main"), json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )


def test_does_a_forged_reply_cost_its_submission_alone_and_a_restart_keep_the_worker_serving(tmp_path):
    """A submission that forges a reply numpy refuses to decode is graded like its twin (the
    statement that forged it fails), the same worker grades the next job, and a worker past its
    memory threshold (0 here: after every job) starts afresh in its own process, ready without
    saying so again."""
    twin = (FIXTURES / "twin.py").read_text()
    forged = tmp_path / "forged.py"
    forged.write_text(twin + "\n\n" + (FIXTURES / "hostile" / "forged_array_reply.py").read_text())
    tests = paths.tests_dir()
    worker = _worker(tmp_path, dependencies=calls.for_tests(tests))
    assert worker.stdin is not None and worker.stdout is not None
    try:
        assert "ready" in json.loads(worker.stdout.readline())
        replies = []
        for path in (FIXTURES / "twin.py", forged, FIXTURES / "twin.py"):
            job = {"path": str(path), "name": path.stem + str(len(replies)), "fields": {}, "who": path.stem}
            worker.stdin.write(json.dumps(job) + "\n")
            worker.stdin.flush()
            replies.append(json.loads(worker.stdout.readline()))
        restarted = json.loads(Path(f"/proc/{worker.pid}/cmdline").read_bytes().split(b"\0")[-2])
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)
    assert [r["name"] for r in replies] == ["twin0", "forged1", "twin2"]
    assert replies[1]["score"] == replies[0]["score"] == replies[2]["score"] > 0
    assert restarted.get("restarted") is True
    feedback = (tmp_path / "out" / "forged" / "feedback.md").read_text()
    assert "broke the protocol" in feedback


def _resident(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:"))


def test_does_a_forged_reply_leave_the_worker_no_bigger(tmp_path):
    """A reply listing 299,000 made-up names takes a worker's resident size up by more than a
    hundred MiB while it is decoded and used: after the job, the worker holds no more than
    ``worker.MAX_GROWTH`` over what it held when ready (it hands memory back, or starts afresh)."""
    from attnlab.grade.worker import MAX_GROWTH

    forged = tmp_path / "forged.py"
    forged.write_text(
        (FIXTURES / "twin.py").read_text() + "\n\n" + (FIXTURES / "hostile" / "forged_names_reply.py").read_text()
    )
    tests = paths.tests_dir()
    config = dict(
        tests_dir=str(tests),
        support_dir=str(paths.autograder_dir() / "support"),
        out=str(tmp_path / "out"),
        limits=Limits.from_timeout(2, 1024).__dict__,
        isolate=True,
        parent=os.getpid(),
        dependencies=calls.for_tests(tests),
    )
    worker = subprocess.Popen(
        [*importpath.python_command("attnlab.grade.worker", "main"), json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    assert worker.stdin is not None and worker.stdout is not None
    try:
        assert "ready" in json.loads(worker.stdout.readline())
        ready = _resident(worker.pid)
        for i, path in enumerate((forged, forged, FIXTURES / "twin.py")):
            worker.stdin.write(json.dumps({"path": str(path), "name": f"j{i}", "fields": {}, "who": "x"}) + "\n")
            worker.stdin.flush()
            assert json.loads(worker.stdout.readline())["score"] > 0
        # (read after the twin's reply: the forged jobs' memory has been dealt with by then)
        after = _resident(worker.pid)
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)
    assert after - ready <= MAX_GROWTH, f"{(after - ready) >> 20} MiB"


def test_does_a_worker_started_before_its_call_graph_was_read_get_it_on_its_input_and_keep_it(tmp_path):
    """The batch starts its first workers before it reads the call graph and sandbox.yaml, which
    follow as the first line of their input: such a worker grades as one given them up front, and
    still does after starting afresh (memory threshold 0: after every job), reading no second line."""
    tests = paths.tests_dir()
    worker = _worker(tmp_path, follows=True)
    assert worker.stdin is not None and worker.stdout is not None
    try:
        worker.stdin.write(json.dumps({"dependencies": calls.for_tests(tests), "sandbox": None}) + "\n")
        worker.stdin.flush()
        assert "ready" in json.loads(worker.stdout.readline())
        scores = []
        for i in range(2):
            job = {"path": str(FIXTURES / "twin.py"), "name": f"j{i}", "fields": {}, "who": "x"}
            worker.stdin.write(json.dumps(job) + "\n")
            worker.stdin.flush()
            scores.append(json.loads(worker.stdout.readline())["score"])
        restarted = json.loads(Path(f"/proc/{worker.pid}/cmdline").read_bytes().split(b"\0")[-2])
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)
    assert scores[0] == scores[1] > 0
    assert restarted.get("restarted") is True and "dependencies" in restarted and "follows" not in restarted

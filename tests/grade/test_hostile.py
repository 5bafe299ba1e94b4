"""Hostile submissions: each is the honest twin plus one attack, graded in one batch; pairs are an
attack and its honest variant of the same functions, each on top of the twin. The batch runs as
this user, as the unprivileged user nobody, and as nobody where user namespaces are refused (as on
stock Ubuntu 24.04: the sandboxes confine themselves with Landlock)."""

import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from attnlab import paths
from attnlab.grade import main
from attnlab.grade.batch import GRADED

from known_outcomes import FIXTURES
from markdown_view import KIT_HEADINGS, headings, rendered_markup, score_lines, tokens
from planted import marks_left, plant, trusted_module_names
from other_user import (
    NOBODY,
    ROOT,
    WHY_NOT_AS_NOBODY,
    can_run_as_nobody,
    json_from,
    kit_for_nobody,
    make_readable,
    readable_folder,
)
from without_userns import WHY_NOT_WITHOUT_USERNS, WRAPPER, can_refuse_userns

HOSTILE = sorted((FIXTURES / "hostile").glob("*.py"))
PAIRS = sorted({p.name.split(".")[0] for p in (FIXTURES / "pairs").glob("*.py")})
SAME_AS_TWIN = {
    "stdout_flood",
    "slow_import",
    "exit_sys_at_import",
    "exit_os_at_import",
    "memory_bomb",
    "patch_numpy_testing",
    "patch_builtins_and_modules",
    "zero_random_generators",
    "kill_parent",
    "reads_another_checkout",
    "handoff_a_writer",
    "handoff_b_reader",
    "forks_memory_hogs",
    "cpu_hogs_in_new_sessions",
    "reads_autograder_folder",
    "acts_on_other_processes",
    "runs_a_static_program",
    "forged_array_reply",
    "forged_names_reply",
    "markdown_in_errors",
    "page_cache_memory",
    "sends_to_host_sockets",
    "memory_outside_limits",
    "dense_call_graph",
    "deep_call_chain",
}
# every process of this run's submissions carries this name (fork keeps it; a sandbox cannot exec),
# so the leak check sees only this run's processes, whatever else is graded on the machine
TOKEN = "at" + uuid.uuid4().hex[:13]
NAMED = f"import ctypes as _c\n_c.CDLL(None).prctl(15, _c.c_char_p(b'{TOKEN}'), 0, 0, 0)\n"


def _run_processes() -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/comm").read().strip() == TOKEN:
                found.append(int(pid))
        except OSError:
            continue
    return found


def _plant_checkouts() -> list[Path]:
    """Copies of the course where a grading machine may have them, readable by anyone: a backup
    under /tmp and, as root, a colleague's folder under /srv."""
    folders = [readable_folder("backup-of-the-course-")]
    if ROOT:
        folders.append(Path("/srv") / f"attnlab-plant-{TOKEN}")
    for folder in folders:
        shutil.copytree(paths.solution_file().parent, folder / "solutions" / "pe_attention")
        make_readable(folder)
    return folders


@functools.cache
def _planted_names() -> list[str]:
    """Modules the trusted side imports, planted among the submissions: every package and a few of
    the standard library's (tests/grade/test_import_path.py plants them all)."""
    return [
        n
        for n in trusted_module_names()
        if n not in sys.stdlib_module_names or n in ("json", "subprocess", "selectors", "signal", "tempfile", "socket")
    ]


def _submissions(folder: Path) -> Path:
    subs = folder / "submissions"
    subs.mkdir()
    marks = folder / "marks"
    marks.mkdir()
    plant(subs, _planted_names(), marks=marks)
    twin = NAMED + (FIXTURES / "twin.py").read_text()
    (subs / "twin.py").write_text(twin)
    for path in HOSTILE:
        (subs / path.name).write_text(twin + "\n\n" + path.read_text())
    for name in PAIRS:
        for side in ("attack", "honest"):
            (subs / f"pair_{name}_{side}.py").write_text(
                twin + "\n\n" + (FIXTURES / "pairs" / f"{name}.{side}.py").read_text()
            )
    return subs


# the grader as an unprivileged user: its results as plain data on the last line of its output,
# with the isolation mode a zygote chooses there
GRADE_AS_NOBODY = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from attnlab.grade import main
from attnlab.grade.session import Zygote
run = main(submissions=[Path(sys.argv[2])], out=Path(sys.argv[3]), tests_dir=Path(sys.argv[4]),
           support_dir=Path(sys.argv[5]), timeout=2, progress=False)
zygote = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60)
mode = zygote.mode
zygote.close()
print(json.dumps({"mode": mode,
                  "graded": {g.submission: [g.score, g.status, g.problem] for g in run.graded}}))
"""


def _kit_for_nobody(folder: Path) -> Path:
    """``kit_for_nobody`` with the wrapper that refuses user namespaces beside it."""
    shutil.copy(WRAPPER, folder / "without_userns.py")
    return kit_for_nobody(folder, packages=("numpy", "matplotlib"))


# secrets in the grader's environment, as an instructor's shell holds them (``attnlab upload canvas``
# reads CANVAS_TOKEN): no submission may find them, in its memory or anywhere
SECRETS = {"CANVAS_TOKEN": uuid.uuid4().hex, f"ATTNLAB_PLANTED_{uuid.uuid4().hex[:8]}": uuid.uuid4().hex}


def _neighbour_state(pid: int) -> dict:
    """What a process of the grader's user that is no part of the run has, and a submission may try
    to change: its limits, priority, I/O priority, CPUs and scheduling class."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return {
        "limits": Path(f"/proc/{pid}/limits").read_text(),
        "nice": os.getpriority(os.PRIO_PROCESS, pid),
        # ioprio_get(IOPRIO_WHO_PROCESS)
        "io_priority": libc.syscall(252 if platform.machine() == "x86_64" else 31, 1, pid),
        "cpus": sorted(os.sched_getaffinity(pid)),
        "scheduler": os.sched_getscheduler(pid),
    }


def _grade_as_nobody(folder: Path, *, without_userns: bool) -> dict:
    kit = folder / "kit"
    python = str(kit / "venv" / "bin" / "python")
    found = json_from(
        ([python, str(folder / "without_userns.py")] if without_userns else [])
        + [python, "-I", "-c", GRADE_AS_NOBODY]
        + [str(p) for p in (kit / "src", folder / "submissions", folder / "out", folder / "tests", folder / "support")],
        cwd=folder / "submissions",  # as an instructor would: from inside the folder it grades
        timeout=600,
        user=NOBODY,
        home=folder / "out",
        env=SECRETS,
    )
    # the mode each run must get, or it tests another mode than it says
    assert found["mode"] == ("landlock" if without_userns else "userns"), found["mode"]
    return {name: SimpleNamespace(score=s, status=st, problem=p) for name, (s, st, p) in found["graded"].items()}


@pytest.fixture(scope="module", params=["as_this_user", "as_nobody", "as_nobody_without_userns"])
def graded(request):
    """(results by submission, the output folder, the test files as they were before grading, the
    marks of planted modules, and the state of a neighbour process of the grader's user before and
    after grading)."""
    as_nobody = request.param != "as_this_user"
    if as_nobody and not can_run_as_nobody():
        pytest.skip(WHY_NOT_AS_NOBODY)
    if request.param == "as_nobody_without_userns" and not can_refuse_userns():
        pytest.skip(WHY_NOT_WITHOUT_USERNS)
    folder = readable_folder("attnlab-hostile-")
    _submissions(folder)
    tests = _kit_for_nobody(folder) if as_nobody else paths.tests_dir()
    os.chmod(folder / "marks", 0o1777)
    snapshot = {p: p.read_bytes() for p in tests.glob("*.py")}
    planted = _plant_checkouts()
    here = os.getcwd()
    user = {"user": NOBODY, "group": NOBODY} if as_nobody else {}
    neighbour = subprocess.Popen(["sleep", "3600"], **user)  # type: ignore[call-overload]
    before = _neighbour_state(neighbour.pid)
    saved = dict(os.environ)
    try:
        if as_nobody:
            results = _grade_as_nobody(folder, without_userns=request.param == "as_nobody_without_userns")
        else:
            os.environ.update(SECRETS)
            os.chdir(folder / "submissions")
            graded = main(submissions=[folder / "submissions"], out=folder / "out", timeout=2, progress=False).graded
            results = {g.submission: g for g in graded}
        after = _neighbour_state(neighbour.pid)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir(here)
        neighbour.kill()
        neighbour.wait()
        for checkout in planted:
            shutil.rmtree(checkout, ignore_errors=True)
    # the planted modules are submissions too, but not attacks on a grade: only their marks count
    results = {name: g for name, g in results.items() if name not in _planted_names()}
    yield results, folder / "out", snapshot, marks_left(folder / "marks"), (before, after)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("attack", [p.stem for p in HOSTILE])
def test_does_no_attack_score_more_than_its_honest_twin(graded, attack):
    results, out, *_ = graded
    assert results[attack].score <= results["twin"].score
    if attack in SAME_AS_TWIN:
        assert results[attack].score == results["twin"].score


@pytest.mark.slow
def test_does_the_batch_complete_and_leave_no_process_behind(graded):
    results, _, snapshot, *_ = graded
    assert set(results) >= {"twin", *(p.stem for p in HOSTILE)}
    assert all(g.status == GRADED for g in results.values()), {n: g.problem for n, g in results.items()}
    assert _run_processes() == []
    for p, data in snapshot.items():
        assert p.read_bytes() == data, f"{p} changed"


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_does_no_attack_score_more_than_its_honest_variant(graded, pair):
    results, *_ = graded
    assert results[f"pair_{pair}_attack"].score <= results[f"pair_{pair}_honest"].score


@pytest.mark.slow
def test_are_results_safe_from_fake_writers_even_after_grading(graded):
    import time

    results, out, *_ = graded
    time.sleep(1.5)  # the fixture's daemon would rewrite files every 0.1 s for 10 s
    for name, g in results.items():
        data = json.loads((out / "submissions" / name / "results.json").read_text())
        assert data["score"] == g.score and data["extra_data"]["engine"] == "attnlab"


@pytest.mark.slow
def test_does_nothing_the_student_sees_hold_hidden_test_source(graded):
    results, out, *_ = graded
    hidden_markers = ["oracle.assert_close", "def test_values", "attnlab_oracle", "pe_variants"]
    for name in results:
        for file in ("feedback.md", "results.json", "output.txt"):
            text = (out / "submissions" / name / file).read_text()
            assert not any(m in text for m in hidden_markers), f"{name}/{file} leaks test source"


@pytest.mark.slow
def test_does_every_feedback_show_the_students_text_only_quoted(graded):
    """markdown_in_errors raises with a heading, a score line and HTML in its messages: in no
    feedback does anything but the kit make a heading, a score line, a link or HTML."""
    results, out, *_ = graded
    for name, g in results.items():
        found = tokens((out / "submissions" / name / "feedback.md").read_text())
        shown, lines = headings(found), score_lines(found)
        assert shown[0].startswith("Feedback for ") and set(shown[1:]) <= KIT_HEADINGS, name
        assert len(lines) == 1 and lines[0].startswith(f"Score: {g.score:g} / "), name
        assert rendered_markup(found) == [], name


@pytest.mark.slow
def test_does_the_grader_import_nothing_from_the_folder_it_grades(graded):
    marks = graded[3]
    assert marks == []


@pytest.mark.slow
def test_does_no_secret_of_the_graders_environment_reach_anything_a_submission_writes(graded):
    """A submission that searches its own memory for the grader's environment (a pair) finds
    nothing to print or raise: no secret's value is in any result, feedback or output file."""
    _, out, *_ = graded
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "output.txt" for p in files)
    leaked = [str(p) for p in files if any(v.encode() in p.read_bytes() for v in SECRETS.values())]
    assert leaked == []


@pytest.mark.slow
def test_does_no_submission_change_a_neighbours_limits_priority_or_affinity(graded):
    """A process of the grader's user that is no part of the run (an instructor's shell) keeps its
    limits, priority, I/O priority, CPUs and scheduling class, whatever a submission asks of every
    pid, its process group and its user (``acts_on_other_processes``)."""
    before, after = graded[4]
    assert after == before

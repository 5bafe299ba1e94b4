"""Hostile submissions: each is the honest twin plus one attack, graded in one batch; pairs are an
attack and its honest variant of the same functions, each on top of the twin."""

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from attnlab import paths
from attnlab.grade import main
from attnlab.grade.batch import GRADED

from known_outcomes import FIXTURES

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


def _plant_checkouts(tmp: Path) -> list[Path]:
    """Copies of the course where a grading machine may have them: a backup under /tmp and, as
    root, a colleague's folder under /srv."""
    folders = [tmp / "backup-of-the-course"] + ([Path("/srv") / f"attnlab-plant-{TOKEN}"] if os.geteuid() == 0 else [])
    for folder in folders:
        shutil.copytree(paths.solution_file().parent, folder / "solutions" / "pe_attention")
    return folders


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    twin = NAMED + (FIXTURES / "twin.py").read_text()
    (subs / "twin.py").write_text(twin)
    for path in HOSTILE:
        (subs / path.name).write_text(twin + "\n\n" + path.read_text())
    for name in PAIRS:
        for side in ("attack", "honest"):
            (subs / f"pair_{name}_{side}.py").write_text(
                twin + "\n\n" + (FIXTURES / "pairs" / f"{name}.{side}.py").read_text()
            )
    out = tmp_path_factory.mktemp("results")
    snapshot = {p: p.read_bytes() for p in paths.tests_dir().glob("*.py")}
    planted = _plant_checkouts(tmp_path_factory.mktemp("elsewhere"))
    try:
        results = {g.submission: g for g in main(submissions=[subs], out=out, timeout=2, progress=False).graded}
    finally:
        for folder in planted:
            shutil.rmtree(folder, ignore_errors=True)
    return results, out, snapshot


@pytest.mark.slow
@pytest.mark.parametrize("attack", [p.stem for p in HOSTILE])
def test_does_no_attack_score_more_than_its_honest_twin(graded, attack):
    results, out, _ = graded
    assert results[attack].score <= results["twin"].score
    if attack in SAME_AS_TWIN:
        assert results[attack].score == results["twin"].score


@pytest.mark.slow
def test_does_the_batch_complete_and_leave_no_process_behind(graded):
    results, out, snapshot = graded
    assert set(results) >= {"twin", *(p.stem for p in HOSTILE)}
    assert all(g.status == GRADED for g in results.values()), {n: g.problem for n, g in results.items()}
    assert _run_processes() == []
    for p, data in snapshot.items():
        assert p.read_bytes() == data, f"{p} changed"


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_does_no_attack_score_more_than_its_honest_variant(graded, pair):
    results, _, _ = graded
    assert results[f"pair_{pair}_attack"].score <= results[f"pair_{pair}_honest"].score


@pytest.mark.slow
def test_are_results_safe_from_fake_writers_even_after_grading(graded):
    import time

    results, out, _ = graded
    time.sleep(1.5)  # the fixture's daemon would rewrite files every 0.1 s for 10 s
    for name, g in results.items():
        data = json.loads((out / "submissions" / name / "results.json").read_text())
        assert data["score"] == g.score and data["extra_data"]["engine"] == "attnlab"


@pytest.mark.slow
def test_does_nothing_the_student_sees_hold_hidden_test_source(graded):
    results, out, _ = graded
    hidden_markers = ["oracle.assert_close", "def test_values", "attnlab_oracle", "pe_variants"]
    for name in results:
        for file in ("feedback.md", "results.json", "output.txt"):
            text = (out / "submissions" / name / file).read_text()
            assert not any(m in text for m in hidden_markers), f"{name}/{file} leaks test source"

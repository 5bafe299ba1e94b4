"""Hostile submissions: each is the honest twin plus one attack, graded in one batch."""

import json
import os

import pytest

from attnlab import paths
from attnlab.grade import main
from attnlab.grade.worker import UID_RANGE

from known_outcomes import FIXTURES

HOSTILE = sorted((FIXTURES / "hostile").glob("*.py"))
SAME_AS_TWIN = {"stdout_flood", "slow_import", "exit_sys_at_import", "exit_os_at_import", "memory_bomb",
                "patch_numpy_testing", "patch_builtins_and_modules", "zero_random_generators", "kill_parent"}


def _sandbox_processes() -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            uid = int(open(f"/proc/{pid}/status").read().split("\nUid:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if uid in UID_RANGE:
            found.append(int(pid))
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    twin = (FIXTURES / "twin.py").read_text()
    (subs / "twin.py").write_text(twin)
    for path in HOSTILE:
        (subs / path.name).write_text(twin + "\n\n" + path.read_text())
    out = tmp_path_factory.mktemp("results")
    snapshot = {p: p.read_bytes() for p in paths.tests_dir().glob("*.py")}
    results = {g.submission: g for g in main(submissions=[subs], out=out, timeout=2, progress=False).graded}
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
    assert set(results) == {"twin", *(p.stem for p in HOSTILE)}
    assert _sandbox_processes() == []
    for p, data in snapshot.items():
        assert p.read_bytes() == data, f"{p} changed"


@pytest.mark.slow
def test_are_results_safe_from_fake_writers_even_after_grading(graded):
    import time

    results, out, _ = graded
    time.sleep(1.5)   # the fixture's daemon would rewrite files every 0.1 s for 10 s
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

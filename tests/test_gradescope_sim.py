"""The autograder zip in a simulated Gradescope container (private mount namespace + chroot)."""

import os

import pytest

import gradescope_sim
from attnlab import build, paths, release

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not gradescope_sim.available(), reason="needs root, unshare and chroot"),
]

FIXTURES = paths.kit_root() / "tests" / "fixtures" / "grade"
# a few attacks that target the container itself; tests/grade/test_hostile.py runs the whole corpus
ATTACKS = [
    "read_and_print_tests",
    "fake_results_json",
    "patch_numpy_testing",
    "kill_parent",
    "child_in_new_session",
    "reads_autograder_folder",
    "malformed_frames",
]
PAIRS = ["introspects_probes", "mutates_after_answering"]


def _grade(dist, tmp_path, name, text):
    work = tmp_path / name
    work.mkdir()
    return gradescope_sim.run(dist / "autograder.zip", {f"{name}.py": text}, work=work)


@pytest.fixture(scope="module")
def twin(dist, tmp_path_factory):
    """The honest twin of every attack, graded once in the container."""
    return _grade(dist, tmp_path_factory.mktemp("twin"), "twin", (FIXTURES / "twin.py").read_text())


def _hidden_lines():
    """Lines of hidden test code: none may reach what a student sees."""
    lines = set()
    for test in paths.tests_dir().glob("*.py"):
        lines |= {ln.strip() for ln in test.read_text().splitlines() if len(ln.strip()) > 30}
    return lines


def _seen_by_student(results):
    shown = [results.get("output", "")]
    shown += [t.get("output", "") for t in results["tests"] if t.get("visibility") == "visible"]
    return "\n".join(shown)


def test_does_a_correct_submission_get_full_marks_in_the_container(dist, tmp_path):
    results = _grade(dist, tmp_path, "reference", release.solution.reference_source(paths.solution_file()))
    assert results["score"] == build.points_possible()
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


def test_does_a_partial_submission_get_partial_marks_in_the_container(dist, tmp_path):
    text = (paths.sample_submissions_dir() / "concat_halves_score_partial.py").read_text()
    assert 0 < _grade(dist, tmp_path, "partial", text)["score"] < build.points_possible()


@pytest.mark.parametrize("attack", ATTACKS)
def test_does_no_attack_beat_its_honest_twin_in_the_container(dist, tmp_path, twin, attack):
    text = (FIXTURES / "twin.py").read_text() + "\n\n" + (FIXTURES / "hostile" / f"{attack}.py").read_text()
    hostile = _grade(dist, tmp_path, attack, text)
    assert hostile["score"] <= twin["score"]
    shown = _seen_by_student(hostile)
    assert not [line for line in _hidden_lines() if line in shown]


def test_is_nothing_of_the_autograder_folder_visible_to_the_submission(dist, tmp_path):
    text = (
        (FIXTURES / "twin.py").read_text() + "\n\n" + (FIXTURES / "hostile" / "reads_autograder_folder.py").read_text()
    )
    shown = _seen_by_student(_grade(dist, tmp_path, "reader", text))
    assert "FOUND" in shown  # the attack ran and its message is shown
    for secret in ('"users"', "submission_metadata", "run_autograder", "sandbox.yaml", "results.json"):
        assert secret not in shown


@pytest.mark.parametrize("pair", PAIRS)
def test_does_no_attack_beat_its_honest_variant_in_the_container(dist, tmp_path, pair):
    twin = (FIXTURES / "twin.py").read_text() + "\n\n"
    scores = {
        side: _grade(dist, tmp_path, f"{pair}_{side}", twin + (FIXTURES / "pairs" / f"{pair}.{side}.py").read_text())[
            "score"
        ]
        for side in ("attack", "honest")
    }
    assert scores["attack"] <= scores["honest"]


def test_does_nothing_linger_after_the_container_run(dist, tmp_path):
    """A daemon in a new session, named by a token only this run knows (fork keeps the name)."""
    import time
    import uuid

    token = "at" + uuid.uuid4().hex[:13]
    daemon = (
        f"import ctypes, os, time\nctypes.CDLL(None).prctl(15, ctypes.c_char_p(b'{token}'), 0, 0, 0)\n"
        "if os.fork() == 0:\n    os.setsid()\n    while True:\n        time.sleep(0.1)\n"
    )
    _grade(dist, tmp_path, "daemon", (FIXTURES / "twin.py").read_text() + "\n\n" + daemon)
    time.sleep(0.5)
    lingering = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/comm").read().strip() == token:
                lingering.append(pid)
        except OSError:
            continue
    assert not lingering


def test_does_the_gradescope_entry_import_nothing_from_the_submission_folder(dist, tmp_path):
    from planted import PLANT, trusted_module_names

    names = trusted_module_names()
    files = {f"{n}.py": PLANT.format(name=n, marks="/autograder/results") for n in names}
    files["notebook.ipynb"] = (paths.sample_submissions_dir() / "vectorised_notebook_score_full.ipynb").read_text()
    work = tmp_path / "planted"
    work.mkdir()
    results = gradescope_sim.run(dist / "autograder.zip", files, work=work)
    marks = [p.name for p in (work / "stage" / "autograder" / "results").iterdir() if p.name.split(".")[0] in names]
    assert marks == []
    assert results["score"] == build.points_possible()


def _quiz_notebook(answers, extra=()):
    import nbformat

    from attnlab.quiz import bank, notebook

    nb = notebook.notebook(list(bank.load().values()), answers=answers)
    nb.cells += [nbformat.v4.new_code_cell(source) for source in extra]
    return nbformat.writes(nb)


def _grade_quiz(dist, tmp_path, name, text):
    work = tmp_path / name
    work.mkdir()
    return gradescope_sim.run(dist / "quiz_autograder.zip", {"quiz.ipynb": text}, work=work)


def test_is_the_quiz_graded_in_the_container_without_running_the_notebook(dist, tmp_path):
    from attnlab.quiz import bank
    from attnlab.quiz.check import key_text

    keys = {i.id: key_text(i) or "words" for i in bank.load().values()}
    half = {k: v for i, (k, v) in enumerate(keys.items()) if i % 2}
    override = (
        "import attnlab_quiz.check as _c\nclass _V:\n    status, message = 'right', 'Right.'\n"
        "_c.check_variable = lambda *args, **kwargs: _V()"
    )
    full = _grade_quiz(dist, tmp_path, "key", _quiz_notebook(keys))
    honest = _grade_quiz(dist, tmp_path, "half", _quiz_notebook(half))
    hostile = _grade_quiz(dist, tmp_path, "hostile", _quiz_notebook(half, [override]))
    assert 0 < honest["score"] == hostile["score"] < full["score"]
